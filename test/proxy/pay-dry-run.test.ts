// A dry run of a payment on the real stack (sandbox ledger, prover daemon, proxy, the local x402 facilitator
// and demo service at 0.01 USDC): `POST /api/pay` with `dryRun: true` answers the quoted price and whether it
// would pass; each refusing rule (the owner's per-payment cap, a denied service, a frozen agent, the owner's
// hourly budget, too small a balance) is named with the very code the real payment gets right after; and after
// dry runs the balance, the payment list, the operator's books and the pool wallet's on-chain USDC are unchanged
// (no reservation, no journal record, no signature, no idempotency record). Bad input is refused 400.
import test, { type ExecutionContext } from 'ava';
import type { AgentPolicyRequest, PaymentDryRun } from '../../src/api/types.ts';
import { type PayStack, startPayStack } from '../mcp/pay-stack.ts';
import { operatorApi, type PoolApi, refused, walletApi } from './helpers/api.ts';
import { jsonOf, postJson, problemOf } from './helpers/http.ts';

let pay: PayStack;
let demo: string;
const AGENT = 'dry';
const POOR = 'dry-poor';

const op = (): PoolApi => operatorApi(pay.proxy.url, pay.stack.operator);
const dryRun = (agentId = AGENT, serviceUrl = demo) => op().payDryRun({ agentId, serviceUrl, method: 'GET' });
const payDemo = (agentId = AGENT, idempotencyKey?: string) =>
  op().pay({ agentId, serviceUrl: demo, method: 'GET', ...(idempotencyKey && { idempotencyKey }) });
const setPolicy = (policy: AgentPolicyRequest) => op().setPolicy(AGENT, policy);

/** Everything a dry run must leave as it was. */
async function snapshot() {
  const books = await op().books();
  return {
    balance: (await op().balance(AGENT)).balance,
    poor: (await op().balance(POOR)).balance,
    payments: (await op().payments(999)).payments,
    books,
    poolWalletUsdc: await pay.stack.usdcBalance(pay.stack.sandbox.info.accounts.poolWallet),
  };
}

/** A dry run refused by `rule` with `code`; then the real payment, refused with the same code. */
async function refusedAlike(t: ExecutionContext, code: string, rule: string, agentId = AGENT) {
  const before = await snapshot();
  const dry = await dryRun(agentId);
  t.like(dry, { dryRun: true, wouldPay: false, refusal: { code, rule } }, JSON.stringify(dry));
  t.true((dry.refusal?.detail ?? '').length > 0);
  t.deepEqual(await snapshot(), before, 'a dry run changes nothing');
  const real = await refused(t, payDemo(agentId));
  t.is(real.code, code, 'the real payment is refused by the same rule');
  t.is(real.message, dry.refusal?.detail ?? '', 'with the same detail');
  return dry;
}

test.before(async () => {
  pay = await startPayStack();
  demo = pay.x402.demo.quoteUrl;
  await op().operatorDeposit({ agentId: AGENT, amount: '1' });
  await op().operatorDeposit({ agentId: POOR, amount: '0.005' });
});

test.after.always(async () => {
  await pay?.close();
});

test.serial(
  'a dry run that would pass answers the quoted price; the real payment pays just that',
  async (t) => {
    const before = await snapshot();
    const dry = await dryRun();
    t.like(dry, { dryRun: true, wouldPay: true, price: '0.0100000', awaitsApproval: false });
    t.is(dry.refusal, undefined);
    t.truthy(dry.payTo);
    t.truthy(dry.network);
    // with an idempotency key, sent as a caller would: neither looked up nor bound
    const keyed = await postJson(
      `${pay.proxy.url}/api/pay`,
      { agentId: AGENT, serviceUrl: demo, dryRun: true, idempotencyKey: 'dry-run-key-1' },
      pay.stack.operator,
    );
    t.is(keyed.status, 200, keyed.text);
    t.deepEqual(jsonOf<PaymentDryRun>(keyed), dry);
    t.deepEqual(await snapshot(), before, 'balance, payments, books and the pool wallet unchanged');

    // the same key then pays for real, once: the dry run left no idempotency record to replay
    const paid = await payDemo(AGENT, 'dry-run-key-1');
    t.is(paid.paymentStatus, 'confirmed');
    t.like(paid.receipt, { amount: dry.price, payTo: dry.payTo, network: dry.network });
    t.is((await op().balance(AGENT)).balance, '0.9900000');
  },
);

test.serial('the owner’s per-payment cap: named, with the price, as the payment is refused', async (t) => {
  await setPolicy({ perPaymentCap: '0.005' });
  const dry = await refusedAlike(t, 'policy_per_payment_cap', 'perPaymentCap');
  t.is(dry.price, '0.0100000', 'the service was asked');
});

test.serial('a denied service: named, and the service is not asked for its price', async (t) => {
  await setPolicy({ deniedServices: [`${new URL(demo).origin}/`] });
  const dry = await refusedAlike(t, 'policy_service_denied', 'deniedServices');
  t.is(dry.price, undefined);
});

test.serial('a frozen agent', async (t) => {
  await setPolicy({});
  await op().setFrozen(AGENT, true);
  await refusedAlike(t, 'agent_frozen', 'frozen');
  await op().setFrozen(AGENT, false);
});

test.serial('over the owner’s hourly budget, as spent now (the payment made above counts)', async (t) => {
  await setPolicy({ budgetPerHour: '0.015' });
  await refusedAlike(t, 'policy_budget_hour', 'budget:hour');
  await setPolicy({ budgetPerHour: '0.02' });
  t.like(await dryRun(), { wouldPay: true }, 'read as a real payment reads it');
  await setPolicy({});
});

test.serial('too small a balance', async (t) => {
  await refusedAlike(t, 'insufficient_balance', 'balance', POOR);
});

test.serial('above the approval threshold: it would pass, and would wait for approval', async (t) => {
  await setPolicy({ approvalThreshold: '0.005' });
  const before = await snapshot();
  t.like(await dryRun(), { wouldPay: true, awaitsApproval: true, price: '0.0100000' });
  t.deepEqual(await snapshot(), before, 'nothing reserved nor journaled awaiting approval');
  t.deepEqual(await op().approvals(), { approvals: [] });
  await setPolicy({});
});

test.serial(
  'dryRun not a boolean is refused 400, and a request that is itself wrong stays a problem',
  async (t) => {
    const before = await snapshot();
    for (const dryRunValue of ['true', 1, null, {}]) {
      const res = await postJson(
        `${pay.proxy.url}/api/pay`,
        { agentId: AGENT, serviceUrl: demo, dryRun: dryRunValue },
        pay.stack.operator,
      );
      t.is(res.status, 400, res.text);
      t.is(problemOf(res).code, 'invalid_request');
    }
    t.is((await refused(t, dryRun('no-such-agent'))).code, 'not_found');
    t.is((await refused(t, dryRun(AGENT, 'not a url'))).code, 'invalid_request');
    t.deepEqual(await snapshot(), before);
  },
);

test.serial('an agent token may dry-run for its own agent (it is a read)', async (t) => {
  const { token } = await op().issueAgentToken(AGENT);
  const asAgent = walletApi(pay.proxy.url, token);
  t.like(await asAgent.payDryRun({ serviceUrl: demo }), { dryRun: true, wouldPay: true, price: '0.0100000' });
});
