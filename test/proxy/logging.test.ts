// The logs of a real `pool-proxy start` (embedded sandbox, prover daemon and proxy in one process), read as
// the JSON lines it writes to stdout: start-up progress, one line per request with its request id (an
// incoming sane X-Request-Id is kept and echoed), a line per login and per refusal with its problem code and
// detail (a 404 with its path; an unreachable paid service is a refusal, not an error of the proxy), a new
// agent's first deposit that is not mistaken for a recovery, ledger-close and failed-transaction lines from the
// sandbox, the stop lines — and no token, signature, challenge or master key anywhere. On a terminal the same logger writes coloured lines instead.
// Requests go through PoolApi, marked with an X-Request-Id to find their lines; raw only where the test reads
// the echoed X-Request-Id or sends what PoolApi never does (a repeated member, a path that is no route).
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Address, Contract, Keypair, nativeToScVal, rpc, TransactionBuilder } from '#stellar-sdk';
import test from 'ava';
import type { PoolApiCaller } from '../../src/api/client.ts';
import { jsonLogger } from '../../src/proxy/util/logger.ts';
import { freeLoopbackPort as freePort } from '../../src/listen.ts';
import { type CliRun, runStart } from '../helpers/cli.ts';
import { PoolApi, refused } from './helpers/api.ts';
import { postJson, problemOf } from './helpers/http.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));

interface Line {
  level: string;
  time: string;
  msg: string;
  [field: string]: unknown;
}

let service: CliRun;
let proxyUrl: string;
let sandboxUrl: string;
const dataDir = mkdtempSync(join(tmpdir(), 'pp-logging-'));

/** The proxy's client for `caller`, its requests marked with `requestId` (X-Request-Id) to find their lines. */
function api(requestId?: string, caller: PoolApiCaller = { kind: 'public' }): PoolApi {
  return new PoolApi({
    baseUrl: proxyUrl,
    caller,
    ...(requestId !== undefined && { headers: { 'x-request-id': requestId } }),
  });
}

function lines(): Line[] {
  return service
    .stdout()
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
}

