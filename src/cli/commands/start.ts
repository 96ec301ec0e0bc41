import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import type { Command } from 'commander';
import { DEFAULT_CIRCUITS_DIR, POLICY_CIRCUIT, circuitArtifacts } from '../../circuit/policy-circuit.ts';
import { startProverDaemon, type ProverDaemon } from '../../prover/daemon/server.ts';
import { loadConfig } from '../../proxy/config.ts';
import { startProxy, type ProxyHandle } from '../../proxy/server.ts';
import { Sandbox } from '../../sandbox/index.ts';
import { STANDALONE_PASSPHRASE } from '../../ledger/networks.ts';
import { parseListen } from '../../listen.ts';
import { parsePassphrase } from './sandbox.ts';

/** Test USDC minted to the operator of a new embedded sandbox. */
const OPERATOR_TEST_USDC = 10_000;

interface StartOptions {
  dataDir: string;
  sandbox: string;
  prover: string;
  ledgerMs: string;
  circuits: string;
  networkPassphrase: string;
}

/**
 * `pool-proxy start`: with no configuration, the embedded sandbox ledger, the prover daemon and the proxy on
 * their default addresses, each awaited until healthy. Pointing POOL_PROXY_RPC_URL at a real Soroban RPC (or
 * POOL_PROXY_PROVER_ADDRESSES at running daemons) skips the embedded part and uses the same proxy code path.
 */
export function registerStart(program: Command): void {
  program
    .command('start')
    .description('start the whole service (sandbox ledger, prover daemon, proxy) on the embedded sandbox')
    .option(
      '--data-dir <dir>',
      'directory that holds every store',
      process.env.POOL_PROXY_DATA_DIR ?? './data',
    )
    .option(
      '--sandbox <host:port>',
      'embedded sandbox address',
      process.env.POOL_PROXY_SANDBOX_LISTEN ?? '127.0.0.1:8000',
    )
    .option(
      '--prover <host:port>',
      'embedded prover daemon address',
      process.env.POOL_PROXY_PROVER_LISTEN ?? '127.0.0.1:50051',
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
    )
    .action(async (opts: StartOptions) => {
      const dataDir = resolve(opts.dataDir);
      const env: Record<string, string | undefined> = { ...process.env, POOL_PROXY_DATA_DIR: dataDir };
      const stops: (() => Promise<void>)[] = [];
      const stopAll = async () => {
        for (const stop of stops.reverse())
          await stop().catch((e) => console.error(`stop: ${(e as Error).message}`));
      };
      try {
        const networkPassphrase = parsePassphrase(opts.networkPassphrase);
        const artifacts = circuitArtifacts(POLICY_CIRCUIT.id, opts.circuits);
        if (!existsSync(artifacts.zkey) || !existsSync(artifacts.wasm)) {
          throw new Error(`no proving key in ${artifacts.dir}: run \`npm run build\` first`);
        }

        if (!process.env.POOL_PROXY_RPC_URL) {
          const { host, port } = parseListen(opts.sandbox);
          const sandboxDir = join(dataDir, 'sandbox');
          const fresh = !existsSync(sandboxDir);
          const ledgerMs = Number(opts.ledgerMs);
          if (!Number.isInteger(ledgerMs) || ledgerMs < 1)
            throw new Error(`--ledger-ms must be a positive integer`);
          const sandbox = await Sandbox.start({
            host,
            port,
            ledgerMs,
            dataDir: sandboxDir,
            vkey: artifacts.vkey,
            networkPassphrase,
          });
          stops.push(() => sandbox.close());
          const secrets = sandbox.secrets();
          if (fresh) {
            // A new sandbox: give the operator test USDC so operator-signed (MCP) deposits work at once.
            const funded = await fetch(
              `${sandbox.url}/friendbot?addr=${sandbox.info.accounts.operator}&usdc=${OPERATOR_TEST_USDC}`,
            );
            if (!funded.ok) throw new Error(`could not fund the sandbox operator: ${await funded.text()}`);
          }
          env.POOL_PROXY_RPC_URL = sandbox.rpcUrl;
          env.POOL_PROXY_NETWORK_PASSPHRASE = networkPassphrase;
          env.POOL_PROXY_SANDBOX_INFO_URL ||= `${sandbox.url}/sandbox/info`;
          env.POOL_PROXY_OPERATOR_SECRET ||= secrets.operator;
          env.POOL_PROXY_ASP_ADMIN_SECRET ||= secrets.admin;
          console.log(
            `sandbox ledger  ${sandbox.rpcUrl}   (friendbot ${sandbox.url}/friendbot?addr=G…&usdc=N)`,
          );
        }

        if (!process.env.POOL_PROXY_PROVER_ADDRESSES) {
          const daemon: ProverDaemon = await startProverDaemon({
            listen: opts.prover,
            circuitsDir: opts.circuits,
          });
          stops.push(() => daemon.stop());
          await daemon.ready;
          env.POOL_PROXY_PROVER_ADDRESSES = daemon.address;
          console.log(`prover daemon   ${daemon.address}   (engine ${daemon.engine}, gRPC)`);
        }

        const proxy: ProxyHandle = await startProxy(loadConfig(env));
        stops.push(() => proxy.close());
        await proxy.ready;
        console.log(`proxy           ${proxy.url}   (GET /health, /openapi.json, /api/pool/info)`);
        console.log('ready.');
      } catch (err) {
        await stopAll();
        console.error(`pool-proxy start: ${(err as Error).message}`);
        process.exit(1);
      }
      const shutdown = async () => {
        await stopAll();
        process.exit(0);
      };
      process.once('SIGINT', shutdown);
      process.once('SIGTERM', shutdown);
    });
}
