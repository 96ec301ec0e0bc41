// Strict JSON bodies against a real proxy on loopback: a member name repeated at any depth, an escaped
// spelling of the same name, and runaway nesting are refused with 400 `invalid_request` before any
// handler runs, so nothing is consumed or spent; the same body without the repetition is accepted. The
// refused bodies are sent raw (no client writes them); the well-formed requests go through PoolApi.
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { PoolApi, refused, walletApi } from './helpers/api.ts';
import { postJson, problemOf } from './helpers/http.ts';
import { startTestProxy, type TestProxy } from './helpers/proxy.ts';

let proxy: TestProxy;
test.before(async () => {
  proxy = await startTestProxy();
});
test.after.always(async () => {
  await proxy?.close();
});

/** The proxy for the public (no credentials), which logs in. */
const publicApi = () => new PoolApi({ baseUrl: proxy.url });

async function signedChallenge(wallet: Keypair) {
  const { challenge } = await publicApi().challenge(wallet.publicKey());
  const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
  return { publicKey: wallet.publicKey(), challenge, signature };
}

async function token(): Promise<string> {
  return (await publicApi().verify(await signedChallenge(Keypair.random()))).token;
}

test('a repeated member in a withdrawal is refused, whichever value comes last', async (t) => {
  const wallet = await token();
  const auth = { authorization: `Bearer ${wallet}` };
  const destination = Keypair.random().publicKey();
  for (const body of [
    `{"amount":"-5","amount":"0.1","destination":"${destination}"}`,
    `{"amount":"0.1","amount":"-5","destination":"${destination}"}`,
    `{"amount":"0.1","destination":"${destination}","destination":"${destination}"}`,
    // the same name spelled with an escape is the same member
    `{"amount":"0.1","\\u0061mount":"0.2","destination":"${destination}"}`,
  ]) {
    const res = await postJson(`${proxy.url}/api/withdraw`, body, auth);
    t.is(res.status, 400, body);
    t.is(res.headers['content-type'], 'application/problem+json');
    const problem = problemOf(res);
    t.is(problem.code, 'invalid_request');
    t.regex(problem.detail, /repeats the member "(amount|destination)"/);
    t.deepEqual(problem.errors, [
      { path: problem.errors?.[0]?.path ?? '', message: 'duplicate member name' },
    ]);
  }
  // The same body once, without the repetition, passes the body checks (no ledger here: 503).
  const single = await refused(t, walletApi(proxy.url, wallet).withdraw({ amount: '0.1', destination }));
  t.is(single.status, 503, single.detail);
  t.is(single.code, 'service_unavailable');
});

test('a repeated member deep inside the body is refused and names its path', async (t) => {
  const wallet = Keypair.random();
  const signed = await signedChallenge(wallet);
  const text = JSON.stringify(signed).replace(/}$/, ',"extra":{"list":[{"a":1},{"b":2,"b":3}]}}');
  const res = await postJson(`${proxy.url}/api/auth/verify`, text);
  t.is(res.status, 400);
  t.is(problemOf(res).code, 'invalid_request');
  t.is(problemOf(res).errors?.[0]?.path, 'extra.list.1.b');
  // Distinct objects may reuse a name: {"a":1} and {"a":2} in one array are fine (then zod refuses `extra`).
  const reuse = JSON.stringify({ ...signed, extra: [{ a: 1 }, { a: 2 }] });
  const unknown = await postJson(`${proxy.url}/api/auth/verify`, reuse);
  t.is(unknown.status, 400);
  t.regex(problemOf(unknown).detail, /unknown field\(s\): "extra"/);
  // Refused before the challenge was looked at: it still logs in.
  t.truthy((await publicApi().verify(signed)).token);
});

test('a repeated member in a verify body does not consume the challenge', async (t) => {
  const signed = await signedChallenge(Keypair.random());
  const text = `{"publicKey":"${signed.publicKey}","publicKey":"${Keypair.random().publicKey()}","challenge":${JSON.stringify(signed.challenge)},"signature":"${signed.signature}"}`;
  const res = await postJson(`${proxy.url}/api/auth/verify`, text);
  t.is(res.status, 400);
  t.is(problemOf(res).code, 'invalid_request');
  t.truthy((await publicApi().verify(signed)).token);
});

test('nesting deeper than the limit is a 400, not a crash; invalid JSON and comments stay refused', async (t) => {
  const auth = { authorization: `Bearer ${await token()}` };
  const deep = `{"amount":"1","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
  const res = await postJson(`${proxy.url}/api/withdraw`, deep, auth);
  t.is(res.status, 400);
  t.is(problemOf(res).code, 'invalid_request');
  t.regex(problemOf(res).detail, /nested deeper than 32 levels/);
  for (const body of ['{"amount":"1",}', '{"amount":"1" /* c */}', '{"amount":"1"} x']) {
    const bad = await postJson(`${proxy.url}/api/withdraw`, body, auth);
    t.is(bad.status, 400, body);
    t.regex(problemOf(bad).detail, /not valid JSON/);
  }
  // The service is still healthy afterwards.
  t.is((await publicApi().liveness()).status, 'alive');
});
