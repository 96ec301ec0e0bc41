// Runs `pool-proxy start` (sandbox ledger + prover daemon + proxy) as a child process on free loopback
// ports (the local x402 facilitator and demo service included) with a fresh data directory, for tests that
// drive the whole service from outside (browser, demo).
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Account, Address, Contract, Keypair, rpc, scValToNative, TransactionBuilder } from '#stellar-sdk';
import { freeLoopbackPort as freePort } from '../../../src/listen.ts';
import { runStart } from '../../helpers/cli.ts';

export const USDC = 10_000_000n;

export { freePort };

export interface RunningService {
  proxyUrl: string;
  sandboxUrl: string;
  rpcUrl: string;
  networkPassphrase: string;
  token: string;
  server: rpc.Server;
  output(): string;
  /** Creates the account (test XLM) and mints `usdc` whole test USDC to it. */
  fund(address: string, usdc: number): Promise<void>;
  /** The account's USDC balance on chain, in stroops. */
  usdcBalance(address: string): Promise<bigint>;
  stop(): Promise<void>;
}

export async function startService(env: Record<string, string> = {}): Promise<RunningService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pool-proxy-svc-'));
  const [sandboxPort, proverPort, proxyPort, facilitatorPort, demoPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  const run = runStart(
    {
      dataDir,
      sandbox: `127.0.0.1:${sandboxPort}`,
      prover: `127.0.0.1:${proverPort}`,
      ledgerMs: 100,
      facilitator: `127.0.0.1:${facilitatorPort}`,
      demo: `127.0.0.1:${demoPort}`,
    },
    {
      POOL_PROXY_PORT: String(proxyPort),
      POOL_PROXY_RATE_LIMIT_IP_PER_SECOND: '0',
      POOL_PROXY_RATE_LIMIT_TOKEN_PER_SECOND: '0',
      POOL_PROXY_INDEXER_POLL_MS: '100',
      // Short payment batches keep the tests quick; the privacy of the window is not under test here.
      POOL_PROXY_BATCH_WINDOW_MS: '500',
      ...env,
    },
  );
  const stop = async () => {
    await run.stop();
    rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    await run.waitFor(/"msg":"ready\."/, 8 * 60_000);
  } catch (error) {
    await stop();
    throw error;
  }

  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const info = (await (await fetch(`${sandboxUrl}/sandbox/info`)).json()) as {
    networkPassphrase: string;
    contracts: { token: string };
  };
  const rpcUrl = `${sandboxUrl}/rpc`;
  const server = new rpc.Server(rpcUrl, { allowHttp: true });
  const viewer = Keypair.random().publicKey();
  return {
    proxyUrl: `http://127.0.0.1:${proxyPort}`,
    sandboxUrl,
    rpcUrl,
    networkPassphrase: info.networkPassphrase,
    token: info.contracts.token,
    server,
    output: run.output,
    async fund(address, usdc) {
      const res = await fetch(`${sandboxUrl}/friendbot?addr=${address}&usdc=${usdc}`);
      if (!res.ok) throw new Error(`friendbot: ${await res.text()}`);
    },
    async usdcBalance(address) {
      // A read-only simulation needs no existing source account.
      const tx = new TransactionBuilder(new Account(viewer, '0'), {
        fee: '100',
        networkPassphrase: info.networkPassphrase,
      })
        .addOperation(new Contract(info.contracts.token).call('balance', new Address(address).toScVal()))
        .setTimeout(30)
        .build();
      const sim = await server.simulateTransaction(tx);
      if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(`balance simulation failed: ${sim.error}`);
      return BigInt(scValToNative(sim.result!.retval));
    },
    stop,
  };
}
