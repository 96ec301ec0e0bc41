// MCP authorization's grants on a real stack (sandbox ledger, native prover, proxy), as an attacker would try
// them: the owner approves a client for an agent through the consent API (what the wallet page calls), the
// client exchanges its code with its PKCE verifier, and every way to get or keep a token it should not have is
// refused with nothing issued — a code used twice (which also ends what the first use gave), a missing or wrong
// verifier, another resource, another client's code, another owner's agent, a rotated refresh token presented
// again, a client's agent token used to consent — and the owner's revoke (REST, as the page does) or the
// client's own (RFC 7009) ends the connection.
import { createHash, randomBytes } from 'node:crypto';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import type { PoolApi } from '../../src/api/client.ts';
import { PoolApiError } from '../../src/api/client.ts';
import { postJson, rawRequest, type RawResponse } from '../proxy/helpers/http.ts';
import { type Stack, startStack } from '../proxy/helpers/stack.ts';
import { walletDeposit } from '../proxy/helpers/wallet-deposit.ts';

const AGENT = 'oauth-agent';
const OTHERS_AGENT = 'someone-elses-agent';
const REDIRECT = 'http://127.0.0.1:43112/callback';
let stack: Stack;
let url: string;
let resource: string;
let owner: PoolApi;
let clientId: string;
let otherClientId: string;

interface Tokens {
  access_token: string;
  refresh_token: string;
  expires_in: number;
  token_type: string;
}

async function register(name: string): Promise<string> {
  const res = await postJson(`${url}/oauth/register`, {
    client_name: name,
    redirect_uris: [REDIRECT],
    token_endpoint_auth_method: 'none',
    grant_types: ['authorization_code', 'refresh_token'],
    response_types: ['code'],
  });
  if (res.status !== 201) throw new Error(`register: ${res.text}`);
  return (res.json as { client_id: string }).client_id;
}

test.before(async () => {
  stack = await startStack();
  url = stack.proxy.url;
  resource = `${stack.config.publicUrl}/mcp`;
  const wallet = Keypair.random();
  const other = Keypair.random();
  await Promise.all([stack.fund(wallet.publicKey(), 20), stack.fund(other.publicKey(), 20)]);
  owner = await stack.walletApi(wallet);
  const networkPassphrase = stack.config.ledger.networkPassphrase;
  await walletDeposit({ api: owner, wallet, networkPassphrase, agentId: AGENT, amount: '3' });
  const otherApi = await stack.walletApi(other);
  await walletDeposit({
    api: otherApi,
    wallet: other,
    networkPassphrase,
    agentId: OTHERS_AGENT,
    amount: '1',
  });
  clientId = await register('Grant test client');
  otherClientId = await register('Another client');
});
test.after.always(async () => {
  await stack?.close();
});

function pkce() {
  const verifier = randomBytes(32).toString('base64url');
  return { verifier, challenge: createHash('sha256').update(verifier).digest('base64url') };
}

/** An authorization request of `client` as far as the consent page: its request id. */
async function requestConsent(challenge: string, client = clientId): Promise<string> {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    state: 'xyz',
    resource,
  });
  const res = await rawRequest(`${url}/oauth/authorize?${query}`);
  if (res.status !== 302) throw new Error(`authorize: ${res.status} ${res.text}`);
  return new URL(String(res.headers.location)).searchParams.get('oauth')!;
}

/** The owner approves on the consent API; the code the client's redirect URI receives. */
async function approvedCode(challenge: string, client = clientId): Promise<string> {
  const { redirectTo } = await owner.approveOAuthRequest(await requestConsent(challenge, client), {
    agentId: AGENT,
  });
  const back = new URL(redirectTo);
  if (back.origin + back.pathname !== REDIRECT || back.searchParams.get('state') !== 'xyz')
    throw new Error(`unexpected redirect ${redirectTo}`);
  return back.searchParams.get('code')!;
}

