// The proxy's own durable copy of the pool's events (the pool's and the ASP contracts'), kept as the indexer
// reads them, so a store rebuilt by `pool-proxy store recover`, or a replica's, is rebuilt from it even once
// the RPC no longer keeps the pool's first events (testnet's keeps about 7 days). It lives beside the store,
// never in it (recover replaces the store): a LevelDB directory in the data directory, or the `pool_events`
// table of the PostgreSQL store. Events are public chain data and are kept as the RPC gave them: their id
// (the RPC's cursor, which orders them), ledger, transaction, contract and base64 XDR topic and value.
// `pool-proxy store export-events` / `import-events` carry them as JSON lines, e.g. to a new deployment.
import { xdr } from '#stellar-sdk';
import type { Level } from 'level';
import { openLevel } from '../../storage/open-level.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { PostgresBackend } from '../store/postgres-backend.ts';

/** One archived contract event. */
export interface ArchivedEvent {
  id: string;
  ledger: number;
  txHash: string;
  contractId: string;
  topic: string[];
  value: string;
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
  /** Keeps `events` (an event already kept is kept once). */
  append(events: readonly ArchivedEvent[]): Promise<void>;
  /** Up to `limit` events after `afterId` (from the first without it), in order. */
  page(afterId: string | undefined, limit: number): Promise<ArchivedEvent[]>;
  /** The last event kept, if any. */
  last(): Promise<ArchivedEvent | undefined>;
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

/** An archived event read from outside (an export): its shape checked, or an error naming what is wrong. */
export function parseArchived(value: unknown, where: string): ArchivedEvent {
  const e = value as Partial<ArchivedEvent> | null;
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
    typeof e.value === 'string';
  if (!ok) throw new Error(`${where}: not an archived pool event`);
  try {
    fromArchived(e as ArchivedEvent);
  } catch {
    throw new Error(`${where}: its topic or value is not XDR`);
  }
  const { id, ledger, txHash, contractId, topic, value: v } = e as ArchivedEvent;
  return { id, ledger, txHash, contractId, topic, value: v };
}

/** The archive in a LevelDB directory of its own (a proxy on a LevelDB store). */
export class LevelEventArchive implements EventArchive {
  readonly #db: Level<string, ArchivedEvent>;

  private constructor(db: Level<string, ArchivedEvent>) {
    this.#db = db;
  }

  static async open(dir: string): Promise<LevelEventArchive> {
    return new LevelEventArchive(await openLevel<string, ArchivedEvent>(dir, { valueEncoding: 'json' }));
  }

  async append(events: readonly ArchivedEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.#db.batch(events.map((e) => ({ type: 'put' as const, key: e.id, value: e })));
  }

  async page(afterId: string | undefined, limit: number): Promise<ArchivedEvent[]> {
    const out: ArchivedEvent[] = [];
    for await (const value of this.#db.values({ ...(afterId !== undefined && { gt: afterId }), limit }))
      out.push(value);
    return out;
  }

  async last(): Promise<ArchivedEvent | undefined> {
    for await (const value of this.#db.values({ reverse: true, limit: 1 })) return value;
    return undefined;
  }

  async close(): Promise<void> {
    await this.#db.close();
  }
}

/** The archive in the `pool_events` table of a PostgreSQL store (shared by its replicas). */
export class PostgresEventArchive implements EventArchive {
  readonly #db: PostgresBackend;

  constructor(db: PostgresBackend) {
    this.#db = db;
  }

  async append(events: readonly ArchivedEvent[]): Promise<void> {
    if (events.length === 0) return;
    await this.#db.pool.query(
      `INSERT INTO pool_events (id, event) SELECT * FROM unnest($1::text[], $2::jsonb[])
       ON CONFLICT (id) DO NOTHING`,
      [events.map((e) => e.id), events.map((e) => JSON.stringify(e))],
    );
  }

  async page(afterId: string | undefined, limit: number): Promise<ArchivedEvent[]> {
    const { rows } = await this.#db.pool.query<{ event: ArchivedEvent }>(
      'SELECT event FROM pool_events WHERE id > $1 ORDER BY id LIMIT $2',
      [afterId ?? '', limit],
    );
    return rows.map((r) => r.event);
  }

  async last(): Promise<ArchivedEvent | undefined> {
    const { rows } = await this.#db.pool.query<{ event: ArchivedEvent }>(
      'SELECT event FROM pool_events ORDER BY id DESC LIMIT 1',
    );
    return rows[0]?.event;
  }

  async close(): Promise<void> {
    // the store's connections are the store's to close
  }
}

/** The archive beside `store`: its PostgreSQL table, or the LevelDB directory `dir`. */
export async function openEventArchive(store: EncryptedStore, dir: string): Promise<EventArchive> {
  return store.backend.kind === 'postgres'
    ? new PostgresEventArchive(store.backend as PostgresBackend)
    : LevelEventArchive.open(dir);
}
