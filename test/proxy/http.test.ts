import { randomBytes } from 'node:crypto';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { SignJWT, UnsecuredJWT } from 'jose';
import { TokenService } from '../../src/proxy/auth/tokens.ts';
import { isLoopbackAddress } from '../../src/http/loopback.ts';
import type { AuthChallenge, AuthToken, Health, Liveness, PoolStats } from '../../src/api/types.ts';
import { getJson, jsonOf, type OpenApiDocument, postJson, problemOf, rawRequest } from './helpers/http.ts';
import { startTestProxy, type TestProxy } from './helpers/proxy.ts';

let proxy: TestProxy;
test.before(async () => {
  proxy = await startTestProxy();
});
test.after.always(async () => {
  await proxy?.close();
});

async function login(wallet: Keypair): Promise<string> {
  const { challenge } = jsonOf<AuthChallenge>(
    await getJson(`${proxy.url}/api/auth/challenge?publicKey=${wallet.publicKey()}`),
  );
  const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
  const res = await postJson(`${proxy.url}/api/auth/verify`, {
    publicKey: wallet.publicKey(),
    challenge,
    signature,
  });
  return jsonOf<AuthToken>(res).token;
}

test('GET /health is 503 `starting` while the pool is not connected; GET /health/live answers all along', async (t) => {
  // This proxy's ledger is a closed port: its pool routes answer 503, and so does its readiness.
  const res = await getJson(`${proxy.url}/health`);
  t.is(res.status, 503);
  const health = jsonOf<Health>(res);
  t.is(health.status, 'starting');
  t.regex(health.detail ?? '', /the pool is not connected yet/);
  t.regex(health.version, /^\d+\.\d+\.\d+/);
  t.is((await getJson(`${proxy.url}/api/pool/info`)).status, 503);
  const live = await getJson(`${proxy.url}/health/live`);
  t.is(live.status, 200);
  t.like(jsonOf<Liveness>(live), { status: 'alive', version: health.version });
});

test('GET /openapi.json documents every route from the request schemas', async (t) => {
  const res = await getJson(`${proxy.url}/openapi.json`);
  t.is(res.status, 200);
  const doc = jsonOf<OpenApiDocument>(res);
  t.is(doc.openapi, '3.1.0');
  for (const path of [
    '/health',
    '/api/auth/challenge',
    '/api/auth/verify',
    '/api/balance/{agentId}',
    '/api/pool/stats',
    '/api/pool/info',
    '/api/deposit/prepare',
    '/api/deposit/submit',
    '/api/deposit',
    '/api/withdraw',
    '/metrics',
  ]) {
    t.truthy(doc.paths[path], path);
  }
  const challenge = doc.paths['/api/auth/challenge'].get;
  t.deepEqual(
    challenge.parameters?.map((p) => `${p.in}:${p.name}`),
    ['query:publicKey'],
  );
  const verify = doc.paths['/api/auth/verify'].post;
  const bodySchema = verify.requestBody?.content['application/json'].schema;
  t.truthy(bodySchema?.$ref ?? bodySchema?.properties);
  t.truthy(verify.responses['415'] && verify.responses['413'] && verify.responses['401']);
  t.truthy(doc.components.schemas.Problem);
  const prepare = doc.paths['/api/deposit/prepare'].post;
  const prepareBody = doc.components.schemas.DepositPrepareRequest;
  t.deepEqual(prepareBody.required?.sort(), ['amount', 'publicKey']);
  t.is(prepareBody.additionalProperties, false, 'unknown fields are refused, and documented so');
  t.truthy(prepare.responses['200'] && prepare.responses['422'] && prepare.responses['502']);
  t.deepEqual(
    doc.paths['/api/deposit'].post.security,
    [{ operatorToken: [] }],
    'operator deposit: its token',
  );
  t.deepEqual(doc.paths['/api/balance/{agentId}'].get.security, [{ bearerJwt: [] }, { operatorToken: [] }]);
  t.truthy(
    doc.paths['/api/deposit'].post.responses['401'] && doc.paths['/api/deposit'].post.responses['403'],
  );
  t.truthy(doc.paths['/api/withdraw'].post.responses['409'], 'insufficient_balance documented');
  t.deepEqual(Object.keys(doc.components.schemas.PoolStats.properties ?? {}).sort(), [
    'activeAgents',
    'recentBatches',
    'servicesUsed',
    'totalTransactions',
  ]);
  // An agent's policy, freeze, tokens and record; what an agent token may not call says so.
  const policy = doc.paths['/api/agents/{agentId}/policy'];
  t.truthy(policy.get && policy.put);
  t.regex(policy.put.responses['403'].description, /forbidden_for_agent_token/);
  t.regex(policy.get.responses['403'].description, /forbidden_for_agent_token/, 'another agent');
  t.truthy(
    doc.paths['/api/agents/{agentId}/freeze'].post && doc.paths['/api/agents/{agentId}/unfreeze'].post,
  );
  t.truthy(doc.paths['/api/agents/{agentId}/tokens'].post && doc.paths['/api/agents/{agentId}/tokens'].get);
  t.truthy(doc.paths['/api/agents/{agentId}/tokens/{tokenId}'].delete);
  const exported = doc.paths['/api/agents/{agentId}/payments/export'].get;
  t.truthy(exported.responses['200'].content?.['text/csv; charset=utf-8']);
  t.truthy(exported.responses['200'].content?.['application/json']);
  t.regex(doc.paths['/api/pay'].post.responses['429'].description, /budget_exceeded.*policy_budget_30d/);
  t.regex(doc.paths['/api/pay'].post.responses['403'].description, /agent_frozen.*policy_service_denied/);
  // approvals: listed for agent tokens too, decided by the owner only; a payment's state polled by its id
  t.truthy(doc.paths['/api/pay'].post.responses['202']);
  t.truthy(doc.paths['/api/approvals'].get);
  for (const decision of ['approve', 'deny'])
    t.regex(
      doc.paths[`/api/approvals/{paymentId}/${decision}`].post.responses['409'].description,
      /approval_not_pending/,
    );
  t.regex(doc.paths['/api/approvals/{paymentId}/approve'].post.responses['403'].description, /agent_frozen/);
  t.truthy(doc.paths['/api/payments/{paymentId}'].get);
  t.truthy(doc.components.schemas.PaymentResult.properties?.expiresAt);
  // withdrawals that need the wallet: the message to sign, and the refusals of a withdrawal without it
  t.truthy(doc.paths['/api/agents/{agentId}/wallet-confirmation'].post);
  t.regex(
    doc.paths['/api/withdraw'].post.responses['403'].description,
    /policy_destination_not_allowed.*wallet_signature_required.*wallet_signature_invalid/,
  );
});