function tokenRequest(params: Record<string, string>): Promise<RawResponse> {
  return rawRequest(`${url}/oauth/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams(params).toString(),
  });
}

const exchange = (code: string, verifier: string, extra: Record<string, string> = {}) =>
  tokenRequest({
    grant_type: 'authorization_code',
    client_id: clientId,
    code,
    code_verifier: verifier,
    redirect_uri: REDIRECT,
    resource,
    ...extra,
  });
const refresh = (token: string, extra: Record<string, string> = {}) =>
  tokenRequest({
    grant_type: 'refresh_token',
    client_id: clientId,
    refresh_token: token,
    resource,
    ...extra,
  });

function tokensOf(res: RawResponse): Tokens {
  if (res.status !== 200) throw new Error(`token: ${res.status} ${res.text}`);
  return res.json as Tokens;
}

function oauthError(res: RawResponse): string {
  return `${res.status} ${(res.json as { error?: string } | undefined)?.error}`;
}

/** pool_balance over /mcp with `token`: the agent's balance, or the HTTP status of the refusal. */
async function balanceAtMcp(token: string): Promise<string> {
  const res = await postJson(
    `${url}/mcp`,
    { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'pool_balance', arguments: {} } },
    { accept: 'application/json, text/event-stream', authorization: `Bearer ${token}` },
  );
  if (res.status !== 200) return `http ${res.status}`;
  const result = (res.json as { result: { structuredContent?: { balance: string; agentId: string } } })
    .result;
  return `${result.structuredContent?.agentId} ${result.structuredContent?.balance}`;
}

function claimsOf(jwt: string): { aud: string[]; agt: string; jti: string } {
  return JSON.parse(Buffer.from(jwt.split('.')[1] ?? '', 'base64url').toString()) as {
    aud: string[];
    agt: string;
    jti: string;
  };
}

async function liveGrants(): Promise<string[]> {
  return (await owner.agentTokens(AGENT)).tokens.filter((t) => t.client !== undefined).map((t) => t.tokenId);
}

test.serial(
  'a code gives an agent token bound to /mcp, listed with the agent’s tokens; refresh rotates',
  async (t) => {
    const { verifier, challenge } = pkce();
    const tokens = tokensOf(await exchange(await approvedCode(challenge), verifier));
    t.is(tokens.token_type, 'Bearer');
    t.true(tokens.expires_in > 0 && tokens.expires_in <= 3600);
    t.regex(tokens.refresh_token, /^ppr_/);
    t.is(await balanceAtMcp(tokens.access_token), `${AGENT} 3.0000000`);
    const audience = claimsOf(tokens.access_token);
    t.true(audience.aud.includes(resource), 'the token names its resource');
    t.is(audience.agt, AGENT);
    const listed = (await owner.agentTokens(AGENT)).tokens.find((x) => x.client?.clientId === clientId);
    t.is(listed?.client?.name, 'Grant test client');

    const renewed = tokensOf(await refresh(tokens.refresh_token));
    t.not(renewed.refresh_token, tokens.refresh_token);
    t.is(await balanceAtMcp(renewed.access_token), `${AGENT} 3.0000000`);
    // The rotated refresh token presented again (a thief's copy): refused, and the connection ends for both.
    t.is(oauthError(await refresh(tokens.refresh_token)), '400 invalid_grant');
    t.is(await balanceAtMcp(renewed.access_token), 'http 401');
    t.is(oauthError(await refresh(renewed.refresh_token)), '400 invalid_grant');
    t.false((await liveGrants()).includes(listed!.tokenId));
  },
);

test.serial('a code used twice is refused, and what its first use gave is revoked', async (t) => {
  const { verifier, challenge } = pkce();
  const code = await approvedCode(challenge);
  const first = tokensOf(await exchange(code, verifier));
  t.is(await balanceAtMcp(first.access_token), `${AGENT} 3.0000000`);
  t.is(oauthError(await exchange(code, verifier)), '400 invalid_grant');
  t.is(await balanceAtMcp(first.access_token), 'http 401');
  t.is(oauthError(await refresh(first.refresh_token)), '400 invalid_grant');
});

test.serial(
  'a missing or wrong PKCE verifier, another resource or another client gets nothing',
  async (t) => {
    const { verifier, challenge } = pkce();
    const code = await approvedCode(challenge);
    const before = await liveGrants();
    t.is(
      oauthError(await tokenRequest({ grant_type: 'authorization_code', client_id: clientId, code })),
      '400 invalid_request',
    );
    t.is(oauthError(await exchange(code, pkce().verifier)), '400 invalid_grant');
    t.is(
      oauthError(await exchange(code, challenge)),
      '400 invalid_grant',
      'the challenge itself (plain) is no verifier',
    );
    t.is(
      oauthError(await exchange(code, verifier, { resource: 'https://other.example/mcp' })),
      '400 invalid_target',
    );
    t.is(oauthError(await exchange(code, verifier, { client_id: otherClientId })), '400 invalid_grant');
    t.is(
      oauthError(await exchange(code, verifier, { redirect_uri: 'http://127.0.0.1:43112/other' })),
      '400 invalid_grant',
    );
    t.deepEqual(await liveGrants(), before, 'nothing was issued');
    // The code is still the client's, with its own verifier, for this resource.
    const tokens = tokensOf(await exchange(code, verifier));
    t.is(await balanceAtMcp(tokens.access_token), `${AGENT} 3.0000000`);
    // A refresh for another resource is refused too.
    t.is(
      oauthError(await refresh(tokens.refresh_token, { resource: 'https://other.example/mcp' })),
      '400 invalid_target',
    );
  },
);

test.serial(
  'an owner cannot approve a client for another owner’s agent; the request stays open',
  async (t) => {
    const { challenge } = pkce();
    const requestId = await requestConsent(challenge);
    const refused = await t.throwsAsync(
      () => owner.approveOAuthRequest(requestId, { agentId: OTHERS_AGENT }),
      {
        instanceOf: PoolApiError,
      },
    );
    t.is(refused?.status, 404);
    t.is(refused?.code, 'not_found');
    t.is((await owner.oauthRequest(requestId)).requestId, requestId);
    // A client's own agent token cannot consent for it (or for any other client).
    const a = pkce();
    const agentToken = tokensOf(await exchange(await approvedCode(a.challenge), a.verifier)).access_token;
    const asAgent = owner.as({ kind: 'wallet', token: agentToken });
    const forbidden = await t.throwsAsync(() => asAgent.approveOAuthRequest(requestId, { agentId: AGENT }), {
      instanceOf: PoolApiError,
    });
    t.is(forbidden?.code, 'forbidden_for_agent_token');
    // Approved once, a request cannot be approved again.
    await owner.approveOAuthRequest(requestId, { agentId: AGENT });
    const again = await t.throwsAsync(() => owner.approveOAuthRequest(requestId, { agentId: AGENT }), {
      instanceOf: PoolApiError,
    });
    t.is(again?.status, 404);
  },
);

test.serial('the owner’s revoke and the client’s own revocation end the connection', async (t) => {
  const a = pkce();
  const byOwner = tokensOf(await exchange(await approvedCode(a.challenge), a.verifier));
  // The token's jti is its connection's id, the one the owner's list shows and revokes.
  const { jti } = claimsOf(byOwner.access_token);
  t.true((await liveGrants()).includes(jti));
  await owner.revokeAgentToken(AGENT, jti);
  t.is(await balanceAtMcp(byOwner.access_token), 'http 401');
  t.is(oauthError(await refresh(byOwner.refresh_token)), '400 invalid_grant');

  const b = pkce();
  const byClient = tokensOf(await exchange(await approvedCode(b.challenge), b.verifier));
  const revoke = await rawRequest(`${url}/oauth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ client_id: clientId, token: byClient.refresh_token }).toString(),
  });
  t.is(revoke.status, 200, revoke.text);
  t.is(await balanceAtMcp(byClient.access_token), 'http 401');
  t.is(oauthError(await refresh(byClient.refresh_token)), '400 invalid_grant');
});
