// The embedded pool sandbox on its own worker thread (see thread.ts): the same network as
// startPoolSandbox, with its ledger-close log lines forwarded to the main thread's logger. The handle
// offers what the CLI uses of a sandbox: its URLs, the network's public info and its secrets.
import {
  type PoolNetworkInfo,
  type PoolNetworkSecrets,
  startPoolSandbox,
} from '../../deploy/sandbox-network.ts';
import type { VerificationKeyInput } from '../../deploy/verification-key.ts';
import type { NetworkInfo } from '../../sandbox/index.ts';
import { closeFailedLogLine, ledgerLogLines } from '../../sandbox/ledger-log.ts';
import { sandboxCertificate } from '../../sandbox/tls.ts';
import { serveThread, startThread, type ThreadHandle, type ThreadOptions } from './thread.ts';

const PART = 'pool-sandbox';

export interface SandboxThreadOptions {
  host?: string;
  port?: number;
  ledgerMs?: number;
  dataDir?: string;
  vkey?: VerificationKeyInput;
  networkPassphrase?: string;
  /** leaves one pool tree takes (at genesis) */
  treeCapacity?: number;
  /** forward a log line per ledger close (as `pool-proxy sandbox` prints them) */
  logLedgers?: boolean;
  /** serve HTTPS too, on this address, with the certificate kept in `dir` (made there when missing) */
  tls?: { host: string; port: number; dir: string };
}

interface SandboxThreadInfo {
  url: string;
  rpcUrl: string;
  /** with `tls`: the RPC over HTTPS and the certificate's path */
  httpsRpcUrl?: string;
  certPath?: string;
  info: NetworkInfo<PoolNetworkInfo>;
  secrets: PoolNetworkSecrets;
}

export interface SandboxThread {
  url: string;
  rpcUrl: string;
  httpsRpcUrl?: string;
  certPath?: string;
  info: NetworkInfo<PoolNetworkInfo>;
  secrets(): PoolNetworkSecrets;
  close(): Promise<void>;
  utilization: ThreadHandle<unknown>['utilization'];
}

export async function startPoolSandboxThread(
  opts: SandboxThreadOptions,
  thread: ThreadOptions = {},
): Promise<SandboxThread> {
  const t = await startThread<SandboxThreadInfo>(new URL(import.meta.url), PART, opts, thread);
  return { ...t.info, secrets: () => t.info.secrets, close: t.close, utilization: t.utilization };
}

serveThread<SandboxThreadOptions, SandboxThreadInfo>(PART, async ({ logLedgers, tls, ...opts }, log) => {
  const cert = tls && (await sandboxCertificate(tls.dir, tls.host));
  const sandbox = await startPoolSandbox({
    ...opts,
    ...(tls && cert && { tls: { host: tls.host, port: tls.port, cert: cert.cert, key: cert.key } }),
    onLedgerClosed: logLedgers
      ? (meta, txs) => {
          for (const line of ledgerLogLines(meta, txs)) log(line);
        }
      : undefined,
    onCloseFailed: (error) => log(closeFailedLogLine(error)),
  });
  return {
    info: {
      url: sandbox.url,
      rpcUrl: sandbox.rpcUrl,
      ...(sandbox.httpsRpcUrl && cert && { httpsRpcUrl: sandbox.httpsRpcUrl, certPath: cert.certPath }),
      info: sandbox.info,
      secrets: sandbox.secrets(),
    },
    close: () => sandbox.close(),
  };
});