test('GET /metrics exposes Prometheus text with request counters, to the operator only', async (t) => {
  await getJson(`${proxy.url}/health/live`);
  const refused = await rawRequest(`${proxy.url}/metrics`);
  t.is(refused.status, 401, 'counts by route and status are not for the public');
  t.is(problemOf(refused).code, 'unauthorized');
  const wallet = await rawRequest(`${proxy.url}/metrics`, {
    headers: { authorization: `Bearer ${await login(Keypair.random())}` },
  });
  t.is(wallet.status, 403, 'nor for a wallet');
  t.is(
    (await rawRequest(`${proxy.url}/metrics`, { headers: { 'x-pool-operator': 'true' } })).status,
    401,
    'asking to be the operator from loopback is not enough',
  );
  const res = await rawRequest(`${proxy.url}/metrics`, { headers: proxy.operator });
  t.is(res.status, 200);
  t.regex(String(res.headers['content-type']), /text\/plain/);
  t.regex(res.text, /pool_proxy_http_requests_total\{method="GET",route="\/health\/live",status="200"\} \d+/);
});

test('unknown paths are 404 and wrong methods 405, both problem+json', async (t) => {
  const missing = await getJson(`${proxy.url}/api/nothing`);
  t.is(missing.status, 404);
  t.is(problemOf(missing).code, 'not_found');
  t.is(missing.headers['content-type'], 'application/problem+json');
  const wrong = await rawRequest(`${proxy.url}/health`, { method: 'DELETE' });
  t.is(wrong.status, 405);
  t.is(problemOf(wrong).code, 'method_not_allowed');
});

test('JSON bodies: wrong or missing content type → 415', async (t) => {
  const body = JSON.stringify({ publicKey: 'x', challenge: 'y', signature: 'z' });
  for (const headers of [
    { 'content-type': 'text/plain' },
    {},
    { 'content-type': 'application/x-www-form-urlencoded' },
    { 'content-type': 'application/json; charset=latin1' },
  ] as Record<string, string>[]) {
    const res = await rawRequest(`${proxy.url}/api/auth/verify`, { method: 'POST', headers, body });
    t.is(res.status, 415, JSON.stringify(headers));
    t.is(problemOf(res).code, 'unsupported_media_type');
  }
  const ok = await rawRequest(`${proxy.url}/api/auth/verify`, {
    method: 'POST',
    headers: { 'content-type': 'Application/JSON; charset=UTF-8' },
    body,
  });
  t.is(ok.status, 400, 'media type accepted, body then validated');
});

