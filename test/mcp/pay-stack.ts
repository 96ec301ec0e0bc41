// The real stack plus the local x402 pair (our facilitator and the demo paid service on the sandbox), as
// `pool-proxy start` wires them: the pool wallet holds a USDC float, the demo host is allow-listed (beside the
// hosts `env` allow-lists), and the proxy is told both URLs. Built on test/proxy/helpers/stack.ts: its first
// proxy is replaced by one that knows the x402 pair (same store, same ledger, same prover daemon).
import type { Env } from '../../src/proxy/config.ts';
import type { ProxyHandle } from '../../src/proxy/server.ts';
import type { Clock } from '../../src/proxy/util/clock.ts';
import { type LocalX402, localX402Env, startLocalX402 } from '../../src/x402/local-services.ts';
import { type Stack, type StackOptions, startStack } from '../proxy/helpers/stack.ts';

export const POOL_WALLET_FLOAT_USDC = 100;

export interface PayStack {
  stack: Stack;
  x402: LocalX402;
  proxy: ProxyHandle;
  close(): Promise<void>;
}

/** `clock`: the proxy's clock, for a test that moves time instead of sleeping; `sandbox`: how the ledger is made. */
export async function startPayStack(
  env: Env = {},
  options: { clock?: Clock; sandbox?: StackOptions } = {},
): Promise<PayStack> {
  const stack = await startStack(
    {
      POOL_PROXY_BATCH_WINDOW_MS: '300',
      // No settlement run during a test file: it would move pool USDC between a test's before and after.
      POOL_PROXY_SETTLE_INTERVAL_MS: '86400000',
      ...env,
    },
    options.sandbox,
  );
  await stack.proxy.close();
  const { sandbox } = stack;
  const float = await fetch(
    `${sandbox.url}/friendbot?addr=${sandbox.info.accounts.poolWallet}&usdc=${POOL_WALLET_FLOAT_USDC}`,
  );
  if (!float.ok) throw new Error(`friendbot: ${await float.text()}`);
  const x402 = await startLocalX402({
    rpcUrl: sandbox.rpcUrl,
    networkPassphrase: stack.config.ledger.networkPassphrase,
    asset: sandbox.info.contracts.token,
    facilitator: { host: '127.0.0.1', port: 0 },
    demo: { host: '127.0.0.1', port: 0 },
  });
  const { proxy } = await stack.startProxy(
    {
      ...localX402Env(x402, env.POOL_PROXY_PAY_ALLOWED_HOSTS),
      POOL_PROXY_POOL_WALLET_SECRET: sandbox.secrets().poolWallet,
    },
    options.clock === undefined ? {} : { clock: options.clock },
  );
  return {
    stack,
    x402,
    proxy,
    async close() {
      await proxy.close();
      await x402.close();
      await stack.daemon.stop({ force: true });
      await sandbox.close();
    },
  };
}
