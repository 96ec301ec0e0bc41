import { DEFAULT_PROVER_LISTEN } from '../../listen.ts';
import { readFile } from 'node:fs/promises';
import { availableParallelism } from 'node:os';
import type { Command } from 'commander';
import { ENGINE_NAMES, type EngineName } from '../../prover/daemon/engines/engine.ts';
import type { ProverDaemon } from '../../prover/daemon/server.ts';
import { parseIntFlag } from '../flags.ts';

interface ProverOptions {
  listen: string;
  circuits: string;
  engine: string;
  tlsCert?: string;
  tlsKey?: string;
  metricsPort?: string;
  metricsHost: string;
  witnessWorkers: string;
  queue: string;
  verify: boolean;
}

// `pool-proxy prover`: runs the prover daemon alone. It binds its port at once, reports SERVING on the
// gRPC health service once every key is loaded, and on SIGTERM/SIGINT drains in-flight proofs before
// exiting (a second signal stops at once, answering what is left UNAVAILABLE).
export function registerProver(program: Command): void {
  program
    .command('prover')
    .description('run the prover daemon (gRPC) for every circuit under the circuits folder')
    .option('--listen <host:port>', 'gRPC address to serve on', DEFAULT_PROVER_LISTEN)
    .option(
      '--circuits <dir>',
      'circuits folder: <id>/<id>.r1cs, <id>/<id>_js/<id>.wasm, <id>/<id>.zkey, <id>/verification_key.json',
      'build/circuits',
    )
    .option('--engine <name>', `proving engine (${ENGINE_NAMES.join(' | ')})`, 'native')
    .option('--tls-cert <pem>', 'server certificate chain (PEM); enables TLS together with --tls-key')
    .option('--tls-key <pem>', 'server private key (PEM)')
    .option('--metrics-port <n>', 'serve Prometheus metrics at http://<metrics-host>:<n>/metrics')
    .option('--metrics-host <host>', 'address for the metrics endpoint', '127.0.0.1')
    .option('--witness-workers <n>', 'witness worker threads', String(availableParallelism()))
    .option('--queue <n>', 'Prove requests admitted at once; more are refused with RESOURCE_EXHAUSTED', '64')
    .option('--no-verify', 'skip verify-after-prove (the native engine always verifies)')
    .action(async (opts: ProverOptions) => {
      let daemon: ProverDaemon;
      try {
        if (!ENGINE_NAMES.includes(opts.engine as EngineName))
          throw new Error(`--engine must be one of ${ENGINE_NAMES.join(', ')}, got "${opts.engine}"`);
        if (Boolean(opts.tlsCert) !== Boolean(opts.tlsKey))
          throw new Error('--tls-cert and --tls-key go together');
        const tls =
          opts.tlsCert && opts.tlsKey
            ? { cert: await readFile(opts.tlsCert), key: await readFile(opts.tlsKey) }
            : undefined;
        const options = {
          listen: opts.listen,
          circuitsDir: opts.circuits,
          engine: opts.engine as EngineName,
          tls,
          metricsPort:
            opts.metricsPort === undefined
              ? undefined
              : parseIntFlag('--metrics-port', opts.metricsPort, 0, 65535),
          metricsHost: opts.metricsHost,
          witnessWorkers: parseIntFlag('--witness-workers', opts.witnessWorkers, 1, 256),
          queueCapacity: parseIntFlag('--queue', opts.queue, 1, 1_000_000),
          verifyAfterProve: opts.verify,
          log: (line: string) => console.log(`prover: ${line}`),
        };
        // The daemon (native addon, gRPC, witness workers) loads only once the flags are known to be good.
        const { startProverDaemon } = await import('../../prover/daemon/server.ts');
        daemon = await startProverDaemon(options);
      } catch (error) {
        console.error(`pool-proxy prover: ${(error as Error).message}`);
        process.exit(2);
      }
      const metrics =
        daemon.metricsPort === undefined
          ? ''
          : `, metrics http://${opts.metricsHost}:${daemon.metricsPort}/metrics`;
      console.log(
        `prover: listening on ${daemon.address} (engine ${daemon.engine}, ${opts.tlsCert ? 'TLS' : 'plaintext'}${metrics})`,
      );

      let signals = 0;
      const onSignal = (name: string) => {
        signals += 1;
        const force = signals > 1;
        console.log(`prover: ${name}: ${force ? 'stopping now' : 'draining in-flight proofs'}`);
        daemon.stop({ force }).then(
          () => {
            console.log('prover: stopped');
            process.exit(0);
          },
          (error: unknown) => {
            console.error(`prover: stop failed: ${(error as Error).message}`);
            process.exit(1);
          },
        );
      };
      process.on('SIGTERM', () => onSignal('SIGTERM'));
      process.on('SIGINT', () => onSignal('SIGINT'));

      try {
        await daemon.ready;
        console.log(
          `prover: SERVING ${daemon
            .circuits()
            .map((c) => c.id)
            .join(', ')}`,
        );
      } catch (error) {
        console.error(`pool-proxy prover: ${(error as Error).message}`);
        await daemon.stop({ force: true });
        process.exit(1);
      }
    });
}
