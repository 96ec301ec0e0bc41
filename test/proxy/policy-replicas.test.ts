// Agents' policies across two proxies (replicas) sharing a PostgreSQL store — a real server from Debian's
// package — with the sandbox ledger, a real prover daemon and the local x402 pair (the demo service at 0.01
// USDC): twenty concurrent payments spread over both replicas against a daily budget of five prices pay
// exactly five (the budget is reserved under a PostgreSQL advisory lock), and a freeze asked of one replica
// stops payments queued through the other before the batch leader signs them; an agent token revoked on one
// replica is refused by the other; a payment waiting for approval, approved on both replicas at once, is paid
// once. Requests go through PoolApi; raw only where the test reads the 202 of a payment that waits.
import test from 'ava';
import type { PaymentResult } from '../../src/api/types.ts';
import type { ProxyHandle } from '../../src/proxy/server.ts';
import { type LocalX402, localX402Env, startLocalX402 } from '../../src/x402/local-services.ts';
import { type PostgresServer, startPostgres } from '../helpers/postgres.ts';
import { outcomeOf, type PoolApi, PoolApiError, refusalOf, refused, walletApi } from './helpers/api.ts';
import { jsonOf, postJson } from './helpers/http.ts';
import { type Stack, startStack } from './helpers/stack.ts';

let pgServer: PostgresServer;
let stack: Stack;
let x402: LocalX402;
let replicas: ProxyHandle[];
/** The replicas' clock: moved forward instead of sleeping. */
let offset = 0;
const clock = () => Date.now() + offset;

const replica = (i: number) => replicas[i % replicas.length]!.url;
/** The operator's client on replica `i`. */
const op = (i: number): PoolApi => stack.operatorApi(replica(i));
const balanceOf = async (agentId: string, i = 0) => (await op(i).balance(agentId)).balance;
const demoPayment = (agentId: string) => ({
  agentId,
  serviceUrl: x402.demo.quoteUrl,
  method: 'GET' as const,
});
const payDemo = (agentId: string, i: number) => op(i).pay(demoPayment(agentId));

async function operatorDeposit(agentId: string, amount: string): Promise<void> {
  await op(0).operatorDeposit({ agentId, amount });
}

test.before(async () => {
  pgServer = await startPostgres();
  stack = await startStack({ POOL_PROXY_DATABASE_URL: await pgServer.database() });
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
    t.is((await op(1).setPolicy('budgeted', { budgetPerDay: '0.05' })).budgetPerDay, '0.0500000');
    const demoBefore = await stack.usdcBalance(x402.demoPayTo);
    const results = await Promise.allSettled(Array.from({ length: 20 }, (_, i) => payDemo('budgeted', i)));
    const summary = results.map(outcomeOf).join(',');
    const confirmed = results.filter(
      (r) => r.status === 'fulfilled' && r.value.paymentStatus === 'confirmed',
    );
    t.is(confirmed.length, 5, summary);
    t.is(
      results.filter((r) => refusalOf(r)?.status === 429 && refusalOf(r)?.code === 'policy_budget_day')
        .length,
      15,
      summary,
    );
    t.is(await stack.usdcBalance(x402.demoPayTo), demoBefore + 5n * 100_000n, 'five prices paid, no more');
    for (const i of [0, 1]) {
      t.is(await balanceOf('budgeted', i), '0.9500000');
      const view = await op(i).policy('budgeted');
      t.is(view.effective.budgets.day?.remaining, '0.0000000');
    }
  },
);

test.serial('a freeze asked of one replica stops payments queued through the other', async (t) => {
  const demoBefore = await stack.usdcBalance(x402.demoPayTo);
  const waiting = [refused(t, payDemo('frozen', 0)), refused(t, payDemo('frozen', 0))];
  for (let i = 0; (await balanceOf('frozen', 1)) !== '0.9800000'; i++) {
    if (i > 2400) throw new Error('the queued payments were not all reserved within a minute');
    await new Promise((r) => setTimeout(r, 25));
  }
  t.true((await op(1).setFrozen('frozen', true)).frozen);
  const now = await refused(t, payDemo('frozen', 0));
  t.is(now.code, 'agent_frozen', 'refused at once on the other replica too');
  for (const res of await Promise.all(waiting)) {
    t.is(res.status, 502, res.detail);
    t.is(res.extra.reason, 'agent_frozen');
  }
  t.is(await stack.usdcBalance(x402.demoPayTo), demoBefore, 'nothing was paid');
  t.is(await balanceOf('frozen', 0), '1.0000000', 'the reservations came back');
});

test.serial('an agent token revoked on one replica is refused by the other', async (t) => {
  const issued = await op(0).issueAgentToken('budgeted');
  /** The agent token's client on replica `i`. */
  const agent = (i: number) => walletApi(replica(i), issued.token);
  t.is((await agent(1).balance('budgeted')).agentId, 'budgeted', 'valid on the other replica');
  t.like(await op(0).revokeAgentToken('budgeted', issued.tokenId), {
    tokenId: issued.tokenId,
    revoked: true,
  });
  const here = await refused(t, agent(0).balance('budgeted'), 'at once where it was revoked');
  t.is(here.status, 401, 'at once where it was revoked');
  // The other replica trusts its last "not revoked" answer for a second (auth/revocations.ts): move past it.
  offset += 2_000;
  const there = await refused(t, agent(1).balance('budgeted'));
  t.is(there.status, 401, there.detail);
  const paid = await refused(t, agent(1).pay({ serviceUrl: x402.demo.quoteUrl }));
  t.is(paid.status, 401);
});

test.serial(
  'a waiting payment approved on both replicas at once joins one batch and is paid once',
  async (t) => {
    await operatorDeposit('waiting', '1');
    const set = await op(0).setPolicy('waiting', { approvalThreshold: '0.005' });
    t.is(set.approvalThreshold, '0.0050000');
    // raw: the test reads the answer's HTTP status (202: it waits), which PoolApi does not give
    const asked = await postJson(`${replica(1)}/api/pay`, demoPayment('waiting'), stack.operator);
    t.is(asked.status, 202, asked.text);
    const waiting = jsonOf<PaymentResult>(asked);
    t.is(waiting.paymentStatus, 'awaiting_approval');
    const id = waiting.paymentId;
    const listed = (await op(0).approvals()).approvals;
    t.true(
      listed.some((a) => a.paymentId === id),
      'listed by the other replica',
    );
    const demoBefore = await stack.usdcBalance(x402.demoPayTo);
    const decided = await Promise.allSettled([0, 1].map((i) => op(i).decideApproval(id, true)));
    // One approves it; the other finds it no longer waiting (409).
    const outcomes = decided.map((r) =>
      r.status === 'fulfilled'
        ? r.value.decision
        : r.reason instanceof PoolApiError
          ? String(r.reason.status)
          : String(r.reason),
    );
    const details = decided.map((r) =>
      r.status === 'fulfilled' ? JSON.stringify(r.value) : String(r.reason),
    );
    t.deepEqual(outcomes.sort(), ['409', 'approved'], details.join(' | '));
    // Bounded: the batch window (4 s) and a ledger, polled on both replicas in turn.
    let status = 'pending';
    for (let i = 0; i < 150 && status === 'pending'; i++) {
      await new Promise((r) => setTimeout(r, 200));
      status = (await op(i).payment(id)).paymentStatus;
    }
    t.is(status, 'confirmed');
    t.is(await stack.usdcBalance(x402.demoPayTo), demoBefore + 100_000n, 'paid exactly once');
    t.is(await balanceOf('waiting'), '0.9900000');
  },
);
