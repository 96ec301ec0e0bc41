// `pool-proxy start`: the whole service in one process, one function per part it starts (the sandbox, the
// local x402 pair, the prover daemon, the proxies), with its configuration read once (start-config.ts).
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { DEFAULT_CIRCUITS_DIR } from '../../circuit/policy-circuit.ts';
import { startProverDaemon } from '../../prover/daemon/server.ts';
import { loadConfig } from '../../proxy/config.ts';
import { startProxy } from '../../proxy/server.ts';
import { createLogger, type Logger } from '../../proxy/util/logger.ts';
import { STANDALONE_PASSPHRASE } from '../../ledger/networks.ts';
import type { LocalX402Urls } from '../../x402/local-services.ts';
import { startPoolSandboxThread } from '../threads/sandbox-thread.ts';
import { startLocalX402Thread } from '../threads/x402-thread.ts';
import { replicaEnvs } from './replicas.ts';
import { httpsLine, TLS_FLAG, TLS_HELP } from './sandbox.ts';
import { TREE_CAPACITY_HELP } from '../flags.ts';
import {
  proxyEnvironment,
  readStartConfig,
  requireCircuitArtifacts,
  type SandboxPartConfig,
  type SandboxSettings,
  startEnvironment,
  type StartOptions,
} from './start-config.ts';
import { addListenOptions, listenProblems, plannedListens } from './start-listeners.ts';

/** Test USDC minted to the operator of a new embedded sandbox. */
const OPERATOR_TEST_USDC = 10_000;
/** Test USDC float given to the pool wallet of a new embedded sandbox (it pays x402 services). */
const POOL_WALLET_FLOAT_USDC = 1_000;

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));

/** `npm run build`'s script in a child process (it compiles what changed: circuits, keys, the wallet page). */
async function runBuild(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', join(ROOT, 'scripts', 'build.ts')], {
    cwd: ROOT,
    stdio: 'inherit',
  });
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`the build failed (exit ${code}); see its output above`);
}

/** The parts started so far, stopped in reverse order on a signal, a failed start or a part that dies. */
class Parts {
  readonly #stops: (() => Promise<void>)[] = [];
  #stopping = false;

  constructor(readonly logger: Logger) {}

  add(stop: () => Promise<void>): void {
    this.#stops.push(stop);
  }