test('JSON bodies: oversized → 413 (declared or streamed)', async (t) => {
  const big = JSON.stringify({ publicKey: 'x', challenge: 'a'.repeat(70 * 1024), signature: 'z' });
  const declared = await postJson(`${proxy.url}/api/auth/verify`, big);
  t.is(declared.status, 413);
  t.is(problemOf(declared).code, 'payload_too_large');
  const chunked = await rawRequest(`${proxy.url}/api/auth/verify`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'transfer-encoding': 'chunked' },
    body: big,
  });
  t.is(chunked.status, 413);
  // The service stays up for the next request.
  t.is((await getJson(`${proxy.url}/health/live`)).status, 200);
});

test('JSON bodies: malformed, non-object, empty or non-UTF-8 → 400', async (t) => {
  const cases: Array<[string | Buffer, RegExp]> = [
    ['{"publicKey": ', /not valid JSON/],
    ['[1,2]', /must be a JSON object/],
    ['"text"', /must be a JSON object/],
    ['null', /must be a JSON object/],
    ['', /empty/],
    [Buffer.from([0x7b, 0xff, 0xfe, 0x7d]), /UTF-8/],
  ];
  for (const [body, detail] of cases) {
    const res = await rawRequest(`${proxy.url}/api/auth/verify`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body,
    });
    t.is(res.status, 400, String(body));
    const problem = problemOf(res);
    t.is(problem.code, 'invalid_request');
    t.regex(problem.detail, detail);
  }
});

test('protected endpoints: a valid token works; missing, malformed, tampered, expired or foreign tokens get 401', async (t) => {
  const wallet = Keypair.random();
  const token = await login(wallet);
  const url = `${proxy.url}/api/agents`;
  const ok = await getJson(url, { authorization: `Bearer ${token}` });
  t.is(ok.status, 200, ok.text);
  t.deepEqual(ok.json, { agents: [] });

  const settings = {
    issuer: proxy.config.jwt.issuer,
    audience: proxy.config.jwt.audience,
    ttlSeconds: 86400,
  };
  const sameKey = new TokenService(proxy.masterKey, settings);
  const expired = await sameKey.issue(wallet.publicKey(), new Date(Date.now() - 2 * 86400_000));
  const otherIssuer = await new TokenService(proxy.masterKey, {
    ...settings,
    issuer: 'https://other.example',
  }).issue(wallet.publicKey());
  const otherAudience = await new TokenService(proxy.masterKey, {
    ...settings,
    audience: 'https://other.example/api',
  }).issue(wallet.publicKey());
  const otherKey = await new TokenService(randomBytes(32), settings).issue(wallet.publicKey());
  const [h, p, s] = token.split('.');
  const payload = JSON.parse(Buffer.from(p, 'base64url').toString());
  const tamperedPayload = Buffer.from(
    JSON.stringify({ ...payload, sub: Keypair.random().publicKey() }),
  ).toString('base64url');
  const unsecured = new UnsecuredJWT({ sub: wallet.publicKey() })
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setExpirationTime('1h')
    .encode();
  const hs256 = await new SignJWT({ sub: wallet.publicKey(), jti: 'x' })
    .setProtectedHeader({ alg: 'HS256' })
    .setIssuer(settings.issuer)
    .setAudience(settings.audience)
    .setIssuedAt()
    .setExpirationTime('1h')
    .sign(randomBytes(32));

  const cases: Array<[Record<string, string>, RegExp]> = [
    [{}, /missing Authorization/],
    [{ authorization: token }, /must be "Bearer <token>"/],
    [{ authorization: `Basic ${token}` }, /must be "Bearer <token>"/],
    [{ authorization: `Bearer ${h}.${tamperedPayload}.${s}` }, /signature is not valid/],
    [{ authorization: `Bearer ${h}.${p}.${s.slice(0, -4)}AAAA` }, /signature is not valid|malformed/],
    [{ authorization: `Bearer ${expired}` }, /expired/],
    [{ authorization: `Bearer ${otherIssuer}` }, /claim "iss"/],
    [{ authorization: `Bearer ${otherAudience}` }, /claim "aud"/],
    [{ authorization: `Bearer ${otherKey}` }, /signature is not valid/],
    [{ authorization: `Bearer ${unsecured}` }, /must be "Bearer <jwt>"|algorithm|malformed/],
    [{ authorization: `Bearer ${hs256}` }, /algorithm is not allowed/],
  ];
  for (const [headers, detail] of cases) {
    const res = await getJson(url, headers);
    t.is(res.status, 401, JSON.stringify(headers));
    const problem = problemOf(res);
    t.is(problem.code, 'unauthorized');
    t.regex(problem.detail, detail);
    t.is(problem.balance, undefined);
  }
});

