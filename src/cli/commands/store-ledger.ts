// The ledger `pool-proxy store recover` checks the master key against. On a data directory that holds the
// embedded ledger (`pool-proxy start` without POOL_PROXY_RPC_URL), that ledger does not run while the service
// is stopped: recover starts it from its directory, on a free loopback port, for the check and stops it
// after, so the operator need not start it alone and point POOL_PROXY_RPC_URL at it. A configured
// POOL_PROXY_RPC_URL is used as it is.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import type { Env, LedgerConfig, ProxyConfig } from '../../proxy/config.ts';

export interface RecoveryLedger {
  ledger: LedgerConfig;
  close(): Promise<void>;
}

export async function ledgerForRecovery(config: ProxyConfig, env: Env): Promise<RecoveryLedger> {
  const dir = join(config.dataDir, 'sandbox');
  if (env.POOL_PROXY_RPC_URL || !existsSync(dir)) return { ledger: config.ledger, close: async () => {} };
  const { startPoolSandbox } = await import('../../deploy/sandbox-network.ts');
  const sandbox = await startPoolSandbox({
    host: '127.0.0.1',
    port: 0,
    dataDir: dir,
    networkPassphrase: config.ledger.networkPassphrase,
  });
  console.log(`opened the embedded ledger in ${dir} for the check (${sandbox.rpcUrl})`);
  return {
    ledger: { ...config.ledger, rpcUrl: sandbox.rpcUrl, sandboxInfoUrl: `${sandbox.url}/sandbox/info` },
    close: () => sandbox.close(),
  };
}