  async stopAll(): Promise<void> {
    for (const stop of this.#stops.reverse())
      await stop().catch((e) => this.logger.log('error', `stop: ${(e as Error).message}`));
  }

  async shutdown(signal: string, code = 0): Promise<void> {
    if (this.#stopping) return;
    this.#stopping = true;
    this.logger.log('info', `stopping (${signal})…`);
    await this.stopAll();
    this.logger.log('info', 'stopped.');
    process.exit(code);
  }

  /** The handler for a part that stops on its own: the whole service stops with it. */
  fatal(part: string): (reason: string) => void {
    return (reason) => {
      this.logger.log('error', `${part} stopped unexpectedly: ${reason}`);
      void this.shutdown(`${part} failed`, 1);
    };
  }
}

/** The embedded sandbox on its worker thread; a new one funds its operator and pool wallet with test USDC. */
async function startSandbox(config: SandboxPartConfig, vkey: string, parts: Parts) {
  const { logger } = parts;
  const fresh = !existsSync(config.dir);
  const started = Date.now();
  logger.log(
    'info',
    fresh
      ? 'sandbox: genesis — creating the accounts and deploying the token, verifier, ASP and pool contracts…'
      : `sandbox: opening the ledger in ${config.dir}…`,
  );
  const sandboxLog = logger.child({ component: 'sandbox' });
  const sandbox = await startPoolSandboxThread(
    {
      ...config.listen,
      ledgerMs: config.ledgerMs,
      dataDir: config.dir,
      vkey,
      networkPassphrase: config.networkPassphrase,
      ...(config.treeCapacity !== undefined && { treeCapacity: config.treeCapacity }),
      logLedgers: true,
      ...(config.tls && { tls: config.tls }),
    },
    {
      onLog: (line) => sandboxLog.log(line.level, line.message, line.fields),
      onExit: parts.fatal('the sandbox'),
    },
  );
  parts.add(() => sandbox.close());
  if (fresh) {
    await fundSandbox(sandbox.url, sandbox.info.accounts);
    logger.log('info', 'sandbox: genesis done', { ms: Date.now() - started });
  }
  logger.log(
    'info',
    `sandbox ledger  ${sandbox.rpcUrl}   (friendbot ${sandbox.url}/friendbot?addr=G…&usdc=N)`,
    {
      rpcUrl: sandbox.rpcUrl,
    },
  );
  if (sandbox.httpsRpcUrl && sandbox.certPath)
    logger.log('info', httpsLine(sandbox.httpsRpcUrl, sandbox.certPath), {
      httpsRpcUrl: sandbox.httpsRpcUrl,
      certPath: sandbox.certPath,
    });
  return sandbox;
}

/** A new sandbox: test USDC for the operator (operator-signed MCP deposits work at once) and a float for
 *  the pool wallet, from which x402 services are paid. */
async function fundSandbox(url: string, accounts: { operator: string; poolWallet: string }): Promise<void> {
  const funded = await fetch(`${url}/friendbot?addr=${accounts.operator}&usdc=${OPERATOR_TEST_USDC}`);
  if (!funded.ok) throw new Error(`could not fund the sandbox operator: ${await funded.text()}`);
  const float = await fetch(`${url}/friendbot?addr=${accounts.poolWallet}&usdc=${POOL_WALLET_FLOAT_USDC}`);
  if (!float.ok) throw new Error(`could not fund the pool wallet: ${await float.text()}`);
}

/** x402 on the sandbox: our facilitator and a demo paid service, on their own worker thread. */
async function startLocalX402(
  config: SandboxPartConfig,
  rpcUrl: string,
  asset: string,
  parts: Parts,
): Promise<LocalX402Urls> {
  const x402 = await startLocalX402Thread(
    {
      rpcUrl,
      networkPassphrase: config.networkPassphrase,
      asset,
      facilitator: config.facilitator,
      demo: config.demo,
      channelCount: config.channelCount,
    },
    { onExit: parts.fatal('the x402 facilitator and demo service') },
  );
  parts.add(() => x402.close());
  parts.logger.log(
    'info',
    `x402 facilitator ${x402.facilitator.url}   (${x402.facilitator.network}; /verify /settle /supported)`,
    { url: x402.facilitator.url },
  );
  parts.logger.log(
    'info',
    `x402 demo       ${x402.demo.quoteUrl}   (GET, 0.01 USDC; POST ${x402.demo.echoUrl})`,
    {
      url: x402.demo.quoteUrl,
    },
  );
  return x402;
}

/** The embedded prover daemon, awaited until it serves; its address. */
async function startProver(listen: string, circuitsDir: string, parts: Parts): Promise<string> {
  parts.logger.log('info', 'prover daemon: loading the proving key and starting the witness workers…');
  const proverLog = parts.logger.child({ component: 'prover' });
  const daemon = await startProverDaemon({
    listen,
    circuitsDir,
    log: (line) => proverLog.log('info', line),
  });
  parts.add(() => daemon.stop());
  await daemon.ready;
  parts.logger.log('info', `prover daemon   ${daemon.address}   (engine ${daemon.engine}, gRPC)`, {
    address: daemon.address,
  });
  return daemon.address;
}

/** The proxy replicas, one after the other, each awaited until it is ready. */
async function startProxies(
  env: Record<string, string | undefined>,
  replicas: Record<string, string | undefined>[],
  parts: Parts,
) {
  for (const [i, replica] of replicas.entries()) {
    const config = loadConfig({ ...env, ...replica });
    const proxy = await startProxy(config, {
      logger: parts.logger.child({ component: replicas.length > 1 ? `proxy-${i + 1}` : 'proxy' }),
    });
    parts.add(() => proxy.close());
    parts.logger.log('info', "proxy: connecting to the ledger and the prover, reading the pool's events…");
    await proxy.ready;
    parts.logger.log('info', `proxy           ${proxy.url}   (GET /health, /openapi.json, /api/pool/info)`, {
      url: proxy.url,
    });
    parts.logger.log('info', `wallet page     ${proxy.url}/   (open it in a browser with Freighter)`, {
      url: `${proxy.url}/`,
    });
    if (i === 0)
      parts.logger.log(
        'info',
        `operator token  ${config.operator.tokenFile}   (Authorization: Bearer <it>; pool-proxy mcp reads it)`,
      );
  }
}

/** Every part in order: checks, build, sandbox and x402 pair, prover, proxies. */
async function startAll(opts: StartOptions, parts: Parts): Promise<void> {
  // Every address is checked free first (bin/pool-proxy.js did so before loading the CLI; this covers
  // other callers), then the proxy's own settings and the other flags, so a bad one fails at once.
  const env = startEnvironment(opts, process.env);
  const taken = await listenProblems(plannedListens(opts, env, opts.replicas));
  if (taken.length > 0) throw new Error(taken.join('; '));
  const replicas = replicaEnvs(env, loadConfig(env), opts.replicas);
  const config = readStartConfig(opts, env);
  if (config.build) await runBuild();
  const artifacts = requireCircuitArtifacts(config.circuitsDir);
  let sandbox: SandboxSettings | undefined;
  let x402: LocalX402Urls | undefined;
  if (config.sandbox) {
    const running = await startSandbox(config.sandbox, artifacts.vkey, parts);
    sandbox = {
      rpcUrl: running.rpcUrl,
      url: running.url,
      networkPassphrase: config.sandbox.networkPassphrase,
      secrets: running.secrets(),
    };
    x402 = await startLocalX402(config.sandbox, running.rpcUrl, running.info.contracts.token, parts);
  }
  const proverAddress =
    config.prover === undefined ? undefined : await startProver(config.prover, config.circuitsDir, parts);
  await startProxies(proxyEnvironment(config.env, { sandbox, x402, proverAddress }), replicas, parts);
  parts.logger.log('info', 'ready.');
}

/**
 * `pool-proxy start`: with no configuration, the embedded sandbox ledger, the prover daemon and the proxy on
 * their default addresses, each awaited until healthy. The sandbox and the local x402 pair run on worker
 * threads of their own (a burst of payments keeps all three busy); a thread that dies stops the service. Pointing POOL_PROXY_RPC_URL at a real Soroban RPC (or
 * POOL_PROXY_PROVER_ADDRESSES at running daemons) skips the embedded part and uses the same proxy code path.
 */
export function registerStart(program: Command): void {
  const command = program
    .command('start')
    .description('start the whole service (sandbox ledger, prover daemon, proxy) on the embedded sandbox')
    .option(
      '--data-dir <dir>',
      'directory that holds every store',
      process.env.POOL_PROXY_DATA_DIR ?? './data',
    )
    .option(
      '--ledger-ms <n>',
      'sandbox ledger close interval in ms',
      process.env.POOL_PROXY_SANDBOX_LEDGER_MS ?? '1000',
    )
    .option('--circuits <dir>', 'circuits folder served by the prover daemon', DEFAULT_CIRCUITS_DIR)
    .option(
      '--network-passphrase <text>',
      'network passphrase of the embedded sandbox (a real RPC is checked against POOL_PROXY_NETWORK_PASSPHRASE)',
      process.env.POOL_PROXY_NETWORK_PASSPHRASE ?? STANDALONE_PASSPHRASE,
    );
  addListenOptions(command)
    .option(
      '--build',
      'run `npm run build` (incremental) once the addresses are known to be free; `npm start` does',
    )
    .option(TLS_FLAG, TLS_HELP)
    .option('--tree-capacity <n>', `${TREE_CAPACITY_HELP}; applies when the embedded sandbox is created`)
    .option(
      '--replicas <n>',
      'proxies on consecutive ports from POOL_PROXY_PORT, sharing the store (needs POOL_PROXY_DATABASE_URL when > 1)',
      '1',
    )
    .action(async (opts: StartOptions) => {
      // One logger for the whole service: JSON lines on stdout, pretty coloured lines on a terminal.
      const parts = new Parts(createLogger());
      process.once('SIGINT', () => void parts.shutdown('SIGINT'));
      process.once('SIGTERM', () => void parts.shutdown('SIGTERM'));
      try {
        await startAll(opts, parts);
      } catch (err) {
        await parts.stopAll();
        parts.logger.log('error', `pool-proxy start: ${(err as Error).message}`);
        process.exit(1);
      }
    });
}
