// Agent-scoped tokens on the real stack (sandbox ledger, prover daemon, proxy, the local x402 pair with the
// demo service at 0.01 USDC): the owner issues, lists and revokes a token for one agent; with it an agent pays
// within its policy and reads its own balance, policy and payments, over REST and over /mcp with the MCP SDK's
// own client, and is refused (403 forbidden_for_agent_token, nothing changed) everything else: withdrawals,
// wallet deposits, policy changes, freeze, tokens, other agents and wallet routes. A revoked token is refused
// everywhere, also after a restart; the operator issues tokens for its own agents the same way.
import { walletApi } from './helpers/api.ts';
import { walletDeposit as deposit } from './helpers/wallet-deposit.ts';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Keypair } from '#stellar-sdk';
import test, { type ExecutionContext } from 'ava';
import type { ProxyHandle } from '../../src/proxy/server.ts';
import { localX402Env } from '../../src/x402/local-services.ts';
import { callTool, problem, structured } from '../mcp/helpers.ts';
import { type PayStack, startPayStack } from '../mcp/pay-stack.ts';
import { getJson, postJson, rawRequest, type RawResponse } from './helpers/http.ts';

let pay: PayStack;
let proxy: ProxyHandle;
let wallet: Keypair;
let walletToken: string;
let agentToken: string;
let agentTokenId: string;
let demo: string;

