// SEP-53 login: challenges, their signatures and the tokens they buy, through the proxy's REST API (PoolApi, and
// raw requests for what it never sends), and the login and token services under a clock of the test's.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { decodeJwt, decodeProtectedHeader } from 'jose';
import { challengeNonce } from '../../src/proxy/auth/challenge-message.ts';
import { LoginService } from '../../src/proxy/auth/login.ts';
import { decodeSignature } from '../../src/proxy/auth/signature.ts';
import { TokenService } from '../../src/proxy/auth/tokens.ts';
import { DomainError } from '../../src/proxy/domain/errors.ts';
import { EncryptedStore } from '../../src/proxy/store/encrypted-store.ts';
import type { AuthVerifyRequest } from '../../src/api/types.ts';
import { PoolApi, PoolApiError, refused } from './helpers/api.ts';
import { getJson, postJson, problemOf } from './helpers/http.ts';
import { startTestProxy, type TestProxy } from './helpers/proxy.ts';

let proxy: TestProxy;
test.before(async () => {
  proxy = await startTestProxy();
});
test.after.always(async () => {
  await proxy?.close();
});

/** The proxy's client for the public (no credentials), which logs in. */
const api = () => new PoolApi({ baseUrl: proxy.url });

async function challengeFor(address: string): Promise<string> {
  return (await api().challenge(address)).challenge;
}

const verify = (body: AuthVerifyRequest) => api().verify(body);

function sign(wallet: Keypair, message: string, encoding: 'base64' | 'hex' = 'base64'): string {
  return Buffer.from(wallet.signMessage(message)).toString(encoding);
}

test('SEP-53 vectors: the SDK signatures we verify are the SEP test vectors', (t) => {
  const kp = Keypair.fromSecret('SAKICEVQLYWGSOJS4WW7HZJWAHZVEEBS527LHK5V4MLJALYKICQCJXMW');
  t.is(kp.publicKey(), 'GBXFXNDLV4LSWA4VB7YIL5GBD7BVNR22SGBTDKMO2SBZZHDXSKZYCP7L');
  const hello = 'fO5dbYhXUhBMhe6kId/cuVq/AfEnHRHEvsP8vXh03M1uLpi5e46yO2Q8rEBzu3feXQewcQE5GArp88u6ePK6BA==';
  const japanese = 'CDU265Xs8y3OWbB/56H9jPgUss5G9A0qFuTqH2zs2YDgTm+++dIfmAEceFqB7bhfN3am59lCtDXrCtwH2k1GBA==';
  t.is(Buffer.from(kp.signMessage('Hello, World!')).toString('base64'), hello);
  t.true(kp.verifyMessage('Hello, World!', decodeSignature(hello)));
  t.true(kp.verifyMessage('こんにちは、世界！', decodeSignature(japanese)));
  t.true(kp.verifyMessage('Hello, World!', decodeSignature(Buffer.from(hello, 'base64').toString('hex'))));
  t.false(kp.verifyMessage('Hello, World!!', decodeSignature(hello)));
});

test('login: challenge → signMessage → verify → EdDSA JWT with iss, aud, sub, iat, exp, jti', async (t) => {
  const wallet = Keypair.random();
  const challenge = await challengeFor(wallet.publicKey());
  t.true(challenge.startsWith('proxy.test:8080 wants you to sign in with your Stellar account:\n'));
  t.true(challenge.includes(`\n${wallet.publicKey()}\n`));
  t.regex(challenge, /\nChain ID: stellar:local\n/);
  const nonce = challengeNonce(challenge)!;
  t.true(nonce.length * 4 >= 128, 'nonce of at least 128 bits');
  const issued = Date.parse(/Issued At: (.+)/.exec(challenge)![1]);
  const expires = Date.parse(/Expiration Time: (.+)/.exec(challenge)![1]);
  t.true(expires - issued <= 5 * 60 * 1000 && expires > issued);
  t.true(Math.abs(Date.now() - issued) < 60_000);

  const res = await verify({ publicKey: wallet.publicKey(), challenge, signature: sign(wallet, challenge) });
  t.is(res.expiresIn, 86400);
  const header = decodeProtectedHeader(res.token);
  t.is(header.alg, 'EdDSA');
  const claims = decodeJwt(res.token);
  t.is(claims.sub, wallet.publicKey());
  t.is(claims.iss, 'http://proxy.test:8080');
  t.is(claims.aud, 'http://proxy.test:8080/api');
  t.is(claims.exp! - claims.iat!, 86400);
  t.regex(String(claims.jti), /^[0-9a-f-]{36}$/);
});

