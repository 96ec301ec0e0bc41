// `pool-proxy start` (and `npm start`) fails fast on an address it cannot listen on: every address it will bind is
// checked before any work (no build, no data directory, no genesis), and the message names the address, the part
// that needs it and the flag or variable that moves it. The ports "taken" here are free loopback ports this test
// holds itself, never fixed ones.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { freeLoopbackPort as freePort } from '../../src/listen.ts';
import { runCli } from '../helpers/cli.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

/** Holds a free loopback port until the test ends, as another program would. */
async function takenPort(t: { teardown(fn: () => void): void }): Promise<number> {
  const server: Server = createServer().listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => void server.close());
  const address = server.address();
  if (address === null || typeof address === 'string') throw new Error('no port');
  return address.port;
}

/** Free addresses for every part, as flags, with `override` replacing some. */
async function startArgs(dataDir: string, override: Record<string, string> = {}): Promise<string[]> {
  const flags: Record<string, string> = {
    '--sandbox': `127.0.0.1:${await freePort()}`,
    '--prover': `127.0.0.1:${await freePort()}`,
    '--facilitator': `127.0.0.1:${await freePort()}`,
    '--demo': `127.0.0.1:${await freePort()}`,
    ...override,
  };
  return ['--data-dir', dataDir, ...Object.entries(flags).flat()];
}

function freshDataDir(t: { teardown(fn: () => void): void }): string {
  const parent = mkdtempSync(join(tmpdir(), 'pp-start-ports-'));
  t.teardown(() => rmSync(parent, { recursive: true, force: true }));
  return join(parent, 'data');
}

test('npm start with the facilitator port taken exits at once, naming the port and --facilitator', async (t) => {
  const port = await takenPort(t);
  const dataDir = freshDataDir(t);
  const args = await startArgs(dataDir, { '--facilitator': `127.0.0.1:${port}` });
  const started = Date.now();
  const child = spawn('npm', ['start', '--silent', '--', ...args], {
    cwd: ROOT,
    env: { ...process.env, POOL_PROXY_PORT: String(await freePort()) },
  });
  let output = '';
  child.stdout.on('data', (d) => (output += d));
  child.stderr.on('data', (d) => (output += d));
  const [code] = await once(child, 'exit');
  const seconds = (Date.now() - started) / 1000;
  t.log(`exited after ${seconds.toFixed(1)} s on this machine`);
  t.is(code, 1, output);
  t.regex(output, new RegExp(`127\\.0\\.0\\.1:${port} is already in use`));
  t.regex(output, /the local x402 facilitator cannot listen there; move it with --facilitator HOST:PORT/);
  // Before any work: no build, no data directory, no sandbox genesis.
  t.notRegex(output, /build:|genesis/);
  t.false(existsSync(dataDir), 'no data directory was created');
});

test('every part names what moves it: --sandbox, --prover, --demo, POOL_PROXY_PORT', async (t) => {
  const cases = [
    {
      flag: '--sandbox',
      part: 'the embedded sandbox ledger',
      moves: /--sandbox HOST:PORT \(or POOL_PROXY_SANDBOX_LISTEN\)/,
    },
    {
      flag: '--prover',
      part: 'the prover daemon',
      moves: /--prover HOST:PORT \(or POOL_PROXY_PROVER_LISTEN\)/,
    },
    {
      flag: '--demo',
      part: 'the demo paid service',
      moves: /--demo HOST:PORT \(or POOL_PROXY_DEMO_LISTEN\)/,
    },
    { flag: 'POOL_PROXY_PORT', part: 'the proxy', moves: /POOL_PROXY_PORT \(and POOL_PROXY_HOST\)/ },
  ];
  await Promise.all(
    cases.map(async ({ flag, part, moves }) => {
      const port = await takenPort(t);
      const dataDir = freshDataDir(t);
      const byFlag = flag.startsWith('--');
      const args = await startArgs(dataDir, byFlag ? { [flag]: `127.0.0.1:${port}` } : {});
      const run = runCli(['start', ...args], {
        POOL_PROXY_PORT: String(byFlag ? await freePort() : port),
        POOL_PROXY_HOST: '127.0.0.1',
      });
      t.is(await run.exited, 1, run.output());
      t.regex(run.output(), new RegExp(`127\\.0\\.0\\.1:${port} is already in use, so ${part}`), flag);
      t.regex(run.output(), moves, flag);
      t.false(existsSync(dataDir), `${flag}: nothing was created`);
    }),
  );
});

test('a malformed address or one asked for twice is refused before any work, naming the flags', async (t) => {
  const dataDir = freshDataDir(t);
  const malformed = runCli(['start', ...(await startArgs(dataDir, { '--demo': 'nonsense' }))], {
    POOL_PROXY_PORT: String(await freePort()),
  });
  t.is(await malformed.exited, 1);
  t.regex(malformed.output(), /--demo must be HOST:PORT, got nonsense/);

  const shared = `127.0.0.1:${await freePort()}`;
  const twice = runCli(
    ['start', ...(await startArgs(dataDir, { '--facilitator': shared, '--demo': shared }))],
    { POOL_PROXY_PORT: String(await freePort()) },
  );
  t.is(await twice.exited, 1);
  t.regex(
    twice.output(),
    /is asked for twice: by the local x402 facilitator and by the demo paid service; move one with --demo/,
  );
  t.false(existsSync(dataDir));
});
