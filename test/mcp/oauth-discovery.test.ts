// MCP authorization's first steps on a real proxy over loopback HTTP, before any agent exists: /mcp's 401 names
// the protected resource metadata, which names this proxy as the authorization server, whose metadata the
// MCP SDK's client discovery functions read; registration refuses redirect URIs an attacker could use; the
// authorize endpoint refuses an unregistered redirect URI, a missing or `plain` PKCE challenge and another
// resource without ever reaching the consent page; and the consent API answers only a logged-in wallet.
import {
  discoverAuthorizationServerMetadata,
  discoverOAuthProtectedResourceMetadata,
  registerClient,
} from '@modelcontextprotocol/sdk/client/auth.js';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { PoolApi, PoolApiError } from '../../src/api/client.ts';
import { postJson, rawRequest } from '../proxy/helpers/http.ts';
import { startTestProxy, type TestProxy } from '../proxy/helpers/proxy.ts';
import { loginWallet } from './helpers.ts';

const PUBLIC = 'http://proxy.test:8080';
let proxy: TestProxy;
let client: OAuthClientInformationFull;
const REDIRECT = 'http://127.0.0.1:43111/callback';
const CHALLENGE = 'E9Melhoa2OwvFrEMTJguCHaoeK1t8URWbuGJSstw-cM';

/** The proxy answers at its socket; its public URL (what every document names) is another origin. */
const local = (url: string) => url.replace(PUBLIC, proxy.url);
const viaSocket: typeof fetch = (input, init) =>
  fetch(local(input instanceof Request ? input.url : String(input)), init);

test.before(async () => {
  proxy = await startTestProxy();
  const metadata = await discoverAuthorizationServerMetadata(PUBLIC, { fetchFn: viaSocket });
  client = await registerClient(PUBLIC, {
    metadata,
    clientMetadata: {
      client_name: 'Discovery test',
      redirect_uris: [REDIRECT],
      token_endpoint_auth_method: 'none',
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
    },
    fetchFn: viaSocket,
  });
});
test.after.always(async () => {
  await proxy?.close();
});

test('/mcp answers 401 naming its resource metadata, which leads to the proxy’s authorization server', async (t) => {
  const res = await postJson(`${proxy.url}/mcp`, { jsonrpc: '2.0', id: 1, method: 'ping' });
  t.is(res.status, 401);
  t.is(
    res.headers['www-authenticate'],
    `Bearer resource_metadata="${PUBLIC}/.well-known/oauth-protected-resource/mcp"`,
  );
  const bad = await postJson(`${proxy.url}/mcp`, {}, { authorization: 'Bearer a.b.c' });
  t.regex(String(bad.headers['www-authenticate']), /resource_metadata=.*error="invalid_token"/);

  const resource = await discoverOAuthProtectedResourceMetadata(`${PUBLIC}/mcp`, {}, viaSocket);
  t.is(resource.resource, `${PUBLIC}/mcp`);
  t.deepEqual(resource.authorization_servers, [`${PUBLIC}/`]);
  const server = await discoverAuthorizationServerMetadata(resource.authorization_servers![0]!, {
    fetchFn: viaSocket,
  });
  t.truthy(server);
  t.deepEqual(server!.code_challenge_methods_supported, ['S256']);
  t.is(server!.authorization_endpoint, `${PUBLIC}/oauth/authorize`);
  t.is(server!.registration_endpoint, `${PUBLIC}/oauth/register`);
  t.is((server as { revocation_endpoint?: string }).revocation_endpoint, `${PUBLIC}/oauth/revoke`);
  t.deepEqual(server!.grant_types_supported, ['authorization_code', 'refresh_token']);
});

test('registration refuses a redirect URI that is neither https nor loopback http', async (t) => {
  for (const uri of ['http://attacker.example/cb', 'javascript:alert(1)', 'https://ok.example/cb#frag']) {
    const res = await postJson(`${proxy.url}/oauth/register`, { redirect_uris: [uri], client_name: 'x' });
    t.is(res.status, 400, `${uri}: ${res.text}`);
    t.is((res.json as { error: string }).error, 'invalid_client_metadata');
  }
});

