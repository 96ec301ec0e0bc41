// Payments above an owner's approval threshold, on the real stack (sandbox ledger, prover daemon, proxy with a
// test clock, the local x402 facilitator and demo service at 0.01 USDC): such a payment answers 202
// `awaiting_approval`, is reserved and listed and paid by nobody until its owner approves it; approved it is
// paid exactly once; denied, or past its deadline (the clock moved, no sleeping), it pays nothing and its
// reservation comes back; a frozen agent's waiting payment cannot be approved; an agent token lists its own
// but cannot decide; bad ids and bodies are refused and change nothing; after a restart one still waits and
// expires on its deadline. (kill -9 while one waits: approvals-crash.test.ts.) Requests go through PoolApi,
// raw only for bodies of the wrong shape, a missing token and the answer's HTTP status (202 or 200).
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { type PayStack, startPayStack } from '../mcp/pay-stack.ts';
import { localX402Env } from '../../src/x402/local-services.ts';
import { runCli } from '../helpers/cli.ts';
import type { PaymentResult, PayRequest } from '../../src/api/types.ts';
import { operatorApi, type PoolApi, refused, walletApi } from './helpers/api.ts';
import { jsonOf, postJson, problemOf, rawRequest, type RawResponse } from './helpers/http.ts';

const AGENT = 'appr';
let pay: PayStack;
let operator: Record<string, string>;
let agentToken: string;
let demo: string;
let poolWallet: string;
let offset = 0;
const clock = () => Date.now() + offset;

const url = (path: string) => `${pay.proxy.url}${path}`;
const putJson = (path: string, body: unknown): Promise<RawResponse> =>
  rawRequest(url(path), {
    method: 'PUT',
    headers: { 'content-type': 'application/json', ...operator },
    body: JSON.stringify(body),
  });
/** The operator's client, for the proxy of the moment (a test restarts it). */
const op = (): PoolApi => operatorApi(pay.proxy.url, operator);
/** The agent token's client (a Bearer token, as a wallet's is). */
const asAgent = (): PoolApi => walletApi(pay.proxy.url, agentToken);
/** The agent's available balance, in stroops. */
const balance = async () => BigInt((await op().balance(AGENT)).balance.replace('.', ''));
const PRICE = 100_000n;
const paymentOf = (id: string, api = op()) => api.payment(id);
const pending = async (api = op()) => (await api.approvals()).approvals;
const decide = (id: string, decision: 'approve' | 'deny', api = op()) =>
  api.decideApproval(id, decision === 'approve');
const demoPayment = (extra: Partial<PayRequest> = {}): PayRequest => ({
  agentId: AGENT,
  serviceUrl: demo,
  method: 'GET',
  ...extra,
});
const payDemo = (extra: Partial<PayRequest> = {}) => op().pay(demoPayment(extra));
/** The same payment sent raw, for the tests that read the answer's HTTP status and content type. */
const payDemoRaw = (extra: Partial<PayRequest> = {}) =>
  postJson(url('/api/pay'), demoPayment(extra), operator);

/** Polls a payment until it is decided by its batch (real ledger time, not the clock). */
async function settled(id: string) {
  for (let i = 0; i < 300; i++) {
    const json = await paymentOf(id);
    if (json.paymentStatus !== 'pending') return json;
    await new Promise((r) => setTimeout(r, 200));
  }
  throw new Error(`payment ${id} still pending`);
}

test.before(async () => {
  pay = await startPayStack({}, { clock });
  operator = pay.stack.operator;
  demo = pay.x402.demo.quoteUrl;
  poolWallet = pay.stack.sandbox.info.accounts.poolWallet;
  await op().operatorDeposit({ agentId: AGENT, amount: '1' });
  agentToken = (await op().issueAgentToken(AGENT)).token;
});

test.after.always(async () => {
  await pay?.close();
});

