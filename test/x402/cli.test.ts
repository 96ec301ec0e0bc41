// The x402 parts of the CLI as real processes: `pool-proxy facilitator` against a sandbox (starts, answers
// /supported with its channel accounts, stops on SIGTERM; bad flags and bad secrets are refused with a clear
// message), and `pool-proxy start`, which runs the facilitator and the demo service beside the embedded
// sandbox, funds the pool wallet's float and prints their URLs.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import type { Sandbox } from '../../src/sandbox/index.ts';
import { startSandbox, tokenBalance } from './helpers.ts';
import { freeLoopbackPort as freePort } from '../../src/listen.ts';
import { LOCAL_CHANNELS } from '../../src/x402/local-services.ts';
import { TESTNET_PASSPHRASE } from '../../src/ledger/networks.ts';
import { runCli as run, runStart } from '../helpers/cli.ts';

let sandbox: Sandbox;
test.before(async () => {
  ({ sandbox } = await startSandbox({ ledgerMs: 100 }));
});
test.after.always(async () => {
  await sandbox?.close();
});

// no facilitator settings from the environment of whoever runs the tests
const clean = {
  POOL_PROXY_FACILITATOR_SECRETS: undefined,
  POOL_PROXY_FACILITATOR_CHANNELS: undefined,
  POOL_PROXY_NETWORK_PASSPHRASE: undefined,
};

test('pool-proxy facilitator starts, answers /supported with its channel accounts and stops on SIGTERM', async (t) => {
  const channels = [Keypair.random(), Keypair.random()];
  const r = run(['facilitator', '--listen', '127.0.0.1:0', '--rpc-url', sandbox.rpcUrl], {
    ...clean,
    POOL_PROXY_FACILITATOR_SECRETS: channels.map((c) => c.secret()).join(','),
  });
  t.teardown(() => void r.child.kill('SIGKILL'));
  const [, url] = await r.waitFor(/facilitator\s+(http:\/\/\S+)/);
  await r.waitFor(/^ready\.$/m);
  const supported = await (await fetch(`${url}/supported`)).json();
  t.deepEqual(supported.kinds, [
    { x402Version: 2, scheme: 'exact', network: 'stellar:local', extra: { areFeesSponsored: true } },
  ]);
  t.deepEqual(supported.signers['stellar:*'].sort(), channels.map((c) => c.publicKey()).sort());
  t.is((await fetch(`${url}/health`)).status, 200);
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
});

test('pool-proxy facilitator makes fresh channel accounts when none are given', async (t) => {
  const r = run(
    ['facilitator', '--listen', '127.0.0.1:0', '--rpc-url', sandbox.rpcUrl, '--channels', '3'],
    clean,
  );
  t.teardown(() => void r.child.kill('SIGKILL'));
  const [, url] = await r.waitFor(/facilitator\s+(http:\/\/\S+)/);
  const supported = await (await fetch(`${url}/supported`)).json();
  t.is(supported.signers['stellar:*'].length, 3);
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
});