function authorize(params: Record<string, string>) {
  const query = new URLSearchParams({
    response_type: 'code',
    client_id: client.client_id,
    redirect_uri: REDIRECT,
    code_challenge: CHALLENGE,
    code_challenge_method: 'S256',
    state: 'st-1',
    resource: `${PUBLIC}/mcp`,
    ...params,
  });
  for (const [name, value] of Object.entries(params)) if (value === '') query.delete(name);
  return rawRequest(`${proxy.url}/oauth/authorize?${query}`);
}

test('a well-formed authorization request goes to the consent page, with an id and nothing else', async (t) => {
  const res = await authorize({});
  t.is(res.status, 302);
  const location = new URL(String(res.headers.location));
  t.is(location.origin + location.pathname, `${PUBLIC}/`);
  t.regex(location.searchParams.get('oauth') ?? '', /^ppa_[A-Za-z0-9_-]{43}$/);
  t.deepEqual([...location.searchParams.keys()], ['oauth']);
});

test('an unregistered redirect URI is refused at the authorization server, never redirected to', async (t) => {
  for (const redirect_uri of ['http://127.0.0.1:43111/other', 'https://attacker.example/callback']) {
    const res = await authorize({ redirect_uri });
    t.is(res.status, 400, res.text);
    t.is(res.headers.location, undefined);
    t.is((res.json as { error: string }).error, 'invalid_request');
  }
  const unknown = await authorize({ client_id: 'not-a-client' });
  t.is(unknown.status, 400);
});

test('a missing or plain PKCE challenge and another resource are refused at the client, with nothing to consent to', async (t) => {
  const cases: [Record<string, string>, string][] = [
    [{ code_challenge_method: 'plain' }, 'invalid_request'],
    [{ code_challenge_method: '' }, 'invalid_request'],
    [{ code_challenge: '' }, 'invalid_request'],
    [{ resource: 'https://other.example/mcp' }, 'invalid_target'],
    [{ resource: `${PUBLIC}/api` }, 'invalid_target'],
  ];
  for (const [params, error] of cases) {
    const res = await authorize(params);
    t.is(res.status, 302, JSON.stringify(params));
    const back = new URL(String(res.headers.location));
    t.is(back.origin + back.pathname, REDIRECT, 'told at its own redirect URI');
    t.is(back.searchParams.get('error'), error, JSON.stringify(params));
    // (the SDK's handler echoes the state once the request's parameters parse)
    if (error === 'invalid_target') t.is(back.searchParams.get('state'), 'st-1');
    t.is(back.searchParams.get('code'), null);
  }
});

test('the consent API needs the wallet’s login; an unknown request is 404', async (t) => {
  const res = await authorize({});
  const requestId = new URL(String(res.headers.location)).searchParams.get('oauth')!;
  const anonymous = new PoolApi({ baseUrl: proxy.url });
  for (const call of [
    () => anonymous.oauthRequest(requestId),
    () => anonymous.approveOAuthRequest(requestId, { agentId: 'a' }),
    () => anonymous.refuseOAuthRequest(requestId),
  ]) {
    const error = await t.throwsAsync(call, { instanceOf: PoolApiError });
    t.is(error?.status, 401);
  }
  const token = await loginWallet(proxy.url, Keypair.random());
  const wallet = anonymous.as({ kind: 'wallet', token });
  const view = await wallet.oauthRequest(requestId);
  t.is(view.clientName, 'Discovery test');
  t.is(view.redirectHost, '127.0.0.1:43111');
  t.false(view.verified);
  // No agent of this wallet: approving for one answers 404 and the request stays open.
  const refused = await t.throwsAsync(() => wallet.approveOAuthRequest(requestId, { agentId: 'agent-1' }), {
    instanceOf: PoolApiError,
  });
  t.is(refused?.status, 404);
  t.is((await wallet.oauthRequest(requestId)).requestId, requestId);
  // Refusing sends the client access_denied; the request is then gone.
  const { redirectTo } = await wallet.refuseOAuthRequest(requestId);
  const back = new URL(redirectTo);
  t.is(back.searchParams.get('error'), 'access_denied');
  t.is(back.searchParams.get('state'), 'st-1');
  const gone = await t.throwsAsync(() => wallet.oauthRequest(requestId), { instanceOf: PoolApiError });
  t.is(gone?.status, 404);
});
