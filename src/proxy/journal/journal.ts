// The operation journal: every money operation (wallet deposit, operator deposit, withdrawal, consolidation,
// payment, settlement, float refill) is a record in the store, written BEFORE it reserves or locks anything, and moved
// through explicit states:
//
//   reserved → proving → submitted(txHash, maxTime) → confirmed | failed | released | expired
//   (a wallet deposit: proving → prepared → submitted → …; a payment: reserved → signed → sent → …; a payment
//   above its owner's approval threshold: awaiting_approval → reserved (approved) | released (denied, expired))
//
// A reservation or note lock in the note book is always keyed by the id of the operation that owns it, so
// whatever a crash leaves behind, `reconcile` (on start and periodically) finds the owning record and either
// applies what landed on chain exactly once or releases what provably never will. Records of unfinished
// operations are also indexed under `op-open/`, so reconciliation reads only those.
import { randomUUID } from 'node:crypto';
import type { EncryptedStore, StoreOp } from '../store/encrypted-store.ts';
import type { Clock } from '../util/clock.ts';

export type OperationKind =
  | 'wallet_deposit'
  | 'operator_deposit'
  | 'withdraw'
  | 'consolidate'
  | 'payment'
  | 'settlement'
  | 'float_refill';

export type OperationState =
  | 'reserved'
  | 'awaiting_approval'
  | 'proving'
  | 'prepared'
  | 'submitted'
  | 'signed'
  | 'sent'
  | 'confirmed'
  | 'failed'
  | 'released'
  | 'expired';

/** Records deleted per store batch when the journal is pruned. */
const PRUNE_BATCH = 500;

const FINAL: ReadonlySet<OperationState> = new Set(['confirmed', 'failed', 'released', 'expired']);

export function isFinal(state: OperationState): boolean {
  return FINAL.has(state);
}

export interface PendingOutput {
  commitment: bigint;
  amount: bigint;
  blinding: bigint;
  /** scoped id of the output's owner when it is not the operation's agent (a settlement's float note) */
  owner?: string;
}

export interface OperationRecord {
  opId: string;
  kind: OperationKind;
  /** scoped agent id (`owner/agentId`) */
  agent: string;
  state: OperationState;
  /** Amount the operation moves (stroops). */
  amount: bigint;
  createdAt: number;
  updatedAt: number;
  /** The process run that began it: a live request owns it only while that run lasts. */
  runId: string;
  /** Hash of the ledger transaction, known before it is sent. */
  txHash?: string;
  /** Unix seconds after which the transaction can no longer land (its time bound). */
  maxTime?: number;
  /** Outputs registered as pending notes (dropped if the transaction provably failed). */
  outputs?: PendingOutput[];
  /** Why the operation failed or was released (problem code and detail). */
  reason?: { code: string; detail: string };
  /** Flow-specific fields (wallet, destination, prepared XDR hash, payment details…). */
  data?: Record<string, unknown>;
}

/** Which process runs are alive (cluster/runs.ts). */
export interface LiveRuns {
  readonly runId: string;
  isLive(runId: string): Promise<boolean>;
}

export class Journal {
  /** This process run (operations begun by an earlier run have no live request any more). */
  readonly runId: string;
  readonly #store: EncryptedStore;
  readonly #mutex;
  /**
   * Open operations as last written (write-through): a payment is updated four or five times in a burst,
   * and reading each update's record back from the encrypted store was a tenth of a payment's CPU. Only
   * this class writes operation records, so the copy cannot go stale; final operations leave it. Not kept
   * when other processes share the store (PostgreSQL): they write operations too.
   */
  readonly #cache: Map<string, OperationRecord> | undefined;
  readonly #runs: LiveRuns | undefined;
  readonly #clock: Clock;

  /**
   * `runs` tells which process runs are alive when several processes share the store; `clock` (the proxy's)
   * stamps every record's `createdAt` and `updatedAt`.
   */
  constructor(store: EncryptedStore, runs: LiveRuns | undefined, clock: Clock) {
    this.#clock = clock;
    this.#store = store;
    this.#mutex = store.mutex('op');
    this.#cache = store.backend.kind === 'leveldb' ? new Map() : undefined;
    this.#runs = runs;
    this.runId = runs?.runId ?? randomUUID();
  }

  /**
   * Whether the process run that began an operation still runs (its live request moves it on). Alone on the
   * store, only this run is alive; beside other processes, theirs are too while they hold their run lock.
   */
  async runIsLive(runId: string): Promise<boolean> {
    if (runId === this.runId) return true;
    return this.#runs === undefined ? false : this.#runs.isLive(runId);
  }

  key(opId: string): string {
    return this.#store.key('op', opId);
  }

