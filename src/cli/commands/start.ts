import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { Command } from 'commander';
import { DEFAULT_CIRCUITS_DIR, POLICY_CIRCUIT, circuitArtifacts } from '../../circuit/policy-circuit.ts';
import { startProverDaemon, type ProverDaemon } from '../../prover/daemon/server.ts';
import { loadConfig } from '../../proxy/config.ts';
import { startProxy, type ProxyHandle } from '../../proxy/server.ts';
import { createLogger } from '../../proxy/util/logger.ts';
import { STANDALONE_PASSPHRASE } from '../../ledger/networks.ts';
import { parseListen } from '../../listen.ts';
import { httpsLine, TLS_FLAG, TLS_HELP, tlsListen } from './sandbox.ts';
import { parseIntFlag, parsePassphrase } from '../flags.ts';
import { LOCAL_CHANNELS, localX402Env } from '../../x402/local-services.ts';
import { startPoolSandboxThread } from '../threads/sandbox-thread.ts';
import { startLocalX402Thread } from '../threads/x402-thread.ts';
import { replicaEnvs } from './replicas.ts';
import { addListenOptions, type ListenOptions, listenProblems, plannedListens } from './start-listeners.ts';

/** Test USDC minted to the operator of a new embedded sandbox. */
const OPERATOR_TEST_USDC = 10_000;
/** Test USDC float given to the pool wallet of a new embedded sandbox (it pays x402 services). */
const POOL_WALLET_FLOAT_USDC = 1_000;

