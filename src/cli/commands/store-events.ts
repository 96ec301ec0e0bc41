// `pool-proxy store export-events|import-events`: the proxy's archive of the pool's events
// (src/proxy/services/event-archive.ts) as JSON lines, one sealed event a line. An export carries a pool's
// history to where the RPC no longer keeps it (a rebuilt data directory, a move of this deployment); an import
// adds such an export's events to the archive (the ones it holds already are kept once), so the next start, or
// a store made by `store recover`, rebuilds from them. An import writes nothing unless every line is an event
// sealed under this master key (archive-seal.ts), of this deployment's contracts, and none differs from the
// archived event of the same id.
import { createReadStream, createWriteStream, existsSync } from 'node:fs';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import type { Command } from 'commander';
import { loadConfig, type ProxyConfig } from '../../proxy/config.ts';
import { ArchiveSeal } from '../../proxy/services/archive-seal.ts';
import { resolveContracts } from '../../proxy/services/deployment.ts';
import {
  checkOwnContracts,
  type EventArchive,
  LevelEventArchive,
  parseArchived,
  PostgresEventArchive,
  type SealedEvent,
} from '../../proxy/services/event-archive.ts';
import { loadMasterKey } from '../../proxy/store/master-key.ts';
import { PostgresBackend } from '../../proxy/store/postgres-backend.ts';
import { ledgerForRecovery } from './store-ledger.ts';

const CHUNK = 500;

/** The configured master key (the archive is sealed under it), or an error saying it is missing. */
export function archiveMasterKey(config: ProxyConfig): Uint8Array {
  if (config.masterKeyHex === '' && !existsSync(config.masterKeyFile))
    throw new Error(
      `no master key (${config.masterKeyFile} is missing and POOL_PROXY_MASTER_KEY is unset): the event ` +
        'archive is sealed with the key of the deployment it belongs to',
    );
  return loadMasterKey(config.masterKeyHex, config.masterKeyFile);
}

/** Runs `work` with the configured archive (undefined: a LevelDB data directory that has none yet). */
export async function withArchive<T>(
  config: ProxyConfig,
  masterKey: Uint8Array,
  work: (archive: EventArchive | undefined) => Promise<T>,
  create = false,
): Promise<T> {
  const seal = new ArchiveSeal(masterKey);
  if (config.databaseUrl !== '') {
    const backend = await PostgresBackend.open(config.databaseUrl);
    try {
      return await work(new PostgresEventArchive(backend, seal));
    } finally {
      await backend.close();
    }
  }
  if (!create && !existsSync(config.eventArchiveDir)) return work(undefined);
  const archive = await LevelEventArchive.open(config.eventArchiveDir, seal);
  try {
    return await work(archive);
  } finally {
    await archive.close();
  }
}

async function exportEvents(config: ProxyConfig, file: string): Promise<string> {
  const out = createWriteStream(file, { flags: 'wx' });
  let count = 0;
  let range: [number, number] | undefined;
  await withArchive(config, archiveMasterKey(config), async (archive) => {
    for (let after: string | undefined; archive !== undefined;) {
      const page = await archive.page(after, CHUNK);
      if (page.length === 0) break;
      for (const event of page) if (!out.write(`${JSON.stringify(event)}\n`)) await once(out, 'drain');
      count += page.length;
      range = [range?.[0] ?? page[0]!.ledger, page.at(-1)!.ledger];
      after = page.at(-1)!.id;
    }
  });
  out.end();
  await once(out, 'finish');
  return `exported ${count} pool events${range ? ` (ledgers ${range[0]}–${range[1]})` : ''} to ${file}`;
}

async function importEvents(config: ProxyConfig, file: string): Promise<string> {
  if (!existsSync(file)) throw new Error(`there is no file ${file}`);
  // Every line is checked before anything is written: a bad export changes nothing.
  const masterKey = archiveMasterKey(config);
  const seal = new ArchiveSeal(masterKey);
  const events: SealedEvent[] = [];
  const lines = new Map<string, number>();
  let line = 0;
  for await (const text of createInterface({ input: createReadStream(file), crlfDelay: Infinity })) {
    line++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      throw new Error(`${file} line ${line}: not JSON`);
    }
    const event = parseArchived(value, `${file} line ${line}`);
    seal.check(event, event.mac, `${file} line ${line}`);
    events.push(event);
    lines.set(event.id, line);
  }
  checkOwnContracts(events, await deploymentContracts(config), (e) => `${file} line ${lines.get(e.id)}`);
  // One append: all or nothing (an event archived already with other content refuses the whole import).
  await withArchive(config, masterKey, async (archive) => archive!.append(events), true);
  const ledgers = events.map((e) => e.ledger);
  return `imported ${events.length} pool events${events.length ? ` (ledgers ${Math.min(...ledgers)}–${Math.max(...ledgers)})` : ''} into the archive`;
}

/** The deployment's contract ids (from the configuration, or the ledger of the data directory). */
async function deploymentContracts(config: ProxyConfig) {
  const recovery = await ledgerForRecovery(config, process.env);
  try {
    return (await resolveContracts(recovery.ledger)).contracts;
  } finally {
    await recovery.close();
  }
}

export function registerEventCommands(store: Command): void {
  const dataDir = [
    '--data-dir <dir>',
    'directory that holds every store',
    process.env.POOL_PROXY_DATA_DIR ?? './data',
  ] as const;
  const run =
    (name: string, work: (config: ProxyConfig, file: string) => Promise<string>) =>
    async (opts: { dataDir: string; to?: string; from?: string }) => {
      try {
        const config = loadConfig({ ...process.env, POOL_PROXY_DATA_DIR: opts.dataDir });
        console.log(await work(config, (opts.to ?? opts.from)!));
      } catch (error) {
        console.error(`pool-proxy store ${name}: ${(error as Error).message}`);
        process.exit(1);
      }
    };
  store
    .command('export-events')
    .description("write the proxy's archive of the pool's events to a file (JSON lines)")
    .requiredOption('--to <file>', 'file to write (must not exist)')
    .option(...dataDir)
    .action(run('export-events', exportEvents));
  store
    .command('import-events')
    .description('add the pool events of an export to the archive the next start rebuilds from')
    .requiredOption('--from <file>', 'an export of `store export-events`')
    .option(...dataDir)
    .action(run('import-events', importEvents));
}
