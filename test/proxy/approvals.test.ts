// Payments above an owner's approval threshold, on the real stack (sandbox ledger, prover daemon, proxy with a
// test clock, the local x402 facilitator and demo service at 0.01 USDC): such a payment answers 202
// `awaiting_approval`, is reserved and listed and paid by nobody until its owner approves it; approved it is
// paid exactly once; denied, or past its deadline (the clock moved, no sleeping), it pays nothing and its
// reservation comes back; a frozen agent's waiting payment cannot be approved; an agent token lists its own
// but cannot decide; bad ids and bodies are refused and change nothing; after a restart one still waits and
// expires on its deadline. (kill -9 while one waits: approvals-crash.test.ts.)
import test from 'ava';
import { randomUUID } from 'node:crypto';
import { type PayStack, startPayStack } from '../mcp/pay-stack.ts';
import { localX402Env } from '../../src/x402/local-services.ts';
import { runCli } from '../helpers/cli.ts';
import { getJson, postJson, rawRequest, type RawResponse } from './helpers/http.ts';

const AGENT = 'appr';
let pay: PayStack;
let operator: Record<string, string>;
let agentToken: Record<string, string>;
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
/** The agent's available balance, in stroops. */
const balance = async () =>
  BigInt(((await getJson(url(`/api/balance/${AGENT}`), operator)).json.balance as string).replace('.', ''));
const PRICE = 100_000n;
const paymentOf = async (id: string, headers = operator) => getJson(url(`/api/payments/${id}`), headers);
const pending = async (headers = operator) =>
  (await getJson(url('/api/approvals'), headers)).json.approvals as Array<Record<string, string>>;
const decide = (id: string, decision: 'approve' | 'deny', headers = operator) =>
  postJson(url(`/api/approvals/${id}/${decision}`), {}, headers);
const payDemo = (extra: Record<string, unknown> = {}) =>
  postJson(url('/api/pay'), { agentId: AGENT, serviceUrl: demo, method: 'GET', ...extra }, operator);

/** Polls a payment until it is decided by its batch (real ledger time, not the clock). */
async function settled(id: string): Promise<Record<string, unknown>> {
  for (let i = 0; i < 300; i++) {
    const { json } = await paymentOf(id);
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
  const deposit = await postJson(url('/api/deposit'), { agentId: AGENT, amount: '1' }, operator);
  if (deposit.status !== 200) throw new Error(`deposit: ${deposit.text}`);
  const issued = await postJson(url(`/api/agents/${AGENT}/tokens`), {}, operator);
  if (issued.status !== 200) throw new Error(`token: ${issued.text}`);
  agentToken = { authorization: `Bearer ${issued.json.token}` };
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
      t.is(res.json.code, 'invalid_request');
    }
    t.like((await getJson(url(`/api/agents/${AGENT}/policy`), operator)).json, {
      approvalThreshold: null,
      approvalTimeoutSeconds: 900,
    });
    const set = await putJson(`/api/agents/${AGENT}/policy`, {
      approvalThreshold: '0.005',
      approvalTimeoutSeconds: 60,
    });
    t.is(set.status, 200, set.text);
    t.like(set.json, { approvalThreshold: '0.0050000', approvalTimeoutSeconds: 60 });
  },
);

test.serial(
  'above the threshold a payment waits, reserved and unpaid; approved, it is paid once',
  async (t) => {
    const before = await balance();
    const poolUsdc = await pay.stack.usdcBalance(poolWallet);
    const res = await payDemo({ idempotencyKey: 'approve-once-1' });
    t.is(res.status, 202, res.text);
    t.is(res.json.paymentStatus, 'awaiting_approval');
    t.is(res.headers['content-type']?.toString().includes('problem'), false);
    const id = res.json.paymentId as string;
    const expires = Date.parse(res.json.expiresAt);
    t.true(Math.abs(expires - (clock() + 60_000)) < 10_000, res.json.expiresAt);
    // reserved against the balance, listed, polled, replayed: still waiting, nothing paid
    t.is(await balance(), before - PRICE);
    t.like((await paymentOf(id)).json, { paymentId: id, paymentStatus: 'awaiting_approval' });
    const listed = (await pending()).find((a) => a.paymentId === id);
    t.like(listed, { agentId: AGENT, serviceUrl: demo, method: 'GET', amount: '0.0100000' });
    const replay = await payDemo({ idempotencyKey: 'approve-once-1' });
    t.is(replay.status, 202);
    t.like(replay.json, { paymentId: id, paymentStatus: 'awaiting_approval' });
    t.is(await pay.stack.usdcBalance(poolWallet), poolUsdc);

    // an agent token sees its own agent's waiting payments, and can never decide
    t.true((await pending(agentToken)).some((a) => a.paymentId === id));
    t.is((await paymentOf(id, agentToken)).json.paymentStatus, 'awaiting_approval');
    for (const decision of ['approve', 'deny'] as const) {
      const refused = await decide(id, decision, agentToken);
      t.is(refused.status, 403);
      t.is(refused.json.code, 'forbidden_for_agent_token');
    }
    t.is((await paymentOf(id)).json.paymentStatus, 'awaiting_approval');

    const approved = await decide(id, 'approve');
    t.is(approved.status, 200, approved.text);
    t.like(approved.json, { paymentId: id, decision: 'approved', paymentStatus: 'pending' });
    const again = await decide(id, 'approve');
    t.is(again.status, 409);
    t.is(again.json.code, 'approval_not_pending');
    const done = await settled(id);
    t.is(done.paymentStatus, 'confirmed', JSON.stringify(done));
    t.is(await pay.stack.usdcBalance(poolWallet), poolUsdc - PRICE, 'paid exactly once');
    t.is(await balance(), before - PRICE);
    const replayed = await payDemo({ idempotencyKey: 'approve-once-1' });
    t.is(replayed.status, 200);
    t.like(replayed.json, { paymentId: id, paymentStatus: 'confirmed' });
    t.is(await pay.stack.usdcBalance(poolWallet), poolUsdc - PRICE, 'not paid again by the replay');
    t.false((await pending()).some((a) => a.paymentId === id));
  },
);

