// Agent-scoped tokens on the real stack (sandbox ledger, prover daemon, proxy, the local x402 pair with the
// demo service at 0.01 USDC): the owner issues, lists and revokes a token for one agent; with it an agent pays
// within its policy and reads its own balance, policy and payments, over REST and over /mcp with the MCP SDK's
// own client, and is refused (403 forbidden_for_agent_token, nothing changed) everything else: withdrawals,
// wallet deposits, policy changes, freeze, tokens, other agents and wallet routes. A revoked token is refused
// everywhere, also after a restart; the operator issues tokens for its own agents the same way. REST requests
// go through PoolApi; raw only for bodies of the wrong shape, a missing token, /mcp, and an agent token's
// operator deposit (PoolApi sends those only as the operator).
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { Keypair } from '#stellar-sdk';
import test, { type ExecutionContext } from 'ava';
import type { ProxyHandle } from '../../src/proxy/server.ts';
import { localX402Env } from '../../src/x402/local-services.ts';
import { callTool, problem, structured } from '../mcp/helpers.ts';
import { type PayStack, startPayStack } from '../mcp/pay-stack.ts';
import { operatorApi, type PoolApi, refused, walletApi } from './helpers/api.ts';
import { postJson, problemOf, rawRequest } from './helpers/http.ts';
import { walletDeposit as deposit } from './helpers/wallet-deposit.ts';

let pay: PayStack;
let proxy: ProxyHandle;
let wallet: Keypair;
let walletToken: string;
let agentToken: string;
let agentTokenId: string;
let demo: string;

const url = (path: string) => `${proxy.url}${path}`;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
/** The owner's client, on the proxy of the moment (a test restarts it). */
const own = (): PoolApi => walletApi(proxy.url, walletToken);
/** A client for an agent token (a Bearer token, as a wallet's is); by default alpha's. */
const asAgent = (token = agentToken): PoolApi => walletApi(proxy.url, token);
const balanceOf = async (agentId: string) => (await own().balance(agentId)).balance;

const walletDeposit = (agentId: string, amount: string) =>
  deposit({
    api: own(),
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
  for (const expiresInSeconds of [10, 91 * 86_400]) {
    const res = await refused(t, own().issueAgentToken('alpha', { expiresInSeconds }));
    t.is(res.status, 400, res.detail);
    t.is(res.code, 'invalid_request');
  }
  // raw: a string for the lifetime, an unknown field, no token
  for (const body of [{ expiresInSeconds: '3600' }, { scope: 'all' }]) {
    const res = await postJson(url(path), body, bearer(walletToken));
    t.is(res.status, 400, res.text);
    t.is(problemOf(res).code, 'invalid_request');
  }
  t.is((await refused(t, own().issueAgentToken('nobody', {}))).status, 404);
  t.is((await rawRequest(url(path), { method: 'POST' })).status, 401);
  const other = Keypair.random();
  await pay.stack.fund(other.publicKey(), 0);
  const stranger = await pay.stack.walletApi(other, proxy.url);
  t.is(
    (await refused(t, stranger.issueAgentToken('alpha', {}))).status,
    404,
    'another wallet’s agent is unknown to it',
  );
  t.deepEqual(await own().agentTokens('alpha'), { tokens: [] }, 'nothing was issued');

  const issued = await own().issueAgentToken('alpha', { expiresInSeconds: 7 * 86_400 });
  t.is(issued.agentId, 'alpha');
  t.regex(issued.tokenId, /^[0-9a-f-]{36}$/);
  t.is(Date.parse(issued.expiresAt) - Date.parse(issued.issuedAt), 7 * 86_400_000);
  agentToken = issued.token;
  agentTokenId = issued.tokenId;
  const listed = await own().agentTokens('alpha');
  t.deepEqual(listed.tokens, [
    {
      tokenId: agentTokenId,
      agentId: 'alpha',
      issuedAt: issued.issuedAt,
      expiresAt: issued.expiresAt,
    },
  ]);
  t.false(JSON.stringify(listed).includes(agentToken), 'the token itself is never shown again');
});