test('login accepts a hex signature', async (t) => {
  const wallet = Keypair.random();
  const challenge = await challengeFor(wallet.publicKey());
  const res = await verify({
    publicKey: wallet.publicKey(),
    challenge,
    signature: sign(wallet, challenge, 'hex'),
  });
  t.is(decodeJwt(res.token).sub, wallet.publicKey());
});

test('a challenge is single-use: a replay after success is refused', async (t) => {
  const wallet = Keypair.random();
  const challenge = await challengeFor(wallet.publicKey());
  const body = { publicKey: wallet.publicKey(), challenge, signature: sign(wallet, challenge) };
  t.truthy((await verify(body)).token);
  // raw: the test reads the answer's content type and whole body
  const replay = await postJson(`${proxy.url}/api/auth/verify`, body);
  t.is(replay.status, 401);
  const problem = problemOf(replay);
  t.is(problem.code, 'unauthorized');
  t.regex(problem.detail, /already used/);
  t.is(replay.headers['content-type'], 'application/problem+json');
  t.is(problem.token, undefined);
});

test('concurrent verifies of one challenge issue exactly one token', async (t) => {
  const wallet = Keypair.random();
  const challenge = await challengeFor(wallet.publicKey());
  const body = { publicKey: wallet.publicKey(), challenge, signature: sign(wallet, challenge) };
  const results = await Promise.allSettled(Array.from({ length: 8 }, () => verify(body)));
  const statuses = results.map((r) =>
    r.status === 'fulfilled' ? 200 : r.reason instanceof PoolApiError ? r.reason.status : String(r.reason),
  );
  t.deepEqual(statuses.sort(), [200, 401, 401, 401, 401, 401, 401, 401]);
});

test('a signature by another key is refused and burns the challenge', async (t) => {
  const wallet = Keypair.random();
  const other = Keypair.random();
  const challenge = await challengeFor(wallet.publicKey());
  const bad = await refused(
    t,
    verify({ publicKey: wallet.publicKey(), challenge, signature: sign(other, challenge) }),
  );
  t.is(bad.status, 401);
  t.regex(bad.detail, /does not verify/);
  const good = await refused(
    t,
    verify({ publicKey: wallet.publicKey(), challenge, signature: sign(wallet, challenge) }),
  );
  t.is(good.status, 401, 'consumed by the failed attempt');
});

test('a challenge issued for another address is refused', async (t) => {
  const alice = Keypair.random();
  const mallory = Keypair.random();
  const challenge = await challengeFor(alice.publicKey());
  const res = await refused(
    t,
    verify({ publicKey: mallory.publicKey(), challenge, signature: sign(mallory, challenge) }),
  );
  t.is(res.status, 401);
  t.regex(res.detail, /another account/);
});

test('an altered challenge text is refused', async (t) => {
  const wallet = Keypair.random();
  const challenge = await challengeFor(wallet.publicKey());
  const altered = challenge.replace('proxy.test:8080 wants', 'evil.test wants');
  const res = await refused(
    t,
    verify({ publicKey: wallet.publicKey(), challenge: altered, signature: sign(wallet, altered) }),
  );
  t.is(res.status, 401);
  t.regex(res.detail, /altered/);
});

test('malformed base64/hex signatures get 400 and burn the challenge', async (t) => {
  const wallet = Keypair.random();
  for (const signature of [
    'not-a-signature',
    'AAAA',
    'zz'.repeat(64),
    Buffer.alloc(63).toString('base64'),
    Buffer.alloc(65).toString('hex'),
  ]) {
    const challenge = await challengeFor(wallet.publicKey());
    const res = await refused(t, verify({ publicKey: wallet.publicKey(), challenge, signature }), signature);
    t.is(res.status, 400, signature);
    t.is(res.code, 'invalid_request');
    t.regex(res.detail, /64-byte/);
    const retry = await refused(
      t,
      verify({ publicKey: wallet.publicKey(), challenge, signature: sign(wallet, challenge) }),
    );
    t.is(retry.status, 401);
  }
});