  #openKey(opId: string): string {
    return this.#store.key('op-open', opId);
  }

  async get(opId: string): Promise<OperationRecord | undefined> {
    const hit = this.#cache?.get(opId);
    if (hit) return structuredClone(hit);
    const record = await this.#store.get<OperationRecord>(this.key(opId));
    if (record && !isFinal(record.state)) this.#cache?.set(opId, structuredClone(record));
    return record;
  }

  /** Writes `record` (and `extra`) in one batch, then the cache. */
  async #write(record: OperationRecord, extra: StoreOp[]): Promise<void> {
    await this.#store.batch([...this.#writeOps(record), ...extra]);
    if (isFinal(record.state)) this.#cache?.delete(record.opId);
    else this.#cache?.set(record.opId, structuredClone(record));
  }

  /** Writes a new operation (it must not exist), with `extra` store operations in the same batch. */
  async begin(
    record: Omit<OperationRecord, 'createdAt' | 'updatedAt' | 'runId'>,
    extra: StoreOp[] = [],
  ): Promise<OperationRecord> {
    return this.#mutex.run(record.opId, async () => {
      if ((await this.get(record.opId)) !== undefined) throw new Error(`operation ${record.opId} exists`);
      const now = this.#clock();
      const full: OperationRecord = { ...record, createdAt: now, updatedAt: now, runId: this.runId };
      await this.#write(full, extra);
      return full;
    });
  }

  /**
   * Moves an operation on: `patch` is merged, `extra` store operations commit in the same batch. A final
   * operation is never changed again (returns it unchanged), so late and duplicate transitions are harmless.
   */
  async update(
    opId: string,
    patch: Partial<Omit<OperationRecord, 'opId' | 'kind' | 'createdAt' | 'runId'>>,
    extra: StoreOp[] = [],
  ): Promise<OperationRecord> {
    return this.#mutex.run(opId, async () => {
      const current = await this.get(opId);
      if (current === undefined) throw new Error(`unknown operation ${opId}`);
      if (isFinal(current.state)) return current;
      const next: OperationRecord = {
        ...current,
        ...patch,
        data: patch.data ? { ...current.data, ...patch.data } : current.data,
        updatedAt: this.#clock(),
      };
      await this.#write(next, extra);
      return next;
    });
  }

  /**
   * Moves an operation on only if it is in one of the `from` states (one caller wins a race, e.g. two
   * submits of one prepared deposit); `extra` commits in the same batch only when the move applies.
   */
  async transition(
    opId: string,
    from: OperationState[],
    /** (`runId` hands the operation to this run, e.g. an approved payment's request is this process) */
    patch: Partial<Omit<OperationRecord, 'opId' | 'kind' | 'createdAt'>>,
    extra: StoreOp[] = [],
  ): Promise<{ applied: boolean; record: OperationRecord }> {
    return this.#mutex.run(opId, async () => {
      const current = await this.get(opId);
      if (current === undefined) throw new Error(`unknown operation ${opId}`);
      if (!from.includes(current.state)) return { applied: false, record: current };
      const next: OperationRecord = { ...current, ...patch, updatedAt: this.#clock() };
      await this.#write(next, extra);
      return { applied: true, record: next };
    });
  }

  /** Every operation not yet final. */
  async open(): Promise<OperationRecord[]> {
    const out: OperationRecord[] = [];
    for (const [, ref] of await this.#store.entries<{ opId: string }>(this.#store.prefix('op-open'))) {
      const record = await this.get(ref.opId);
      if (record !== undefined && !isFinal(record.state)) out.push(record);
    }
    return out;
  }

  /**
   * Final operations of `kinds` last updated before `before` (ms) are deleted; returns how many. The records
   * are read one at a time and deleted in batches, so a long journal is never held in memory at once.
   */
  async prune(before: number, kinds: OperationKind[]): Promise<number> {
    let pruned = 0;
    let doomed: StoreOp[] = [];
    const flush = async () => {
      await this.#store.batch(doomed);
      pruned += doomed.length;
      doomed = [];
    };
    for await (const [key, r] of this.#store.iterate<OperationRecord>(this.#store.prefix('op'))) {
      if (!isFinal(r.state) || r.updatedAt >= before || !kinds.includes(r.kind)) continue;
      doomed.push({ type: 'del', key });
      if (doomed.length >= PRUNE_BATCH) await flush();
    }
    await flush();
    return pruned;
  }

  #writeOps(record: OperationRecord): StoreOp[] {
    return [
      { type: 'put', key: this.key(record.opId), value: record },
      isFinal(record.state)
        ? { type: 'del', key: this.#openKey(record.opId) }
        : { type: 'put', key: this.#openKey(record.opId), value: { opId: record.opId } },
    ];
  }
}
