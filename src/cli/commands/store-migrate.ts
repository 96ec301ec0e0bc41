// `pool-proxy store migrate --to postgres://…`: copies a LevelDB proxy store into an empty PostgreSQL
// database, record by record and unchanged — the values stay sealed with the same master key, the keys stay
// HMACs — then checks the copy opens with that master key and holds every record. The archive of the pool's
// events beside it (src/proxy/services/event-archive.ts), when there is one, goes into the database's
// `pool_events` table, so a later recover still has the history the RPC no longer keeps. The LevelDB store and
// archive are left as they were; once the proxies run on the database they can be deleted.
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { loadConfig } from '../../proxy/config.ts';
import type { RawOp } from '../../proxy/store/backend.ts';
import { EncryptedStore } from '../../proxy/store/encrypted-store.ts';
import { LevelBackend } from '../../proxy/store/level-backend.ts';
import { loadMasterKey } from '../../proxy/store/master-key.ts';
import { isPostgresUrl, PostgresBackend, redactUrl } from '../../proxy/store/postgres-backend.ts';
import { LevelEventArchive, PostgresEventArchive } from '../../proxy/services/event-archive.ts';
import { ArchiveSeal } from '../../proxy/services/archive-seal.ts';

const BATCH = 500;

export interface MigrateResult {
  records: number;
  /** pool events copied from the archive (0 without one) */
  events: number;
}

export interface MigrateRequest {
  /** the LevelDB store */
  dir: string;
  /** the LevelDB event archive beside it (absent: none to copy) */
  archiveDir?: string;
  /** an empty PostgreSQL database */
  url: string;
  masterKey: Uint8Array;
}

/** Copies every record of the LevelDB store, and the event archive's events, into the empty database. */
export async function migrateStore({
  dir,
  archiveDir,
  url,
  masterKey,
}: MigrateRequest): Promise<MigrateResult> {
  if (!isPostgresUrl(url)) throw new Error(`--to must be a postgres:// URL, got "${redactUrl(url)}"`);
  if (!existsSync(dir)) throw new Error(`there is no store in ${dir}`);
  // Opening checks the files (damage) and the lock (a running proxy), and the master key against the store.
  const source = await EncryptedStore.on(await LevelBackend.open(dir), masterKey);
  try {
    const target = await PostgresBackend.open(url);
    try {
      const { rows } = await target.query<{ n: string }>('SELECT count(*) AS n FROM kv');
      if (Number(rows[0]!.n) > 0)
        throw new Error(
          `the database ${target.location} already holds ${rows[0]!.n} records: migrate into an empty database`,
        );
      let records = 0;
      let ops: RawOp[] = [];
      for await (const [key, value] of source.backend.entries('')) {
        ops.push({ type: 'put', key, value });
        records += 1;
        if (ops.length >= BATCH) {
          await target.batch(ops);
          ops = [];
        }
      }
      await target.batch(ops);
      const copied = await target.query<{ n: string }>('SELECT count(*) AS n FROM kv');
      if (Number(copied.rows[0]!.n) !== records)
        throw new Error(`copied ${records} records but the database holds ${copied.rows[0]!.n}`);
      const events =
        archiveDir !== undefined && existsSync(archiveDir)
          ? await copyArchive(archiveDir, target, new ArchiveSeal(masterKey))
          : 0;
      // The copy must open with the master key (its key check decrypts).
      const check = await EncryptedStore.on(target, masterKey);
      await check.close();
      return { records, events };
    } catch (error) {
      await target.close().catch(() => {});
      throw error;
    }
  } finally {
    await source.close();
  }
}

/** Appends every event of the LevelDB archive in `dir` to the database's archive; returns how many. */
async function copyArchive(dir: string, target: PostgresBackend, seal: ArchiveSeal): Promise<number> {
  const source = await LevelEventArchive.open(dir, seal);
  try {
    const into = new PostgresEventArchive(target, seal);
    let events = 0;
    for (let after: string | undefined; ;) {
      const page = await source.page(after, BATCH);
      if (page.length === 0) return events;
      await into.append(page);
      events += page.length;
      after = page.at(-1)!.id;
    }
  } finally {
    await source.close();
  }
}

export function registerStoreMigrate(store: Command): void {
  store
    .command('migrate')
    .description('copy the LevelDB proxy store into an empty PostgreSQL database (values stay encrypted)')
    .requiredOption('--to <url>', 'postgres://user:password@host:port/database')
    .option(
      '--data-dir <dir>',
      'directory that holds the master key file and the LevelDB store',
      process.env.POOL_PROXY_DATA_DIR ?? './data',
    )
    .action(async (opts: { to: string; dataDir: string }) => {
      try {
        const config = loadConfig({
          ...process.env,
          POOL_PROXY_DATA_DIR: resolve(opts.dataDir),
          POOL_PROXY_DATABASE_URL: undefined,
        });
        if (config.masterKeyHex === '' && !existsSync(config.masterKeyFile))
          throw new Error(
            `no master key (${config.masterKeyFile} is missing and POOL_PROXY_MASTER_KEY is unset): the store opens only with the key it was made with`,
          );
        const masterKey = loadMasterKey(config.masterKeyHex, config.masterKeyFile);
        const { records, events } = await migrateStore({
          dir: config.storeDir,
          archiveDir: config.eventArchiveDir,
          url: opts.to,
          masterKey,
        });
        console.log(`copied ${records} records from ${config.storeDir} to ${redactUrl(opts.to)}`);
        if (events > 0) console.log(`copied ${events} pool events from ${config.eventArchiveDir}`);
        console.log(
          `start the proxies with POOL_PROXY_DATABASE_URL=${redactUrl(opts.to)} and the same master key; ` +
            `${config.storeDir} is unchanged (delete it once they run)`,
        );
      } catch (error) {
        console.error(`pool-proxy store migrate: ${(error as Error).message}`);
        process.exit(1);
      }
    });
}