test('a challenge never issued (made-up nonce) is refused', async (t) => {
  const wallet = Keypair.random();
  const real = await challengeFor(wallet.publicKey());
  const forged = real.replace(/Nonce: [0-9a-f]+/, `Nonce: ${randomBytes(24).toString('hex')}`);
  const res = await refused(
    t,
    verify({ publicKey: wallet.publicKey(), challenge: forged, signature: sign(wallet, forged) }),
  );
  t.is(res.status, 401);
});

test('challenge requests with bad or missing publicKey are refused with 400', async (t) => {
  const good = Keypair.random().publicKey();
  const broken = `${good.slice(0, -1)}${good.endsWith('A') ? 'B' : 'A'}`;
  // raw: missing, repeated and extra query parameters are what PoolApi never sends
  for (const query of [
    '',
    `?publicKey=${broken}`,
    '?publicKey=',
    `?publicKey=${good}&publicKey=${good}`,
    `?publicKey=${good}&extra=1`,
    `?publicKey=${good.toLowerCase()}`,
  ]) {
    const res = await getJson(`${proxy.url}/api/auth/challenge${query}`);
    t.is(res.status, 400, query);
    t.is(problemOf(res).code, 'invalid_request');
  }
});

test('verify bodies: unknown fields, wrong types and missing fields get 400', async (t) => {
  const wallet = Keypair.random();
  const challenge = await challengeFor(wallet.publicKey());
  const signature = sign(wallet, challenge);
  const base = { publicKey: wallet.publicKey(), challenge, signature };
  // raw: unknown fields, wrong types and missing fields are what PoolApi's types never send
  for (const body of [
    { ...base, extra: true },
    { ...base, signature: 42 },
    { publicKey: wallet.publicKey(), challenge },
    { ...base, publicKey: 'GABC' },
  ]) {
    const res = await postJson(`${proxy.url}/api/auth/verify`, body);
    t.is(res.status, 400, JSON.stringify(body));
    t.is(problemOf(res).code, 'invalid_request');
    t.true(Array.isArray(problemOf(res).errors));
  }
  const unknown = await postJson(`${proxy.url}/api/auth/verify`, { ...base, extra: true });
  t.regex(problemOf(unknown).detail, /unknown field\(s\): "extra"/);
  // Validation failures happen before the challenge is looked up, so it is still usable.
  t.truthy((await verify(base)).token);
});

test('an expired challenge is refused (service clock)', async (t) => {
  const store = await EncryptedStore.open(mkdtempSync(join(tmpdir(), 'pp-login-')), randomBytes(32));
  let now = Date.parse('2026-01-01T00:00:00Z');
  const tokens = new TokenService(randomBytes(32), { issuer: 'i', audience: 'a', ttlSeconds: 86400 });
  const login = new LoginService(
    store,
    tokens,
    {
      domain: 'd',
      uri: 'http://d',
      network: 'stellar:local',
      challengeTtlSeconds: 300,
      challengeKey: randomBytes(32),
    },
    () => now,
  );
  const wallet = Keypair.random();
  const challenge = await login.challenge(wallet.publicKey());
  now += 301_000;
  const error = await t.throwsAsync(
    login.verify({ publicKey: wallet.publicKey(), challenge, signature: sign(wallet, challenge) }),
    {
      instanceOf: DomainError,
    },
  );
  t.is(error!.code, 'unauthorized');
  t.regex(error!.message, /expired/);
  // A fresh challenge within its window works; its consumed nonce is kept until it expires, then swept.
  const fresh = await login.challenge(wallet.publicKey());
  const unused = await login.challenge(wallet.publicKey());
  const ok = await login.verify({
    publicKey: wallet.publicKey(),
    challenge: fresh,
    signature: sign(wallet, fresh),
  });
  t.is(ok.expiresIn, 86400);
  t.is(await login.sweepExpired(), 0, 'not expired yet');
  await t.throwsAsync(
    login.verify({ publicKey: wallet.publicKey(), challenge: fresh, signature: sign(wallet, fresh) }),
    { message: /already used/ },
  );
  now += 301_000;
  t.is(await login.sweepExpired(), 1, 'only the consumed nonce was stored');
  for (const old of [fresh, unused]) {
    await t.throwsAsync(
      login.verify({ publicKey: wallet.publicKey(), challenge: old, signature: sign(wallet, old) }),
      { message: /expired/ },
    );
  }
  await store.close();
});