interface StartOptions extends ListenOptions {
  dataDir: string;
  ledgerMs: string;
  circuits: string;
  networkPassphrase: string;
  tls?: string | boolean;
  build?: boolean;
  replicas: string;
}

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
    .option(
      '--replicas <n>',
      'proxies on consecutive ports from POOL_PROXY_PORT, sharing the store (needs POOL_PROXY_DATABASE_URL when > 1)',
      '1',
    )
    .action(async (opts: StartOptions) => {
      // One logger for the whole service: JSON lines on stdout, pretty coloured lines on a terminal.
      const logger = createLogger();
      const dataDir = resolve(opts.dataDir);
      const env: Record<string, string | undefined> = { ...process.env, POOL_PROXY_DATA_DIR: dataDir };
      const stops: (() => Promise<void>)[] = [];
      const stopAll = async () => {
        for (const stop of stops.reverse())
          await stop().catch((e) => logger.log('error', `stop: ${(e as Error).message}`));
      };
      let stopping = false;
      const shutdown = async (signal: string, code = 0) => {
        if (stopping) return;
        stopping = true;
        logger.log('info', `stopping (${signal})…`);
        await stopAll();
        logger.log('info', 'stopped.');
        process.exit(code);
      };
      const fatal = (part: string) => (reason: string) => {
        logger.log('error', `${part} stopped unexpectedly: ${reason}`);
        void shutdown(`${part} failed`, 1);
      };
      process.once('SIGINT', () => void shutdown('SIGINT'));
      process.once('SIGTERM', () => void shutdown('SIGTERM'));
      try {
        // Every address is checked free first (bin/pool-proxy.js did so before loading the CLI; this covers
        // other callers), then the proxy's own settings, so a bad one fails at once.
        const taken = await listenProblems(plannedListens(opts, env, opts.replicas));
        if (taken.length > 0) throw new Error(taken.join('; '));
        const replicas = replicaEnvs(env, loadConfig(env), opts.replicas);
        if (opts.build) await runBuild();
        const networkPassphrase = parsePassphrase(opts.networkPassphrase);
        const artifacts = circuitArtifacts(POLICY_CIRCUIT.id, opts.circuits);
        if (!existsSync(artifacts.zkey) || !existsSync(artifacts.wasm)) {
          throw new Error(`no proving key in ${artifacts.dir}: run \`npm run build\` first`);
        }

        if (!process.env.POOL_PROXY_RPC_URL) {
          const { host, port } = parseListen(opts.sandbox, '--sandbox');
          const sandboxDir = join(dataDir, 'sandbox');
          const fresh = !existsSync(sandboxDir);
          const ledgerMs = Number(opts.ledgerMs);
          if (!Number.isInteger(ledgerMs) || ledgerMs < 1)
            throw new Error(`--ledger-ms must be a positive integer`);
          const started = Date.now();
          logger.log(
            'info',
            fresh
              ? 'sandbox: genesis — creating the accounts and deploying the token, verifier, ASP and pool contracts…'
              : `sandbox: opening the ledger in ${sandboxDir}…`,
          );
          const sandboxLog = logger.child({ component: 'sandbox' });
          const tlsAt = tlsListen(opts.tls, host, port);
          const sandbox = await startPoolSandboxThread(
            {
              host,
              port,
              ledgerMs,
              dataDir: sandboxDir,
              vkey: artifacts.vkey,
              networkPassphrase,
              logLedgers: true,
              ...(tlsAt && { tls: { ...tlsAt, dir: join(dataDir, 'tls') } }),
            },
            {
              onLog: (line) => sandboxLog.log(line.level, line.message, line.fields),
              onExit: fatal('the sandbox'),
            },
          );
          stops.push(() => sandbox.close());
          const secrets = sandbox.secrets();
          if (fresh) {
            // A new sandbox: give the operator test USDC so operator-signed (MCP) deposits work at once.
            const funded = await fetch(
              `${sandbox.url}/friendbot?addr=${sandbox.info.accounts.operator}&usdc=${OPERATOR_TEST_USDC}`,
            );
            if (!funded.ok) throw new Error(`could not fund the sandbox operator: ${await funded.text()}`);
            // and the pool wallet a USDC float, from which x402 services are paid
            const float = await fetch(
              `${sandbox.url}/friendbot?addr=${sandbox.info.accounts.poolWallet}&usdc=${POOL_WALLET_FLOAT_USDC}`,
            );
            if (!float.ok) throw new Error(`could not fund the pool wallet: ${await float.text()}`);
            logger.log('info', 'sandbox: genesis done', { ms: Date.now() - started });
          }
          env.POOL_PROXY_RPC_URL = sandbox.rpcUrl;
          env.POOL_PROXY_NETWORK_PASSPHRASE = networkPassphrase;
          env.POOL_PROXY_SANDBOX_INFO_URL ||= `${sandbox.url}/sandbox/info`;
          env.POOL_PROXY_OPERATOR_SECRET ||= secrets.operator;
          env.POOL_PROXY_ASP_ADMIN_SECRET ||= secrets.admin;
          env.POOL_PROXY_POOL_WALLET_SECRET ||= secrets.poolWallet;
          logger.log(
            'info',
            `sandbox ledger  ${sandbox.rpcUrl}   (friendbot ${sandbox.url}/friendbot?addr=G…&usdc=N)`,
            { rpcUrl: sandbox.rpcUrl },
          );
          if (sandbox.httpsRpcUrl && sandbox.certPath)
            logger.log('info', httpsLine(sandbox.httpsRpcUrl, sandbox.certPath), {
              httpsRpcUrl: sandbox.httpsRpcUrl,
              certPath: sandbox.certPath,
            });
          // x402 on the sandbox: our facilitator and a demo paid service, told to the proxy
          const x402 = await startLocalX402Thread(
            {
              rpcUrl: sandbox.rpcUrl,
              networkPassphrase,
              asset: sandbox.info.contracts.token,
              facilitator: parseListen(opts.facilitator, '--facilitator'),
              demo: {
                ...parseListen(opts.demo, '--demo'),
                maxTimeoutSeconds: parseIntFlag(
                  'POOL_PROXY_DEMO_MAX_TIMEOUT_SECONDS',
                  process.env.POOL_PROXY_DEMO_MAX_TIMEOUT_SECONDS ?? '60',
                  5,
                  3600,
                ),
              },
              channelCount: parseIntFlag(
                'POOL_PROXY_FACILITATOR_CHANNELS',
                process.env.POOL_PROXY_FACILITATOR_CHANNELS ?? String(LOCAL_CHANNELS),
                1,
                1024,
              ),
            },
            { onExit: fatal('the x402 facilitator and demo service') },
          );
          stops.push(() => x402.close());
          Object.assign(env, localX402Env(x402, env.POOL_PROXY_PAY_ALLOWED_HOSTS));
          logger.log(
            'info',
            `x402 facilitator ${x402.facilitator.url}   (${x402.facilitator.network}; /verify /settle /supported)`,
            { url: x402.facilitator.url },
          );
          logger.log(
            'info',
            `x402 demo       ${x402.demo.quoteUrl}   (GET, 0.01 USDC; POST ${x402.demo.echoUrl})`,
            {
              url: x402.demo.quoteUrl,
            },
          );
        }

        if (!process.env.POOL_PROXY_PROVER_ADDRESSES) {
          logger.log('info', 'prover daemon: loading the proving key and starting the witness workers…');
          const proverLog = logger.child({ component: 'prover' });
          const daemon: ProverDaemon = await startProverDaemon({
            listen: opts.prover,
            circuitsDir: opts.circuits,
            log: (line) => proverLog.log('info', line),
          });
          stops.push(() => daemon.stop());
          await daemon.ready;
          env.POOL_PROXY_PROVER_ADDRESSES = daemon.address;
          logger.log('info', `prover daemon   ${daemon.address}   (engine ${daemon.engine}, gRPC)`, {
            address: daemon.address,
          });
        }

        for (const [i, replica] of replicas.entries()) {
          const proxy: ProxyHandle = await startProxy(loadConfig({ ...env, ...replica }), {
            logger: logger.child({ component: replicas.length > 1 ? `proxy-${i + 1}` : 'proxy' }),
          });
          stops.push(() => proxy.close());
          logger.log('info', "proxy: connecting to the ledger and the prover, reading the pool's events…");
          await proxy.ready;
          logger.log('info', `proxy           ${proxy.url}   (GET /health, /openapi.json, /api/pool/info)`, {
            url: proxy.url,
          });
        }
        logger.log('info', 'ready.');
      } catch (err) {
        await stopAll();
        logger.log('error', `pool-proxy start: ${(err as Error).message}`);
        process.exit(1);
      }
    });
}
