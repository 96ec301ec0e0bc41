// Requests that come while the sandbox deploys its genesis contracts: every route answers 503 with
// Retry-After (the deployment's own RPC requests aside), none of them can bring the process down, and once
// the deployment is done the same routes serve. The network here is a small one whose deployment waits for
// the test, so the polling happens inside genesis for certain, not by timing.
import test from 'ava';
import { request } from 'node:http';
import { Keypair } from '#stellar-sdk';
import { type NetworkDefinition, Sandbox } from '../../src/sandbox/index.ts';

interface Answer {
  status: number;
  retryAfter: string | undefined;
  body: string;
}

function call(url: string, method: string, body?: string, headers: Record<string, string> = {}) {
  return new Promise<Answer>((resolve, reject) => {
    const req = request(
      url,
      { method, headers: { 'content-type': 'application/json', ...headers } },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'] as string | undefined,
            body: Buffer.concat(chunks).toString('utf8'),
          }),
        );
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

const rpcBody = (method: string, params?: unknown) =>
  JSON.stringify({ jsonrpc: '2.0', id: 1, method, params });

/** Every route and a few odd requests to each, as a script polling a starting sandbox sends them. */
function polls(base: string): [string, string, string | undefined, Record<string, string>?][] {
  const someone = Keypair.random().publicKey();
  return [
    ['GET', '/sandbox/info', undefined],
    ['GET', '/sandbox/info/', undefined],
    ['GET', `/friendbot?addr=${someone}`, undefined],
    ['POST', `/friendbot?addr=${someone}&usdc=5`, undefined],
    ['GET', '/friendbot?addr=nonsense', undefined],
    ['POST', '/rpc', rpcBody('getLatestLedger')],
    ['POST', '/rpc', rpcBody('getHealth')],
    ['POST', '/rpc', rpcBody('getNetwork')],
    ['POST', '/rpc', rpcBody('getLedgers', { startLedger: 1 })],
    ['POST', '/rpc', rpcBody('simulateTransaction', { transaction: 'AAAA' })],
    ['POST', '/rpc', rpcBody('sendTransaction', { transaction: 'not base64' })],
    ['POST', '/rpc', `[${rpcBody('getHealth')},${rpcBody('getLatestLedger')}]`],
    ['POST', '/rpc', '{not json'],
    ['POST', '/', rpcBody('getHealth')],
    // a forged deployment token is no token
    ['POST', '/rpc', rpcBody('getHealth'), { 'x-sandbox-genesis-token': '00'.repeat(32) }],
    ['POST', '/rpc', rpcBody('getHealth'), { 'x-sandbox-genesis-token': 'x' }],
  ].map(([method, path, body, headers]) => [
    method as string,
    `${base}${path as string}`,
    body as string | undefined,
    headers as Record<string, string> | undefined,
  ]);
}

test('during genesis every route answers 503 with Retry-After; afterwards they serve', async (t) => {
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  let reachedDeploy!: (base: string) => void;
  const deploying = new Promise<string>((resolve) => (reachedDeploy = resolve));
  let ownLedger = 0;
  const network: NetworkDefinition<{ deployed: boolean }, { none: true }> = {
    genesis: () => ({ none: true }),
    async deploy(ctx) {
      // the deployment's own requests are served during genesis
      ownLedger = (await ctx.ledger.server.getLatestLedger()).sequence;
      reachedDeploy(ctx.ledger.server.serverURL.toString().replace(/\/rpc$/, ''));
      await released;
      return { deployed: true };
    },
  };
  const starting = Sandbox.start({ network, port: 0, ledgerMs: 50 });
  const base = await deploying;
  t.true(ownLedger >= 1, 'the deployment reads the ledger through its own RPC');

  for (const [method, url, body, headers] of polls(base)) {
    const answer = await call(url, method, body, headers);
    t.is(answer.status, 503, `${method} ${url}`);
    t.is(answer.retryAfter, '1', `${method} ${url}`);
    const parsed = JSON.parse(answer.body) as { error?: { message: string }; detail?: string };
    t.regex(parsed.error?.message ?? parsed.detail ?? '', /still deploying its genesis contracts/);
  }
  // an unknown route is still unknown
  t.is((await call(`${base}/nowhere`, 'GET')).status, 404);

  release();
  const sandbox = await starting;
  t.teardown(() => sandbox.close());
  const info = await call(`${base}/sandbox/info`, 'GET');
  t.is(info.status, 200);
  t.like(JSON.parse(info.body), { deployed: true });
  const health = JSON.parse((await call(`${base}/rpc`, 'POST', rpcBody('getHealth'))).body);
  t.is(health.result.status, 'healthy');
  // this network has no friendbot extension: the account is created
  const funded = await call(`${base}/friendbot?addr=${Keypair.random().publicKey()}`, 'GET');
  t.is(funded.status, 200);
});

test('a request that fails inside a route answers 500 and leaves the sandbox serving', async (t) => {
  // a network whose public info cannot be read: /sandbox/info's handler throws synchronously
  const network: NetworkDefinition = {
    genesis: () => ({}),
    deploy: async () => ({}),
  };
  const sandbox = await Sandbox.start({ network, port: 0, ledgerMs: 50 });
  t.teardown(() => sandbox.close());
  const doc = sandbox.chain.state.docs.get('info');
  sandbox.chain.state.docs.delete('info');
  const broken = await call(`${sandbox.url}/sandbox/info`, 'GET');
  t.is(broken.status, 500);
  t.regex(broken.body, /no genesis record/);
  if (doc) sandbox.chain.state.docs.set('info', doc);
  t.is((await call(`${sandbox.url}/sandbox/info`, 'GET')).status, 200);
});
