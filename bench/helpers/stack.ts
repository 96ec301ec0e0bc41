// What every benchmark of the proxy starts the same way: the native prover daemon on a free loopback port
// (on this project's built circuits) and the proxy's environment against a sandbox and that daemon (a fresh
// master key, the sandbox's operator and allowlist admin, an operator token every proxy of the benchmark shares,
// no rate limits, which would otherwise throttle a benchmark's own burst). Each benchmark adds its own settings
// on top.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOperatorToken } from '../../src/proxy/auth/operator-token.ts';
import { type ProverDaemon, startProverDaemon } from '../../src/prover/daemon/server.ts';

export const CIRCUITS_DIR = fileURLToPath(new URL('../../build/circuits', import.meta.url));

/** The native prover daemon on 127.0.0.1, ready. */
export async function startBenchProver(): Promise<ProverDaemon> {
  const daemon = await startProverDaemon({
    listen: '127.0.0.1:0',
    circuitsDir: CIRCUITS_DIR,
    engine: 'native',
  });
  await daemon.ready;
  return daemon;
}

/** The proxy's environment for a benchmark: the sandbox's accounts, the daemon, a new master key. */
export function benchProxyEnv(
  sandbox: { rpcUrl: string; secrets(): { operator: string; admin: string } },
  daemon: { address: string },
  dataDir?: string,
): Record<string, string> {
  const secrets = sandbox.secrets();
  const tokenFile = join(mkdtempSync(join(tmpdir(), 'pp-bench-operator-')), 'operator.token');
  loadOperatorToken(tokenFile);
  return {
    POOL_PROXY_PORT: '0',
    POOL_PROXY_OPERATOR_TOKEN_FILE: tokenFile,
    ...(dataDir !== undefined && { POOL_PROXY_DATA_DIR: dataDir }),
    POOL_PROXY_MASTER_KEY: randomBytes(32).toString('hex'),
    POOL_PROXY_RPC_URL: sandbox.rpcUrl,
    POOL_PROXY_OPERATOR_SECRET: secrets.operator,
    POOL_PROXY_ASP_ADMIN_SECRET: secrets.admin,
    POOL_PROXY_PROVER_ADDRESSES: daemon.address,
    POOL_PROXY_RATE_LIMIT_IP_PER_SECOND: '0',
    POOL_PROXY_RATE_LIMIT_TOKEN_PER_SECOND: '0',
  };
}

/** The operator's Authorization header for proxies started with `env` (benchProxyEnv made its token). */
export function benchOperator(env: Record<string, string | undefined>): Record<string, string> {
  return { authorization: `Bearer ${loadOperatorToken(env.POOL_PROXY_OPERATOR_TOKEN_FILE!)}` };
}
