// PostgreSQL LISTEN/NOTIFY between the replicas of one store: one connection per process listens on the
// channels its handlers asked for, and is opened again (listening again) when it drops. A notification sent
// while a listener's connection is down is lost, so every user of these also polls the database now and then.
import pg from 'pg';
import type { PostgresBackend } from '../store/postgres-backend.ts';
import type { Logger } from '../util/logger.ts';
import { messageOf } from '../domain/errors.ts';

const RECONNECT_MS = 1000;
const CHANNEL = /^[a-z_][a-z0-9_]{0,62}$/;

export class Notifications {
  readonly #backend: PostgresBackend;
  readonly #logger: Logger;
  readonly #handlers = new Map<string, Set<(payload: string) => void>>();
  #client: pg.Client | undefined;
  #connecting: Promise<void> | undefined;
  #closed = false;

  constructor(backend: PostgresBackend, logger: Logger) {
    this.#backend = backend;
    this.#logger = logger;
  }

  /** Calls `handler` with the payload of every notification on `channel`; returns the unsubscribe. */
  async on(channel: string, handler: (payload: string) => void): Promise<() => void> {
    if (!CHANNEL.test(channel)) throw new Error(`invalid channel name "${channel}"`);
    const handlers = this.#handlers.get(channel) ?? new Set();
    const fresh = handlers.size === 0;
    this.#handlers.set(channel, handlers);
    handlers.add(handler);
    await this.#connect();
    // (a connection opened meanwhile may have listened already: LISTEN twice is harmless)
    if (fresh) await this.#client?.query(`LISTEN ${channel}`).catch(() => {});
    return () => handlers.delete(handler);
  }

  /** Notifies every listener of `channel` (delivered once the sending statement commits). */
  async notify(channel: string, payload = ''): Promise<void> {
    await this.#backend.pool.query('SELECT pg_notify($1, $2)', [channel, payload]);
  }

  #connect(): Promise<void> {
    if (this.#client !== undefined || this.#closed) return Promise.resolve();
    this.#connecting ??= this.#open().finally(() => {
      this.#connecting = undefined;
    });
    return this.#connecting;
  }

  async #open(): Promise<void> {
    const client = new pg.Client({ connectionString: this.#backend.url });
    client.on('error', () => {});
    try {
      await client.connect();
      for (const channel of this.#handlers.keys()) await client.query(`LISTEN ${channel}`);
    } catch (error) {
      await client.end().catch(() => {});
      this.#logger.log('warn', 'cannot listen for notifications; retrying', {
        error: messageOf(error),
      });
      this.#again();
      return;
    }
    client.on('notification', (n) => {
      for (const handler of this.#handlers.get(n.channel) ?? []) handler(n.payload ?? '');
    });
    client.on('end', () => {
      this.#client = undefined;
      if (this.#closed) return;
      this.#logger.log('warn', 'lost the notification connection; listening again');
      this.#again();
    });
    if (this.#closed) await client.end().catch(() => {});
    else this.#client = client;
  }

  #again(): void {
    if (this.#closed) return;
    setTimeout(() => void this.#connect(), RECONNECT_MS).unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    await this.#client?.end().catch(() => {});
    this.#client = undefined;
  }
}
