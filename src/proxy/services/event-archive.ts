// The proxy's own durable copy of the pool's events (the pool's and the ASP contracts'), kept as the indexer
// reads them, so a store rebuilt by `pool-proxy store recover`, or a replica's, is rebuilt from it even once
// the RPC no longer keeps the pool's first events (testnet's keeps about 7 days). It lives beside the store,
// never in it (recover replaces the store): a LevelDB directory in the data directory, or the `pool_events`
// table of the PostgreSQL store. Events are public chain data and are kept as the RPC gave them: their id
// (the RPC's cursor, which orders them), ledger, transaction, contract and base64 XDR topic and value, each
// sealed with a MAC under the master key (archive-seal.ts). What the archive gives back is checked against
// its seal first, and an archived event is never replaced by another with the same id.
// `pool-proxy store export-events` / `import-events` carry them as JSON lines, e.g. to a new deployment.
import { xdr } from '#stellar-sdk';
import type { Level } from 'level';
import { openLevel } from '../../storage/open-level.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { PostgresBackend } from '../store/postgres-backend.ts';
import { type ArchiveSeal, type SealedFields } from './archive-seal.ts';

/** One archived contract event. */
export type ArchivedEvent = SealedFields;

/** An archived event with its seal, as the archive keeps it and an export carries it. */
export interface SealedEvent extends ArchivedEvent {
  /** HMAC-SHA256 (hex) of the event's fields under the archive key (archive-seal.ts) */
  mac: string;
}

/** An event to archive whose id is kept already with other content: the archive keeps the first. */
export class ArchiveConflictError extends Error {
  constructor(id: string) {
    super(
      `pool event ${id} is in the archive already with other content: an archived event is never replaced ` +
        '(refused, nothing was written)',
    );
  }
}

/** What the indexer needs of an event, from the RPC or the archive alike. */
export interface PoolEvent {
  id: string;
  ledger: number;
  txHash: string;
  contractId: string;
  topic: xdr.ScVal[];
  value: xdr.ScVal;
}

export interface EventArchive {
  /**
   * Seals and keeps `events` (an event already kept is kept once); all or nothing: an event whose id is kept
   * with other content throws `ArchiveConflictError` and none is written.
   */
  append(events: readonly ArchivedEvent[]): Promise<void>;
  /** Up to `limit` events after `afterId` (from the first without it), in order, each seal checked. */
  page(afterId: string | undefined, limit: number): Promise<SealedEvent[]>;
  /** The last event kept, if any (its seal checked). */
  last(): Promise<SealedEvent | undefined>;
  close(): Promise<void>;
}

const EVENT_ID = /^\d{19}-\d{10}$/;

export function toArchived(e: PoolEvent): ArchivedEvent {
  return {
    id: e.id,
    ledger: e.ledger,
    txHash: e.txHash,
    contractId: e.contractId,
    topic: e.topic.map((t) => t.toXDR('base64')),
    value: e.value.toXDR('base64'),
  };
}

export function fromArchived(a: ArchivedEvent): PoolEvent {
  return {
    id: a.id,
    ledger: a.ledger,
    txHash: a.txHash,
    contractId: a.contractId,
    topic: a.topic.map((t) => xdr.ScVal.fromXDR(t, 'base64')),
    value: xdr.ScVal.fromXDR(a.value, 'base64'),
  };
}

/** The fields `a` and `b` share are the same event. */
const sameEvent = (a: ArchivedEvent, b: ArchivedEvent): boolean =>
  JSON.stringify(fieldsOf(a)) === JSON.stringify(fieldsOf(b));

/** The event's fields alone, in their order (no seal, nothing else a stored value may carry). */
function fieldsOf(e: ArchivedEvent): ArchivedEvent {
  return {
    id: e.id,
    ledger: e.ledger,
    txHash: e.txHash,
    contractId: e.contractId,
    topic: e.topic,
    value: e.value,
  };
}

/** `e` with its seal. */
const sealed = (seal: ArchiveSeal, e: ArchivedEvent): SealedEvent => ({ ...fieldsOf(e), mac: seal.mac(e) });

/** A kept event, its seal checked (`ArchiveSealError` naming it when the seal does not verify). */
function checked(seal: ArchiveSeal, e: SealedEvent): SealedEvent {
  seal.check(e, e.mac, 'the event archive');
  return e;
}

/**
 * An archived event read from outside (an export): its shape checked, or an error naming what is wrong. Its
 * seal is checked by the importer, against the master key.
 */
export function parseArchived(value: unknown, where: string): SealedEvent {
  const e = value as Partial<SealedEvent> | null;
  const ok =
    typeof e === 'object' &&
    e !== null &&
    typeof e.id === 'string' &&
    EVENT_ID.test(e.id) &&
    Number.isInteger(e.ledger) &&
    typeof e.txHash === 'string' &&
    /^[0-9a-f]{64}$/.test(e.txHash) &&
    typeof e.contractId === 'string' &&
    Array.isArray(e.topic) &&
    e.topic.every((t) => typeof t === 'string') &&
    typeof e.value === 'string' &&
    typeof e.mac === 'string';
  if (!ok) throw new Error(`${where}: not an archived pool event`);
  try {
    fromArchived(e as ArchivedEvent);
  } catch {
    throw new Error(`${where}: its topic or value is not XDR`);
  }
  const { id, ledger, txHash, contractId, topic, value: v, mac } = e as SealedEvent;
  return { id, ledger, txHash, contractId, topic, value: v, mac };
}

/** An event of another contract than this deployment's, in an export or the archive. */
export class ForeignEventError extends Error {}

/** The contracts whose events this deployment's archive holds (the pool and its two ASP contracts). */
export interface ArchiveContracts {
  pool: string;
  aspMembership: string;
  aspNonMembership: string;
}