async function waitForLine(match: (line: Line) => boolean, what: string, ms = 5 * 60_000): Promise<Line> {
  const deadline = Date.now() + ms;
  for (;;) {
    const found = lines().find(match);
    if (found) return found;
    if (service.child.exitCode !== null)
      throw new Error(`pool-proxy start exited early:\n${service.output()}`);
    if (Date.now() > deadline) throw new Error(`no line ${what} in:\n${service.stdout()}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

test.before(async () => {
  const [sandboxPort, proverPort, proxyPort, facilitatorPort, demoPort] = [
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
    await freePort(),
  ];
  sandboxUrl = `http://127.0.0.1:${sandboxPort}`;
  proxyUrl = `http://127.0.0.1:${proxyPort}`;
  service = runStart(
    {
      dataDir,
      sandbox: `127.0.0.1:${sandboxPort}`,
      prover: `127.0.0.1:${proverPort}`,
      ledgerMs: 200,
      facilitator: `127.0.0.1:${facilitatorPort}`,
      demo: `127.0.0.1:${demoPort}`,
    },
    {
      POOL_PROXY_PORT: String(proxyPort),
      POOL_PROXY_RPC_URL: undefined,
      POOL_PROXY_PROVER_ADDRESSES: undefined,
      POOL_PROXY_LOG_LEVEL: undefined,
    },
  );
  // As long as the other tests of `pool-proxy start` allow: a loaded machine takes minutes to start it.
  await waitForLine((l) => l.msg === 'ready.', 'ready.', 8 * 60_000);
});

test.after.always(() => {
  service?.child.kill('SIGKILL');
  rmSync(dataDir, { recursive: true, force: true });
});

test.serial('start-up progress: genesis, prover, proxy, ready — every stdout line is JSON', (t) => {
  const messages = lines().map((l) => l.msg);
  const order = [
    /^sandbox: genesis — /,
    /^sandbox: genesis done$/,
    /^sandbox ledger {2}http:/,
    /^prover daemon: loading the proving key/,
    /^prover daemon {3}127\.0\.0\.1:/,
    /^proxy: connecting to the ledger and the prover/,
    /^proxy {11}http:/,
    /^ready\.$/,
  ].map((pattern) => messages.findIndex((m) => pattern.test(m)));
  t.false(order.includes(-1), messages.join('\n'));
  t.deepEqual(
    order,
    [...order].sort((a, b) => a - b),
    'in start-up order',
  );
  for (const line of lines()) {
    t.regex(line.level, /^(debug|info|warn|error)$/);
    t.false(Number.isNaN(Date.parse(line.time)));
  }
  t.is(service.stderr().trim(), '', 'nothing on stderr');
});

test.serial(
  'one line per request, with its request id; a sane incoming X-Request-Id is kept and echoed',
  async (t) => {
    const res = await fetch(`${proxyUrl}/api/pool/info`, { headers: { 'x-request-id': 'trace-4f2a:01' } });
    t.is(res.status, 200);
    t.is(res.headers.get('x-request-id'), 'trace-4f2a:01');
    const line = await waitForLine((l) => l.requestId === 'trace-4f2a:01', 'with the request id');
    t.like(line, { level: 'info', msg: 'request', method: 'GET', route: '/api/pool/info', status: 200 });
    t.is(typeof line.ms, 'number');
    t.is(lines().filter((l) => l.requestId === 'trace-4f2a:01').length, 1);

    for (const insane of ['has spaces in it', 'x'.repeat(129), 'semi;colon']) {
      const other = await fetch(`${proxyUrl}/api/pool/info`, { headers: { 'x-request-id': insane } });
      const echoed = other.headers.get('x-request-id')!;
      t.regex(echoed, /^[0-9a-f-]{36}$/, 'replaced by a fresh UUID');
      await waitForLine((l) => l.requestId === echoed, 'with the fresh id');
    }
    const doc = await (await fetch(`${proxyUrl}/openapi.json`)).json();
    for (const status of ['200', '401']) {
      t.truthy(
        doc.paths['/api/withdraw'].post.responses[status].headers['X-Request-Id'],
        `documented (${status})`,
      );
    }
    const plain = await fetch(`${proxyUrl}/api/pool/stats`);
    t.regex(plain.headers.get('x-request-id')!, /^[0-9a-f-]{36}$/);
    // Monitors' probes are debug lines, not written at the default level.
    const health = await fetch(`${proxyUrl}/health`, { headers: { 'x-request-id': 'probe-1' } });
    t.is(health.headers.get('x-request-id'), 'probe-1');
    await waitForLine((l) => l.route === '/api/pool/stats', 'stats');
    t.false(lines().some((l) => l.requestId === 'probe-1'));
  },
);

test.serial(
  'a login line names the wallet; refusals name their code; no token, signature or challenge is logged',
  async (t) => {
    const wallet = Keypair.random();
    const { challenge } = await api().challenge(wallet.publicKey());
    const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
    const signed = { publicKey: wallet.publicKey(), challenge, signature };
    const verified = await api('login-1').verify(signed);
    const login = await waitForLine((l) => l.msg === 'login', 'login');
    t.like(login, { level: 'info', wallet: wallet.publicKey(), requestId: 'login-1', component: 'proxy' });

    const replay = await refused(t, api('replay-1').verify(signed));
    t.is(replay.status, 401);
    t.like(await waitForLine((l) => l.requestId === 'replay-1', 'replay'), {
      level: 'info',
      msg: 'request refused',
      route: '/api/auth/verify',
      status: 401,
      code: 'unauthorized',
      detail: 'challenge was already used; request a new one',
    });
    // raw: a body with a repeated member
    const duplicate = await postJson(`${proxyUrl}/api/withdraw`, '{"amount":"-5","amount":"0.1"}', {
      authorization: `Bearer ${verified.token}`,
      'x-request-id': 'dup-1',
    });
    t.is(duplicate.status, 400);
    t.is(problemOf(duplicate).code, 'invalid_request');
    t.like(await waitForLine((l) => l.requestId === 'dup-1', 'duplicate'), {
      msg: 'request refused',
      code: 'invalid_request',
      status: 400,
    });
    // raw: no route of the API
    const unknown = await fetch(`${proxyUrl}/api/nothing-here`, { headers: { 'x-request-id': 'nf-1' } });
    t.is(unknown.status, 404);
    t.like(await waitForLine((l) => l.requestId === 'nf-1', '404'), {
      code: 'not_found',
      route: 'unmatched',
      path: '/api/nothing-here',
    });

    const all = service.output();
    const nonce = /Nonce: ([0-9a-f]+)/.exec(challenge)![1]!;
    for (const secret of [
      verified.token,
      verified.token.split('.')[2]!,
      signature,
      nonce,
      readFileSync(join(dataDir, 'master.key'), 'utf8').trim(),
      readFileSync(join(dataDir, 'operator.token'), 'utf8').trim(),
    ]) {
      t.false(all.includes(secret), `never logged: ${secret.slice(0, 12)}…`);
    }
  },
);

test.serial(
  "a new agent's first deposit is not logged as a recovery; an unreachable paid service is a refusal, not an error",
  async (t) => {
    const operator: PoolApiCaller = {
      kind: 'operator',
      token: readFileSync(join(dataDir, 'operator.token'), 'utf8').trim(),
    };
    const deposited = await api('dep-1', operator).operatorDeposit({ agentId: 'log-agent', amount: '1' });
    t.is(deposited.amount, '1.0000000', 'the operator deposit answers its amount like a wallet deposit');
    await waitForLine((l) => l.requestId === 'dep-1' && l.msg === 'request', 'deposit');
    t.false(
      lines().some((l) => l.msg === 'agent recovered from the chain'),
      'nothing was recovered: the proxy made this deposit itself',
    );

    // A host that does not resolve (.invalid never does): the caller's problem, not the proxy's.
    const pay = await refused(
      t,
      api('dns-1', operator).pay({
        agentId: 'log-agent',
        serviceUrl: 'http://no-such-service.invalid/quote',
        method: 'GET',
      }),
    );
    t.is(pay.status, 502, pay.detail);
    t.is(pay.code, 'service_unreachable');
    const line = await waitForLine((l) => l.requestId === 'dns-1' && /^request/.test(l.msg), 'dns');
    t.like(line, { level: 'info', msg: 'request refused', code: 'service_unreachable', status: 502 });
    t.regex(String(line.detail), /no-such-service\.invalid/);
  },
);

test.serial('the sandbox logs ledger closes and each failed transaction with its reason', async (t) => {
  const info = await (await fetch(`${sandboxUrl}/sandbox/info`)).json();
  const closed = await waitForLine(
    (l) => l.msg === 'ledger closed' && (l.transactions as number) > 0,
    'ledger closed',
  );
  t.like(closed, { level: 'info', component: 'sandbox' });
  t.is(typeof closed.ledger, 'number');

  // Two transfers of 60 from an account holding 100, both simulated before either lands: the second
  // passes simulation and fails when applied.
  const payer = Keypair.random();
  t.true((await fetch(`${sandboxUrl}/friendbot?addr=${payer.publicKey()}&usdc=100`)).ok);
  const server = new rpc.Server(`${sandboxUrl}/rpc`, { allowHttp: true });
  const account = await server.getAccount(payer.publicKey());
  const transfer = () =>
    new TransactionBuilder(account, { fee: '100', networkPassphrase: info.networkPassphrase })
      .addOperation(
        new Contract(info.contracts.token).call(
          'transfer',
          new Address(payer.publicKey()).toScVal(),
          new Address(info.accounts.operator).toScVal(),
          nativeToScVal(600_000_000n, { type: 'i128' }),
        ),
      )
      .setTimeout(60)
      .build();
  const [first, second] = [transfer(), transfer()];
  const prepared = [await server.prepareTransaction(first), await server.prepareTransaction(second)];
  for (const tx of prepared) tx.sign(payer);
  const sent = await server.sendTransaction(prepared[0]);
  t.is(
    (await server.pollTransaction(sent.hash, { attempts: 100 })).status,
    rpc.Api.GetTransactionStatus.SUCCESS,
  );
  const failing = await server.sendTransaction(prepared[1]);
  t.is(failing.status, 'PENDING');
  t.is(
    (await server.pollTransaction(failing.hash, { attempts: 100 })).status,
    rpc.Api.GetTransactionStatus.FAILED,
  );
  const failed = await waitForLine((l) => l.txHash === failing.hash, 'transaction failed');
  t.like(failed, { level: 'warn', msg: 'transaction failed', component: 'sandbox' });
  t.is(typeof failed.reason, 'string');
  t.not(failed.reason, 'unknown');
});

test.serial('SIGTERM: a stopping line, the proxy stops, then "stopped." and exit 0', async (t) => {
  service.child.kill('SIGTERM');
  t.is(await service.exited, 0, service.stderr());
  const messages = lines().map((l) => l.msg);
  const stopping = messages.indexOf('stopping (SIGTERM)…');
  t.true(stopping >= 0);
  t.true(messages.indexOf('proxy stopped') > stopping);
  t.is(messages.at(-1), 'stopped.');
});

test('on a terminal the logger writes coloured human-readable lines, not JSON', (t) => {
  const script = `import { createLogger } from './src/proxy/util/logger.ts'; createLogger().log('info', 'hello terminal', { a: 1 });`;
  const run = spawnSync(
    'script',
    ['-qec', `${process.execPath} --import=tsx --input-type=module -e "${script}"`, '/dev/null'],
    {
      cwd: ROOT,
      encoding: 'utf8',
    },
  );
  t.is(run.status, 0, run.stderr);
  t.regex(run.stdout, /\u001b\[32mINFO\u001b\[39m/);
  t.regex(run.stdout, /hello terminal/);
  t.notRegex(run.stdout, /"msg"/);
});

test('secrets are redacted and an amount never shares a line with an agent, owner or wallet', (t) => {
  const written: string[] = [];
  const logger = jsonLogger('debug', (line) => written.push(line));
  logger.log('info', 'a', { token: 'eyJ.x.y', nested: { signature: 'sig' }, route: '/api/withdraw' });
  logger.log('info', 'b', { agentId: 'agent-1', amount: '5.0000000' });
  logger.child({ wallet: 'GABC' }).log('info', 'c', { amount: '1' });
  logger.child({ requestId: 'r' }).child({ owner: 'GOWN' }).log('info', 'd', { amount: '2' });
  logger.log('info', 'e', { amount: '3', pool: 'C…' });
  const [a, b, c, d, e] = written.map((line) => JSON.parse(line));
  t.is(a.token, '[redacted]');
  t.is(a.nested.signature, '[redacted]');
  t.is(a.route, '/api/withdraw');
  t.false('amount' in b);
  t.is(b.agentId, 'agent-1');
  t.false('amount' in c);
  t.false('amount' in d);
  t.is(e.amount, '3', 'an amount alone (pool totals) is kept');
});
