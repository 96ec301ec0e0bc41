// Nobody can hold anyone's onboarding hostage: an attacker wallet keeps two prepared deposits outstanding and
// prepares them again as they expire (costing it no signature and no spend), while other wallets and the
// operator create new agents. Registration slots run at a fixed cadence whatever the attacker does: every new
// agent's first deposit is confirmed within the documented bound (slot + signing window + inserting its
// slot's keys), and no request is held longer than the hold limit (a longer wait answers 503
// registration_pending with Retry-After, and the client retries then). Shortened parameters (5 s slots, 2 s
// window, 4 s hold) cover several attacker cycles; bench/onboarding/run.ts runs the full-size scenario.
import test from 'ava';
import { Keypair, TransactionBuilder } from '@stellar/stellar-sdk';
import { getJson, postJson, type RawResponse } from './helpers/http.ts';
import { type Stack, startStack } from './helpers/stack.ts';

const SLOT_S = 5;
const WINDOW_S = 2;
const HOLD_S = 4;
/** Room for proving, simulating and inserting a slot's few keys on a loaded two-core machine. */
const WORK_MARGIN_S = 20;
const BOUND_MS = (SLOT_S + WINDOW_S + WORK_MARGIN_S) * 1000;

let stack: Stack;
test.before(async () => {
  stack = await startStack({
    POOL_PROXY_REGISTRATION_SLOT_SECONDS: String(SLOT_S),
    POOL_PROXY_SIGNING_WINDOW_SECONDS: String(WINDOW_S),
    POOL_PROXY_REGISTRATION_HOLD_SECONDS: String(HOLD_S),
  });
});
test.after.always(async () => {
  await stack?.close();
});

