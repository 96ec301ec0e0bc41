import type { Command } from 'commander';
import { STANDALONE_PASSPHRASE } from '../../ledger/networks.ts';
import { startPoolSandbox } from '../../../contracts/network.ts';
import { ledgerLogLines } from '../../sandbox/ledger-log.ts';
import { createLogger } from '../../proxy/util/logger.ts';
import { parseListen } from '../../listen.ts';

// Kept importable from here for existing callers; the parser itself is shared (src/listen.ts).
export { parseListen };

// `pool-proxy sandbox`: runs the embedded sandbox ledger alone (Soroban RPC at /rpc, friendbot, info).
export function registerSandbox(program: Command): void {
  program
    .command('sandbox')
    .description('run the embedded sandbox ledger (Soroban RPC, friendbot) with the pool contracts deployed')
    .option('--listen <host:port>', 'address to serve on', '127.0.0.1:8000')
    .option('--data <dir>', 'LevelDB data directory (default: in memory)')
    .option('--ledger-ms <n>', 'ledger close interval in milliseconds', '1000')
    .option('--vkey <path>', 'verification_key.json for the verifier (default: build/circuits/policy_tx_2_2)')
    .option('--network-passphrase <text>', 'network passphrase', STANDALONE_PASSPHRASE)
    .action(
      async (opts: {
        listen: string;
        data?: string;
        ledgerMs: string;
        vkey?: string;
        networkPassphrase: string;
      }) => {
        const { host, port } = parseListen(opts.listen);
        const ledgerMs = Number(opts.ledgerMs);
        if (!Number.isInteger(ledgerMs) || ledgerMs < 1 || ledgerMs > 3_600_000) {
          throw new Error(`--ledger-ms must be an integer from 1 to 3600000, got ${opts.ledgerMs}`);
        }
        const networkPassphrase = parsePassphrase(opts.networkPassphrase);
        // Ledger closes with transactions and failed transactions are logged (JSON lines, pretty on a terminal).
        const logger = createLogger().child({ component: 'sandbox' });
        const sandbox = await startPoolSandbox({
          host,
          port,
          dataDir: opts.data,
          ledgerMs,
          vkey: opts.vkey,
          networkPassphrase,
          onLedgerClosed: (meta, txs) => {
            for (const line of ledgerLogLines(meta, txs)) logger.log(line.level, line.message, line.fields);
          },
        });
        const info = sandbox.info;
        console.log(`sandbox ledger: ${sandbox.rpcUrl} (${info.networkPassphrase})`);
        console.log(`friendbot: ${sandbox.url}/friendbot?addr=G…&usdc=N   info: ${sandbox.url}/sandbox/info`);
        for (const [name, id] of Object.entries(info.contracts)) console.log(`  ${name.padEnd(18)} ${id}`);
        const stop = async () => {
          await sandbox.close();
          process.exit(0);
        };
        process.once('SIGINT', stop);
        process.once('SIGTERM', stop);
      },
    );
}

/** A network passphrase as given on the command line: printable text of 1 to 256 characters. */
export function parsePassphrase(text: string): string {
  if (!/^[\x20-\x7e]{1,256}$/.test(text) || text.trim() !== text) {
    throw new Error(
      '--network-passphrase must be 1 to 256 printable characters without leading or trailing spaces',
    );
  }
  return text;
}
