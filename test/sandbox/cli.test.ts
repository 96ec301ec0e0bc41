// `pool-proxy sandbox` as a process: serves Soroban RPC on the address it is given, keeps its state in
// --data across restarts, stops on SIGTERM, and refuses bad options and a missing verification key.
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import test from 'ava';
import { rpc } from '#stellar-sdk';
import { parseListen } from '../../src/listen.ts';
import { tempDir } from './helpers.ts';

const bin = fileURLToPath(new URL('../../bin/pool-proxy.js', import.meta.url));

function run(args: string[]): { child: ChildProcess; output: () => string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [bin, 'sandbox', ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  child.stdout?.on('data', (d) => {
    out += d;
  });
  child.stderr?.on('data', (d) => {
    out += d;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  return { child, output: () => out, exited };
}

async function waitForUrl(output: () => string, exited: Promise<number | null>): Promise<string> {
  // generous: a start of the CLI with its genesis can take long on a loaded machine
  for (let i = 0; i < 3000; i++) {
    const m = /sandbox ledger: (http:\/\/\S+\/rpc)/.exec(output());
    if (m) return m[1] as string;
    const done = await Promise.race([
      exited.then(() => true),
      new Promise((r) => setTimeout(() => r(false), 100)),
    ]);
    if (done) throw new Error(`sandbox exited: ${output()}`);
  }
  throw new Error(`sandbox did not start: ${output()}`);
}

test('parseListen accepts HOST:PORT and refuses anything else', (t) => {
  t.deepEqual(parseListen('127.0.0.1:8000'), { host: '127.0.0.1', port: 8000 });
  t.deepEqual(parseListen('[::1]:9000'), { host: '::1', port: 9000 });
  t.deepEqual(parseListen('localhost:0'), { host: 'localhost', port: 0 });
  for (const bad of ['8000', '127.0.0.1', '127.0.0.1:99999', 'a b:1', ':80', '127.0.0.1:-1']) {
    t.throws(() => parseListen(bad), { message: /HOST:PORT/ });
  }
});

test('the sandbox command serves RPC, persists to --data and stops on SIGTERM', async (t) => {
  const { dir, remove } = tempDir();
  t.teardown(remove);
  const first = run(['--listen', '127.0.0.1:0', '--ledger-ms', '50', '--data', dir]);
  t.teardown(() => first.child.kill('SIGKILL'));
  const url = await waitForUrl(first.output, first.exited);
  const server = new rpc.Server(url, { allowHttp: true });
  t.is((await server.getHealth()).status, 'healthy');
  const info = await (await fetch(url.replace(/\/rpc$/, '/sandbox/info'))).json();
  const ledger = (await server.getLatestLedger()).sequence;
  first.child.kill('SIGTERM');
  t.is(await first.exited, 0);

  const second = run(['--listen', '127.0.0.1:0', '--ledger-ms', '50', '--data', dir]);
  t.teardown(() => second.child.kill('SIGKILL'));
  const url2 = await waitForUrl(second.output, second.exited);
  const again = await (await fetch(url2.replace(/\/rpc$/, '/sandbox/info'))).json();
  t.deepEqual(again, info);
  t.true((await new rpc.Server(url2, { allowHttp: true }).getLatestLedger()).sequence >= ledger);
  second.child.kill('SIGTERM');
  t.is(await second.exited, 0);

  // the same data under another network passphrase is refused, never silently reused
  const other = run([
    '--listen',
    '127.0.0.1:0',
    '--data',
    dir,
    '--network-passphrase',
    'Test SDF Network ; September 2015',
  ]);
  t.not(await other.exited, 0);
  t.regex(other.output(), /created for network "Standalone Network ; February 2017"/);
});

test('--network-passphrase runs the sandbox as that network (x402 id follows it)', async (t) => {
  const testnet = 'Test SDF Network ; September 2015';
  const r = run(['--listen', '127.0.0.1:0', '--ledger-ms', '50', '--network-passphrase', testnet]);
  t.teardown(() => r.child.kill('SIGKILL'));
  const url = await waitForUrl(r.output, r.exited);
  t.is((await new rpc.Server(url, { allowHttp: true }).getNetwork()).passphrase, testnet);
  const info = await (await fetch(url.replace(/\/rpc$/, '/sandbox/info'))).json();
  t.is(info.networkPassphrase, testnet);
  t.is(info.network, 'stellar:testnet');
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
});

test('bad options and a missing verification key fail with a clear message', async (t) => {
  const cases = [
    [['--listen', 'nowhere'], /--listen must be HOST:PORT/],
    [['--listen', '127.0.0.1:0', '--ledger-ms', '0'], /--ledger-ms must be an integer/],
    [
      ['--listen', '127.0.0.1:0', '--vkey', '/nonexistent/verification_key.json'],
      /cannot read the verification key/,
    ],
    [['--listen', '127.0.0.1:0', '--network-passphrase', ' padded'], /--network-passphrase must be/],
  ] as const;
  const runs = cases.map(([args]) => run([...args]));
  const codes = await Promise.all(runs.map((r) => r.exited));
  cases.forEach(([, message], i) => {
    t.not(codes[i], 0);
    t.regex(runs[i]?.output() ?? '', message);
  });
});