test.serial(
  'the owner sets a threshold and a deadline; a bad one is refused and changes nothing',
  async (t) => {
    for (const bad of [
      { approvalThreshold: '0.005', approvalTimeoutSeconds: 5 },
      { approvalThreshold: '0.005', approvalTimeoutSeconds: 86_401 },
      { approvalThreshold: 'abc' },
    ]) {
      const res = await putJson(`/api/agents/${AGENT}/policy`, bad);
      t.is(res.status, 400, JSON.stringify(bad));
      t.is(problemOf(res).code, 'invalid_request');
    }
    t.like(await op().policy(AGENT), {
      approvalThreshold: null,
      approvalTimeoutSeconds: 900,
    });
    const set = await op().setPolicy(AGENT, { approvalThreshold: '0.005', approvalTimeoutSeconds: 60 });
    t.like(set, { approvalThreshold: '0.0050000', approvalTimeoutSeconds: 60 });
  },
);

test.serial(
  'above the threshold a payment waits, reserved and unpaid; approved, it is paid once',
  async (t) => {
    const before = await balance();
    const poolUsdc = await pay.stack.usdcBalance(poolWallet);
    const res = await payDemoRaw({ idempotencyKey: 'approve-once-1' });
    t.is(res.status, 202, res.text);
    t.is(res.headers['content-type']?.toString().includes('problem'), false);
    const waiting = jsonOf<PaymentResult>(res);
    t.is(waiting.paymentStatus, 'awaiting_approval');
    const id = waiting.paymentId;
    const expires = Date.parse(waiting.expiresAt!);
    t.true(Math.abs(expires - (clock() + 60_000)) < 10_000, waiting.expiresAt);
    // reserved against the balance, listed, polled, replayed: still waiting, nothing paid
    t.is(await balance(), before - PRICE);
    t.like(await paymentOf(id), { paymentId: id, paymentStatus: 'awaiting_approval' });
    const listed = (await pending()).find((a) => a.paymentId === id);
    t.like(listed, { agentId: AGENT, serviceUrl: demo, method: 'GET', amount: '0.0100000' });
    const replay = await payDemoRaw({ idempotencyKey: 'approve-once-1' });
    t.is(replay.status, 202);
    t.like(replay.json, { paymentId: id, paymentStatus: 'awaiting_approval' });
    t.is(await pay.stack.usdcBalance(poolWallet), poolUsdc);

    // an agent token sees its own agent's waiting payments, and can never decide
    t.true((await pending(asAgent())).some((a) => a.paymentId === id));
    t.is((await paymentOf(id, asAgent())).paymentStatus, 'awaiting_approval');
    for (const decision of ['approve', 'deny'] as const) {
      const forbidden = await refused(t, decide(id, decision, asAgent()));
      t.is(forbidden.status, 403);
      t.is(forbidden.code, 'forbidden_for_agent_token');
    }
    t.is((await paymentOf(id)).paymentStatus, 'awaiting_approval');

    const approved = await decide(id, 'approve');
    t.like(approved, { paymentId: id, decision: 'approved', paymentStatus: 'pending' });
    const again = await refused(t, decide(id, 'approve'));
    t.is(again.status, 409);
    t.is(again.code, 'approval_not_pending');
    const done = await settled(id);
    t.is(done.paymentStatus, 'confirmed', JSON.stringify(done));
    t.is(await pay.stack.usdcBalance(poolWallet), poolUsdc - PRICE, 'paid exactly once');
    t.is(await balance(), before - PRICE);
    const replayed = await payDemoRaw({ idempotencyKey: 'approve-once-1' });
    t.is(replayed.status, 200);
    t.like(replayed.json, { paymentId: id, paymentStatus: 'confirmed' });
    t.is(await pay.stack.usdcBalance(poolWallet), poolUsdc - PRICE, 'not paid again by the replay');
    t.false((await pending()).some((a) => a.paymentId === id));
  },
);

test.serial('denied, nothing is paid and the reservation comes back', async (t) => {
  const before = await balance();
  const poolUsdc = await pay.stack.usdcBalance(poolWallet);
  const { paymentId: id } = await payDemo();
  t.is(await balance(), before - PRICE);
  const denied = await decide(id, 'deny');
  t.like(denied, { paymentId: id, decision: 'denied', paymentStatus: 'failed' });
  t.like(await paymentOf(id), { paymentStatus: 'failed', reason: { code: 'approval_denied' } });
  t.is(await balance(), before);
  const late = await refused(t, decide(id, 'approve'));
  t.is(late.status, 409);
  t.like(late, { code: 'approval_not_pending', extra: { paymentStatus: 'failed' } });
  t.is(await pay.stack.usdcBalance(poolWallet), poolUsdc);
});

