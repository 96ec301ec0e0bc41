// `pool-proxy demo --start`: runs a private `pool-proxy start` (embedded sandbox, prover daemon, facilitator,
// demo service and proxy) in a child process, on free loopback ports with a fresh data directory, for the
// length of the demo.
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { freeLoopbackPort as freePort } from '../../listen.ts';

const CLI = fileURLToPath(new URL('../../../bin/pool-proxy.js', import.meta.url));
const READY_TIMEOUT_MS = 10 * 60_000;

export interface LocalService {
  proxyUrl: string;
  stop(): Promise<void>;
}

export async function startLocalService(): Promise<LocalService> {
  const dataDir = mkdtempSync(join(tmpdir(), 'pool-proxy-demo-'));
  const ports: number[] = [];
  for (let i = 0; i < 5; i++) ports.push(await freePort());
  const [sandbox, prover, facilitator, demo, proxy] = ports.map((p) => `127.0.0.1:${p}`);
  const child: ChildProcess = spawn(
    process.execPath,
    [
      CLI,
      'start',
      '--data-dir',
      dataDir,
      '--sandbox',
      sandbox!,
      '--prover',
      prover!,
      '--facilitator',
      facilitator!,
      '--demo',
      demo!,
    ],
    {
      env: { ...process.env, POOL_PROXY_PORT: String(ports[4]), POOL_PROXY_HOST: '127.0.0.1' },
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let output = '';
  child.stdout!.on('data', (d) => (output += d));
  child.stderr!.on('data', (d) => (output += d));
  const exited = once(child, 'exit');
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill('SIGTERM');
      const timer = setTimeout(() => child.kill('SIGKILL'), 15_000);
      await exited;
      clearTimeout(timer);
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  const deadline = Date.now() + READY_TIMEOUT_MS;
  while (!/"msg":"ready\."/.test(output)) {
    if (child.exitCode !== null || Date.now() > deadline) {
      await stop();
      throw new Error(`the local service did not start:\n${output.trim()}`);
    }
    await new Promise((r) => setTimeout(r, 200));
  }
  return { proxyUrl: `http://${proxy}`, stop };
}
