// What stays up while `pool-proxy serve` processes are killed and restarted (the kill -9 tests): a sandbox
// ledger with 250 ms closes, the local x402 pair on a thread, the operator and pool wallet funded, and the
// environment a `serve` needs to reach them and a prover daemon. The chain and the provers do not die with a
// proxy host, so the tests kill only the proxy.
import { randomBytes } from 'node:crypto';
import { Account, Address, Contract, rpc, scValToNative, TransactionBuilder } from '#stellar-sdk';
import { type PoolSandbox, startPoolSandbox } from '../../../src/deploy/sandbox-network.ts';
import { type LocalX402Thread, startLocalX402Thread } from '../../../src/cli/threads/x402-thread.ts';
import { STANDALONE_PASSPHRASE } from '../../../src/ledger/networks.ts';
import { type ProverDaemon, startProverDaemon } from '../../../src/prover/daemon/server.ts';
import { localX402Env } from '../../../src/x402/local-services.ts';
import { type CliRun, runCli } from '../../helpers/cli.ts';
import { CIRCUITS_DIR } from './stack.ts';

export interface ServeRig {
  sandbox: PoolSandbox;
  x402: LocalX402Thread;
  /** What every `pool-proxy serve` of this rig is given (a fresh master key per rig). */
  env: Record<string, string>;
  close(): Promise<void>;
}

/** A native prover daemon on a free port, one witness worker, loaded. */
export async function startRigProver(): Promise<ProverDaemon> {
  const daemon = await startProverDaemon({
    listen: '127.0.0.1:0',
    circuitsDir: CIRCUITS_DIR,
    engine: 'native',
    witnessWorkers: 1,
  });
  await daemon.ready;
  return daemon;
}

export async function startServeRig(opts: {
  prover: string;
  poolWalletUsdc: number;
  /** the demo service's maxTimeoutSeconds: authorizations signed but never sent expire (and are released) after it */
  demoMaxTimeoutSeconds: number;
  channelCount?: number;
  /** leaves one pool tree takes (default: the whole 2^20) */
  treeCapacity?: number;
}): Promise<ServeRig> {
  const sandbox = await startPoolSandbox({
    port: 0,
    ledgerMs: 250,
    ...(opts.treeCapacity !== undefined && { treeCapacity: opts.treeCapacity }),
  });
  for (const [addr, usdc] of [
    [sandbox.info.accounts.operator, 1000],
    [sandbox.info.accounts.poolWallet, opts.poolWalletUsdc],
  ] as const) {
    const res = await fetch(`${sandbox.url}/friendbot?addr=${addr}&usdc=${usdc}`);
    if (!res.ok) throw new Error(await res.text());
  }
  const x402 = await startLocalX402Thread({
    rpcUrl: sandbox.rpcUrl,
    networkPassphrase: STANDALONE_PASSPHRASE,
    asset: sandbox.info.contracts.token,
    facilitator: { host: '127.0.0.1', port: 0 },
    demo: { host: '127.0.0.1', port: 0, maxTimeoutSeconds: opts.demoMaxTimeoutSeconds },
    ...(opts.channelCount !== undefined && { channelCount: opts.channelCount }),
  });
  const secrets = sandbox.secrets();
  return {
    sandbox,
    x402,
    env: {
      ...localX402Env(x402, undefined),
      POOL_PROXY_PORT: '0',
      POOL_PROXY_MASTER_KEY: randomBytes(32).toString('hex'),
      POOL_PROXY_RPC_URL: sandbox.rpcUrl,
      POOL_PROXY_NETWORK_PASSPHRASE: STANDALONE_PASSPHRASE,
      POOL_PROXY_SANDBOX_INFO_URL: `${sandbox.url}/sandbox/info`,
      POOL_PROXY_OPERATOR_SECRET: secrets.operator,
      POOL_PROXY_ASP_ADMIN_SECRET: secrets.admin,
      POOL_PROXY_POOL_WALLET_SECRET: secrets.poolWallet,
      POOL_PROXY_PROVER_ADDRESSES: opts.prover,
    },
    async close() {
      await x402.close().catch(() => undefined);
      await sandbox.close().catch(() => undefined);
    },
  };
}

/**
 * `pool-proxy serve` on `dataDir` with `env`; resolves once it is ready, with its URL. The process is added to
 * `runs` at once, so a test's teardown stops it even when it never became ready.
 */
export async function serveProxy(
  dataDir: string,
  env: Record<string, string | undefined>,
  runs: CliRun[],
): Promise<{ run: CliRun; url: string }> {
  const run = runCli(['serve', '--data-dir', dataDir], env);
  runs.push(run);
  const [, url] = await run.waitFor(/"msg":"proxy +(http:\/\/[^ ]+) /);
  await run.waitFor(/"msg":"ready\."/);
  return { run, url: url! };
}

/** The USDC balance of `address` on the rig's ledger, by simulating the token's `balance`. */
export async function usdcOf(sandbox: PoolSandbox, address: string): Promise<bigint> {
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  const tx = new TransactionBuilder(new Account(sandbox.info.accounts.operator, '0'), {
    fee: '100',
    networkPassphrase: STANDALONE_PASSPHRASE,
  })
    .addOperation(new Contract(sandbox.info.contracts.token).call('balance', new Address(address).toScVal()))
    .setTimeout(30)
    .build();
  const sim = await server.simulateTransaction(tx);
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(sim.error);
  return BigInt(scValToNative(sim.result!.retval));
}
