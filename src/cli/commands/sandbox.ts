import type { Command } from 'commander';
import { STANDALONE_PASSPHRASE } from '../../ledger/networks.ts';
import { createLogger } from '../../proxy/util/logger.ts';
import { parseListen } from '../../listen.ts';
import { parsePassphrase } from '../flags.ts';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

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
    .option(
      '--retention-ledgers <n>',
      "keep transactions and events of the last n ledgers only, as a real RPC does (testnet's: about 7 days)",
    )
    .option(TLS_FLAG, TLS_HELP)
    .action((opts: SandboxOptions) =>
      runSandbox(opts).catch((error: Error) => {
        // a refused flag or a sandbox that cannot start: one line naming it, no stack trace
        console.error(`pool-proxy sandbox: ${error.message}`);
        process.exit(2);
      }),
    );
}

/** The flags of `pool-proxy sandbox`, as commander gives them. */
interface SandboxOptions {
  listen: string;
  data?: string;
  ledgerMs: string;
  vkey?: string;
  networkPassphrase: string;
  tls?: string | boolean;
  retentionLedgers?: string;
}

async function runSandbox(opts: SandboxOptions): Promise<void> {
  const { host, port } = parseListen(opts.listen);
  const tlsAt = tlsListen(opts.tls, host, port);
  const ledgerMs = Number(opts.ledgerMs);
  if (!Number.isInteger(ledgerMs) || ledgerMs < 1 || ledgerMs > 3_600_000) {
    throw new Error(`--ledger-ms must be an integer from 1 to 3600000, got ${opts.ledgerMs}`);
  }
  const networkPassphrase = parsePassphrase(opts.networkPassphrase);
  const retention = opts.retentionLedgers === undefined ? undefined : Number(opts.retentionLedgers);
  if (retention !== undefined && !(Number.isInteger(retention) && retention >= 1)) {
    throw new Error(`--retention-ledgers must be a whole number from 1, got ${opts.retentionLedgers}`);
  }
  // The engine and the contracts load only once the flags are known to be good.
  const [{ startPoolSandbox }, { closeFailedLogLine, ledgerLogLines }, { sandboxCertificate }] =
    await Promise.all([
      import('../../deploy/sandbox-network.ts'),
      import('../../sandbox/ledger-log.ts'),
      import('../../sandbox/tls.ts'),
    ]);
  // (without --data the certificate lives in a temporary directory, as the ledger lives in memory)
  const tls =
    tlsAt &&
    (await sandboxCertificate(
      opts.data ? join(opts.data, 'tls') : mkdtempSync(join(tmpdir(), 'pool-proxy-tls-')),
      tlsAt.host,
    ));
  // Ledger closes with transactions and failed transactions are logged (JSON lines, pretty on a terminal).
  const logger = createLogger().child({ component: 'sandbox' });
  const sandbox = await startPoolSandbox({
    host,
    port,
    dataDir: opts.data,
    ledgerMs,
    vkey: opts.vkey,
    networkPassphrase,
    ...(tlsAt && tls && { tls: { ...tlsAt, cert: tls.cert, key: tls.key } }),
    onLedgerClosed: (meta, txs) => {
      for (const line of ledgerLogLines(meta, txs)) logger.log(line.level, line.message, line.fields);
    },
    onCloseFailed: (error) => {
      const line = closeFailedLogLine(error);
      logger.log(line.level, line.message, line.fields);
    },
  });
  if (retention !== undefined) sandbox.chain.state.retainLedgers(retention);
  const info = sandbox.info;
  console.log(`sandbox ledger: ${sandbox.rpcUrl} (${info.networkPassphrase})`);
  console.log(`friendbot: ${sandbox.url}/friendbot?addr=G…&usdc=N   info: ${sandbox.url}/sandbox/info`);
  if (tls && sandbox.httpsRpcUrl) console.log(httpsLine(sandbox.httpsRpcUrl, tls.certPath));
  for (const [name, id] of Object.entries(info.contracts)) console.log(`  ${name.padEnd(18)} ${id}`);
  const stop = async () => {
    await sandbox.close();
    process.exit(0);
  };
  process.once('SIGINT', stop);
  process.once('SIGTERM', stop);
}

export const TLS_FLAG = '--tls [host:port]';
export const TLS_HELP =
  "also serve the sandbox's RPC over HTTPS (default: the port after the HTTP one) with a certificate made in the data directory";

/** Where `--tls` serves HTTPS: undefined without the flag; the given address, or the HTTP port + 1. */
export function tlsListen(
  flag: string | boolean | undefined,
  host: string,
  port: number,
): { host: string; port: number } | undefined {
  if (flag === undefined || flag === false) return undefined;
  if (typeof flag === 'string') return parseListen(flag);
  return { host, port: port === 0 ? 0 : port + 1 };
}

/** The line that tells where the HTTPS RPC is and how Node.js clients trust its certificate. */
export function httpsLine(httpsRpcUrl: string, certPath: string): string {
  return `sandbox RPC over HTTPS: ${httpsRpcUrl}   certificate ${certPath} (trust it: NODE_EXTRA_CA_CERTS=${certPath})`;
}
