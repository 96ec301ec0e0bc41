// `pool-proxy store check|recover`: look at and rebuild the proxy's encrypted store. The store holds nothing
// the chain and the master key cannot give back (agents, notes, spent marks come from the pool's events;
// keys derive from the master key), so recovery is: move the damaged store aside, create an empty one, and
// let the next start's indexer replay the pool's events into it (the same path as a fresh data directory).
import { existsSync, renameSync } from 'node:fs';
import type { Command } from 'commander';
import { loadConfig, type ProxyConfig } from '../../proxy/config.ts';
import { EncryptedStore } from '../../proxy/store/encrypted-store.ts';
import { findKeyOnChain } from '../../proxy/services/key-on-chain.ts';
import { ArchiveSealError } from '../../proxy/services/archive-seal.ts';
import { resolveContracts } from '../../proxy/services/deployment.ts';
import { ForeignEventError } from '../../proxy/services/event-archive.ts';
import { findCoverageGap } from '../../proxy/services/event-coverage.ts';
import { PoolReads } from '../../proxy/services/pool-reads.ts';
import { rpcServer } from '../../ledger/rpc-server.ts';
import { loadMasterKey } from '../../proxy/store/master-key.ts';
import { findDamage } from '../../storage/leveldb-integrity.ts';
import { lockingProcess } from '../../storage/open-level.ts';
import { registerStoreMigrate } from './store-migrate.ts';
import { checkDatabaseStore, recoverDatabaseStore } from './store-database.ts';
import { prepareRecoveredStore } from './store-recovered.ts';
import { ledgerForRecovery } from './store-ledger.ts';
import { registerEventCommands, withArchive } from './store-events.ts';
import { redactUrl } from '../../proxy/store/postgres-backend.ts';

interface StoreOptions {
  dataDir: string;
}

function configFor(opts: StoreOptions): ProxyConfig {
  return loadConfig({ ...process.env, POOL_PROXY_DATA_DIR: opts.dataDir });
}

function refuseIfInUse(config: ProxyConfig): void {
  const pid = existsSync(config.storeDir) ? lockingProcess(config.storeDir) : undefined;
  if (pid !== undefined) {
    throw new Error(`the store in ${config.storeDir} is in use by process ${pid}: stop the service first`);
  }
}

/** Where the master key came from, for messages. */
const keySource = (config: ProxyConfig) =>
  config.masterKeyHex !== '' ? 'POOL_PROXY_MASTER_KEY' : `the master key in ${config.masterKeyFile}`;

/**
 * Checks the master key and the pool's history against the ledger (the embedded one of the data directory,
 * started for the check, or POOL_PROXY_RPC_URL) and the proxy's event archive: refuses a key under which the
 * pool's events show none of the pool's notes while the pool holds some, and a history with a gap (events the
 * RPC no longer keeps and no archive holds).
 */
async function checkAgainstLedger(config: ProxyConfig, masterKey: Uint8Array): Promise<void> {
  let found;
  let gap;
  const recovery = await ledgerForRecovery(config, process.env);
  try {
    ({ found, gap } = await withArchive(config, masterKey, async (archive) => {
      const found = await findKeyOnChain(recovery.ledger, config.indexer.startLedger, masterKey, archive);
      const { contracts } = await resolveContracts(recovery.ledger);
      const server = rpcServer(recovery.ledger.rpcUrl);
      const gap = await findCoverageGap({
        server,
        reads: new PoolReads(server, recovery.ledger.networkPassphrase, contracts.pool),
        contracts,
        startLedger: config.indexer.startLedger,
        archive,
      });
      return { found, gap };
    }));
  } catch (error) {
    if (error instanceof ArchiveSealError)
      throw new Error(
        `${keySource(config)} does not verify the seal of the event archive's pool event ${error.eventId}: ` +
          'either it is not the master key this deployment was made with (use the key the store was made ' +
          'with, from your backup), or the archive was edited (import an untouched export of this deployment)',
      );
    if (error instanceof ForeignEventError) throw error;
    throw new Error(
      `cannot check the master key and the pool's events against the pool on ${recovery.ledger.rpcUrl} ` +
        `(${(error as Error).message}); start the ledger or point POOL_PROXY_RPC_URL at it, then run recover again`,
    );
  } finally {
    await recovery.close();
  }
  // A gap first: a key cannot be judged on part of the pool's history.
  if (gap !== undefined) throw new Error(gap);
  if (found.commitments > 0 && !found.opens) {
    throw new Error(
      `${keySource(config)} opens none of the pool's ${found.commitments} notes: it is not the key this proxy's deposits ` +
        'were made with, and a store rebuilt under it would show every balance empty. Use the key the store ' +
        'was made with (from your backup).',
    );
  }
  console.log(
    found.opens
      ? 'the master key opens this proxy’s notes on chain'
      : 'the pool holds no notes yet: nothing to check the master key against',
  );
  console.log("the event archive and the RPC hold the pool's whole history");
}

