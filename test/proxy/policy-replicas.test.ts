// Agents' policies across two proxies (replicas) sharing a PostgreSQL store — a real server from Debian's
// package — with the sandbox ledger, a real prover daemon and the local x402 pair (the demo service at 0.01
// USDC): twenty concurrent payments spread over both replicas against a daily budget of five prices pay
// exactly five (the budget is reserved under a PostgreSQL advisory lock), and a freeze asked of one replica
// stops payments queued through the other before the batch leader signs them; an agent token revoked on one
// replica is refused by the other; a payment waiting for approval, approved on both replicas at once, is paid
// once.
import test from 'ava';
import type { ProxyHandle } from '../../src/proxy/server.ts';
import { type LocalX402, localX402Env, startLocalX402 } from '../../src/x402/local-services.ts';
import { type PostgresServer, startPostgres } from '../helpers/postgres.ts';
import { getJson, postJson, rawRequest } from './helpers/http.ts';
import { type Stack, startStack } from './helpers/stack.ts';

let pgServer: PostgresServer;
let stack: Stack;
let x402: LocalX402;
let replicas: ProxyHandle[];
let operator: Record<string, string>;
/** The replicas' clock: moved forward instead of sleeping. */
let offset = 0;
const clock = () => Date.now() + offset;

const replica = (i: number) => replicas[i % replicas.length]!.url;
const balanceOf = async (agentId: string, i = 0) =>
  (await getJson(`${replica(i)}/api/balance/${agentId}`, operator)).json.balance as string;
const payDemo = (agentId: string, i: number) =>
  postJson(`${replica(i)}/api/pay`, { agentId, serviceUrl: x402.demo.quoteUrl, method: 'GET' }, operator);

async function operatorDeposit(agentId: string, amount: string): Promise<void> {
  const res = await postJson(`${replica(0)}/api/deposit`, { agentId, amount }, operator);
  if (res.status !== 200) throw new Error(`deposit: ${res.text}`);
}

test.before(async () => {
  pgServer = await startPostgres();
  stack = await startStack({ POOL_PROXY_DATABASE_URL: await pgServer.database() });
  operator = stack.operator;
  const { sandbox } = stack;
  await stack.fund(sandbox.info.accounts.poolWallet, 100);
  x402 = await startLocalX402({
    rpcUrl: sandbox.rpcUrl,
    networkPassphrase: stack.config.ledger.networkPassphrase,
    asset: sandbox.info.contracts.token,
    facilitator: { host: '127.0.0.1', port: 0 },
    demo: { host: '127.0.0.1', port: 0 },
  });
  await stack.proxy.close();
  const env = {
    ...localX402Env(x402, undefined),
    POOL_PROXY_POOL_WALLET_SECRET: sandbox.secrets().poolWallet,
    // long enough for a freeze to land while payments wait in the window
    POOL_PROXY_BATCH_WINDOW_MS: '4000',
    POOL_PROXY_SETTLE_INTERVAL_MS: '86400000',
    POOL_PROXY_PUBLIC_URL: 'http://pool.test',
  };
  replicas = await Promise.all([1, 2].map(async () => (await stack.startProxy(env, { clock })).proxy));
  await operatorDeposit('budgeted', '1');
  await operatorDeposit('frozen', '1');
});

test.after.always(async () => {
  await Promise.all((replicas ?? []).map((p) => p.close()));
  await x402?.close();
  await stack?.daemon.stop({ force: true });
  await stack?.sandbox.close();
  await pgServer?.stop();
});

test.serial(
  'twenty concurrent payments over two replicas against a daily budget of five prices pay five',
  async (t) => {
    const set = await rawRequest(`${replica(1)}/api/agents/budgeted/policy`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...operator },
      body: JSON.stringify({ budgetPerDay: '0.05' }),
    });
    t.is(set.status, 200, set.text);
    const demoBefore = await stack.usdcBalance(x402.demoPayTo);
    const results = await Promise.all(Array.from({ length: 20 }, (_, i) => payDemo('budgeted', i)));
    const summary = results.map((r) => `${r.status} ${r.json?.code ?? r.json?.paymentStatus}`).join(',');
    const confirmed = results.filter((r) => r.status === 200 && r.json.paymentStatus === 'confirmed');
    t.is(confirmed.length, 5, summary);
    t.is(results.filter((r) => r.status === 429 && r.json.code === 'policy_budget_day').length, 15, summary);
    t.is(await stack.usdcBalance(x402.demoPayTo), demoBefore + 5n * 100_000n, 'five prices paid, no more');
    for (const i of [0, 1]) {
      t.is(await balanceOf('budgeted', i), '0.9500000');
      const view = (await getJson(`${replica(i)}/api/agents/budgeted/policy`, operator)).json;
      t.is(view.effective.budgets.day.remaining, '0.0000000');
    }
  },
);