test('a remembered (already verified) token is still refused once it expires', async (t) => {
  let now = Math.floor(Date.now() / 1000) * 1000; // a whole second: exp below is exactly now + 1 s
  const tokens = new TokenService(
    randomBytes(32),
    { issuer: 'i', audience: 'a', ttlSeconds: 86400 },
    undefined,
    () => now,
  );
  const wallet = Keypair.random().publicKey();
  // exp = now + 1 s; the verifier accepts 5 s of clock skew.
  const token = await tokens.issue(wallet, new Date(now - 86_399_000));
  t.is((await tokens.verify(token)).sub, wallet);
  now += 4_000; // still within exp + the 5 s tolerance
  t.is((await tokens.verify(token)).sub, wallet, 'served from the verified-token cache');
  now += 2_500;
  const error = await t.throwsAsync(tokens.verify(token), { instanceOf: DomainError });
  t.regex(error!.message, /expired/);
  // a token never seen before, past the same expiry, is refused by the signature check's own lifetime test
  const late = await tokens.issue(wallet, new Date(now - 86_406_000));
  t.regex((await t.throwsAsync(tokens.verify(late), { instanceOf: DomainError }))!.message, /expired/);
  const fresh = await tokens.issue(wallet);
  t.is((await tokens.verify(fresh)).sub, wallet);
  // Change one fully significant signature character (the last ones carry padding bits, so replacing
  // them can leave the signature bytes unchanged).
  const i = fresh.length - 10;
  const tampered = `${fresh.slice(0, i)}${fresh[i] === 'A' ? 'B' : 'A'}${fresh.slice(i + 1)}`;
  await t.throwsAsync(tokens.verify(tampered), { instanceOf: DomainError });
});

test('the Bearer scheme is matched in any case, after one or more spaces (RFC 9110 §11.1)', async (t) => {
  const wallet = Keypair.random();
  const challenge = await challengeFor(wallet.publicKey());
  const { token } = await verify({
    publicKey: wallet.publicKey(),
    challenge,
    signature: sign(wallet, challenge),
  });
  // raw: the test writes the Authorization header itself
  for (const scheme of ['Bearer ', 'bearer ', 'BEARER ', 'bEaReR ', 'Bearer   ']) {
    const res = await getJson(`${proxy.url}/api/agents`, { authorization: `${scheme}${token}` });
    t.is(res.status, 200, `${JSON.stringify(scheme)}: ${res.text}`);
  }
  for (const header of [`Bearer${token}`, `Basic ${token}`, `Bearer ${token} x`, `Bearer\t${token}`]) {
    const res = await getJson(`${proxy.url}/api/agents`, { authorization: header });
    t.is(res.status, 401, JSON.stringify(header.slice(0, 8)));
    t.is(problemOf(res).code, 'unauthorized');
  }
});

test('a token of another key id says why: an earlier epoch of this service, or a key it never had', async (t) => {
  const masterKey = randomBytes(32);
  const settings = { issuer: 'i', audience: 'a', ttlSeconds: 3600 };
  const epochA = randomBytes(16).toString('hex');
  const epochB = randomBytes(16).toString('hex');
  const now = new TokenService(masterKey, settings, undefined, undefined, epochB);
  const wallet = Keypair.random().publicKey();
  const reason = async (token: string) =>
    (await t.throwsAsync(now.verify(token), { instanceOf: DomainError }))!.message;
  // issued here before two recoveries (the first epoch, no kid) and before one (epoch A)
  const first = await new TokenService(masterKey, settings).issue(wallet);
  const earlier = await new TokenService(masterKey, settings, undefined, undefined, epochA).issue(wallet);
  for (const token of [first, earlier])
    t.regex(
      await reason(token),
      /earlier key of this service: issued before this service’s store was recovered/,
    );
  // another service's token naming a key id of the right shape, and one naming a made-up key id
  const elsewhere = await new TokenService(randomBytes(32), settings, undefined, undefined, epochA).issue(
    wallet,
  );
  t.regex(
    await reason(elsewhere),
    new RegExp(`key id "${epochA}", which is no signing key of this service: it was not issued here`),
  );
  const forged = await new TokenService(masterKey, settings, undefined, undefined, 'not-an-epoch').issue(
    wallet,
  );
  t.regex(await reason(forged), /key id "not-an-epoch", which is no signing key of this service/);
  const foreignFirst = await new TokenService(randomBytes(32), settings).issue(wallet);
  t.regex(await reason(foreignFirst), /no key id and no signature of this service/);
  t.is((await now.verify(await now.issue(wallet))).sub, wallet);
});
