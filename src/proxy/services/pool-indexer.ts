// Follows the pool's and the ASPs' contract events through getEvents and rebuilds, locally, what proofs
// need: the pool's Merkle trees (commitments by their position across the trees that roll over, see
// src/crypto/merkle-forest.ts), the spent-nullifier set, the ASP
// allowlist tree and the blocklist sparse Merkle tree. The cursor and each pass's changes are persisted
// (append-only segments), so a restart resumes instead of rescanning. Every new commitment is offered
// to listeners (note discovery). Every event read is kept in the event archive first (event-archive.ts):
// an empty store (a fresh replica, or one `store recover` made) replays the archive, then reads on from the
// RPC after its last event, so the pool is rebuilt even when the RPC no longer keeps its first events; what
// such a first pass rebuilt is checked against the chain before it is served (chain-check.ts).
import { type rpc, scValToNative, type xdr } from '#stellar-sdk';
import { MerkleForest, MerkleTree, SparseMerkleTree } from '../../crypto/index.ts';
import { PoolEvent as PoolEventName } from '../../ledger/pool-interface.ts';
import {
  checkOwnContracts,
  type EventArchive,
  fromArchived,
  type PoolEvent,
  toArchived,
} from './event-archive.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { Logger } from '../util/logger.ts';

export interface PoolContracts {
  pool: string;
  aspMembership: string;
  aspNonMembership: string;
}

export interface CommitmentEvent {
  commitment: bigint;
  /** the commitment's position in the pool, across its trees */
  leafIndex: number;
  /** its leaf index in its own tree (what its nullifier commits to) */
  indexInTree: number;
  encryptedOutput: Uint8Array;
  txHash: string;
  ledger: number;
}

/** Where the indexer stands; the trees themselves are rebuilt from the appended segments. */
interface IndexerState {
  cursor?: string;
  ledger: number;
  segments: number;
  /** leaves of each tree the segments hold (absent in a state written before they were counted) */
  poolLeaves?: number;
  aspLeaves?: number;
}

/** What one or more passes changed, appended as one record (writes stay proportional to new events). */
interface IndexerSegment {
  poolLeaves: bigint[];
  aspLeaves: bigint[];
  blocklist: Array<{ key: bigint; value?: bigint }>;
  nullifiers: bigint[];
}

/** What changed since the last segment beside the trees' new leaves (taken from the trees themselves). */
type Delta = Pick<IndexerSegment, 'blocklist' | 'nullifiers'>;
const emptyDelta = (): Delta => ({ blocklist: [], nullifiers: [] });

export type CommitmentListener = (
  events: CommitmentEvent[],
  nullifiers: Array<{ nullifier: bigint; txHash: string }>,
) => Promise<void>;

/** What an indexer follows and where it keeps what it read. */
export interface PoolIndexerOptions {
  server: rpc.Server;
  store: EncryptedStore;
  contracts: PoolContracts;
  /** the first ledger to read (0: the oldest the RPC keeps) */
  startLedger: number;
  logger: Logger;
  archive?: EventArchive;
  /** leaves one pool tree takes before the next opens (the pool contract's `get_tree_capacity`) */
  treeCapacity: number;
}

export class PoolIndexer {
  /** The pool's commitments, tree after tree. */
  readonly poolTree: MerkleForest;
  readonly aspTree = new MerkleTree(20);
  readonly blocklist = new SparseMerkleTree();
  readonly spent = new Set<bigint>();
  readonly #server: rpc.Server;
  readonly #store: EncryptedStore;
  readonly #contracts: PoolContracts;
  readonly #logger: Logger;
  readonly #startLedger: number;
  readonly #listeners: CommitmentListener[] = [];
  #cursor: string | undefined;
  /** Highest ledger whose events are fully applied. */
  #ledger = 0;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #waiters: Array<{ ledger: number; resolve: () => void }> = [];
  /** Changes applied but not yet persisted (kept across a failed pass, since re-applying is a no-op). */
  #delta: Delta = emptyDelta();
  /** Leaves of each tree the segments held at load (what a state saved before they were counted holds). */
  #loaded = { poolLeaves: 0, aspLeaves: 0 };
  readonly #archive: EventArchive | undefined;
  /** the ledger of each pool transaction seen (recovery tells settlements apart by when they landed) */
  readonly #txLedgers = new Map<string, number>();
  /** after an archive replay: where the RPC is read from, and the last event already applied */
  #resume: { startLedger: number; after: string } | undefined;