test.serial('a freeze asked of one replica stops payments queued through the other', async (t) => {
  const demoBefore = await stack.usdcBalance(x402.demoPayTo);
  const waiting = [payDemo('frozen', 0), payDemo('frozen', 0)];
  while ((await balanceOf('frozen', 1)) !== '0.9800000') await new Promise((r) => setTimeout(r, 25));
  const frozen = await postJson(`${replica(1)}/api/agents/frozen/freeze`, {}, operator);
  t.is(frozen.status, 200, frozen.text);
  const refused = await payDemo('frozen', 0);
  t.is(refused.json.code, 'agent_frozen', 'refused at once on the other replica too');
  for (const res of await Promise.all(waiting)) {
    t.is(res.status, 502, res.text);
    t.is(res.json.reason, 'agent_frozen');
  }
  t.is(await stack.usdcBalance(x402.demoPayTo), demoBefore, 'nothing was paid');
  t.is(await balanceOf('frozen', 0), '1.0000000', 'the reservations came back');
});

test.serial('an agent token revoked on one replica is refused by the other', async (t) => {
  const issued = await postJson(`${replica(0)}/api/agents/budgeted/tokens`, {}, operator);
  t.is(issued.status, 200, issued.text);
  const agent = { authorization: `Bearer ${issued.json.token}` };
  t.is(
    (await getJson(`${replica(1)}/api/balance/budgeted`, agent)).status,
    200,
    'valid on the other replica',
  );
  const revoked = await rawRequest(`${replica(0)}/api/agents/budgeted/tokens/${issued.json.tokenId}`, {
    method: 'DELETE',
    headers: operator,
  });
  t.is(revoked.status, 200, revoked.text);
  t.is(
    (await getJson(`${replica(0)}/api/balance/budgeted`, agent)).status,
    401,
    'at once where it was revoked',
  );
  // The other replica trusts its last "not revoked" answer for a second (auth/revocations.ts): move past it.
  offset += 2_000;
  const there = await getJson(`${replica(1)}/api/balance/budgeted`, agent);
  t.is(there.status, 401, there.text);
  const paid = await postJson(`${replica(1)}/api/pay`, { serviceUrl: x402.demo.quoteUrl }, agent);
  t.is(paid.status, 401);
});

test.serial(
  'a waiting payment approved on both replicas at once joins one batch and is paid once',
  async (t) => {
    await operatorDeposit('waiting', '1');
    const set = await rawRequest(`${replica(0)}/api/agents/waiting/policy`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...operator },
      body: JSON.stringify({ approvalThreshold: '0.005' }),
    });
    t.is(set.status, 200, set.text);
    const asked = await payDemo('waiting', 1);
    t.is(asked.status, 202, asked.text);
    const id = asked.json.paymentId as string;
    const listed = (await getJson(`${replica(0)}/api/approvals`, operator)).json.approvals;
    t.true(
      listed.some((a: { paymentId: string }) => a.paymentId === id),
      'listed by the other replica',
    );
    const demoBefore = await stack.usdcBalance(x402.demoPayTo);
    const decided = await Promise.all(
      [0, 1].map((i) => postJson(`${replica(i)}/api/approvals/${id}/approve`, {}, operator)),
    );
    t.deepEqual(decided.map((r) => r.status).sort(), [200, 409], decided.map((r) => r.text).join(' | '));
    let status = 'pending';
    for (let i = 0; i < 150 && status === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await getJson(`${replica(i)}/api/payments/${id}`, operator)).json.paymentStatus;
    }
    t.is(status, 'confirmed');
    t.is(await stack.usdcBalance(x402.demoPayTo), demoBefore + 100_000n, 'paid exactly once');
    t.is(await balanceOf('waiting'), '0.9900000');
  },
);