/**
 * Throws, naming `where` and the first such event, when one of `events` is not of this deployment's contracts:
 * the archive holds this pool's history only, and an event of another contract is refused, never skipped.
 */
export function checkOwnContracts(
  events: readonly ArchivedEvent[],
  contracts: ArchiveContracts,
  where: (e: ArchivedEvent) => string,
): void {
  const own = new Set([contracts.pool, contracts.aspMembership, contracts.aspNonMembership]);
  const foreign = events.find((e) => !own.has(e.contractId));
  if (foreign !== undefined)
    throw new ForeignEventError(
      `${where(foreign)}: pool event ${foreign.id} is of contract ${foreign.contractId}, not of this ` +
        `deployment's pool (${contracts.pool}) or its ASP contracts: refused, nothing was written`,
    );
}

/** The archive in a LevelDB directory of its own (a proxy on a LevelDB store). */
export class LevelEventArchive implements EventArchive {
  readonly #db: Level<string, SealedEvent>;
  readonly #seal: ArchiveSeal;
  /** appends one at a time: the check for a kept id and the write are one step */
  #appending: Promise<void> = Promise.resolve();

  private constructor(db: Level<string, SealedEvent>, seal: ArchiveSeal) {
    this.#db = db;
    this.#seal = seal;
  }

  static async open(dir: string, seal: ArchiveSeal): Promise<LevelEventArchive> {
    return new LevelEventArchive(await openLevel<string, SealedEvent>(dir, { valueEncoding: 'json' }), seal);
  }

  append(events: readonly ArchivedEvent[]): Promise<void> {
    const run = this.#appending.then(() => this.#append(events));
    this.#appending = run.catch(() => undefined);
    return run;
  }

  async #append(events: readonly ArchivedEvent[]): Promise<void> {
    if (events.length === 0) return;
    const kept = await this.#db.getMany(events.map((e) => e.id));
    const fresh = new Map<string, ArchivedEvent>();
    for (const [i, e] of events.entries()) {
      const before = kept[i] ?? fresh.get(e.id);
      if (before !== undefined) {
        if (!sameEvent(before, e)) throw new ArchiveConflictError(e.id);
      } else fresh.set(e.id, e);
    }
    if (fresh.size === 0) return;
    await this.#db.batch(
      [...fresh.values()].map((e) => ({ type: 'put' as const, key: e.id, value: sealed(this.#seal, e) })),
    );
  }

  async page(afterId: string | undefined, limit: number): Promise<SealedEvent[]> {
    const out: SealedEvent[] = [];
    for await (const value of this.#db.values({ ...(afterId !== undefined && { gt: afterId }), limit }))
      out.push(checked(this.#seal, value));
    return out;
  }

  async last(): Promise<SealedEvent | undefined> {
    for await (const value of this.#db.values({ reverse: true, limit: 1 })) return checked(this.#seal, value);
    return undefined;
  }

  async close(): Promise<void> {
    await this.#db.close();
  }
}

/** The archive in the `pool_events` table of a PostgreSQL store (shared by its replicas). */
export class PostgresEventArchive implements EventArchive {
  readonly #db: PostgresBackend;
  readonly #seal: ArchiveSeal;

  constructor(db: PostgresBackend, seal: ArchiveSeal) {
    this.#db = db;
    this.#seal = seal;
  }

  async append(events: readonly ArchivedEvent[]): Promise<void> {
    if (events.length === 0) return;
    // Rows are only ever inserted (ON CONFLICT DO NOTHING): a row already there is never replaced, and one
    // whose content differs refuses the whole append. Replicas append the same events as each other.
    const ids = events.map((e) => e.id);
    const { rows } = await this.#db.pool.query<{ event: SealedEvent }>(
      'SELECT event FROM pool_events WHERE id = ANY($1::text[])',
      [ids],
    );
    const kept = new Map<string, ArchivedEvent>(rows.map((r) => [r.event.id, r.event]));
    for (const e of events) {
      const before = kept.get(e.id);
      if (before !== undefined && !sameEvent(before, e)) throw new ArchiveConflictError(e.id);
      kept.set(e.id, before ?? e);
    }
    await this.#db.pool.query(
      `INSERT INTO pool_events (id, event) SELECT * FROM unnest($1::text[], $2::jsonb[])
       ON CONFLICT (id) DO NOTHING`,
      [ids, events.map((e) => JSON.stringify(sealed(this.#seal, e)))],
    );
  }

  async page(afterId: string | undefined, limit: number): Promise<SealedEvent[]> {
    const { rows } = await this.#db.pool.query<{ event: SealedEvent }>(
      'SELECT event FROM pool_events WHERE id > $1 ORDER BY id LIMIT $2',
      [afterId ?? '', limit],
    );
    return rows.map((r) => checked(this.#seal, r.event));
  }

  async last(): Promise<SealedEvent | undefined> {
    const { rows } = await this.#db.pool.query<{ event: SealedEvent }>(
      'SELECT event FROM pool_events ORDER BY id DESC LIMIT 1',
    );
    return rows[0] === undefined ? undefined : checked(this.#seal, rows[0].event);
  }

  async close(): Promise<void> {
    // the store's connections are the store's to close
  }
}

/** The archive beside `store`: its PostgreSQL table, or the LevelDB directory `dir`. */
export async function openEventArchive(
  store: EncryptedStore,
  dir: string,
  seal: ArchiveSeal,
): Promise<EventArchive> {
  return store.backend.kind === 'postgres'
    ? new PostgresEventArchive(store.backend as PostgresBackend, seal)
    : LevelEventArchive.open(dir, seal);
}