test.serial(
  'past its deadline (the clock moved) it is released, unpaid, and cannot be approved',
  async (t) => {
    const before = await balance();
    const { paymentId: id } = await payDemo();
    offset += 59_000;
    t.true(
      (await pending()).some((a) => a.paymentId === id),
      'still waiting before its deadline',
    );
    offset += 2_000;
    t.false((await pending()).some((a) => a.paymentId === id));
    t.like(await paymentOf(id), { paymentStatus: 'failed', reason: { code: 'approval_expired' } });
    t.is(await balance(), before);
    const late = await refused(t, decide(id, 'approve'));
    t.is(late.status, 409);
    t.is(late.code, 'approval_not_pending');
  },
);

test.serial('a frozen agent’s waiting payment cannot be approved; it keeps waiting', async (t) => {
  const { paymentId: id } = await payDemo();
  t.true((await op().setFrozen(AGENT, true)).frozen);
  const frozen = await refused(t, decide(id, 'approve'));
  t.is(frozen.status, 403);
  t.is(frozen.code, 'agent_frozen');
  t.is((await paymentOf(id)).paymentStatus, 'awaiting_approval');
  t.false((await op().setFrozen(AGENT, false)).frozen);
  t.is((await decide(id, 'deny')).decision, 'denied');
});

test.serial('bad or unknown ids are refused with clear problems and change nothing', async (t) => {
  const { paymentId: id } = await payDemo();
  const bad = await refused(t, decide('not-a-uuid', 'approve'));
  t.is(bad.status, 400);
  t.is(bad.code, 'invalid_request');
  const unknown = await refused(t, decide(randomUUID(), 'deny'));
  t.is(unknown.status, 404);
  t.is(unknown.code, 'not_found');
  t.is((await refused(t, paymentOf(randomUUID()))).status, 404);
  // raw: without a token
  t.is((await rawRequest(url(`/api/approvals/${id}/approve`), { method: 'POST' })).status, 401);
  t.is((await paymentOf(id)).paymentStatus, 'awaiting_approval');
  t.is((await decide(id, 'deny')).decision, 'denied');
});

test.serial('the operator sets the threshold from the command line, keeping the rest', async (t) => {
  const cli = async (...args: string[]) => {
    const run = runCli([
      'agents',
      'policy',
      AGENT,
      ...args,
      '--proxy',
      pay.proxy.url,
      '--data-dir',
      pay.stack.env.POOL_PROXY_DATA_DIR!,
    ]);
    return { code: await run.exited, out: run.stdout() };
  };
  const changed = await cli('--approval-threshold', '0.02', '--cap', '0.5');
  t.is(changed.code, 0);
  t.regex(changed.out, /approval: above 0\.0200000 USDC, waits up to 60 s/, 'the deadline kept');
  t.like(await op().policy(AGENT), {
    approvalThreshold: '0.0200000',
    approvalTimeoutSeconds: 60,
    perPaymentCap: '0.5000000',
  });
  const off = await cli('--approval-threshold', 'none');
  t.regex(off.out, /approval: none needed/);
});

test.serial(
  'after a restart a waiting payment still waits, reserved, and expires on its deadline',
  async (t) => {
    const set = await op().setPolicy(AGENT, { approvalThreshold: '0.005', approvalTimeoutSeconds: 60 });
    t.like(set, { approvalThreshold: '0.0050000', approvalTimeoutSeconds: 60 });
    const before = await balance();
    const { paymentId: id } = await payDemo();
    // the same store, ledger and services; reconciliation on start must leave it waiting
    await pay.proxy.close();
    const restarted = await pay.stack.startProxy(
      {
        ...localX402Env(pay.x402, undefined),
        POOL_PROXY_POOL_WALLET_SECRET: pay.stack.sandbox.secrets().poolWallet,
      },
      { clock },
    );
    pay.proxy = restarted.proxy;
    t.teardown(() => restarted.proxy.close()); // (pay.close() closes the first proxy only)
    t.like(await paymentOf(id), { paymentStatus: 'awaiting_approval' });
    t.is(await balance(), before - PRICE);
    offset += 61_000;
    t.like(await paymentOf(id), { paymentStatus: 'failed', reason: { code: 'approval_expired' } });
    t.is(await balance(), before);
  },
);