test.serial('denied, nothing is paid and the reservation comes back', async (t) => {
  const before = await balance();
  const poolUsdc = await pay.stack.usdcBalance(poolWallet);
  const id = (await payDemo()).json.paymentId as string;
  t.is(await balance(), before - PRICE);
  const denied = await decide(id, 'deny');
  t.is(denied.status, 200, denied.text);
  t.like(denied.json, { paymentId: id, decision: 'denied', paymentStatus: 'failed' });
  t.like((await paymentOf(id)).json, { paymentStatus: 'failed', reason: { code: 'approval_denied' } });
  t.is(await balance(), before);
  const late = await decide(id, 'approve');
  t.is(late.status, 409);
  t.like(late.json, { code: 'approval_not_pending', paymentStatus: 'failed' });
  t.is(await pay.stack.usdcBalance(poolWallet), poolUsdc);
});

test.serial(
  'past its deadline (the clock moved) it is released, unpaid, and cannot be approved',
  async (t) => {
    const before = await balance();
    const id = (await payDemo()).json.paymentId as string;
    offset += 59_000;
    t.true(
      (await pending()).some((a) => a.paymentId === id),
      'still waiting before its deadline',
    );
    offset += 2_000;
    t.false((await pending()).some((a) => a.paymentId === id));
    t.like((await paymentOf(id)).json, { paymentStatus: 'failed', reason: { code: 'approval_expired' } });
    t.is(await balance(), before);
    const late = await decide(id, 'approve');
    t.is(late.status, 409);
    t.is(late.json.code, 'approval_not_pending');
  },
);

test.serial('a frozen agent’s waiting payment cannot be approved; it keeps waiting', async (t) => {
  const id = (await payDemo()).json.paymentId as string;
  t.is((await postJson(url(`/api/agents/${AGENT}/freeze`), {}, operator)).status, 200);
  const refused = await decide(id, 'approve');
  t.is(refused.status, 403);
  t.is(refused.json.code, 'agent_frozen');
  t.is((await paymentOf(id)).json.paymentStatus, 'awaiting_approval');
  t.is((await postJson(url(`/api/agents/${AGENT}/unfreeze`), {}, operator)).status, 200);
  t.is((await decide(id, 'deny')).status, 200);
});

test.serial('bad or unknown ids are refused with clear problems and change nothing', async (t) => {
  const id = (await payDemo()).json.paymentId as string;
  const bad = await decide('not-a-uuid', 'approve');
  t.is(bad.status, 400);
  t.is(bad.json.code, 'invalid_request');
  const unknown = await decide(randomUUID(), 'deny');
  t.is(unknown.status, 404);
  t.is(unknown.json.code, 'not_found');
  t.is((await paymentOf(randomUUID())).status, 404);
  t.is((await rawRequest(url(`/api/approvals/${id}/approve`), { method: 'POST' })).status, 401);
  t.is((await paymentOf(id)).json.paymentStatus, 'awaiting_approval');
  t.is((await decide(id, 'deny')).status, 200);
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
  t.like((await getJson(url(`/api/agents/${AGENT}/policy`), operator)).json, {
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
    const set = await putJson(`/api/agents/${AGENT}/policy`, {
      approvalThreshold: '0.005',
      approvalTimeoutSeconds: 60,
    });
    t.is(set.status, 200, set.text);
    const before = await balance();
    const id = (await payDemo()).json.paymentId as string;
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
    t.like((await paymentOf(id)).json, { paymentStatus: 'awaiting_approval' });
    t.is(await balance(), before - PRICE);
    offset += 61_000;
    t.like((await paymentOf(id)).json, { paymentStatus: 'failed', reason: { code: 'approval_expired' } });
    t.is(await balance(), before);
  },
);