test.serial('an agent token pays within its policy and reads its own agent, over REST', async (t) => {
  const paid = await asAgent().pay({ serviceUrl: demo, method: 'GET' });
  t.is(paid.paymentStatus, 'confirmed');
  t.is(await balanceOf('alpha'), '0.9900000', 'alpha paid (the token’s agent is the default)');
  const named = await asAgent().pay({ agentId: 'alpha', serviceUrl: demo });
  t.is(named.paymentStatus, 'confirmed');
  const balance = await asAgent().balance('alpha');
  t.is(balance.balance, '0.9800000');
  const policy = await asAgent().policy('alpha');
  t.is(policy.agentId, 'alpha');
  const payments = await asAgent().payments(100);
  t.is(payments.payments.length, 2);
  t.true(payments.payments.every((p) => p.agentId === 'alpha'));
  // Its owner's policy binds it: a per-payment cap below the price refuses.
  const capped = await own().setPolicy('alpha', { perPaymentCap: '0.005' });
  t.is(capped.perPaymentCap, '0.0050000');
  const over = await refused(t, asAgent().pay({ serviceUrl: demo }));
  t.is(over.code, 'policy_per_payment_cap');
  t.is((await own().setPolicy('alpha', {})).perPaymentCap, null);
});

test.serial('an agent token is refused everything else with 403, and nothing changes', async (t) => {
  const destination = Keypair.random().publicKey();
  const before = {
    alpha: await balanceOf('alpha'),
    beta: await balanceOf('beta'),
    policy: await own().policy('alpha'),
    tokens: await own().agentTokens('alpha'),
  };
  const agent = asAgent();
  const attempts: Array<[string, () => Promise<unknown>]> = [
    ['withdraw alpha', () => agent.withdraw({ agentId: 'alpha', amount: '0.1', destination })],
    ['withdraw', () => agent.withdraw({ amount: '0.1', destination })],
    [
      'prepare a deposit',
      () => agent.prepareDeposit({ amount: '1', publicKey: wallet.publicKey(), agentId: 'alpha' }),
    ],
    ['set the policy', () => agent.setPolicy('alpha', { budgetPerDay: '0.5' })],
    ['freeze', () => agent.setFrozen('alpha', true)],
    ['unfreeze', () => agent.setFrozen('alpha', false)],
    ['issue a token', () => agent.issueAgentToken('alpha', {})],
    ['list tokens', () => agent.agentTokens('alpha')],
    ['revoke a token', () => agent.revokeAgentToken('alpha', agentTokenId)],
    ['the wallet’s agents', () => agent.agents()],
    ['beta’s balance', () => agent.balance('beta')],
    ['beta’s policy', () => agent.policy('beta')],
    ['pay for beta', () => agent.pay({ agentId: 'beta', serviceUrl: demo })],
    ['log out', () => agent.logout()],
  ];
  for (const [what, call] of attempts) {
    const res = await refused(t, call(), what);
    t.is(res.status, 403, `${what}: ${res.detail}`);
    t.is(res.code, 'forbidden_for_agent_token', what);
  }
  // operator routes stay the operator's
  const books = await refused(t, agent.books());
  t.is(books.status, 403);
  t.is(await balanceOf('alpha'), before.alpha);
  t.is(await balanceOf('beta'), before.beta);
  t.deepEqual(await own().policy('alpha'), before.policy);
  t.deepEqual(await own().agentTokens('alpha'), before.tokens);
  t.is((await agent.balance('alpha')).agentId, 'alpha', 'the token still works');
  const exported = await agent.exportPaymentsCsv('alpha');
  t.is(exported.trimEnd().split('\r\n').length, 3, 'its own agent’s record: a header and its two payments');
  const other = await refused(t, agent.exportPayments('beta'));
  t.is(other.code, 'forbidden_for_agent_token');
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
    // an unknown tool: the JSON-RPC error Invalid params (-32602), and nothing runs
    const withdraw = await t.throwsAsync(
      callTool(client, 'pool_withdraw', { amount: '0.1', destination: wallet.publicKey() }),
    );
    t.regex(withdraw?.message ?? '', /-32602.*no tool named "pool_withdraw"/);
    t.is(await balanceOf('alpha'), '0.9700000');
    t.true((await own().setFrozen('alpha', true)).frozen);
    t.is(problem(t, await callTool(client, 'pool_pay', { url: demo })).code, 'agent_frozen');
    await own().setFrozen('alpha', false);
  } finally {
    await client.close();
  }
});