const url = (path: string) => `${stack.proxy.url}${path}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Every request's duration, to check that none was held past the hold limit. */
const held: Array<{ what: string; ms: number; status: number }> = [];
async function timed(what: string, request: () => Promise<RawResponse>): Promise<RawResponse> {
  const started = Date.now();
  const res = await request();
  held.push({ what, ms: Date.now() - started, status: res.status });
  return res;
}

/** A client: retries `registration_pending` after its Retry-After. */
async function retrying(what: string, request: () => Promise<RawResponse>): Promise<RawResponse> {
  for (;;) {
    const res = await timed(what, request);
    if (res.status !== 503 || res.json.code !== 'registration_pending') return res;
    const retryAfter = Number(res.headers['retry-after']);
    if (!(retryAfter >= 1)) throw new Error(`registration_pending without Retry-After: ${res.text}`);
    await sleep(retryAfter * 1000);
  }
}

async function wallet(): Promise<{ kp: Keypair; token: string }> {
  const kp = Keypair.random();
  await stack.fund(kp.publicKey(), 20);
  return { kp, token: await stack.login(kp) };
}

function sign(xdrText: string, kp: Keypair): string {
  const tx = TransactionBuilder.fromXDR(xdrText, stack.config.ledger.networkPassphrase);
  tx.sign(kp);
  return tx.toXDR();
}

/** A new agent's first wallet deposit, start to confirmation (ms). */
async function walletOnboarding(agentId: string): Promise<number> {
  const w = await wallet();
  const started = Date.now();
  const body = { amount: '1', publicKey: w.kp.publicKey(), agentId };
  for (;;) {
    const prepared = await retrying('prepare', () =>
      postJson(url('/api/deposit/prepare'), body, bearer(w.token)),
    );
    if (prepared.status !== 200) throw new Error(`prepare: ${prepared.text}`);
    const submitted = await timed('submit', () =>
      postJson(
        url('/api/deposit/submit'),
        {
          prepareId: prepared.json.prepareId,
          signedTransactionXDR: sign(prepared.json.transactionXDR, w.kp),
        },
        bearer(w.token),
      ),
    );
    if (submitted.status === 200) break;
    // A deposit signed at once is never stale; should the machine be slow enough, prepare again.
    if (submitted.json.code !== 'prepare_stale') throw new Error(`submit: ${submitted.text}`);
  }
  const elapsed = Date.now() - started;
  const read = await getJson(url(`/api/balance/${agentId}`), bearer(w.token));
  if (read.json.balance !== '1.0000000') throw new Error(`balance: ${read.text}`);
  return elapsed;
}

async function operatorOnboarding(agentId: string): Promise<number> {
  const started = Date.now();
  const res = await retrying('operator deposit', () =>
    postJson(url('/api/deposit'), { agentId, amount: '1' }),
  );
  if (res.status !== 200) throw new Error(`operator deposit: ${res.text}`);
  return Date.now() - started;
}

test.serial(
  'an attacker re-preparing two deposits as they expire delays no new agent past the bound',
  async (t) => {
    const attacker = await wallet();
    // The attacker's own agent exists (so its prepares cost it nothing but requests).
    const first = await walletOnboardingFor(attacker);
    t.true(first < BOUND_MS);

    let attacking = true;
    let prepares = 0;
    const attack = async (agentId: string) => {
      while (attacking) {
        const res = await timed('attacker prepare', () =>
          postJson(
            url('/api/deposit/prepare'),
            { amount: '1', publicKey: attacker.kp.publicKey(), agentId },
            bearer(attacker.token),
          ),
        );
        if (res.status === 200) {
          prepares++;
          // hold it outstanding until it expires, then prepare again
          await sleep(Math.max(0, Date.parse(res.json.expiresAt) - Date.now()) + 50);
        } else if (res.status === 503) {
          await sleep(Number(res.headers['retry-after'] ?? 1) * 1000);
        } else throw new Error(`attacker prepare: ${res.text}`);
      }
    };
    const attackers = [attack(attacker.kp.publicKey()), attack('attacker-2')];
    // the attacker's second agent is new: it joins the slots like everyone else
    const onboardings: Array<Promise<number>> = [];
    for (const [i, start] of [1, 6, 12].entries()) {
      onboardings.push(sleep(start * 1000).then(() => walletOnboarding(`newcomer-${i}`)));
    }
    onboardings.push(sleep(9_000).then(() => operatorOnboarding('operator-newcomer')));
    const times = await Promise.all(onboardings);
    attacking = false;
    await Promise.all(attackers);

    t.log(`onboarding ms: ${times.join(', ')}; attacker prepares: ${prepares}`);
    for (const ms of times) t.true(ms < BOUND_MS, `onboarded in ${ms} ms, bound ${BOUND_MS} ms`);
    t.true(
      prepares >= 4,
      `the attacker kept deposits outstanding through several slots (${prepares} prepares)`,
    );
    const longest = Math.max(...held.map((h) => h.ms));
    const limit = (HOLD_S + WORK_MARGIN_S) * 1000;
    t.true(
      longest < limit,
      `longest request ${longest} ms: ${JSON.stringify(held.filter((h) => h.ms >= limit))}`,
    );
    const pending = held.filter((h) => h.status === 503);
    t.log(`503 registration_pending answers: ${pending.length}`);
  },
);

async function walletOnboardingFor(w: { kp: Keypair; token: string }): Promise<number> {
  const started = Date.now();
  const prepared = await retrying('prepare', () =>
    postJson(url('/api/deposit/prepare'), { amount: '1', publicKey: w.kp.publicKey() }, bearer(w.token)),
  );
  if (prepared.status !== 200) throw new Error(`prepare: ${prepared.text}`);
  const submitted = await postJson(
    url('/api/deposit/submit'),
    { prepareId: prepared.json.prepareId, signedTransactionXDR: sign(prepared.json.transactionXDR, w.kp) },
    bearer(w.token),
  );
  if (submitted.status !== 200) throw new Error(`submit: ${submitted.text}`);
  return Date.now() - started;
}
