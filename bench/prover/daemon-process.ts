// A prover daemon as operators run it (`pool-proxy prover`, a child process on a free loopback port) for
// the benchmarks that measure its Prove latency: bench/prover/rapidsnark.ts and bench/prover-daemon/run.ts.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { DEFAULT_CIRCUITS_DIR } from '../../src/circuit/index.ts';
import type { ProverClient } from '../../src/prover/client.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

export interface Daemon {
  address: string;
  stop(): Promise<void>;
}

/** Starts a daemon serving the circuits of `circuitsDir`; `env` selects e.g. the SIMD path. */
export async function startDaemon(
  engine: string,
  circuitsDir = DEFAULT_CIRCUITS_DIR,
  env: NodeJS.ProcessEnv = process.env,
): Promise<Daemon> {
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'bin/pool-proxy.js'),
      'prover',
      '--listen',
      '127.0.0.1:0',
      '--circuits',
      circuitsDir,
      '--engine',
      engine,
    ],
    { cwd: ROOT, env, stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let out = '';
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`daemon exited ${code}: ${out}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    address,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

/** Resolves once the daemon reports SERVING (its keys loaded and readied). */
export async function waitServing(client: ProverClient): Promise<void> {
  for (;;) {
    if ((await client.health().catch(() => 'UNKNOWN')) === 'SERVING') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}
