// The real stack for end-to-end tests: the sandbox ledger, the prover daemon (native engine, the built
// policy_tx_2_2 key) and the proxy, each on a free loopback port; wallets log in and speak to a proxy through
// its typed client (PoolApi).
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  Account,
  Address,
  Contract,
  type Keypair,
  rpc,
  scValToNative,
  TransactionBuilder,
} from '#stellar-sdk';
import { type ProverDaemon, startProverDaemon } from '../../../src/prover/daemon/server.ts';
import { type Env, loadConfig, type ProxyConfig } from '../../../src/proxy/config.ts';
import { type ProxyHandle, startProxy } from '../../../src/proxy/server.ts';
import type { Clock } from '../../../src/proxy/util/clock.ts';
import { jsonLogger } from '../../../src/proxy/util/logger.ts';
import { type PoolSandbox, startPoolSandbox } from '../../../src/deploy/sandbox-network.ts';
import { STANDALONE_PASSPHRASE } from '../../../src/ledger/networks.ts';
import { operatorApi, PoolApi, walletApi } from './api.ts';
import { operatorHeaders } from './proxy.ts';

export const CIRCUITS_DIR = fileURLToPath(new URL('../../../build/circuits', import.meta.url));
export const USDC = 10_000_000n;

export interface Stack {
  sandbox: PoolSandbox;
  daemon: ProverDaemon;
  proxy: ProxyHandle;
  config: ProxyConfig;
  env: Env;
  masterKeyHex: string;
  server: rpc.Server;
  /** The operator's Authorization header, the same for every proxy of the stack (they share its token file). */
  operator: Record<string, string>;
  /**
   * Starts another proxy over the same ledger and prover (e.g. after a restart) with `env` overrides and,
   * to move its time without sleeping, a clock of the test's.
   */
  startProxy(env?: Env, options?: { clock?: Clock }): Promise<{ proxy: ProxyHandle; config: ProxyConfig }>;
  fund(address: string, usdc: number): Promise<void>;
  usdcBalance(address: string): Promise<bigint>;
  /** Logs `wallet` in (SEP-53 through PoolApi) on the first proxy or the one at `proxyUrl`: its access token. */
  login(wallet: Keypair, proxyUrl?: string): Promise<string>;
  /** PoolApi for `wallet`, logged in on the first proxy or the one at `proxyUrl`. */
  walletApi(wallet: Keypair, proxyUrl?: string): Promise<PoolApi>;
  /** PoolApi for the operator (its token) on the first proxy or the one at `proxyUrl`. */
  operatorApi(proxyUrl?: string): PoolApi;
  close(): Promise<void>;
}

/** How a stack's sandbox is made: its passphrase, ledger interval and the pool's tree capacity. */
export interface StackOptions {
  networkPassphrase?: string;
  ledgerMs?: number;
  treeCapacity?: number;
}

export async function startStack(env: Env = {}, opts: StackOptions = {}): Promise<Stack> {
  const passphrase = opts.networkPassphrase ?? STANDALONE_PASSPHRASE;
  const sandbox = await startPoolSandbox({
    port: 0,
    ledgerMs: opts.ledgerMs ?? 250,
    networkPassphrase: passphrase,
    ...(opts.treeCapacity !== undefined && { treeCapacity: opts.treeCapacity }),
  });
  const daemon = await startProverDaemon({
    listen: '127.0.0.1:0',
    circuitsDir: CIRCUITS_DIR,
    engine: 'native',
    witnessWorkers: 1,
  });
  await daemon.ready;
  const secrets = sandbox.secrets();
  const masterKeyHex = randomBytes(32).toString('hex');
  const dataDir = mkdtempSync(join(tmpdir(), 'pp-e2e-'));
  const baseEnv: Env = {
    POOL_PROXY_PORT: '0',
    POOL_PROXY_DATA_DIR: dataDir,
    POOL_PROXY_OPERATOR_TOKEN_FILE: join(dataDir, 'operator.token'),
    POOL_PROXY_MASTER_KEY: masterKeyHex,
    POOL_PROXY_RPC_URL: sandbox.rpcUrl,
    POOL_PROXY_NETWORK_PASSPHRASE: passphrase,
    POOL_PROXY_SANDBOX_INFO_URL: `${sandbox.url}/sandbox/info`,
    POOL_PROXY_OPERATOR_SECRET: secrets.operator,
    POOL_PROXY_ASP_ADMIN_SECRET: secrets.admin,
    POOL_PROXY_PROVER_ADDRESSES: daemon.address,
    POOL_PROXY_INDEXER_POLL_MS: '100',
    POOL_PROXY_RATE_LIMIT_IP_PER_SECOND: '0',
    POOL_PROXY_RATE_LIMIT_TOKEN_PER_SECOND: '0',
    POOL_PROXY_PREPARE_TTL_SECONDS: '20',
    ...env,
  };
  const launch = async (overrides: Env = {}, options: { clock?: Clock } = {}) => {
    const config = loadConfig({ ...baseEnv, ...overrides });
    const proxy = await startProxy(config, {
      ...options,
      logger: jsonLogger('warn', (line) => process.stderr.write(line)),
    });
    await proxy.ready;
    return { proxy, config };
  };
  // The operator funds operator deposits (MCP agents) from its own USDC.
  const mint = await fetch(`${sandbox.url}/friendbot?addr=${sandbox.info.accounts.operator}&usdc=1000000`);
  if (!mint.ok) throw new Error(`friendbot: ${await mint.text()}`);
  const first = await launch();
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  const token = sandbox.info.contracts.token;

  return {
    sandbox,
    daemon,
    proxy: first.proxy,
    config: first.config,
    env: baseEnv,
    masterKeyHex,
    server,
    operator: operatorHeaders(first.config),
    startProxy: launch,
    async fund(address, usdc) {
      const res = await fetch(`${sandbox.url}/friendbot?addr=${address}&usdc=${usdc}`);
      if (!res.ok) throw new Error(`friendbot: ${await res.text()}`);
    },
    async usdcBalance(address) {
      const source = new Account(sandbox.info.accounts.operator, '0');
      const tx = new TransactionBuilder(source, { fee: '100', networkPassphrase: passphrase })
        .addOperation(new Contract(token).call('balance', new Address(address).toScVal()))
        .setTimeout(30)
        .build();
      const sim = await server.simulateTransaction(tx);
      if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(sim.error);
      return BigInt(scValToNative(sim.result!.retval));
    },
    login: (wallet, proxyUrl = first.proxy.url) => login(wallet, proxyUrl),
    async walletApi(wallet, proxyUrl = first.proxy.url) {
      return walletApi(proxyUrl, await login(wallet, proxyUrl));
    },
    operatorApi: (proxyUrl = first.proxy.url) => operatorApi(proxyUrl, operatorHeaders(first.config)),
    async close() {
      await first.proxy.close();
      await daemon.stop({ force: true });
      await sandbox.close();
    },
  };
}

async function login(wallet: Keypair, proxyUrl: string): Promise<string> {
  const api = new PoolApi({ baseUrl: proxyUrl });
  const { challenge } = await api.challenge(wallet.publicKey());
  const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
  return (await api.verify({ publicKey: wallet.publicKey(), challenge, signature })).token;
}
