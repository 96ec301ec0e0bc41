// `pool-proxy store check|recover` on a PostgreSQL store (POOL_PROXY_DATABASE_URL). check: the schema version
// is known, the master key opens the store, and every record authenticates (AES-GCM under its own key).
// recover: with no replica running, the records table is renamed aside (kept) and an empty one created; the
// next start rebuilds from the master key and the chain, as for LevelDB (store-recovered.ts says what the empty
// store starts with).
import { EncryptedStore, StoreTamperError } from '../../proxy/store/encrypted-store.ts';
import { MIGRATIONS } from '../../proxy/store/migrations.ts';
import { PostgresBackend } from '../../proxy/store/postgres-backend.ts';
import { prepareRecoveredStore } from './store-recovered.ts';

/** Opens the database store and authenticates every record; returns how many there are. */
export async function checkDatabaseStore(url: string, masterKey: Uint8Array): Promise<number> {
  const store = await EncryptedStore.on(await PostgresBackend.open(url), masterKey);
  try {
    let records = 0;
    const bad: string[] = [];
    for await (const [key] of store.backend.entries('')) {
      records += 1;
      try {
        await store.get(key);
      } catch (error) {
        if (!(error instanceof StoreTamperError)) throw error;
        bad.push(key);
      }
    }
    if (bad.length > 0)
      throw new Error(
        `${bad.length} of ${records} records in ${store.backend.location} fail authentication (first: ${bad[0]}); ` +
          'run pool-proxy store recover',
      );
    return records;
  } finally {
    await store.close();
  }
}

/** Moves the records table aside (returns its new name) and leaves an empty store for `masterKey`. */
export async function recoverDatabaseStore(url: string, masterKey: Uint8Array): Promise<string> {
  const backend = await PostgresBackend.open(url);
  try {
    const { rows } = await backend.query<{ n: string }>(
      `SELECT count(DISTINCT pid) AS n FROM pg_locks
       WHERE locktype = 'advisory' AND granted AND pid <> pg_backend_pid()
         AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    if (Number(rows[0]!.n) > 0)
      throw new Error(
        `proxies are running on ${backend.location} (${rows[0]!.n} connections hold their locks): stop every replica first`,
      );
    const aside = `kv_damaged_${new Date().toISOString().replace(/[-:.TZ]/g, '')}`;
    const records = MIGRATIONS.find((m) => m.name === 'records')!;
    const client = await backend.pool.connect();
    try {
      await client.query('BEGIN');
      await client.query(`ALTER TABLE kv RENAME TO ${aside}`);
      await client.query(`ALTER INDEX kv_pkey RENAME TO ${aside}_pkey`);
      await client.query(records.sql);
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {});
      throw error;
    } finally {
      client.release();
    }
    const fresh = await EncryptedStore.on(backend, masterKey);
    await prepareRecoveredStore(fresh);
    await fresh.close();
    return aside;
  } catch (error) {
    await backend.close().catch(() => {});
    throw error;
  }
}
