// Strict JSON bodies against a real proxy on loopback: a member name repeated at any depth, an escaped
// spelling of the same name, and runaway nesting are refused with 400 `invalid_request` before any
// handler runs, so nothing is consumed or spent; the same body without the repetition is accepted.
import { Keypair } from '@stellar/stellar-sdk';
import test from 'ava';
import { getJson, postJson } from './helpers/http.ts';
import { startTestProxy, type TestProxy } from './helpers/proxy.ts';

let proxy: TestProxy;
test.before(async () => {
  proxy = await startTestProxy();
});
test.after.always(async () => {
  await proxy?.close();
});

async function signedChallenge(wallet: Keypair) {
  const { json } = await getJson(`${proxy.url}/api/auth/challenge?publicKey=${wallet.publicKey()}`);
  const signature = Buffer.from(wallet.signMessage(json.challenge)).toString('base64');
  return { publicKey: wallet.publicKey(), challenge: json.challenge as string, signature };
}

async function token(): Promise<string> {
  const res = await postJson(`${proxy.url}/api/auth/verify`, await signedChallenge(Keypair.random()));
  if (res.status !== 200) throw new Error(res.text);
  return res.json.token;
}

test('a repeated member in a withdrawal is refused, whichever value comes last', async (t) => {
  const auth = { authorization: `Bearer ${await token()}` };
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
    t.is(res.json.code, 'invalid_request');
    t.regex(res.json.detail, /repeats the member "(amount|destination)"/);
    t.deepEqual(res.json.errors, [{ path: res.json.errors[0].path, message: 'duplicate member name' }]);
  }
  // The same body once, without the repetition, passes the body checks (no ledger here: 503).
  const single = await postJson(
    `${proxy.url}/api/withdraw`,
    `{"amount":"0.1","destination":"${destination}"}`,
    auth,
  );
  t.is(single.status, 503, single.text);
  t.is(single.json.code, 'service_unavailable');
});

test('a repeated member deep inside the body is refused and names its path', async (t) => {
  const wallet = Keypair.random();
  const signed = await signedChallenge(wallet);
  const text = JSON.stringify(signed).replace(/}$/, ',"extra":{"list":[{"a":1},{"b":2,"b":3}]}}');
  const res = await postJson(`${proxy.url}/api/auth/verify`, text);
  t.is(res.status, 400);
  t.is(res.json.code, 'invalid_request');
  t.is(res.json.errors[0].path, 'extra.list.1.b');
  // Distinct objects may reuse a name: {"a":1} and {"a":2} in one array are fine (then zod refuses `extra`).
  const reuse = JSON.stringify({ ...signed, extra: [{ a: 1 }, { a: 2 }] });
  const unknown = await postJson(`${proxy.url}/api/auth/verify`, reuse);
  t.is(unknown.status, 400);
  t.regex(unknown.json.detail, /unknown field\(s\): "extra"/);
  // Refused before the challenge was looked at: it still logs in.
  const ok = await postJson(`${proxy.url}/api/auth/verify`, signed);
  t.is(ok.status, 200, ok.text);
});

test('a repeated member in a verify body does not consume the challenge', async (t) => {
  const signed = await signedChallenge(Keypair.random());
  const text = `{"publicKey":"${signed.publicKey}","publicKey":"${Keypair.random().publicKey()}","challenge":${JSON.stringify(signed.challenge)},"signature":"${signed.signature}"}`;
  const res = await postJson(`${proxy.url}/api/auth/verify`, text);
  t.is(res.status, 400);
  t.is(res.json.code, 'invalid_request');
  t.is((await postJson(`${proxy.url}/api/auth/verify`, signed)).status, 200);
});

test('nesting deeper than the limit is a 400, not a crash; invalid JSON and comments stay refused', async (t) => {
  const auth = { authorization: `Bearer ${await token()}` };
  const deep = `{"amount":"1","x":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
  const res = await postJson(`${proxy.url}/api/withdraw`, deep, auth);
  t.is(res.status, 400);
  t.is(res.json.code, 'invalid_request');
  t.regex(res.json.detail, /nested deeper than 32 levels/);
  for (const body of ['{"amount":"1",}', '{"amount":"1" /* c */}', '{"amount":"1"} x']) {
    const bad = await postJson(`${proxy.url}/api/withdraw`, body, auth);
    t.is(bad.status, 400, body);
    t.regex(bad.json.detail, /not valid JSON/);
  }
  // The service is still healthy afterwards.
  t.is((await getJson(`${proxy.url}/health`)).status, 200);
});