test('balance path parameter must be a valid agentId', async (t) => {
  const wallet = Keypair.random();
  const token = await login(wallet);
  const res = await getJson(`${proxy.url}/api/balance/${'x'.repeat(65)}`, {
    authorization: `Bearer ${token}`,
  });
  t.is(res.status, 400);
  t.is(problemOf(res).errors?.[0]?.path, 'agentId');
  const bad = await getJson(`${proxy.url}/api/balance/a%20b`, { authorization: `Bearer ${token}` });
  t.is(bad.status, 400);
});

test('GET /api/pool/stats holds aggregates only', async (t) => {
  const res = await getJson(`${proxy.url}/api/pool/stats`);
  t.is(res.status, 200);
  const stats = jsonOf<PoolStats>(res);
  t.deepEqual(Object.keys(stats).sort(), [
    'activeAgents',
    'recentBatches',
    'servicesUsed',
    'totalTransactions',
  ]);
  t.is(typeof stats.activeAgents, 'number');
  t.true(Array.isArray(stats.recentBatches));
});

test('per-IP rate limit answers 429 with Retry-After; X-Forwarded-For does not reset it', async (t) => {
  const limited = await startTestProxy({
    POOL_PROXY_RATE_LIMIT_IP_PER_SECOND: '0.01',
    POOL_PROXY_RATE_LIMIT_IP_BURST: '3',
  });
  try {
    const statuses: number[] = [];
    for (let i = 0; i < 3; i++) statuses.push((await getJson(`${limited.url}/health/live`)).status);
    const refused = await getJson(`${limited.url}/health/live`, { 'x-forwarded-for': '203.0.113.7' });
    t.deepEqual(statuses, [200, 200, 200]);
    t.is(refused.status, 429);
    t.is(problemOf(refused).code, 'rate_limited');
    t.true(Number(refused.headers['retry-after']) >= 1);
  } finally {
    await limited.close();
  }
});

test('behind trusted proxies the client is the X-Forwarded-For address they name; nobody else can choose it', async (t) => {
  const limited = await startTestProxy({
    POOL_PROXY_RATE_LIMIT_IP_PER_SECOND: '0.01',
    POOL_PROXY_RATE_LIMIT_IP_BURST: '2',
    POOL_PROXY_TRUSTED_PROXIES: '127.0.0.2, 10.9.0.0/16',
  });
  try {
    const from = (localAddress: string, forwardedFor?: string) =>
      rawRequest(`${limited.url}/health/live`, {
        localAddress,
        headers: forwardedFor === undefined ? {} : { 'x-forwarded-for': forwardedFor },
      }).then((r) => r.status);
    // Through the trusted proxy (127.0.0.2), each client has its own bucket of 2; a trusted hop in the chain is
    // skipped, and the address the untrusted part of the chain names last is the client.
    t.deepEqual(
      [
        await from('127.0.0.2', '198.51.100.1'),
        await from('127.0.0.2', '198.51.100.1'),
        await from('127.0.0.2', '203.0.113.1, 198.51.100.1, 10.9.1.1'),
        await from('127.0.0.2', '198.51.100.2'),
      ],
      [200, 200, 429, 200],
    );
    // From anywhere else, X-Forwarded-For is ignored: the socket address is the client.
    t.deepEqual(
      [
        await from('127.0.0.3', '198.51.100.3'),
        await from('127.0.0.3', '198.51.100.4'),
        await from('127.0.0.3', '198.51.100.5'),
      ],
      [200, 200, 429],
    );
  } finally {
    await limited.close();
  }
});

