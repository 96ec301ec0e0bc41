// An agent's policy set by its owner, on the real stack (sandbox ledger, prover daemon, proxy, the local x402
// facilitator and demo service at 0.01 USDC): GET/PUT /api/agents/:agentId/policy for the owning wallet and
// for the operator's agents, bad input refused with nothing changed, each rule refusing with its own problem
// code before anything is reserved, twenty concurrent payments against a daily budget of five prices paying
// exactly five, and a freeze while payments wait in an open batch window: they are not paid, their
// reservations come back, and the owner can still withdraw. Requests go through PoolApi; raw only for bodies
// and queries of the wrong shape, missing or forged tokens, and the CSV export's headers.
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import type { AgentPolicyRequest } from '../../src/api/types.ts';
import { type PayStack, startPayStack } from '../mcp/pay-stack.ts';
import { runCli } from '../helpers/cli.ts';
import { operatorApi, outcomeOf, type PoolApi, refusalOf, refused, walletApi } from './helpers/api.ts';
import { getJson, postJson, problemOf, rawRequest, type RawResponse } from './helpers/http.ts';
import { walletDeposit } from './helpers/wallet-deposit.ts';

let pay: PayStack;
let operator: Record<string, string>;
let wallet: Keypair;
let walletToken: string;
let demo: string;

