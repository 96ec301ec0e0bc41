// An agent's policy set by its owner, on the real stack (sandbox ledger, prover daemon, proxy, the local x402
// facilitator and demo service at 0.01 USDC): GET/PUT /api/agents/:agentId/policy for the owning wallet and
// for the operator's agents, bad input refused with nothing changed, each rule refusing with its own problem
// code before anything is reserved, twenty concurrent payments against a daily budget of five prices paying
// exactly five, and a freeze while payments wait in an open batch window: they are not paid, their
// reservations come back, and the owner can still withdraw.
import { walletApi } from './helpers/api.ts';
import { walletDeposit } from './helpers/wallet-deposit.ts';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { type PayStack, startPayStack } from '../mcp/pay-stack.ts';
import { runCli } from '../helpers/cli.ts';
import { getJson, postJson, rawRequest, type RawResponse } from './helpers/http.ts';

let pay: PayStack;
let operator: Record<string, string>;
let wallet: Keypair;
let walletToken: string;
let demo: string;

const url = (path: string) => `${pay.proxy.url}${path}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const putJson = (path: string, body: unknown, headers: Record<string, string>): Promise<RawResponse> =>
  rawRequest(url(path), {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
const policyOf = async (agentId: string, headers: Record<string, string> = operator) =>
  (await getJson(url(`/api/agents/${agentId}/policy`), headers)).json;
const balanceOf = async (agentId: string, headers: Record<string, string> = operator) =>
  (await getJson(url(`/api/balance/${agentId}`), headers)).json.balance as string;
const paymentCount = async (headers: Record<string, string> = operator) =>
  (await getJson(url('/api/payments?limit=999'), headers)).json.payments.length as number;
const payDemo = (agentId: string, headers: Record<string, string> = operator, serviceUrl = demo) =>
  postJson(url('/api/pay'), { agentId, serviceUrl, method: 'GET' }, headers);

async function operatorDeposit(agentId: string, amount: string) {
  const res = await postJson(url('/api/deposit'), { agentId, amount }, operator);
  if (res.status !== 200) throw new Error(`deposit: ${res.text}`);
}

test.before(async () => {
  // A batch window long enough for a freeze to land while payments wait in it.
  pay = await startPayStack({ POOL_PROXY_BATCH_WINDOW_MS: '4000' });
  operator = pay.stack.operator;
  demo = pay.x402.demo.quoteUrl;
  wallet = Keypair.random();
  await pay.stack.fund(wallet.publicKey(), 5);
  walletToken = await pay.stack.login(wallet, pay.proxy.url);
  await walletDeposit({
    api: walletApi(pay.proxy.url, walletToken),
    wallet,
    networkPassphrase: pay.stack.config.ledger.networkPassphrase,
    agentId: 'w-agent',
    amount: '1',
  });
  await operatorDeposit('rules', '1');
  await operatorDeposit('twenty', '1');
  await operatorDeposit('frozen', '1');
});

test.after.always(async () => {
  await pay?.close();
});

test.serial(
  'an agent without a policy has the operator’s defaults; the owner sets and reads one',
  async (t) => {
    const own = bearer(walletToken);
    const fresh = await policyOf('w-agent', own);
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

    const set = await putJson(
      '/api/agents/w-agent/policy',
      {
        perPaymentCap: '0.5',
        budgetPerDay: '0.2',
        budgetPer30Days: '3',
        allowedServices: [`${new URL(demo).origin}/`],
        deniedServices: ['https://evil.example/pay'],
      },
      own,
    );
    t.is(set.status, 200, set.text);
    t.is(set.json.perPaymentCap, '0.5000000');
    t.deepEqual(set.json.allowedServices, [new URL(demo).origin], 'normalised: the origin');
    t.deepEqual(set.json.deniedServices, ['https://evil.example/pay']);
    t.deepEqual(set.json.effective.budgets.day, {
      budget: '0.2000000',
      spent: '0.0000000',
      remaining: '0.2000000',
    });
    t.is(set.json.effective.budgets.hour, null);
    t.is(set.json.effective.perPaymentCap, '0.5000000');
    t.deepEqual(await policyOf('w-agent', own), set.json);

    // The wallet pays within it; what is left of the budgets falls by the price.
    const paid = await payDemo('w-agent', own);
    t.is(paid.status, 200, paid.text);
    const after = await policyOf('w-agent', own);
    t.is(after.effective.budgets.day.remaining, '0.1900000');
    t.is(after.effective.budgets.days30.spent, '0.0100000');

    // Nobody else sees or sets it: the operator and another wallet get the answer of an unknown agent.
    t.is((await getJson(url('/api/agents/w-agent/policy'), operator)).status, 404);
    const other = Keypair.random();
    await pay.stack.fund(other.publicKey(), 0);
    const otherToken = await pay.stack.login(other, pay.proxy.url);
    const foreign = await putJson('/api/agents/w-agent/policy', { frozen: true }, bearer(otherToken));
    t.is(foreign.status, 404);
    t.is((await postJson(url('/api/agents/w-agent/freeze'), {}, bearer(otherToken))).status, 404);
    t.false((await policyOf('w-agent', own)).frozen);
  },
);

test.serial('bad policies are refused with a problem and change nothing', async (t) => {
  const own = bearer(walletToken);
  const before = await policyOf('w-agent', own);
  const path = '/api/agents/w-agent/policy';
  const refusals: Array<[unknown, number, string]> = [
    ['{"perPaymentCap": ', 400, 'invalid_request'],
    [[], 400, 'invalid_request'],
    [{ perPaymentCap: '-1' }, 400, 'invalid_request'],
    [{ perPaymentCap: '0' }, 400, 'invalid_request'],
    [{ perPaymentCap: 0.5 }, 400, 'invalid_request'],
    [{ budgetPerDay: '1.00000001' }, 400, 'invalid_request'],
    [{ budgetPerHour: '99999999999999999' }, 400, 'invalid_request'],
    [{ perPaymentCap: '2' }, 400, 'invalid_request'], // looser than the operator's cap of 1
    [{ allowedServices: ['ftp://files.example'] }, 400, 'invalid_request'],
    [{ allowedServices: ['https://a.example/x?y=1'] }, 400, 'invalid_request'],
    [{ deniedServices: ['not a url'] }, 400, 'invalid_request'],
    [
      { deniedServices: Array.from({ length: 51 }, (_, i) => `https://s${i}.example`) },
      400,
      'invalid_request',
    ],
    [{ deniedServices: [`https://${'a'.repeat(600)}.example`] }, 400, 'invalid_request'],
    [{ frozen: 'yes' }, 400, 'invalid_request'],
    [{ approve: true }, 400, 'invalid_request'],
  ];
  for (const [body, status, code] of refusals) {
    const res = await putJson(path, body, own);
    t.is(res.status, status, `${JSON.stringify(body).slice(0, 80)}: ${res.text}`);
    t.is(res.json?.code, code);
  }
  const loose = await putJson(path, { perPaymentCap: '2' }, own);
  t.deepEqual(
    loose.json.errors.map((e: { path: string }) => e.path),
    ['perPaymentCap'],
  );
  const oversized = await putJson(path, { deniedServices: ['x'.repeat(2_000_000)] }, own);
  t.is(oversized.status, 413);
  t.is(
    (await rawRequest(url(path), { method: 'PUT', headers: { 'content-type': 'text/plain' }, body: '{}' }))
      .status,
    401,
  );
  t.is((await putJson(path, {}, { authorization: 'Bearer nonsense' })).status, 401);
  t.is((await putJson('/api/agents/no-such-agent/policy', {}, own)).status, 404);
  t.is((await putJson('/api/agents/bad%20id/policy', {}, own)).status, 400);
  for (const action of ['freeze', 'unfreeze']) {
    t.is((await postJson(url(`/api/agents/w-agent/${action}`), {})).status, 401);
    t.is((await postJson(url(`/api/agents/nobody/${action}`), {}, own)).status, 404);
    t.is((await postJson(url(`/api/agents/bad%20id/${action}`), {}, own)).status, 400);
  }
  t.is((await getJson(url('/api/agents/w-agent/policy'))).status, 401);
  t.deepEqual(await policyOf('w-agent', own), before, 'nothing changed');
});