  constructor({ server, store, contracts, startLedger, logger, archive, treeCapacity }: PoolIndexerOptions) {
    this.poolTree = new MerkleForest(20, treeCapacity);
    this.#server = server;
    this.#store = store;
    this.#contracts = contracts;
    this.#startLedger = startLedger;
    this.#logger = logger;
    this.#archive = archive;
  }

  /** The ledger a pool transaction seen by this indexer landed in. */
  ledgerOf(txHash: string): number | undefined {
    return this.#txLedgers.get(txHash);
  }

  get ledger(): number {
    return this.#ledger;
  }

  onCommitments(listener: CommitmentListener): void {
    this.#listeners.push(listener);
  }

  /** Loads the persisted state, catches up with the ledger, then polls every `intervalMs`. */
  async start(intervalMs: number): Promise<void> {
    const state = await this.#store.get<IndexerState>(this.#stateKey());
    if (state) {
      this.#cursor = state.cursor;
      this.#ledger = state.ledger;
      for (const [, segment] of await this.#store.entries<IndexerSegment>('indexer/')) {
        for (const leaf of segment.poolLeaves) this.poolTree.insert(leaf);
        for (const leaf of segment.aspLeaves) this.aspTree.insert(leaf);
        // Replicas' segments may repeat a change (see #persist): each key ends as its last change says.
        for (const { key, value } of segment.blocklist) {
          const found = this.blocklist.find(key).found;
          if (value === undefined) {
            if (found) this.blocklist.delete(key);
          } else if (found) this.blocklist.update(key, value);
          else this.blocklist.insert(key, value);
        }
        for (const n of segment.nullifiers) this.spent.add(n);
      }
      this.#loaded = { poolLeaves: this.poolTree.nextIndex, aspLeaves: this.aspTree.nextIndex };
    }
    await this.sync();
    const tick = () => {
      this.#timer = setTimeout(async () => {
        try {
          await this.sync();
        } catch (error) {
          this.#logger.log('warn', 'indexer sync failed', { error: String(error) });
        }
        if (this.#timer !== undefined) tick();
      }, intervalMs);
    };
    tick();
  }

  /** Stops polling and waits for a pass in progress, so the store can be closed safely. */
  async stop(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    await this.#running?.catch(() => undefined);
  }

  /** Resolves once events up to `ledger` (inclusive) are applied. */
  async waitForLedger(ledger: number, timeoutMs = 30_000): Promise<void> {
    if (this.#ledger >= ledger) return;
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`indexer did not reach ledger ${ledger}`)), timeoutMs);
      this.#waiters.push({
        ledger,
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
      });
      // A pass already under way may have begun before `ledger` closed: then one more reads it.
      void this.sync()
        .then(() => (this.#ledger < ledger ? this.sync() : undefined))
        .catch(() => undefined);
    });
  }

  /**
   * Resolves once the indexer has read the ledger up to the network's latest ledger now, so that what another
   * replica wrote before this call is in the trees.
   */
  async catchUp(): Promise<void> {
    const latest = (await this.#server._getLatestLedger()).sequence; // raw: no close metadata decoded
    await this.waitForLedger(latest);
  }

  /**
   * Resolves once the pool holds the commitment at position `index`: beside other replicas, a note may be credited in the shared
   * store by another replica's indexer before this one has seen its commitment, and its Merkle path is needed
   * now. Waits ledger by ledger (`waitForLedger`) until the leaf is here or `timeoutMs` has passed.
   */
  async waitForLeaf(index: number, timeoutMs = 30_000): Promise<void> {
    // A timeout on waiting for the network (monotonic, as a timer is), not a time decision: not the proxy's clock.
    const deadline = performance.now() + timeoutMs;
    while (this.poolTree.nextIndex <= index) {
      const left = deadline - performance.now();
      if (left <= 0) throw new Error(`indexer did not reach pool leaf ${index}`);
      await this.waitForLedger(this.#ledger + 1, left);
    }
  }

  /** One catch-up pass (concurrent callers share it). */
  sync(): Promise<void> {
    this.#running ??= this.#syncOnce().finally(() => {
      this.#running = undefined;
    });
    return this.#running;
  }

  /** The archive's events after the cursor, applied as if read from the RPC (an empty store's first pass). */
  async #replayArchive(): Promise<void> {
    if (this.#archive === undefined) return;
    let replayed = 0;
    for (;;) {
      const page = await this.#archive.page(this.#cursor, 200);
      if (page.length === 0) break;
      // Each event's seal was checked by the archive; an event of another contract is refused, not skipped.
      checkOwnContracts(page, this.#contracts, () => 'the event archive');
      await this.#handle(page.map(fromArchived));
      this.#cursor = page.at(-1)!.id;
      this.#ledger = Math.max(this.#ledger, page.at(-1)!.ledger - 1);
      await this.#persist();
      replayed += page.length;
    }
    if (replayed > 0) this.#logger.log('info', 'pool events replayed from the archive', { events: replayed });
    if (this.#cursor === undefined) return;
    // Read on by ledger (a cursor older than the RPC's window may be refused), skipping what was replayed.
    // Ledgers between the archive's last event and the RPC's oldest may hold events of the pool that neither
    // keeps: the first pass is then checked against the chain's state (chain-check.ts), which refuses it.
    const oldest = (await this.#server.getHealth()).oldestLedger ?? 1;
    const last = (await this.#archive.last())!;
    this.#resume = { startLedger: Math.max(oldest, last.ledger), after: last.id };
  }

  /** Applies one batch of events and hands the new commitments and nullifiers to the listeners. */
  async #handle(events: PoolEvent[]): Promise<void> {
    const commitments: CommitmentEvent[] = [];
    const nullifiers: Array<{ nullifier: bigint; txHash: string }> = [];
    for (const event of events) this.#apply(event, commitments, nullifiers);
    // Listeners first: the cursor and ledger move only once the events are fully handled, so a failed
    // pass is fetched again (applying events to the trees is idempotent).
    if (commitments.length > 0 || nullifiers.length > 0) {
      for (const listener of this.#listeners) await listener(commitments, nullifiers);
    }
  }

  async #syncOnce(): Promise<void> {
    if (this.#cursor === undefined) await this.#replayArchive();
    for (;;) {
      const latest = (await this.#server._getLatestLedger()).sequence; // raw: no close metadata decoded
      const filters = [
        {
          type: 'contract' as const,
          contractIds: [
            this.#contracts.pool,
            this.#contracts.aspMembership,
            this.#contracts.aspNonMembership,
          ],
        },
      ];
      const resume = this.#resume;
      const page =
        this.#cursor === undefined || resume !== undefined
          ? await this.#eventsFrom(resume?.startLedger ?? (await this.#firstLedger()), filters)
          : await this.#server.getEvents({ cursor: this.#cursor, filters, limit: 200 });
      this.#resume = undefined;
      const events = page.events
        .filter((e) => e.inSuccessfulContractCall && (resume === undefined || e.id > resume.after))
        .map(poolEventOf);
      // Kept before they are applied: what the indexer has applied, the archive holds.
      await this.#archive?.append(events.map(toArchived));
      await this.#handle(events);
      const changed = page.events.length > 0 || (page.cursor !== '' && page.cursor !== this.#cursor);
      const done = page.events.length < 200;
      this.#cursor = page.cursor || this.#cursor;
      this.#ledger = done
        ? Math.max(this.#ledger, page.latestLedger ?? latest)
        : Math.max(this.#ledger, (page.events.at(-1)?.ledger ?? 1) - 1);
      if (changed) await this.#persist();
      this.#wake();
      if (done) return;
    }
  }

  #apply(
    event: PoolEvent,
    commitments: CommitmentEvent[],
    nullifiers: Array<{ nullifier: bigint; txHash: string }>,
  ): void {
    const contract = event.contractId;
    const name = symbolOf(event.topic[0]);
    if (contract === this.#contracts.pool) this.#txLedgers.set(event.txHash, event.ledger);
    if (contract === this.#contracts.pool && name === PoolEventName.newCommitment) {
      const commitment = BigInt(scValToNative(event.topic[1] as xdr.ScVal) as bigint);
      const data = scValToNative(event.value) as {
        encrypted_output: Uint8Array;
        index: number;
        tree?: number;
      };
      const place = { tree: Number(data.tree ?? 0), index: Number(data.index) };
      const index = this.poolTree.positionOf(place);
      if (index === this.poolTree.nextIndex) {
        this.poolTree.insert(commitment);
      } else if (index > this.poolTree.nextIndex || this.poolTree.leaf(index) !== commitment) {
        const next = this.poolTree.placeOf(this.poolTree.nextIndex);
        throw new Error(
          `pool tree out of step: event at tree ${place.tree} leaf ${place.index}, local next at tree ` +
            `${next.tree} leaf ${next.index}`,
        );
      }
      commitments.push({
        commitment,
        leafIndex: index,
        indexInTree: place.index,
        encryptedOutput: new Uint8Array(data.encrypted_output),
        txHash: event.txHash,
        ledger: event.ledger,
      });
    } else if (contract === this.#contracts.pool && name === PoolEventName.newNullifier) {
      const nullifier = BigInt(scValToNative(event.topic[1] as xdr.ScVal) as bigint);
      if (!this.spent.has(nullifier)) this.#delta.nullifiers.push(nullifier);
      this.spent.add(nullifier);
      nullifiers.push({ nullifier, txHash: event.txHash });
    } else if (contract === this.#contracts.aspMembership && name === 'LeafAdded') {
      const data = scValToNative(event.value) as { leaf: bigint; index: bigint | number };
      const index = Number(data.index);
      if (index === this.aspTree.nextIndex) {
        this.aspTree.insert(BigInt(data.leaf));
      } else if (index > this.aspTree.nextIndex || this.aspTree.leaf(index) !== BigInt(data.leaf)) {
        throw new Error(`ASP tree out of step at ${index}`);
      }
    } else if (contract === this.#contracts.aspNonMembership && name === 'LeafInserted') {
      const data = scValToNative(event.value) as { key: bigint; value: bigint };
      if (!this.blocklist.find(BigInt(data.key)).found) {
        this.blocklist.insert(BigInt(data.key), BigInt(data.value));
        this.#delta.blocklist.push({ key: BigInt(data.key), value: BigInt(data.value) });
      }
    } else if (contract === this.#contracts.aspNonMembership && name === 'LeafDeleted') {
      const data = scValToNative(event.value) as { key: bigint };
      if (this.blocklist.find(BigInt(data.key)).found) {
        this.blocklist.delete(BigInt(data.key));
        this.#delta.blocklist.push({ key: BigInt(data.key) });
      }
    }
  }

  /**
   * A page of events from `startLedger` on. The RPC's oldest ledger moves on while it is asked (a short memory,
   * fast ledgers): a start it no longer keeps is refused, and the read starts again at its oldest ledger, up to
   * three times. Whatever fell out of its memory meanwhile is not lost silently: a rebuilt store is checked
   * against the chain (chain-check.ts) before it is trusted.
   */
  async #eventsFrom(startLedger: number, filters: rpc.Api.EventFilter[]): Promise<rpc.Api.GetEventsResponse> {
    for (let attempt = 1, start = startLedger; ; attempt++) {
      try {
        return await this.#server.getEvents({ startLedger: start, filters, limit: 200 });
      } catch (error) {
        const oldest = (await this.#server.getHealth()).oldestLedger ?? 1;
        if (attempt >= 3 || oldest <= start) throw error;
        start = oldest;
      }
    }
  }

  /** The first ledger the indexer reads: see #firstLedger. */
  get firstLedger(): Promise<number> {
    return this.#firstLedger();
  }

  /** The configured start ledger, or (0 = unset) the oldest ledger the RPC still retains events for. */
  async #firstLedger(): Promise<number> {
    if (this.#startLedger > 0) return this.#startLedger;
    const health = await this.#server.getHealth();
    return Math.max(1, health.oldestLedger ?? 1);
  }

  /**
   * Appends what changed as one segment and moves the state on. Replicas on a shared store share this state:
   * under a lock across them, a replica whose cursor is not past the stored one writes nothing (another has
   * persisted this far already), and a segment holds the leaves past those already stored, so however the
   * replicas' passes interleave, the segments replay into the chain's trees.
   */
  async #persist(): Promise<void> {
    const d = this.#delta;
    await this.#store.mutex('indexer').run('state', async () => {
      const stored = await this.#store.get<IndexerState>(this.#stateKey());
      if (stored?.cursor !== undefined && this.#cursor !== undefined && stored.cursor >= this.#cursor) return;
      const from = {
        poolLeaves: stored?.poolLeaves ?? this.#loaded.poolLeaves,
        aspLeaves: stored?.aspLeaves ?? this.#loaded.aspLeaves,
      };
      const segment: IndexerSegment = {
        poolLeaves: leavesOf(this.poolTree, from.poolLeaves),
        aspLeaves: leavesOf(this.aspTree, from.aspLeaves),
        blocklist: d.blocklist,
        nullifiers: d.nullifiers,
      };
      const hasDelta =
        segment.poolLeaves.length + segment.aspLeaves.length + d.blocklist.length + d.nullifiers.length > 0;
      const segments = (stored?.segments ?? 0) + (hasDelta ? 1 : 0);
      const state: IndexerState = {
        cursor: this.#cursor,
        ledger: this.#ledger,
        segments,
        poolLeaves: this.poolTree.nextIndex,
        aspLeaves: this.aspTree.nextIndex,
      };
      await this.#store.batch([
        ...(hasDelta ? [{ type: 'put' as const, key: this.#segmentKey(segments), value: segment }] : []),
        { type: 'put', key: this.#stateKey(), value: state },
      ]);
    });
    this.#delta = emptyDelta();
  }

  #wake(): void {
    const ready = this.#waiters.filter((w) => w.ledger <= this.#ledger);
    this.#waiters = this.#waiters.filter((w) => w.ledger > this.#ledger);
    for (const w of ready) w.resolve();
  }

  #stateKey(): string {
    return this.#store.fixedKey('meta', 'indexer');
  }

  #segmentKey(n: number): string {
    return this.#store.fixedKey('indexer', `seg-${n.toString().padStart(10, '0')}`);
  }
}

/** The tree's (or the pool's trees') leaves from index `from` on. */
function leavesOf(tree: MerkleTree | MerkleForest, from: number): bigint[] {
  const out: bigint[] = [];
  for (let i = from; i < tree.nextIndex; i++) out.push(tree.leaf(i));
  return out;
}

function poolEventOf(e: rpc.Api.EventResponse): PoolEvent {
  return {
    id: e.id,
    ledger: e.ledger,
    txHash: e.txHash,
    contractId: e.contractId?.contractId() ?? '',
    topic: e.topic,
    value: e.value,
  };
}

function symbolOf(value: xdr.ScVal | undefined): string | undefined {
  if (value === undefined) return undefined;
  try {
    const native = scValToNative(value);
    return typeof native === 'string' ? native : undefined;
  } catch {
    return undefined;
  }
}