const url = (path: string) => `${pay.proxy.url}${path}`;
/** The operator's client. */
const op = (): PoolApi => operatorApi(pay.proxy.url, operator);
/** The wallet's client (it owns `w-agent`). */
const own = (): PoolApi => walletApi(pay.proxy.url, walletToken);
/** A PUT sent raw, for bodies no client sends (malformed JSON, wrong types, unknown fields) and bad tokens. */
const putJson = (path: string, body: unknown, headers: Record<string, string>): Promise<RawResponse> =>
  rawRequest(url(path), {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const policyOf = (agentId: string, api = op()) => api.policy(agentId);
const balanceOf = async (agentId: string, api = op()) => (await api.balance(agentId)).balance;
const paymentCount = async (api = op()) => (await api.payments(999)).payments.length;
const payDemo = (agentId: string, api = op(), serviceUrl = demo) =>
  api.pay({ agentId, serviceUrl, method: 'GET' });

test.before(async () => {
  // A batch window long enough for a freeze to land while payments wait in it.
  pay = await startPayStack({ POOL_PROXY_BATCH_WINDOW_MS: '4000' });
  operator = pay.stack.operator;
  demo = pay.x402.demo.quoteUrl;
  wallet = Keypair.random();
  await pay.stack.fund(wallet.publicKey(), 5);
  walletToken = await pay.stack.login(wallet, pay.proxy.url);
  await walletDeposit({
    api: own(),
    wallet,
    networkPassphrase: pay.stack.config.ledger.networkPassphrase,
    agentId: 'w-agent',
    amount: '1',
  });
  await op().operatorDeposit({ agentId: 'rules', amount: '1' });
  await op().operatorDeposit({ agentId: 'twenty', amount: '1' });
  await op().operatorDeposit({ agentId: 'frozen', amount: '1' });
});

test.after.always(async () => {
  await pay?.close();
});

test.serial(
  'an agent without a policy has the operator’s defaults; the owner sets and reads one',
  async (t) => {
    const fresh = await policyOf('w-agent', own());
    t.like(fresh, {
      agentId: 'w-agent',
      perPaymentCap: null,
      budgetPerHour: null,
      budgetPerDay: null,
      budgetPer30Days: null,
      allowedServices: [],
      deniedServices: [],
      frozen: false,
      approvalThreshold: null,
      updatedAt: null,
    });
    t.is(fresh.effective.perPaymentCap, '1.0000000', 'the operator’s per-payment cap');
    t.deepEqual(fresh.effective.budgets, { hour: null, day: null, days30: null });

    const set = await own().setPolicy('w-agent', {
      perPaymentCap: '0.5',
      budgetPerDay: '0.2',
      budgetPer30Days: '3',
      allowedServices: [`${new URL(demo).origin}/`],
      deniedServices: ['https://evil.example/pay'],
    });
    t.is(set.perPaymentCap, '0.5000000');
    t.deepEqual(set.allowedServices, [new URL(demo).origin], 'normalised: the origin');
    t.deepEqual(set.deniedServices, ['https://evil.example/pay']);
    t.deepEqual(set.effective.budgets.day, {
      budget: '0.2000000',
      spent: '0.0000000',
      remaining: '0.2000000',
    });
    t.is(set.effective.budgets.hour, null);
    t.is(set.effective.perPaymentCap, '0.5000000');
    t.deepEqual(await policyOf('w-agent', own()), set);

    // The wallet pays within it; what is left of the budgets falls by the price.
    const paid = await payDemo('w-agent', own());
    t.is(paid.paymentStatus, 'confirmed', JSON.stringify(paid));
    const after = await policyOf('w-agent', own());
    t.is(after.effective.budgets.day?.remaining, '0.1900000');
    t.is(after.effective.budgets.days30?.spent, '0.0100000');

    // Nobody else sees or sets it: the operator and another wallet get the answer of an unknown agent.
    t.is((await refused(t, policyOf('w-agent', op()))).status, 404);
    const other = Keypair.random();
    await pay.stack.fund(other.publicKey(), 0);
    const stranger = await pay.stack.walletApi(other, pay.proxy.url);
    t.is((await refused(t, stranger.setPolicy('w-agent', { frozen: true }))).status, 404);
    t.is((await refused(t, stranger.setFrozen('w-agent', true))).status, 404);
    t.false((await policyOf('w-agent', own())).frozen);
  },
);

test.serial('bad policies are refused with a problem and change nothing', async (t) => {
  const auth = { authorization: `Bearer ${walletToken}` };
  const before = await policyOf('w-agent', own());
  const path = '/api/agents/w-agent/policy';
  // raw: bodies no client sends (not JSON, not an object, a number for an amount, a string for a flag, an
  // unknown field)
  for (const body of [
    '{"perPaymentCap": ',
    [],
    { perPaymentCap: 0.5 },
    { frozen: 'yes' },
    { approve: true },
  ]) {
    const res = await putJson(path, body, auth);
    t.is(res.status, 400, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`);
    t.is(problemOf(res).code, 'invalid_request');
  }
  // Policies of the right shape whose values are refused.
  const refusals: AgentPolicyRequest[] = [
    { perPaymentCap: '-1' },
    { perPaymentCap: '0' },
    { budgetPerDay: '1.00000001' },
    { budgetPerHour: '99999999999999999' },
    { perPaymentCap: '2' }, // looser than the operator's cap of 1
    { allowedServices: ['ftp://files.example'] },
    { allowedServices: ['https://a.example/x?y=1'] },
    { deniedServices: ['not a url'] },
    { deniedServices: Array.from({ length: 51 }, (_, i) => `https://s${i}.example`) },
    { deniedServices: [`https://${'a'.repeat(600)}.example`] },
  ];
  for (const policy of refusals) {
    const what = JSON.stringify(policy).slice(0, 80);
    const res = await refused(t, own().setPolicy('w-agent', policy), what);
    t.is(res.status, 400, `${what}: ${res.detail}`);
    t.is(res.code, 'invalid_request', what);
  }
  const loose = await refused(t, own().setPolicy('w-agent', { perPaymentCap: '2' }));
  t.deepEqual(
    loose.issues?.map((e) => e.path),
    ['perPaymentCap'],
  );
  const oversized = await refused(t, own().setPolicy('w-agent', { deniedServices: ['x'.repeat(2_000_000)] }));
  t.is(oversized.status, 413);
  // raw: without a token, or with a forged one
  t.is(
    (await rawRequest(url(path), { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: '{}' }))
      .status,
    401,
  );
  t.is((await putJson(path, {}, { authorization: 'Bearer nonsense' })).status, 401);
  t.is((await refused(t, own().setPolicy('no-such-agent', {}))).status, 404);
  t.is((await refused(t, own().setPolicy('bad id', {}))).status, 400);
  for (const frozen of [true, false]) {
    const action = frozen ? 'freeze' : 'unfreeze';
    t.is((await postJson(url(`/api/agents/w-agent/${action}`), {})).status, 401);
    t.is((await refused(t, own().setFrozen('nobody', frozen))).status, 404);
    t.is((await refused(t, own().setFrozen('bad id', frozen))).status, 400);
  }
  t.is((await getJson(url('/api/agents/w-agent/policy'))).status, 401);
  t.deepEqual(await policyOf('w-agent', own()), before, 'nothing changed');
});

test.serial('each rule refuses with its own code, in order, and nothing is reserved', async (t) => {
  const set = (policy: AgentPolicyRequest) => op().setPolicy('rules', policy);
  const balance = await balanceOf('rules');
  const payments = await paymentCount();
  const refusedWith = async (code: string, status: number) => {
    const res = await refused(t, payDemo('rules'), code);
    t.is(res.status, status, res.detail);
    t.is(res.code, code);
  };
  const origin = new URL(demo).origin;
  // Every rule at once: the frozen flag is checked first, then denied services, allowed ones, the
  // per-payment cap and the budgets (hour, day, 30 days).
  await set({
    frozen: true,
    deniedServices: [origin],
    allowedServices: ['https://elsewhere.example'],
    perPaymentCap: '0.005',
    budgetPerHour: '0.001',
    budgetPerDay: '0.001',
    budgetPer30Days: '0.001',
  });
  await refusedWith('agent_frozen', 403);
  // A PUT without `frozen` keeps the flag; `frozen: false` lifts it.
  await set({ perPaymentCap: '0.005' });
  t.true((await policyOf('rules')).frozen);
  await refusedWith('agent_frozen', 403);
  await set({
    frozen: false,
    deniedServices: [`${origin}${new URL(demo).pathname}`],
    allowedServices: ['https://elsewhere.example'],
    perPaymentCap: '0.005',
    budgetPerHour: '0.001',
  });
  t.false((await policyOf('rules')).frozen);
  await refusedWith('policy_service_denied', 403);
  await set({
    allowedServices: ['https://elsewhere.example'],
    perPaymentCap: '0.005',
    budgetPerHour: '0.001',
  });
  await refusedWith('policy_service_not_allowed', 403);
  await set({ allowedServices: [origin], perPaymentCap: '0.005', budgetPerHour: '0.001' });
  await refusedWith('policy_per_payment_cap', 422);
  await set({
    perPaymentCap: '0.01',
    budgetPerHour: '0.005',
    budgetPerDay: '0.001',
    budgetPer30Days: '0.001',
  });
  await refusedWith('policy_budget_hour', 429);
  await set({ budgetPerDay: '0.005', budgetPer30Days: '0.001' });
  await refusedWith('policy_budget_day', 429);
  await set({ budgetPer30Days: '0.005' });
  await refusedWith('policy_budget_30d', 429);
  t.is(await balanceOf('rules'), balance, 'nothing reserved');
  t.is(await paymentCount(), payments, 'no refused payment was journaled');
  // A denied path prefix covers what is below it, not a longer name beside it.
  await set({ deniedServices: [`${origin}/quo`], budgetPer30Days: '0.05' });
  const beside = await payDemo('rules');
  t.is(beside.paymentStatus, 'confirmed', `/quote is not below /quo: ${JSON.stringify(beside)}`);
  t.is(await balanceOf('rules'), '0.9900000');
  t.is(await paymentCount(), payments + 1);
  t.deepEqual((await policyOf('rules')).effective.budgets.days30, {
    budget: '0.0500000',
    spent: '0.0100000',
    remaining: '0.0400000',
  });
});

test.serial(
  'twenty concurrent payments against a daily budget of five prices pay exactly five',
  async (t) => {
    await op().setPolicy('twenty', { budgetPerDay: '0.05' });
    const demoBefore = await pay.stack.usdcBalance(pay.x402.demoPayTo);
    const results = await Promise.allSettled(Array.from({ length: 20 }, () => payDemo('twenty')));
    const summary = results.map(outcomeOf).join(',');
    const confirmed = results.filter(
      (r) => r.status === 'fulfilled' && r.value.paymentStatus === 'confirmed',
    );
    const refusals = results.filter(
      (r) => refusalOf(r)?.status === 429 && refusalOf(r)?.code === 'policy_budget_day',
    );
    t.is(confirmed.length, 5, summary);
    t.is(refusals.length, 15, summary);
    t.is(await balanceOf('twenty'), '0.9500000');
    t.is(await pay.stack.usdcBalance(pay.x402.demoPayTo), demoBefore + 5n * 100_000n);
    t.deepEqual((await policyOf('twenty')).effective.budgets.day, {
      budget: '0.0500000',
      spent: '0.0500000',
      remaining: '0.0000000',
    });
  },
);

test.serial('the operator reads and sets its agent’s policy with `pool-proxy agents`', async (t) => {
  const cli = async (...args: string[]) => {
    const run = runCli([
      'agents',
      ...args,
      '--proxy',
      pay.proxy.url,
      '--data-dir',
      pay.stack.env.POOL_PROXY_DATA_DIR!,
    ]);
    return { code: await run.exited, out: run.stdout(), err: run.stderr() };
  };
  const set = await cli('policy', 'twenty', '--cap', '0.02', '--deny', 'https://bad.example/x', '--json');
  t.is(set.code, 0, set.err);
  const view = JSON.parse(set.out);
  t.is(view.perPaymentCap, '0.0200000');
  t.is(view.budgetPerDay, '0.0500000', 'what no flag names is kept');
  t.deepEqual(view.deniedServices, ['https://bad.example/x']);
  const shown = await cli('policy', 'twenty');
  t.is(shown.code, 0, shown.err);
  t.regex(shown.out, /budget day: 0\.0000000 of 0\.0500000 USDC left/);
  t.regex(shown.out, /per-payment cap: 0\.0200000 USDC/);
  const loose = await cli('policy', 'twenty', '--cap', '5');
  t.is(loose.code, 1);
  t.regex(loose.err, /invalid_request: .*perPaymentCap/);
  t.is((await policyOf('twenty')).perPaymentCap, '0.0200000', 'the refused change changed nothing');
  const cleared = await cli('policy', 'twenty', '--cap', 'none', '--deny', '', '--json');
  t.is(JSON.parse(cleared.out).perPaymentCap, null);
  t.deepEqual(JSON.parse(cleared.out).deniedServices, []);
  const frozen = await cli('freeze', 'twenty');
  t.regex(frozen.out, /FROZEN/);
  t.true((await policyOf('twenty')).frozen);
  t.false(JSON.parse((await cli('unfreeze', 'twenty', '--json')).out).frozen);
  const unknown = await cli('policy', 'nobody');
  t.is(unknown.code, 1);
  t.regex(unknown.err, /not_found/);
});

test.serial(
  'a freeze stops the agent’s queued unsigned payments; unfreeze restores it; withdrawals work',
  async (t) => {
    const demoBefore = await pay.stack.usdcBalance(pay.x402.demoPayTo);
    const before = await paymentCount();
    // Three payments join the batch window (4 s) …
    const waiting = Array.from({ length: 3 }, () => refused(t, payDemo('frozen')));
    for (let i = 0; (await balanceOf('frozen')) !== '0.9700000'; i++) {
      if (i > 2400) throw new Error('the queued payments were not all reserved within a minute');
      await new Promise((r) => setTimeout(r, 25));
    }
    // … and the agent is frozen before the window closes.
    t.true((await op().setFrozen('frozen', true)).frozen);
    const refusedNow = await refused(t, payDemo('frozen'));
    t.is(refusedNow.status, 403);
    t.is(refusedNow.code, 'agent_frozen');
    for (const res of await Promise.all(waiting)) {
      t.is(res.status, 502, res.detail);
      t.is(res.code, 'payment_failed');
      t.is(res.extra.reason, 'agent_frozen');
    }
    t.is(await balanceOf('frozen'), '1.0000000', 'every reservation came back');
    t.is(await pay.stack.usdcBalance(pay.x402.demoPayTo), demoBefore, 'nothing was paid');
    t.is(await paymentCount(), before + 3);
    // The owner still withdraws from a frozen agent.
    const destination = Keypair.random().publicKey();
    await pay.stack.fund(destination, 0);
    const out = await op().withdraw({ agentId: 'frozen', amount: '0.1', destination });
    t.is(out.status, 'confirmed');
    t.is(await balanceOf('frozen'), '0.9000000');
    t.false((await op().setFrozen('frozen', false)).frozen);
    const paid = await payDemo('frozen');
    t.is(paid.paymentStatus, 'confirmed', JSON.stringify(paid));
    t.is(await balanceOf('frozen'), '0.8900000');
  },
);

test.serial('the owner exports an agent’s payments over a period as JSON and CSV', async (t) => {
  const all = await op().exportPayments('frozen');
  t.is(all.agentId, 'frozen');
  t.is(all.from, null);
  const rows = all.payments;
  t.deepEqual(
    rows.map((r) => r.status),
    ['failed', 'failed', 'failed', 'confirmed'],
    'the three stopped by the freeze, then the one paid after it',
  );
  const paid = rows[3]!;
  t.is(paid.service, demo);
  t.is(paid.amount, '0.0100000');
  t.regex(paid.transaction, /^[0-9a-f]{64}$/);
  t.truthy(paid.batch);
  t.is(rows[0]!.transaction, '');
  t.deepEqual(
    rows.map((r) => r.time),
    rows.map((r) => r.time).sort(),
    'oldest first',
  );

  // raw: the test reads the CSV answer's content type and disposition, which PoolApi does not give
  const path = '/api/agents/frozen/payments/export';
  const csv = await getJson(url(`${path}?format=csv`), operator);
  t.is(csv.status, 200);
  t.regex(String(csv.headers['content-type']), /^text\/csv/);
  t.regex(String(csv.headers['content-disposition']), /attachment; filename="payments-frozen\.csv"/);
  t.is(await op().exportPaymentsCsv('frozen'), csv.text, 'PoolApi reads the same CSV');
  const lines = csv.text.trimEnd().split('\r\n');
  t.is(lines[0], 'time,service,amount,status,batch,transaction,paymentId');
  t.is(lines.length, 5);
  t.is(
    lines[4],
    [paid.time, paid.service, paid.amount, paid.status, paid.batch, paid.transaction, paid.paymentId].join(
      ',',
    ),
  );

  // A period: [from, to)
  const since = await op().exportPayments('frozen', { from: paid.time });
  t.deepEqual(since.payments, [paid]);
  const until = await op().exportPayments('frozen', { to: paid.time });
  t.is(until.payments.length, 3);
  t.deepEqual((await op().exportPayments('frozen', { to: '2020-01-01' })).payments, []);

  for (const period of [
    { from: 'yesterday' },
    { from: '2026-13-45' },
    { from: '2026-02-01', to: '2026-01-01' },
  ]) {
    const res = await refused(t, op().exportPayments('frozen', period), JSON.stringify(period));
    t.is(res.status, 400, `${JSON.stringify(period)}: ${res.detail}`);
    t.is(res.code, 'invalid_request');
  }
  // raw: queries PoolApi never writes (an unknown format, an unknown parameter, a repeated one)
  for (const query of ['format=xml', 'limit=5', 'format=csv&format=json']) {
    const res = await getJson(url(`${path}?${query}`), operator);
    t.is(res.status, 400, `${query}: ${res.text}`);
    t.is(problemOf(res).code, 'invalid_request');
  }
  t.is((await refused(t, op().exportPayments('nobody'))).status, 404);
  t.is((await getJson(url(path))).status, 401);
  t.is((await refused(t, own().exportPayments('frozen'))).status, 404, 'not the wallet’s agent');
  t.is((await own().exportPayments('w-agent')).payments.length, 1);
});