const url = (path: string) => `${proxy.url}${path}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
const send = (method: string, path: string, token: string, body?: unknown): Promise<RawResponse> =>
  rawRequest(url(path), {
    method,
    headers: { ...bearer(token), ...(body !== undefined && { 'content-type': 'application/json' }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
const balanceOf = async (agentId: string) =>
  (await getJson(url(`/api/balance/${agentId}`), bearer(walletToken))).json.balance as string;

const walletDeposit = (agentId: string, amount: string) =>
  deposit({
    api: walletApi(proxy.url, walletToken),
    wallet,
    networkPassphrase: pay.stack.config.ledger.networkPassphrase,
    agentId,
    amount,
  });

async function mcpClient(token: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', proxy.url), {
    requestInit: { headers: bearer(token) },
  });
  const client = new Client({ name: 'agent-token-test', version: '1.0.0' });
  await client.connect(transport);
  return client;
}

test.before(async () => {
  pay = await startPayStack();
  proxy = pay.proxy;
  demo = pay.x402.demo.quoteUrl;
  wallet = Keypair.random();
  await pay.stack.fund(wallet.publicKey(), 5);
  walletToken = await pay.stack.login(wallet, proxy.url);
  await walletDeposit('alpha', '1');
  await walletDeposit('beta', '1');
});

test.after.always(async () => {
  await proxy?.close();
  await pay?.x402.close();
  await pay?.stack.daemon.stop({ force: true });
  await pay?.stack.sandbox.close();
});

test.serial('the owner issues and lists a token for one agent; bad requests are refused', async (t) => {
  const path = '/api/agents/alpha/tokens';
  const refusals: Array<[unknown, number]> = [
    [{ expiresInSeconds: 10 }, 400],
    [{ expiresInSeconds: 91 * 86_400 }, 400],
    [{ expiresInSeconds: '3600' }, 400],
    [{ scope: 'all' }, 400],
  ];
  for (const [body, status] of refusals) {
    const res = await send('POST', path, walletToken, body);
    t.is(res.status, status, res.text);
    t.is(res.json.code, 'invalid_request');
  }
  t.is((await send('POST', '/api/agents/nobody/tokens', walletToken, {})).status, 404);
  t.is((await rawRequest(url(path), { method: 'POST' })).status, 401);
  const other = Keypair.random();
  await pay.stack.fund(other.publicKey(), 0);
  const otherToken = await pay.stack.login(other, proxy.url);
  t.is((await send('POST', path, otherToken, {})).status, 404, 'another wallet’s agent is unknown to it');
  t.deepEqual((await send('GET', path, walletToken)).json, { tokens: [] }, 'nothing was issued');

  const issued = await send('POST', path, walletToken, { expiresInSeconds: 7 * 86_400 });
  t.is(issued.status, 200, issued.text);
  t.is(issued.json.agentId, 'alpha');
  t.regex(issued.json.tokenId, /^[0-9a-f-]{36}$/);
  t.is(Date.parse(issued.json.expiresAt) - Date.parse(issued.json.issuedAt), 7 * 86_400_000);
  agentToken = issued.json.token;
  agentTokenId = issued.json.tokenId;
  const listed = await send('GET', path, walletToken);
  t.deepEqual(listed.json.tokens, [
    {
      tokenId: agentTokenId,
      agentId: 'alpha',
      issuedAt: issued.json.issuedAt,
      expiresAt: issued.json.expiresAt,
    },
  ]);
  t.false(listed.text.includes(agentToken), 'the token itself is never shown again');
});

test.serial('an agent token pays within its policy and reads its own agent, over REST', async (t) => {
  const paid = await send('POST', '/api/pay', agentToken, { serviceUrl: demo, method: 'GET' });
  t.is(paid.status, 200, paid.text);
  t.is(paid.json.paymentStatus, 'confirmed');
  t.is(await balanceOf('alpha'), '0.9900000', 'alpha paid (the token’s agent is the default)');
  const named = await send('POST', '/api/pay', agentToken, { agentId: 'alpha', serviceUrl: demo });
  t.is(named.status, 200, named.text);
  const balance = await send('GET', '/api/balance/alpha', agentToken);
  t.is(balance.json.balance, '0.9800000');
  const policy = await send('GET', '/api/agents/alpha/policy', agentToken);
  t.is(policy.status, 200, policy.text);
  const payments = await send('GET', '/api/payments', agentToken);
  t.is(payments.json.payments.length, 2);
  t.true(payments.json.payments.every((p: { agentId: string }) => p.agentId === 'alpha'));
  // Its owner's policy binds it: a per-payment cap below the price refuses.
  const capped = await send('PUT', '/api/agents/alpha/policy', walletToken, { perPaymentCap: '0.005' });
  t.is(capped.status, 200, capped.text);
  const refused = await send('POST', '/api/pay', agentToken, { serviceUrl: demo });
  t.is(refused.json.code, 'policy_per_payment_cap');
  t.is((await send('PUT', '/api/agents/alpha/policy', walletToken, {})).status, 200);
});

test.serial('an agent token is refused everything else with 403, and nothing changes', async (t) => {
  const destination = Keypair.random().publicKey();
  const before = {
    alpha: await balanceOf('alpha'),
    beta: await balanceOf('beta'),
    policy: (await send('GET', '/api/agents/alpha/policy', walletToken)).json,
    tokens: (await send('GET', '/api/agents/alpha/tokens', walletToken)).json,
  };
  const attempts: Array<[string, string, unknown?]> = [
    ['POST', '/api/withdraw', { agentId: 'alpha', amount: '0.1', destination }],
    ['POST', '/api/withdraw', { amount: '0.1', destination }],
    ['POST', '/api/deposit/prepare', { amount: '1', publicKey: wallet.publicKey(), agentId: 'alpha' }],
    ['PUT', '/api/agents/alpha/policy', { budgetPerDay: '0.5' }],
    ['POST', '/api/agents/alpha/freeze'],
    ['POST', '/api/agents/alpha/unfreeze'],
    ['POST', '/api/agents/alpha/tokens', {}],
    ['GET', '/api/agents/alpha/tokens'],
    ['DELETE', `/api/agents/alpha/tokens/${agentTokenId}`],
    ['GET', '/api/agents'],
    ['GET', '/api/balance/beta'],
    ['GET', '/api/agents/beta/policy'],
    ['POST', '/api/pay', { agentId: 'beta', serviceUrl: demo }],
    ['POST', '/api/auth/logout'],
  ];
  for (const [method, path, body] of attempts) {
    const res = await send(method, path, agentToken, body);
    t.is(res.status, 403, `${method} ${path}: ${res.text}`);
    t.is(res.json.code, 'forbidden_for_agent_token', `${method} ${path}`);
  }
  // operator routes stay the operator's
  const books = await send('GET', '/api/operator/books', agentToken);
  t.is(books.status, 403);
  t.is(await balanceOf('alpha'), before.alpha);
  t.is(await balanceOf('beta'), before.beta);
  t.deepEqual((await send('GET', '/api/agents/alpha/policy', walletToken)).json, before.policy);
  t.deepEqual((await send('GET', '/api/agents/alpha/tokens', walletToken)).json, before.tokens);
  t.is((await send('GET', '/api/balance/alpha', agentToken)).status, 200, 'the token still works');
  const exported = await send('GET', '/api/agents/alpha/payments/export?format=csv', agentToken);
  t.is(exported.status, 200, 'its own agent’s record');
  t.is(exported.text.trimEnd().split('\r\n').length, 3, 'a header and its two payments');
  const other = await send('GET', '/api/agents/beta/payments/export', agentToken);
  t.is(other.json.code, 'forbidden_for_agent_token');
});

test.serial('over /mcp an agent token has the same rights: its tools act for its agent only', async (t) => {
  const client = await mcpClient(agentToken);
  try {
    const names = (await client.listTools()).tools.map((tool) => tool.name).sort();
    t.false(names.includes('pool_withdraw'), 'no tool moves money out');
    t.false(names.includes('pool_deposit'));
    t.true(names.includes('pool_pay'));
    const balance = structured(t, await callTool(client, 'pool_balance'));
    t.is(balance.agentId, 'alpha');
    const paid = structured(t, await callTool(client, 'pool_pay', { url: demo }));
    t.is(paid.paymentStatus, 'confirmed');
    t.is(await balanceOf('alpha'), '0.9700000');
    const withdraw = await callTool(client, 'pool_withdraw', {
      amount: '0.1',
      destination: wallet.publicKey(),
    });
    t.true(withdraw.isError, 'an unknown tool');
    t.is(await balanceOf('alpha'), '0.9700000');
    const frozen = await send('POST', '/api/agents/alpha/freeze', walletToken);
    t.is(frozen.status, 200);
    t.is(problem(t, await callTool(client, 'pool_pay', { url: demo })).code, 'agent_frozen');
    await send('POST', '/api/agents/alpha/unfreeze', walletToken);
  } finally {
    await client.close();
  }
});

test.serial(
  'over /mcp the agent reads its policy and budgets, no tool changes them, amounts may be numbers',
  async (t) => {
    const set = await send('PUT', '/api/agents/alpha/policy', walletToken, {
      budgetPerDay: '0.5',
      deniedServices: ['https://denied.example'],
    });
    t.is(set.status, 200, set.text);
    const agent = await mcpClient(agentToken);
    const owner = await mcpClient(walletToken);
    try {
      const tools = (await agent.listTools()).tools;
      t.deepEqual(tools.map((tool) => tool.name).sort(), [
        'pool_balance',
        'pool_pay',
        'pool_policy',
        'pool_stats',
      ]);
      t.like(tools.find((tool) => tool.name === 'pool_policy')!.annotations!, { readOnlyHint: true });
      const read = structured(t, await callTool(agent, 'pool_policy'));
      t.deepEqual(read, (await send('GET', '/api/agents/alpha/policy', walletToken)).json, 'the REST answer');
      t.like(read, {
        agentId: 'alpha',
        budgetPerDay: '0.5000000',
        deniedServices: ['https://denied.example'],
      });
      // Amounts as JSON numbers (what the MCP Inspector's --tool-arg maxAmount=0.01 sends).
      const paid = structured(t, await callTool(agent, 'pool_pay', { url: demo, maxAmount: 0.01 }));
      t.is(paid.paymentStatus, 'confirmed');
      t.is(
        problem(t, await callTool(agent, 'pool_pay', { url: demo, maxAmount: 0.005 })).code,
        'price_too_high',
      );
      t.is(
        problem(t, await callTool(agent, 'pool_pay', { url: demo, maxAmount: 1e-9 })).code,
        'invalid_request',
      );
      const left = structured(t, await callTool(agent, 'pool_policy')) as {
        effective: { budgets: { day: unknown } };
      };
      t.deepEqual(left.effective.budgets.day, {
        budget: '0.5000000',
        spent: '0.0400000',
        remaining: '0.4600000',
      });
      // No tool of either server changes a policy, whatever it is sent.
      const ownerTools = (await owner.listTools()).tools.map((tool) => tool.name);
      t.deepEqual(
        ownerTools.filter((name) => /polic|freez|budget|token/.test(name)),
        ['pool_policy'],
      );
      await callTool(agent, 'pool_policy', { frozen: true, budgetPerDay: '100' });
      await callTool(owner, 'pool_policy', { agentId: 'alpha', frozen: true, deniedServices: [] });
      const destination = Keypair.random().publicKey();
      await pay.stack.fund(destination, 0);
      const out = structured(
        t,
        await callTool(owner, 'pool_withdraw', { agentId: 'beta', amount: 0.1, destination }),
      );
      t.is(out.amount, '0.1000000', 'a wallet withdraws a JSON-number amount');
      const after = (await send('GET', '/api/agents/alpha/policy', walletToken)).json;
      t.like(after, { frozen: false, budgetPerDay: '0.5000000', deniedServices: ['https://denied.example'] });
    } finally {
      await agent.close();
      await owner.close();
    }
  },
);

async function refusedEverywhere(t: ExecutionContext, token: string) {
  const rest = await send('GET', '/api/balance/alpha', token);
  t.is(rest.status, 401, rest.text);
  t.regex(rest.json.detail, /revoked/);
  const mcp = await rawRequest(url('/mcp'), {
    method: 'POST',
    headers: {
      ...bearer(token),
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
  });
  t.is(mcp.status, 401);
}

test.serial('a revoked agent token is refused everywhere, also after a restart', async (t) => {
  t.is(
    (await send('DELETE', '/api/agents/alpha/tokens/00000000-0000-4000-8000-000000000000', walletToken))
      .status,
    404,
  );
  t.is((await send('DELETE', '/api/agents/alpha/tokens/not-a-uuid', walletToken)).status, 400);
  const revoked = await send('DELETE', `/api/agents/alpha/tokens/${agentTokenId}`, walletToken);
  t.is(revoked.status, 200, revoked.text);
  t.deepEqual(revoked.json, { tokenId: agentTokenId, revoked: true });
  await refusedEverywhere(t, agentToken);
  t.deepEqual((await send('GET', '/api/agents/alpha/tokens', walletToken)).json, { tokens: [] });
  await proxy.close();
  ({ proxy } = await pay.stack.startProxy({
    ...localX402Env(pay.x402, undefined),
    POOL_PROXY_POOL_WALLET_SECRET: pay.stack.sandbox.secrets().poolWallet,
  }));
  await proxy.ready;
  await refusedEverywhere(t, agentToken);
  t.is((await send('GET', '/api/balance/alpha', walletToken)).status, 200, 'the wallet’s own token lives on');
});

test.serial('the operator issues tokens for its own agents, which get no operator rights', async (t) => {
  const operator = pay.stack.operator;
  const deposit = await postJson(url('/api/deposit'), { agentId: 'op-agent', amount: '1' }, operator);
  t.is(deposit.status, 200, deposit.text);
  const issued = await postJson(url('/api/agents/op-agent/tokens'), {}, operator);
  t.is(issued.status, 200, issued.text);
  const token = issued.json.token as string;
  const paid = await send('POST', '/api/pay', token, { serviceUrl: demo });
  t.is(paid.status, 200, paid.text);
  t.is((await getJson(url('/api/balance/op-agent'), operator)).json.balance, '0.9900000');
  t.is((await send('POST', '/api/deposit', token, { agentId: 'op-agent', amount: '1' })).status, 403);
  t.is((await send('GET', '/api/operator/books', token)).status, 403);
  t.is((await send('GET', '/api/balance/alpha', token)).status, 403, 'not a wallet’s agent either');
  t.is((await getJson(url('/api/balance/op-agent'), operator)).json.balance, '0.9900000');
});
