// Log out: POST /api/auth/logout ends the token on the server. The ended token answers 401 everywhere (REST and
// MCP), also after a restart of the proxy on the same store; other tokens of the wallet keep working; a missing,
// malformed, foreign or replayed token is refused without ending anything. Real proxy, real HTTP, real LevelDB.
// Requests go through PoolApi; raw only for /mcp, malformed or missing Authorization headers, the wrong method,
// and the WWW-Authenticate and content-type headers PoolApi does not give.
import { randomBytes } from 'node:crypto';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { RECHECK_MS, TokenRevocations } from '../../src/proxy/auth/revocations.ts';
import { TokenService } from '../../src/proxy/auth/tokens.ts';
import { EncryptedStore } from '../../src/proxy/store/encrypted-store.ts';
import { PoolApi, refused, walletApi } from './helpers/api.ts';
import { getJson, jsonOf, type OpenApiDocument, postJson, problemOf, rawRequest } from './helpers/http.ts';
import { startTestProxy } from './helpers/proxy.ts';

async function login(url: string, wallet: Keypair): Promise<string> {
  const api = new PoolApi({ baseUrl: url });
  const { challenge } = await api.challenge(wallet.publicKey());
  const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
  return (await api.verify({ publicKey: wallet.publicKey(), challenge, signature })).token;
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** A logout sent raw, with exactly the given headers. */
const logout = (url: string, headers: Record<string, string>) =>
  rawRequest(`${url}/api/auth/logout`, { method: 'POST', headers });
/** The token's agents: it is still valid if this answers. */
const agentsOf = (url: string, token: string) => walletApi(url, token).agents();

test('Log out ends the token on the server, also across a restart; other tokens stay valid', async (t) => {
  const env = {
    POOL_PROXY_DATA_DIR: mkdtempSync(join(tmpdir(), 'pp-logout-')),
    POOL_PROXY_MASTER_KEY: randomBytes(32).toString('hex'),
  };
  let proxy = await startTestProxy(env);
  t.teardown(() => proxy.close());
  const wallet = Keypair.random();
  const ended = await login(proxy.url, wallet);
  const other = await login(proxy.url, wallet);
  t.deepEqual((await agentsOf(proxy.url, ended)).agents, [], 'valid before');

  const out = await walletApi(proxy.url, ended).logout();
  t.true(out.loggedOut);
  t.true(Date.parse(out.tokenExpiresAt) > Date.now() + 3600_000, 'kept until the token would expire');

  const ejected = await refused(t, agentsOf(proxy.url, ended));
  t.is(ejected.status, 401);
  t.is(ejected.code, 'unauthorized');
  t.regex(ejected.detail, /Log out/);
  // raw: the WWW-Authenticate header, which PoolApi does not give
  const after = await getJson(`${proxy.url}/api/agents`, bearer(ended));
  t.is(after.status, 401);
  t.is(problemOf(after).code, 'unauthorized');
  t.regex(String(after.headers['www-authenticate']), /invalid_token/);
  const mcp = await postJson(
    `${proxy.url}/mcp`,
    { jsonrpc: '2.0', id: 1, method: 'tools/list' },
    { ...bearer(ended), accept: 'application/json, text/event-stream' },
  );
  t.is(mcp.status, 401, 'the MCP endpoint refuses the ended token too');
  t.deepEqual((await agentsOf(proxy.url, other)).agents, [], 'another token still works');

  // Replayed: the ended token cannot log out again (nor anything else).
  const replay = await refused(t, walletApi(proxy.url, ended).logout());
  t.is(replay.status, 401);
  t.is(replay.code, 'unauthorized');

  // The revocation is in the store: a restarted proxy on the same data still refuses the token.
  await proxy.close();
  proxy = await startTestProxy(env);
  const restarted = await refused(t, agentsOf(proxy.url, ended), 'still ended after a restart');
  t.is(restarted.status, 401, 'still ended after a restart');
  t.deepEqual((await agentsOf(proxy.url, other)).agents, []);
});

test('Log out refuses a missing, malformed or foreign token, and other methods', async (t) => {
  const proxy = await startTestProxy();
  t.teardown(() => proxy.close());
  const token = await login(proxy.url, Keypair.random());

  const none = await logout(proxy.url, {});
  t.is(none.status, 401);
  t.is(problemOf(none).code, 'unauthorized');
  t.regex(String(none.headers['www-authenticate']), /^Bearer/);
  for (const header of ['Bearer', 'Bearer x.y', `Basic ${token}`, `Bearer ${token}x`]) {
    const res = await logout(proxy.url, { authorization: header });
    t.is(res.status, 401, header);
    t.is(res.headers['content-type'], 'application/problem+json', header);
    t.is(problemOf(res).code, 'unauthorized', header);
  }
  // A token of another proxy (another master key) is not this proxy's to end.
  const foreign = await new TokenService(randomBytes(32), {
    issuer: proxy.config.jwt.issuer,
    audience: proxy.config.jwt.audience,
    ttlSeconds: 3600,
  }).issue(Keypair.random().publicKey());
  t.is((await refused(t, walletApi(proxy.url, foreign).logout())).status, 401);
  // raw: the wrong method
  t.is((await rawRequest(`${proxy.url}/api/auth/logout`, { headers: bearer(token) })).status, 405);
  t.deepEqual((await agentsOf(proxy.url, token)).agents, [], 'none of that ended the token');

  const spec = jsonOf<OpenApiDocument>(await getJson(`${proxy.url}/openapi.json`));
  t.truthy(spec.paths['/api/auth/logout']?.post?.responses['401'], 'documented in OpenAPI');
});

test('revocations of expired tokens are swept; another replica sees a revocation within a second', async (t) => {
  const store = await EncryptedStore.open(mkdtempSync(join(tmpdir(), 'pp-revoked-')), randomBytes(32));
  t.teardown(() => store.close());
  const revocations = new TokenRevocations(store);
  const now = Math.floor(Date.now() / 1000);
  await revocations.revoke('old', now - 10);
  await revocations.revoke('live', now + 3600);
  t.is(await revocations.sweepExpired(now), 1);
  t.false(await revocations.isRevoked('old', now * 1000));
  t.true(await revocations.isRevoked('live', now * 1000));
  // Another process on the same store (a replica) sees a revocation within RECHECK_MS of its last look.
  const replica = new TokenRevocations(store);
  const seen = Date.now();
  t.false(await replica.isRevoked('later', seen));
  await revocations.revoke('later', now + 3600);
  t.false(await replica.isRevoked('later', seen + 10), 'its "not revoked" answer is trusted briefly');
  t.true(await replica.isRevoked('later', seen + RECHECK_MS), 'then the store is asked again');
});