function fail(command: string, error: unknown): never {
  console.error(`pool-proxy store ${command}: ${(error as Error).message}`);
  process.exit(1);
}

export function registerStore(program: Command): void {
  const store = program.command('store').description("check, rebuild or move the proxy's encrypted store");
  registerStoreMigrate(store);
  registerEventCommands(store);
  const dataDirOption = [
    '--data-dir <dir>',
    'directory that holds every store',
    process.env.POOL_PROXY_DATA_DIR ?? './data',
  ] as const;

  store
    .command('check')
    .description(
      "check the proxy store's files against their checksums, or on PostgreSQL every record against the master key (exit 1 when damaged)",
    )
    .option(...dataDirOption)
    .action(async (opts: StoreOptions) => {
      try {
        const config = configFor(opts);
        if (config.databaseUrl !== '') {
          if (config.masterKeyHex === '' && !existsSync(config.masterKeyFile))
            throw new Error(
              `no master key (${config.masterKeyFile} is missing and POOL_PROXY_MASTER_KEY is unset): a database store is checked with the key it was made with`,
            );
          const masterKey = loadMasterKey(config.masterKeyHex, config.masterKeyFile);
          const records = await checkDatabaseStore(config.databaseUrl, masterKey);
          console.log(`store ${redactUrl(config.databaseUrl)}: all ${records} records authenticate`);
          return;
        }
        if (!existsSync(config.storeDir)) throw new Error(`there is no store in ${config.storeDir}`);
        const damage = findDamage(config.storeDir);
        if (damage) {
          throw new Error(
            `${damage.file} at byte ${damage.offset}: ${damage.reason}; run pool-proxy store recover --data-dir ${config.dataDir}`,
          );
        }
        console.log(`store ${config.storeDir}: every checked file is sound`);
      } catch (error) {
        fail('check', error);
      }
    });

  store
    .command('recover')
    .description(
      'move the proxy store aside and create an empty one; the next start rebuilds agents, notes and balances from the master key and the chain',
    )
    .option(...dataDirOption)
    .action(async (opts: StoreOptions) => {
      try {
        const config = configFor(opts);
        if (config.masterKeyHex === '' && !existsSync(config.masterKeyFile)) {
          throw new Error(
            `no master key: ${config.masterKeyFile} is missing and POOL_PROXY_MASTER_KEY is unset. The store ` +
              `can only be rebuilt with the key it was made with: put the key file back from your backup ` +
              `(or set POOL_PROXY_MASTER_KEY), then run recover again.`,
          );
        }
        const masterKey = loadMasterKey(config.masterKeyHex, config.masterKeyFile, config.storeDir);
        refuseIfInUse(config);
        await checkAgainstLedger(config, masterKey);
        if (config.databaseUrl !== '') {
          const aside = await recoverDatabaseStore(config.databaseUrl, masterKey);
          console.log(
            `moved the records of ${redactUrl(config.databaseUrl)} to table ${aside} (kept; drop it once the service is back) and created an empty store for this master key`,
          );
          return;
        }
        if (existsSync(config.storeDir)) {
          const damage = findDamage(config.storeDir);
          console.log(
            damage
              ? `damaged: ${damage.file} at byte ${damage.offset}: ${damage.reason}`
              : 'no damage found in the checked files; rebuilding anyway, as asked',
          );
          const aside = `${config.storeDir}.damaged-${new Date().toISOString().replace(/[:.]/g, '-')}`;
          renameSync(config.storeDir, aside);
          console.log(`moved ${config.storeDir} to ${aside} (kept; delete it once the service is back)`);
        }
        const fresh = await EncryptedStore.open(config.storeDir, masterKey);
        await prepareRecoveredStore(fresh);
        await fresh.close();
        console.log(`created an empty store in ${config.storeDir} for this master key`);
        console.log(
          'start the service with the same master key and ledger: its indexer replays the pool events ' +
            '(from POOL_PROXY_INDEXER_START_LEDGER, or the oldest ledger the RPC keeps) and rebuilds every ' +
            'agent, note and balance. Prepared deposits that were never submitted are gone: prepare them again.',
        );
      } catch (error) {
        fail('recover', error);
      }
    });
}