test('POOL_PROXY_OPERATOR_LOOPBACK (single-host development): loopback callers act as the operator unless relayed', async (t) => {
  const local = await startTestProxy({
    POOL_PROXY_OPERATOR_LOOPBACK: 'true',
    POOL_PROXY_TRUSTED_PROXIES: '127.0.0.2',
  });
  try {
    const get = (path: string, headers: Record<string, string> = {}, localAddress = '127.0.0.1') =>
      rawRequest(`${local.url}${path}`, { headers, localAddress }).then((r) => r.status);
    t.is(await get('/metrics'), 200, 'a loopback caller without the token');
    t.is(
      await get('/api/balance/nobody', { 'x-pool-operator': 'true' }),
      404,
      'acts for the operator’s agents',
    );
    t.is(await get('/api/balance/nobody'), 401, 'only when it says so');
    // A request that names a client behind its sender was relayed: a reverse proxy on this host is no operator.
    t.is(await get('/metrics', { 'x-forwarded-for': '203.0.113.9' }), 401);
    t.is(await get('/metrics', { forwarded: 'for=203.0.113.9' }), 401);
    // A trusted proxy's request is judged by the client it names.
    t.is(await get('/metrics', { 'x-forwarded-for': '203.0.113.9' }, '127.0.0.2'), 401);
    t.is(await get('/metrics', { 'x-forwarded-for': '127.0.0.1' }, '127.0.0.2'), 200);
    t.is(await get('/metrics', { 'x-forwarded-for': '127.0.0.3, 127.0.0.1' }, '127.0.0.2'), 200);
    // Anything but a plain X-Forwarded-For from the trusted proxy names a client it cannot know: no operator,
    // whatever the socket is (each of these made the caller the operator before).
    const untrustworthy: Array<Record<string, string>> = [
      { 'x-real-ip': '203.0.113.9' },
      { forwarded: 'for=203.0.113.9' },
      { via: '1.1 edge' },
      { 'x-forwarded-for': '203.0.113.9:4711' },
      { 'x-forwarded-for': 'unknown' },
      { 'x-forwarded-for': '[2001:db8::9]' },
      { 'x-forwarded-for': '127.0.0.1, ' },
      { 'x-forwarded-for': '127.0.0.1', 'x-real-ip': '203.0.113.9' },
      { 'x-forwarded-for': '127.0.0.1', via: '1.1 edge' },
    ];
    for (const relayed of untrustworthy)
      t.is(await get('/metrics', relayed, '127.0.0.2'), 401, JSON.stringify(relayed));
    const sameHost: Array<Record<string, string>> = [{ 'x-real-ip': '127.0.0.1' }, { via: '1.1 localhost' }];
    for (const relayed of sameHost) t.is(await get('/metrics', relayed), 401, JSON.stringify(relayed));
  } finally {
    await local.close();
  }
});

test('per-token rate limit applies to a wallet across requests', async (t) => {
  const limited = await startTestProxy({
    POOL_PROXY_RATE_LIMIT_TOKEN_PER_SECOND: '0.01',
    POOL_PROXY_RATE_LIMIT_TOKEN_BURST: '2',
  });
  try {
    const wallet = Keypair.random();
    const { challenge } = jsonOf<AuthChallenge>(
      await getJson(`${limited.url}/api/auth/challenge?publicKey=${wallet.publicKey()}`),
    );
    const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
    const tok = jsonOf<AuthToken>(
      await postJson(`${limited.url}/api/auth/verify`, {
        publicKey: wallet.publicKey(),
        challenge,
        signature,
      }),
    );
    const headers = { authorization: `Bearer ${tok.token}` };
    const url = `${limited.url}/api/agents`;
    const statuses = [];
    for (let i = 0; i < 3; i++) statuses.push((await getJson(url, headers)).status);
    t.deepEqual(statuses, [200, 200, 429]);
    t.is((await getJson(`${limited.url}/health/live`)).status, 200, 'other callers unaffected');
  } finally {
    await limited.close();
  }
});

test('loopback rule: only 127.0.0.0/8 and ::1 (incl. IPv4-mapped) count as local', (t) => {
  for (const local of ['127.0.0.1', '127.1.2.3', '::1', '::ffff:127.0.0.1', '0:0:0:0:0:0:0:1'])
    t.true(isLoopbackAddress(local), local);
  for (const remote of [
    '10.0.0.1',
    '192.168.1.10',
    '203.0.113.7',
    '0.0.0.0',
    '::',
    '::2',
    '::ffff:10.0.0.1',
    '::ffff:192.168.0.1',
    'fe80::1',
    '2001:db8::1',
    '128.0.0.1',
    '127.0.0.1.evil',
    'localhost',
    '',
    undefined,
  ]) {
    t.false(isLoopbackAddress(remote), String(remote));
  }
});