test.serial('each rule refuses with its own code, in order, and nothing is reserved', async (t) => {
  const path = '/api/agents/rules/policy';
  const set = async (body: Record<string, unknown>) => {
    const res = await putJson(path, body, operator);
    t.is(res.status, 200, res.text);
  };
  const balance = await balanceOf('rules');
  const payments = await paymentCount();
  const refused = async (code: string, status: number, serviceUrl = demo) => {
    const res = await payDemo('rules', operator, serviceUrl);
    t.is(res.status, status, res.text);
    t.is(res.json.code, code);
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
  await refused('agent_frozen', 403);
  // A PUT without `frozen` keeps the flag; `frozen: false` lifts it.
  await set({ perPaymentCap: '0.005' });
  t.true((await policyOf('rules')).frozen);
  await refused('agent_frozen', 403);
  await set({
    frozen: false,
    deniedServices: [`${origin}${new URL(demo).pathname}`],
    allowedServices: ['https://elsewhere.example'],
    perPaymentCap: '0.005',
    budgetPerHour: '0.001',
  });
  t.false((await policyOf('rules')).frozen);
  await refused('policy_service_denied', 403);
  await set({
    allowedServices: ['https://elsewhere.example'],
    perPaymentCap: '0.005',
    budgetPerHour: '0.001',
  });
  await refused('policy_service_not_allowed', 403);
  await set({ allowedServices: [origin], perPaymentCap: '0.005', budgetPerHour: '0.001' });
  await refused('policy_per_payment_cap', 422);
  await set({
    perPaymentCap: '0.01',
    budgetPerHour: '0.005',
    budgetPerDay: '0.001',
    budgetPer30Days: '0.001',
  });
  await refused('policy_budget_hour', 429);
  await set({ budgetPerDay: '0.005', budgetPer30Days: '0.001' });
  await refused('policy_budget_day', 429);
  await set({ budgetPer30Days: '0.005' });
  await refused('policy_budget_30d', 429);
  t.is(await balanceOf('rules'), balance, 'nothing reserved');
  t.is(await paymentCount(), payments, 'no refused payment was journaled');
  // A denied path prefix covers what is below it, not a longer name beside it.
  await set({ deniedServices: [`${origin}/quo`], budgetPer30Days: '0.05' });
  const beside = await payDemo('rules');
  t.is(beside.status, 200, `/quote is not below /quo: ${beside.text}`);
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
    const set = await putJson('/api/agents/twenty/policy', { budgetPerDay: '0.05' }, operator);
    t.is(set.status, 200, set.text);
    const demoBefore = await pay.stack.usdcBalance(pay.x402.demoPayTo);
    const results = await Promise.all(Array.from({ length: 20 }, () => payDemo('twenty')));
    const summary = results.map((r) => `${r.status} ${r.json?.code ?? r.json?.paymentStatus}`).join(',');
    const confirmed = results.filter((r) => r.status === 200 && r.json.paymentStatus === 'confirmed');
    const refused = results.filter((r) => r.status === 429 && r.json.code === 'policy_budget_day');
    t.is(confirmed.length, 5, summary);
    t.is(refused.length, 15, summary);
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
    const waiting = Array.from({ length: 3 }, () => payDemo('frozen'));
    while ((await balanceOf('frozen')) !== '0.9700000') await new Promise((r) => setTimeout(r, 25));
    // … and the agent is frozen before the window closes.
    const frozen = await postJson(url('/api/agents/frozen/freeze'), {}, operator);
    t.is(frozen.status, 200, frozen.text);
    t.true(frozen.json.frozen);
    const refusedNow = await payDemo('frozen');
    t.is(refusedNow.status, 403);
    t.is(refusedNow.json.code, 'agent_frozen');
    for (const res of await Promise.all(waiting)) {
      t.is(res.status, 502, res.text);
      t.is(res.json.code, 'payment_failed');
      t.is(res.json.reason, 'agent_frozen');
    }
    t.is(await balanceOf('frozen'), '1.0000000', 'every reservation came back');
    t.is(await pay.stack.usdcBalance(pay.x402.demoPayTo), demoBefore, 'nothing was paid');
    t.is(await paymentCount(), before + 3);
    // The owner still withdraws from a frozen agent.
    const destination = Keypair.random().publicKey();
    await pay.stack.fund(destination, 0);
    const out = await postJson(
      url('/api/withdraw'),
      { agentId: 'frozen', amount: '0.1', destination },
      operator,
    );
    t.is(out.status, 200, out.text);
    t.is(await balanceOf('frozen'), '0.9000000');
    const thawed = await postJson(url('/api/agents/frozen/unfreeze'), {}, operator);
    t.false(thawed.json.frozen);
    const paid = await payDemo('frozen');
    t.is(paid.status, 200, paid.text);
    t.is(await balanceOf('frozen'), '0.8900000');
  },
);

test.serial('the owner exports an agent’s payments over a period as JSON and CSV', async (t) => {
  const path = '/api/agents/frozen/payments/export';
  const all = await getJson(url(path), operator);
  t.is(all.status, 200, all.text);
  t.is(all.json.agentId, 'frozen');
  t.is(all.json.from, null);
  const rows = all.json.payments as Array<Record<string, string>>;
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

  const csv = await getJson(url(`${path}?format=csv`), operator);
  t.is(csv.status, 200);
  t.regex(String(csv.headers['content-type']), /^text\/csv/);
  t.regex(String(csv.headers['content-disposition']), /attachment; filename="payments-frozen\.csv"/);
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
  const from = encodeURIComponent(paid.time);
  const since = await getJson(url(`${path}?from=${from}`), operator);
  t.deepEqual(since.json.payments, [paid]);
  const until = await getJson(url(`${path}?to=${from}`), operator);
  t.is(until.json.payments.length, 3);
  t.deepEqual((await getJson(url(`${path}?to=2020-01-01`), operator)).json.payments, []);

  for (const query of [
    'format=xml',
    'from=yesterday',
    'from=2026-13-45',
    'from=2026-02-01&to=2026-01-01',
    'limit=5',
    'format=csv&format=json',
  ]) {
    const res = await getJson(url(`${path}?${query}`), operator);
    t.is(res.status, 400, `${query}: ${res.text}`);
    t.is(res.json.code, 'invalid_request');
  }
  t.is((await getJson(url('/api/agents/nobody/payments/export'), operator)).status, 404);
  t.is((await getJson(url(path))).status, 401);
  t.is((await getJson(url(path), bearer(walletToken))).status, 404, 'not the wallet’s agent');
  const own = await getJson(url('/api/agents/w-agent/payments/export?format=json'), bearer(walletToken));
  t.is(own.json.payments.length, 1);
});