test('pool-proxy facilitator refuses bad flags and secrets with a clear message', async (t) => {
  const cases: [string[], Record<string, string | undefined>, RegExp][] = [
    [['--listen', 'nope'], {}, /--listen must be HOST:PORT/],
    [['--rpc-url', 'ftp://x/rpc'], {}, /--rpc-url must be an http\(s\) URL/],
    [['--channels', '0'], {}, /--channels must be an integer from 1 to 256/],
    [['--max-fee', 'lots'], {}, /--max-fee must be an integer/],
    [['--network-passphrase', 'Test SDF Network ; September 2015'], {}, /the RPC serves "Standalone Network/],
    [[], { POOL_PROXY_FACILITATOR_SECRETS: 'SNOTASECRET' }, /channel secret 1 is not a Stellar secret seed/],
  ];
  // all at once: each is a separate process that exits on its own
  const runs = cases.map(([args, env]) =>
    run(['facilitator', '--listen', '127.0.0.1:0', '--rpc-url', sandbox.rpcUrl, ...args], {
      ...clean,
      ...env,
    }),
  );
  for (const [i, [args, , message]] of cases.entries()) {
    t.is(await runs[i]!.exited, 1, args.join(' '));
    t.regex(runs[i]!.output(), message);
  }
  const unreachable = run(
    ['facilitator', '--listen', '127.0.0.1:0', '--rpc-url', 'http://127.0.0.1:9/rpc'],
    clean,
  );
  t.is(await unreachable.exited, 1);
  t.regex(unreachable.output(), /cannot reach the RPC at http:\/\/127\.0\.0\.1:9\/rpc/);
});

test('pool-proxy start --tls runs the facilitator and the demo service, funds the pool wallet, and the official client pays the demo over the HTTPS RPC', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pool-proxy-x402-start-'));
  t.teardown(() => rmSync(dataDir, { recursive: true, force: true }));
  const [sandboxPort, proverPort, proxyPort] = [await freePort(), await freePort(), await freePort()];
  const r = runStart(
    {
      dataDir,
      sandbox: `127.0.0.1:${sandboxPort}`,
      prover: `127.0.0.1:${proverPort}`,
      ledgerMs: 250,
      extra: ['--network-passphrase', TESTNET_PASSPHRASE, '--tls', '127.0.0.1:0'],
    },
    {
      ...clean,
      POOL_PROXY_PORT: String(proxyPort),
      POOL_PROXY_RPC_URL: undefined,
      POOL_PROXY_PROVER_ADDRESSES: undefined,
      // the demo's own offer: 300 s is 60 nominal ledgers, 15 s of these fast ledgers
      POOL_PROXY_DEMO_MAX_TIMEOUT_SECONDS: '300',
    },
  );
  t.teardown(() => void r.child.kill('SIGKILL'));
  await r.waitFor(/"msg":"ready\."/);
  const [, httpsRpcUrl, certPath] = await r.waitFor(
    /sandbox RPC over HTTPS: (https:\/\/[^\s"]+)\s+certificate (\S+) \(trust it: NODE_EXTRA_CA_CERTS=/,
  );
  t.true(certPath!.startsWith(join(dataDir, 'tls')), 'the certificate is made in the data directory');
  const facilitatorUrl = (await r.waitFor(/x402 facilitator\s+(http:\/\/[^\s"]+)/))[1]!;
  const demoUrl = (await r.waitFor(/x402 demo\s+(http:\/\/[^\s"]+)/))[1]!;
  t.regex(demoUrl, /\/demo\/quote$/);
  const supported = await (await fetch(`${facilitatorUrl}/supported`)).json();
  t.is(supported.kinds[0].network, 'stellar:testnet');
  t.is(supported.signers['stellar:*'].length, LOCAL_CHANNELS);
  const unpaid = await fetch(demoUrl);
  t.is(unpaid.status, 402);
  const required = JSON.parse(Buffer.from(unpaid.headers.get('payment-required')!, 'base64').toString());
  const sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  const info = await (await fetch(`${sandboxUrl}/sandbox/info`)).json();
  t.like(required.accepts[0], {
    scheme: 'exact',
    network: 'stellar:testnet',
    amount: '100000',
    asset: info.contracts.token,
  });
  const { rpc } = await import('#stellar-sdk');
  const server = new rpc.Server(`${sandboxUrl}/rpc`, { allowHttp: true });
  const balance = (who: string) => tokenBalance(server, info.networkPassphrase, info.contracts.token, who);
  t.is(await balance(info.accounts.poolWallet), 1000n * 10_000_000n);

  // the HTTPS RPC is the same RPC; untrusted, its certificate is refused
  await t.throwsAsync(fetch(httpsRpcUrl!, { method: 'POST', body: '{}' }));
  // the official client (@x402/fetch + @x402/stellar, default options) pays the demo over it
  const payer = Keypair.random();
  t.true((await fetch(`${sandboxUrl}/friendbot?addr=${payer.publicKey()}&usdc=1`)).ok);
  const payTo = required.accepts[0].payTo as string;
  const payToBefore = await balance(payTo);
  const paid = await runNode(
    [
      join(import.meta.dirname, 'fixtures', 'official-client-pay.ts'),
      demoUrl,
      httpsRpcUrl!,
      payer.secret(),
      info.contracts.token,
    ],
    { NODE_EXTRA_CA_CERTS: certPath! },
  );
  t.is(paid.code, 0, paid.stderr);
  const answer = JSON.parse(paid.stdout.trim().split('\n').pop()!);
  t.is(answer.status, 200, paid.stdout);
  t.truthy(answer.settlement?.success);
  t.is(answer.settlement.payer, payer.publicKey());
  t.is(await balance(payTo), payToBefore + 100_000n);
  t.is(await balance(payer.publicKey()), 10_000_000n - 100_000n);
  r.child.kill('SIGTERM');
  t.is(await r.exited, 0);
});

/** Runs a TypeScript file with node (through tsx) and `env` added; resolves with its exit and output. */
function runNode(args: string[], env: Record<string, string>) {
  return new Promise<{ code: number | null; stdout: string; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, ['--import', 'tsx', ...args], {
      env: { ...process.env, ...env },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d: Buffer) => (stdout += d.toString()));
    child.stderr.on('data', (d: Buffer) => (stderr += d.toString()));
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}
