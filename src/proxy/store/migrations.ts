// The PostgreSQL schema, as numbered migrations applied in order at start (postgres-backend.ts). A migration
// is never edited once released: a change is a new entry. The database records which ones ran
// (`pool_proxy_schema`), so every replica, old or new, sees the same version; a database migrated by a newer
// release than this one is refused rather than written with an older idea of its tables.
export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'records',
    // Keys compare bytewise (COLLATE "C"), as LevelDB orders them, so prefix ranges are index scans.
    sql: `CREATE TABLE kv (
            key text COLLATE "C" PRIMARY KEY,
            value bytea NOT NULL
          )`,
  },
  {
    version: 2,
    name: 'rate-buckets',
    // Token buckets shared by the replicas (cluster/shared-rate-limit.ts); keys are HMACs of the client.
    sql: `CREATE TABLE rate_buckets (
            key text COLLATE "C" PRIMARY KEY,
            tokens double precision NOT NULL,
            updated_ms bigint NOT NULL,
            allowed boolean NOT NULL
          )`,
  },
  {
    version: 3,
    name: 'leader-epochs',
    // One row per singleton job: the epoch of its current leader (cluster/leadership.ts).
    sql: `CREATE TABLE leader_epochs (
            job text COLLATE "C" PRIMARY KEY,
            epoch bigint NOT NULL,
            elected_at timestamptz NOT NULL DEFAULT now()
          )`,
  },
  {
    version: 4,
    name: 'payment-queue',
    // Payments waiting for the batch leader, and their outcomes (cluster/payment-queue.ts): `id` is the
    // payment's record key (an HMAC), `item` and `outcome` are sealed like the records; `taken_epoch` is the
    // batch leader's epoch that took the payment into its batch.
    sql: `CREATE TABLE payment_queue (
            id text COLLATE "C" PRIMARY KEY,
            seq bigserial NOT NULL,
            item bytea NOT NULL,
            queued_at timestamptz NOT NULL DEFAULT now(),
            taken_epoch bigint,
            outcome bytea
          );
          CREATE INDEX payment_queue_waiting ON payment_queue (seq) WHERE taken_epoch IS NULL`,
  },
  {
    version: 5,
    name: 'pool-events',
    // The pool's events as the indexers read them (services/event-archive.ts): public chain data, kept beside
    // the records so `store recover` (which sets `kv` aside) and new replicas rebuild from them.
    sql: `CREATE TABLE pool_events (
            id text COLLATE "C" PRIMARY KEY,
            event jsonb NOT NULL
          )`,
  },
];

export const SCHEMA_VERSION = MIGRATIONS[MIGRATIONS.length - 1]!.version;