test.serial(
  'over /mcp the agent reads its policy and budgets, no tool changes them, amounts may be numbers',
  async (t) => {
    const set = await own().setPolicy('alpha', {
      budgetPerDay: '0.5',
      deniedServices: ['https://denied.example'],
    });
    t.is(set.budgetPerDay, '0.5000000');
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
      t.deepEqual(read, await own().policy('alpha'), 'the REST answer');
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
      const after = await own().policy('alpha');
      t.like(after, { frozen: false, budgetPerDay: '0.5000000', deniedServices: ['https://denied.example'] });
    } finally {
      await agent.close();
      await owner.close();
    }
  },
);

async function refusedEverywhere(t: ExecutionContext, token: string) {
  const rest = await refused(t, asAgent(token).balance('alpha'));
  t.is(rest.status, 401, rest.detail);
  t.regex(rest.detail, /revoked/);
  // /mcp is not the REST API: PoolApi does not speak it.
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
  const unknown = own().revokeAgentToken('alpha', '00000000-0000-4000-8000-000000000000');
  t.is((await refused(t, unknown)).status, 404);
  t.is((await refused(t, own().revokeAgentToken('alpha', 'not-a-uuid'))).status, 400);
  const revoked = await own().revokeAgentToken('alpha', agentTokenId);
  t.deepEqual(revoked, { tokenId: agentTokenId, revoked: true });
  await refusedEverywhere(t, agentToken);
  t.deepEqual(await own().agentTokens('alpha'), { tokens: [] });
  await proxy.close();
  ({ proxy } = await pay.stack.startProxy({
    ...localX402Env(pay.x402, undefined),
    POOL_PROXY_POOL_WALLET_SECRET: pay.stack.sandbox.secrets().poolWallet,
  }));
  await proxy.ready;
  await refusedEverywhere(t, agentToken);
  t.is((await own().balance('alpha')).agentId, 'alpha', 'the wallet’s own token lives on');
});

test.serial('the operator issues tokens for its own agents, which get no operator rights', async (t) => {
  const op = operatorApi(proxy.url, pay.stack.operator);
  t.is((await op.operatorDeposit({ agentId: 'op-agent', amount: '1' })).status, 'confirmed');
  const issued = await op.issueAgentToken('op-agent', {});
  const token = issued.token;
  const paid = await asAgent(token).pay({ serviceUrl: demo });
  t.is(paid.paymentStatus, 'confirmed');
  t.is((await op.balance('op-agent')).balance, '0.9900000');
  // raw: PoolApi sends an operator deposit only as the operator
  const deposit = await postJson(url('/api/deposit'), { agentId: 'op-agent', amount: '1' }, bearer(token));
  t.is(deposit.status, 403, deposit.text);
  t.is(problemOf(deposit).code, 'forbidden', 'an operator route');
  t.is((await refused(t, asAgent(token).books())).status, 403);
  const alpha = await refused(t, asAgent(token).balance('alpha'), 'not a wallet’s agent either');
  t.is(alpha.status, 403, 'not a wallet’s agent either');
  t.is((await op.balance('op-agent')).balance, '0.9900000');
});
