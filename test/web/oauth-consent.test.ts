// An MCP client connects to `pool-proxy start`'s /mcp from its URL alone: the MCP SDK's own Client, with an OAuth
// client provider, discovers the proxy's authorization server, registers, and sends its user to the consent
// view of the wallet page, which headless Chromium drives with a Freighter stand-in (connect, SEP-53 login,
// choose the agent, tighten its cap, approve). The client's redirect URI (a loopback server of this test)
// receives the code; the SDK exchanges it with its PKCE verifier, calls pool_balance and pool_pay, refreshes its
// token; then the owner revokes the connection on the page and the client's next tool call is refused. At
// 390 px the owner refuses another request and the client is told `access_denied`. WEB_SCREENSHOTS=<folder>
// saves the consent view's screenshots (docs/screenshots).
import anyTest, { type TestFn } from 'ava';
import { once } from 'node:events';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { auth, type OAuthClientProvider, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  OAuthClientInformationMixed,
  OAuthClientMetadata,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import type { Browser, Page } from 'playwright-core';
import { Keypair } from '#stellar-sdk';
import { buildWeb } from '../../scripts/build-web.ts';
import { PoolApi } from '../../src/api/client.ts';
import { loginWallet } from '../mcp/helpers.ts';
import { walletDeposit } from '../proxy/helpers/wallet-deposit.ts';
import { launchChromium } from './helpers/browser.ts';
import { installFreighter } from './helpers/freighter-stand-in.ts';
import { type RunningService, startService } from './helpers/pool-proxy-start.ts';

interface Callback {
  server: Server;
  url: string;
  /** The query of the next request to the redirect URI. */
  next(): Promise<URLSearchParams>;
}
const test = anyTest as TestFn<{ service: RunningService; browser: Browser; callback: Callback }>;
const AGENT = 'claude-agent';
const CONFIRM_MS = 180_000;

/** The client's redirect URI: a loopback server that hands each request's query to the test. */
async function startCallback(): Promise<Callback> {
  const waiting: ((query: URLSearchParams) => void)[] = [];
  const server = createServer((req, res) => {
    const query = new URL(req.url ?? '/', 'http://127.0.0.1').searchParams;
    res.writeHead(200, { 'content-type': 'text/plain' }).end('You can close this window.');
    waiting.shift()?.(query);
  });
  server.listen(0, '127.0.0.1');
  await once(server, 'listening');
  const { port } = server.address() as AddressInfo;
  return {
    server,
    url: `http://127.0.0.1:${port}/callback`,
    next: () => new Promise((resolve) => waiting.push(resolve)),
  };
}

/** What an MCP client keeps: its registration, tokens and PKCE verifier (in memory, as a test client may). */
class TestClientProvider implements OAuthClientProvider {
  readonly #redirect: string;
  #client?: OAuthClientInformationMixed;
  #tokens?: OAuthTokens;
  #verifier = '';
  /** Where the SDK sent the user last. */
  authorizationUrl?: URL;

  constructor(redirect: string) {
    this.#redirect = redirect;
  }
  get redirectUrl() {
    return this.#redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: 'Claude test client',
      redirect_uris: [this.#redirect],
      grant_types: ['authorization_code', 'refresh_token'],
      response_types: ['code'],
      token_endpoint_auth_method: 'none',
    };
  }
  clientInformation() {
    return this.#client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.#client = info;
  }
  tokens() {
    return this.#tokens;
  }
  saveTokens(tokens: OAuthTokens) {
    this.#tokens = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.#verifier = verifier;
  }
  codeVerifier() {
    return this.#verifier;
  }
}

test.before(async (t) => {
  await buildWeb();
  const [service, browser, callback] = await Promise.all([startService(), launchChromium(), startCallback()]);
  t.context = { service, browser, callback };
});
test.after.always(async (t) => {
  await t.context.browser?.close();
  t.context.callback?.server.close();
  await t.context.service?.stop();
});

/** A wallet with a deposited agent (through the REST API, as the page deposits). */
async function ownerWithAgent(service: RunningService): Promise<Keypair> {
  const owner = Keypair.random();
  await service.fund(owner.publicKey(), 50);
  const api = new PoolApi({ baseUrl: service.proxyUrl }).as({
    kind: 'wallet',
    token: await loginWallet(service.proxyUrl, owner),
  });
  await walletDeposit({
    api,
    wallet: owner,
    networkPassphrase: service.networkPassphrase,
    agentId: AGENT,
    amount: '5',
  });
  return owner;
}

async function connectClient(service: RunningService, provider: TestClientProvider): Promise<Client> {
  const client = new Client({ name: 'oauth-e2e', version: '1.0.0' });
  await client.connect(
    new StreamableHTTPClientTransport(new URL('/mcp', service.proxyUrl), { authProvider: provider }),
  );
  return client;
}

async function callTool(client: Client, name: string, args: Record<string, unknown> = {}) {
  return (await client.callTool({ name, arguments: args }, undefined, {
    timeout: CONFIRM_MS,
  })) as CallToolResult;
}

/**
 * Opens `url` in a new page whose Freighter is `owner`, connects and logs in; for an authorization URL (which
 * the proxy redirects to the consent view) waits for the request's details and the chosen agent's limits.
 */
async function consentAs(browser: Browser, service: RunningService, owner: Keypair, url: URL, width: number) {
  // An authorization URL leads (through the proxy's redirect) to the consent view.
  const consent = url.pathname === '/oauth/authorize';
  const context = await browser.newContext({ viewport: { width, height: 900 } });
  await installFreighter(context, owner, service.networkPassphrase, service.rpcUrl);
  const page = await context.newPage();
  const errors: string[] = [];
  page.on('pageerror', (e) => errors.push(e.message));
  await page.goto(url.href);
  if (consent) await page.locator('#consent-intro').filter({ hasText: 'log in' }).waitFor();
  await page.getByRole('button', { name: 'Connect Freighter' }).click();
  await page.getByRole('button', { name: 'Log in' }).click();
  await page
    .locator('#session')
    .filter({ hasText: /^Logged in$/ })
    .waitFor();
  if (consent) {
    await page.locator('#consent-details').waitFor();
    await page.locator(`#consent-form[data-agent="${AGENT}"]`).waitFor({ state: 'attached' });
  } else await page.locator(`#manage-agent option[value="${AGENT}"]`).waitFor({ state: 'attached' });
  return { page, errors, close: () => context.close() };
}

async function screenshot(page: Page, name: string): Promise<void> {
  const folder = process.env.WEB_SCREENSHOTS;
  if (folder) await page.locator('#consent').screenshot({ path: join(folder, `${name}.png`) });
}

test.serial(
  'an MCP client connects from the URL alone, pays, refreshes, and is cut off by the owner',
  async (t) => {
    const { service, browser, callback } = t.context;
    const owner = await ownerWithAgent(service);
    const provider = new TestClientProvider(callback.url);

    // From the URL alone: 401 → metadata → registration → the authorization URL, where the user is sent.
    await t.throwsAsync(connectClient(service, provider), { instanceOf: UnauthorizedError });
    const authorizationUrl = provider.authorizationUrl!;
    t.is(authorizationUrl.origin, service.proxyUrl);
    t.is(authorizationUrl.searchParams.get('code_challenge_method'), 'S256');
    t.is(authorizationUrl.searchParams.get('resource'), `${service.proxyUrl}/mcp`);

    const { page, errors, close } = await consentAs(browser, service, owner, authorizationUrl, 1280);
    t.is(await page.locator('#consent-client').textContent(), 'Claude test client');
    t.true(await page.locator('#consent-unverified').isVisible());
    t.is(await page.locator('#consent-redirect').textContent(), new URL(callback.url).host);
    t.is(await page.locator('#consent-agent').inputValue(), AGENT);
    await page.locator('#consent-cap').fill('0.5');
    await screenshot(page, 'consent-1280');
    const redirected = callback.next();
    await page.getByRole('button', { name: 'Approve' }).click();
    const query = await redirected;
    t.truthy(query.get('code'));
    t.is(query.get('iss'), `${service.proxyUrl}/`);
    t.deepEqual(errors, []);
    await close();

    // The SDK exchanges the code (PKCE) and calls tools with the agent token it got.
    await auth(provider, {
      serverUrl: new URL('/mcp', service.proxyUrl),
      authorizationCode: query.get('code')!,
    });
    const client = await connectClient(service, provider);
    const tools = (await client.listTools()).tools.map((tool) => tool.name).sort();
    t.deepEqual(tools, ['pool_balance', 'pool_pay', 'pool_policy', 'pool_stats']);
    t.like((await callTool(client, 'pool_balance')).structuredContent, {
      agentId: AGENT,
      balance: '5.0000000',
    });
    t.like((await callTool(client, 'pool_policy')).structuredContent, { perPaymentCap: '0.5000000' });
    const info = (await (await fetch(`${service.proxyUrl}/api/pool/info`)).json()) as {
      payments: { demoServiceUrl: string };
    };
    const paid = await callTool(client, 'pool_pay', { url: info.payments.demoServiceUrl });
    t.falsy(paid.isError, JSON.stringify(paid.content));
    t.like(paid.structuredContent, { paymentStatus: 'confirmed' });

    // Refresh: a new access token and a new refresh token; the tools answer with them.
    const before = provider.tokens()!;
    t.is(await auth(provider, { serverUrl: new URL('/mcp', service.proxyUrl) }), 'AUTHORIZED');
    const after = provider.tokens()!;
    t.not(after.access_token, before.access_token);
    t.not(after.refresh_token, before.refresh_token);
    t.like((await callTool(client, 'pool_balance')).structuredContent, { agentId: AGENT });

    // The owner revokes the connection on the page (listed with the agent's tokens, by the client's name).
    const owned = await consentAs(browser, service, owner, new URL(service.proxyUrl), 1280);
    await owned.page.locator('#manage-agent').selectOption(AGENT);
    const row = owned.page.locator('#tokens-list li').filter({ hasText: 'Claude test client' });
    await row.waitFor();
    await row.getByRole('button', { name: /^Revoke token / }).click();
    await owned.page.locator('#tokens-status').filter({ hasText: 'revoked' }).waitFor();
    await owned.close();
    // The next call is refused: the access token is revoked, and so is the refresh token the SDK then tries.
    await t.throwsAsync(callTool(client, 'pool_balance'));
    const direct = await fetch(`${service.proxyUrl}/mcp`, {
      method: 'POST',
      headers: {
        authorization: `Bearer ${after.access_token}`,
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    });
    t.is(direct.status, 401);
    const refreshed = await fetch(`${service.proxyUrl}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({
        grant_type: 'refresh_token',
        client_id: String(provider.clientInformation()?.client_id),
        refresh_token: String(after.refresh_token),
      }),
    });
    t.is(refreshed.status, 400);
    await client.close();
  },
);

test.serial(
  'at 390 px the owner refuses, and the client is told access_denied with nothing issued',
  async (t) => {
    const { service, browser, callback } = t.context;
    const owner = await ownerWithAgent(service);
    const provider = new TestClientProvider(callback.url);
    await t.throwsAsync(connectClient(service, provider), { instanceOf: UnauthorizedError });
    const { page, errors, close } = await consentAs(browser, service, owner, provider.authorizationUrl!, 390);
    const overflow = await page.evaluate(
      () => document.documentElement.scrollWidth > document.documentElement.clientWidth,
    );
    t.false(overflow, 'the consent view fits 390 px');
    // Loosening is not offered here: a higher cap than the agent has is refused on the page.
    await page.locator('#consent-cap').fill('0.5');
    await screenshot(page, 'consent-390');
    const redirected = callback.next();
    await page.getByRole('button', { name: 'Refuse' }).click();
    const query = await redirected;
    t.is(query.get('error'), 'access_denied');
    t.is(query.get('code'), null);
    t.deepEqual(errors, []);
    await close();
    t.is(provider.tokens(), undefined);
  },
);
