// MCP over Streamable HTTP at /mcp on a real proxy (sandbox ledger, native prover daemon), driven by the MCP SDK's
// own Client and StreamableHTTPClientTransport with a wallet's Bearer JWT. The wallet signs its own deposit
// (pool_deposit prepares, pool_deposit_submit sends); every value is checked against the REST API and the chain.
import test from 'ava';
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import {
  StreamableHTTPClientTransport,
  StreamableHTTPError,
} from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type {
  InitializeResult,
  JSONRPCErrorResponse,
  JSONRPCResultResponse,
} from '@modelcontextprotocol/sdk/types.js';
import { Keypair, rpc, TransactionBuilder } from '#stellar-sdk';
import type { Balance, PoolStats } from '../../src/api/types.ts';
import { getJson, jsonOf, postJson, problemOf, rawRequest } from '../proxy/helpers/http.ts';
import { type Stack, USDC } from '../proxy/helpers/stack.ts';
import { type PayStack, startPayStack } from './pay-stack.ts';
import { callTool, problem, sdkValidationError, structured } from './helpers.ts';

let pay: PayStack;
let stack: Stack;
let wallet: Keypair;
let token: string;
let client: Client;
const OPERATOR_AGENT = 'http-test-operator-agent';

async function connect(bearer: string): Promise<Client> {
  const transport = new StreamableHTTPClientTransport(new URL('/mcp', pay.proxy.url), {
    requestInit: { headers: { authorization: `Bearer ${bearer}` } },
  });
  const c = new Client({ name: 'http-test', version: '1.0.0' });
  await c.connect(transport);
  return c;
}

test.before(async () => {
  pay = await startPayStack();
  stack = pay.stack;
  wallet = Keypair.random();
  await stack.fund(wallet.publicKey(), 100);
  token = await stack.login(wallet, pay.proxy.url);
  client = await connect(token);
  // An agent of the operator's (local MCP agents), which no wallet may touch.
  const res = await postJson(
    `${pay.proxy.url}/api/deposit`,
    { agentId: OPERATOR_AGENT, amount: '2' },
    stack.operator,
  );
  if (res.status !== 200) throw new Error(`operator deposit: ${res.text}`);
});
test.after.always(async () => {
  await client?.close();
  await pay?.close();
});

const me = () => wallet.publicKey();
const operator = () => stack.sandbox.info.accounts.operator;
const poolUsdc = () => stack.usdcBalance(stack.sandbox.info.contracts.pool);

async function restBalance(agentId = me()): Promise<string> {
  const res = await getJson(`${pay.proxy.url}/api/balance/${agentId}`, {
    authorization: `Bearer ${token}`,
  });
  if (res.status === 404 && problemOf(res).code === 'not_found') return 'unknown';
  if (res.status !== 200) throw new Error(`balance: ${res.text}`);
  return jsonOf<Balance>(res).balance;
}

async function operatorAgentBalance(): Promise<string> {
  const res = await getJson(`${pay.proxy.url}/api/balance/${OPERATOR_AGENT}`, stack.operator);
  return jsonOf<Balance>(res).balance;
}

async function snapshot() {
  return {
    balance: await restBalance(),
    operatorAgent: await operatorAgentBalance(),
    pool: await poolUsdc(),
    wallet: await stack.usdcBalance(me()),
    operator: await stack.usdcBalance(operator()),
    stats: jsonOf<PoolStats>(await getJson(`${pay.proxy.url}/api/pool/stats`)),
  };
}

function sign(xdr: string): string {
  const tx = TransactionBuilder.fromXDR(xdr, stack.config.ledger.networkPassphrase);
  tx.sign(wallet);
  return tx.toXDR();
}

const initialize = JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
});
const mcpHeaders = { 'content-type': 'application/json', accept: 'application/json, text/event-stream' };

test.serial(
  'lists the tools for a wallet: agentId optional, a separate submit step for deposits',
  async (t) => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    t.deepEqual([...byName.keys()].sort(), [
      'pool_balance',
      'pool_deposit',
      'pool_deposit_submit',
      'pool_pay',
      'pool_policy',
      'pool_stats',
      'pool_withdraw',
    ]);
    for (const name of ['pool_balance', 'pool_deposit', 'pool_pay', 'pool_policy', 'pool_withdraw']) {
      const schema = byName.get(name)!.inputSchema;
      t.true(Object.hasOwn(schema.properties ?? {}, 'agentId'), `${name} takes an agentId`);
      t.false((schema.required ?? []).includes('agentId'), `${name}: agentId is optional`);
    }
    const deposit = byName.get('pool_deposit')!;
    t.like(deposit.annotations!, { destructiveHint: false, readOnlyHint: false });
    t.true(deposit.outputSchema!.required!.includes('transactionXDR'));
    t.true(deposit.outputSchema!.required!.includes('expiresAt'), 'it says until when to sign');
    t.like(byName.get('pool_deposit_submit')!.annotations!, { destructiveHint: true });
    t.deepEqual(byName.get('pool_deposit_submit')!.inputSchema.required?.slice().sort(), [
      'prepareId',
      'signedTransactionXDR',
    ]);
    t.regex(byName.get('pool_pay')!.description!, /SAME idempotencyKey/);
  },
);

test.serial(
  'deposit signed by the wallet, balance, withdraw and stats match the REST API and the chain',
  async (t) => {
    const before = await snapshot();
    t.is(before.balance, 'unknown', 'no agent before the first deposit');

    const prepared = structured(t, await callTool(client, 'pool_deposit', { amount: '4' }));
    t.like(prepared, { status: 'prepared', agentId: me(), amount: '4.0000000' });
    t.regex(prepared.prepareId as string, /^[0-9a-f-]{36}$/);
    t.true(Date.parse(prepared.expiresAt as string) > Date.now(), `sign before ${prepared.expiresAt}`);
    t.is(await stack.usdcBalance(operator()), before.operator, 'the operator pays nothing for a wallet');
    t.is(await stack.usdcBalance(me()), before.wallet, 'nothing moves before the wallet signs');
    t.is(await restBalance(), 'unknown', 'the agent exists once its deposit confirms');

    const submitted = structured(
      t,
      await callTool(client, 'pool_deposit_submit', {
        prepareId: prepared.prepareId,
        signedTransactionXDR: sign(prepared.transactionXDR as string),
      }),
    );
    t.like(submitted, { status: 'confirmed', agentId: me(), amount: '4.0000000' });
    const tx = await stack.server.getTransaction(submitted.txHash as string);
    t.is(tx.status, rpc.Api.GetTransactionStatus.SUCCESS);
    t.is(await stack.usdcBalance(me()), before.wallet - 4n * USDC, 'the wallet paid');
    t.is(await stack.usdcBalance(operator()), before.operator, 'the operator did not');
    t.is(await poolUsdc(), before.pool + 4n * USDC);
    t.is(await restBalance(), '4.0000000');
    t.deepEqual(structured(t, await callTool(client, 'pool_balance')), {
      agentId: me(),
      balance: '4.0000000',
      currency: 'USDC',
    });

    // Submitting again answers what happened: the same transaction, confirmed, credited once.
    const replay = structured(
      t,
      await callTool(client, 'pool_deposit_submit', {
        prepareId: prepared.prepareId,
        signedTransactionXDR: sign(prepared.transactionXDR as string),
      }),
    );
    t.like(replay, { status: 'confirmed', txHash: submitted.txHash });
    t.is(await restBalance(), '4.0000000');
    t.is(await poolUsdc(), before.pool + 4n * USDC, 'sent once');

    const withdrawal = structured(
      t,
      await callTool(client, 'pool_withdraw', { amount: '1.5000000', destination: me() }),
    );
    t.like(withdrawal, { status: 'confirmed', agentId: me(), amount: '1.5000000', destination: me() });
    t.is(
      (await stack.server.getTransaction(withdrawal.txHash as string)).status,
      rpc.Api.GetTransactionStatus.SUCCESS,
    );
    t.is(await stack.usdcBalance(me()), before.wallet - 4n * USDC + 15_000_000n);
    t.is(await poolUsdc(), before.pool + 4n * USDC - 15_000_000n);
    t.is(await restBalance(), '2.5000000');
    t.like(structured(t, await callTool(client, 'pool_balance', { agentId: me() })), {
      balance: '2.5000000',
    });

    const stats = structured(t, await callTool(client, 'pool_stats'));
    t.deepEqual(stats, (await getJson(`${pay.proxy.url}/api/pool/stats`)).json);
    t.is(stats.totalTransactions, before.stats.totalTransactions + 2);
  },
);

test.serial('the wallet’s other agents: deposit for a named agent, read it back', async (t) => {
  const prepared = structured(
    t,
    await callTool(client, 'pool_deposit', { amount: '0.5', agentId: 'my-bot' }),
  );
  t.like(prepared, { agentId: 'my-bot', amount: '0.5000000' });
  const submitted = structured(
    t,
    await callTool(client, 'pool_deposit_submit', {
      prepareId: prepared.prepareId,
      signedTransactionXDR: sign(prepared.transactionXDR as string),
    }),
  );
  t.like(
    submitted,
    { status: 'confirmed', agentId: 'my-bot' },
    'the submit names the agent its prepare named',
  );
  t.is(await restBalance('my-bot'), '0.5000000');
  t.like(structured(t, await callTool(client, 'pool_balance', { agentId: 'my-bot' })), {
    agentId: 'my-bot',
    balance: '0.5000000',
  });
});

test.serial('refusals carry the problem code and nothing changes', async (t) => {
  const before = await snapshot();
  const destination = Keypair.random().publicKey();

  // Formats are in the tools' schemas (the SDK refuses them); what the schema cannot say, the proxy does.
  sdkValidationError(t, await callTool(client, 'pool_deposit', { amount: '1.00000001' }));
  t.is(problem(t, await callTool(client, 'pool_deposit', { amount: '0' })).code, 'invalid_request');
  sdkValidationError(t, await callTool(client, 'pool_deposit', { amount: '1', agentId: 'bad agent' }));
  sdkValidationError(
    t,
    await callTool(client, 'pool_withdraw', { amount: '1', destination: 'not-an-address' }),
  );
  t.is(
    problem(t, await callTool(client, 'pool_withdraw', { amount: '99', destination })).code,
    'insufficient_balance',
  );
  t.is(
    problem(t, await callTool(client, 'pool_pay', { url: 'javascript:alert(1)' })).code,
    'invalid_request',
  );

  // Another owner's agent (the operator's) answers like an agent that does not exist.
  const foreign = problem(t, await callTool(client, 'pool_balance', { agentId: OPERATOR_AGENT }));
  t.is(foreign.code, 'not_found');
  t.is(foreign.status, 404);
  t.is(
    problem(t, await callTool(client, 'pool_withdraw', { amount: '1', destination, agentId: OPERATOR_AGENT }))
      .code,
    'not_found',
  );

  const unknownPrepare = problem(
    t,
    await callTool(client, 'pool_deposit_submit', {
      prepareId: '00000000-0000-4000-8000-000000000000',
      signedTransactionXDR: 'AAAA',
    }),
  );
  t.is(unknownPrepare.code, 'not_found');
  sdkValidationError(
    t,
    await callTool(client, 'pool_deposit_submit', { prepareId: 'x', signedTransactionXDR: '!!' }),
  );

  const after = await snapshot();
  t.deepEqual(after, before);
});

/** The official MCP Inspector's command line (@modelcontextprotocol/inspector, its own defaults). */
const INSPECTOR = fileURLToPath(
  new URL(
    '../../node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js',
    import.meta.url,
  ),
);

test.serial(
  'the MCP Inspector in strict mode finds no schema error or warning in the tool list',
  async (t) => {
    const run = await promisify(execFile)(
      process.execPath,
      [
        INSPECTOR,
        '--cli',
        `${pay.proxy.url}/mcp`,
        '--transport',
        'http',
        '--header',
        `Authorization: Bearer ${token}`,
        '--method',
        'tools/list',
        '--strict',
      ],
      { maxBuffer: 8 << 20 },
    );
    t.log(run.stderr.trim() || '(nothing on stderr)');
    const tools = (JSON.parse(run.stdout) as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    t.deepEqual(tools.sort(), [
      'pool_balance',
      'pool_deposit',
      'pool_deposit_submit',
      'pool_pay',
      'pool_policy',
      'pool_stats',
      'pool_withdraw',
    ]);
    // Findings are printed as "Error: tool …" / "Warning: tool …" with a count line; strict mode exits non-zero
    // on an error (execFile would have thrown).
    t.notRegex(run.stderr, /Error: tool|Warning: tool|error|warning/i);
  },
);

test.serial('no token or a bad token → 401 with WWW-Authenticate: Bearer; nothing runs', async (t) => {
  const url = `${pay.proxy.url}/mcp`;
  const none = await rawRequest(url, { method: 'POST', headers: mcpHeaders, body: initialize });
  t.is(none.status, 401);
  t.regex(String(none.headers['www-authenticate']), /^Bearer/);
  t.regex(String(none.headers['content-type']), /application\/problem\+json/);
  t.is(problemOf(none).code, 'unauthorized');

  const [h, p, s] = token.split('.');
  const tampered = `${h}.${p}.${s!.startsWith('A') ? 'B' : 'A'}${s!.slice(1)}`;
  for (const header of [`Bearer ${tampered}`, 'Bearer not.a.jwt', `Basic ${token}`, token]) {
    const res = await rawRequest(url, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: header },
      body: initialize,
    });
    t.is(res.status, 401, header.slice(0, 20));
    t.regex(String(res.headers['www-authenticate']), /^Bearer/);
  }

  // The SDK client sees the 401 too.
  const error = await t.throwsAsync(connect(tampered));
  t.true(error instanceof StreamableHTTPError || /401/.test(String(error?.message)), String(error));

  // With a good token the same raw request initializes.
  const ok = await rawRequest(url, {
    method: 'POST',
    headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
    body: initialize,
  });
  t.is(ok.status, 200, ok.text);
  t.is(
    jsonOf<JSONRPCResultResponse & { result: InitializeResult }>(ok).result.serverInfo.name,
    'privacy-pool-proxy',
  );
});

test.serial(
  'GET and DELETE → 405 (stateless endpoint); oversized bodies → 413; bad JSON → JSON-RPC error; the REST JSON limits',
  async (t) => {
    const url = `${pay.proxy.url}/mcp`;
    for (const method of ['GET', 'DELETE', 'PUT']) {
      const res = await rawRequest(url, { method, headers: { authorization: `Bearer ${token}` } });
      t.is(res.status, 405, method);
      t.is(res.headers.allow, 'POST');
      t.is(problemOf(res).code, 'method_not_allowed');
    }
    const big = await rawRequest(url, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping', params: { pad: 'x'.repeat(70_000) } }),
    });
    t.is(big.status, 413);
    t.is(problemOf(big).code, 'payload_too_large');

    const garbage = await rawRequest(url, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
      body: '{"jsonrpc": "2.0", ',
    });
    t.is(garbage.status, 400);
    t.is(jsonOf<JSONRPCErrorResponse>(garbage).error.code, -32700, 'JSON-RPC parse error');

    // The REST API's JSON limits: nesting deeper than 32 levels, a repeated member name, bytes not UTF-8.
    const nest = (depth: number) => `${'['.repeat(depth)}${']'.repeat(depth)}`;
    const call = (args: string) =>
      `{"jsonrpc":"2.0","id":7,"method":"tools/call","params":{"name":"pool_stats","arguments":{"x":${args}}}}`;
    const refused = [
      call(nest(5000)),
      call(nest(40)),
      '{"jsonrpc":"2.0","id":1,"method":"ping","method":"tools/list"}',
      Buffer.concat([
        Buffer.from('{"jsonrpc":"2.0","id":1,"method":"ping","params":{"x":"'),
        Buffer.from([0xff]),
        Buffer.from('"}}'),
      ]),
    ];
    for (const body of refused) {
      const res = await rawRequest(url, {
        method: 'POST',
        headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
        body,
      });
      t.is(res.status, 400, res.text);
      const refusal = problemOf(res);
      t.is(refusal.code, 'invalid_request');
      t.regex(refusal.detail, /nested deeper than 32 levels|repeats the member "method"|not valid UTF-8/);
    }
    // 28 levels inside the envelope's four are within the limit: the call goes through.
    const within = await rawRequest(url, {
      method: 'POST',
      headers: { ...mcpHeaders, authorization: `Bearer ${token}` },
      body: call(nest(28)),
    });
    t.is(within.status, 200, within.text);
    t.is(jsonOf<JSONRPCResultResponse>(within).id, 7);

    const metrics = await rawRequest(`${pay.proxy.url}/metrics`, { headers: stack.operator });
    t.regex(metrics.text, /route="\/mcp",status="200"/, 'MCP requests are counted under their own route');
    t.regex(metrics.text, /route="\/mcp",status="401"/);
  },
);

test.serial(
  'pool_pay refuses before anything is signed: another owner’s agent, a GET with a body, a price above maxAmount',
  async (t) => {
    const { echoUrl, quoteUrl } = pay.x402.demo;
    const before = await snapshot();
    const payToBefore = await stack.usdcBalance(pay.x402.demoPayTo);
    t.is(
      problem(
        t,
        await callTool(client, 'pool_pay', { url: echoUrl, method: 'POST', agentId: OPERATOR_AGENT }),
      ).code,
      'not_found',
    );
    t.is(
      problem(t, await callTool(client, 'pool_pay', { url: quoteUrl, body: 'x' })).code,
      'invalid_request',
    );
    t.is(
      problem(t, await callTool(client, 'pool_pay', { url: quoteUrl, maxAmount: '0.0099999' })).code,
      'price_too_high',
    );
    t.deepEqual(await snapshot(), before);
    t.is(await stack.usdcBalance(pay.x402.demoPayTo), payToBefore, 'the service got nothing');
  },
);

test.serial(
  'pool_pay with the wallet’s token: the wallet’s agents pay the demo service, which gets the body',
  async (t) => {
    const { echoUrl } = pay.x402.demo;
    const payTo = pay.x402.demoPayTo;
    const before = await snapshot();
    const payToBefore = await stack.usdcBalance(payTo);
    t.is(before.balance, '2.5000000');

    const paid = structured(
      t,
      await callTool(client, 'pool_pay', {
        url: echoUrl,
        method: 'POST',
        body: { hello: 'mcp' },
        maxAmount: '0.01',
        idempotencyKey: 'http-echo-0001',
      }),
    );
    t.like(paid, { paymentStatus: 'confirmed', serviceStatus: 200 });
    t.deepEqual(
      JSON.parse(paid.content as string).echo,
      { hello: 'mcp' },
      'the JSON body reached the service',
    );
    const receipt = paid.receipt as Record<string, string>;
    t.like(receipt, { amount: '0.0100000', payTo });
    t.is(
      (await stack.server.getTransaction(receipt.transaction!)).status,
      rpc.Api.GetTransactionStatus.SUCCESS,
    );
    t.is(await stack.usdcBalance(payTo), payToBefore + 100_000n);
    t.is(await restBalance(), '2.4900000');
    t.is(await stack.usdcBalance(operator()), before.operator, 'the operator pays nothing');
    t.is(await stack.usdcBalance(me()), before.wallet, 'the pool wallet pays, never the agent’s wallet');

    // Another agent of the same wallet, with a string body and its own content type.
    const bot = structured(
      t,
      await callTool(client, 'pool_pay', {
        url: echoUrl,
        method: 'POST',
        body: '{"from":"my-bot"}',
        headers: { 'content-type': 'application/json' },
        agentId: 'my-bot',
      }),
    );
    t.like(JSON.parse(bot.content as string), { echo: { from: 'my-bot' }, contentType: 'application/json' });
    t.is(await restBalance('my-bot'), '0.4900000');
    t.is(await restBalance(), '2.4900000');
    t.is(await stack.usdcBalance(payTo), payToBefore + 200_000n);
  },
);

test.serial(
  'pool_pay above the owner’s approval threshold answers that it waits, with its id to poll',
  async (t) => {
    const own = { authorization: `Bearer ${token}` };
    const policy = (body: unknown) =>
      rawRequest(`${pay.proxy.url}/api/agents/${me()}/policy`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json', ...own },
        body: JSON.stringify(body),
      });
    t.is((await policy({ approvalThreshold: '0.005' })).status, 200);
    const args = { url: pay.x402.demo.quoteUrl, idempotencyKey: 'http-wait-0001' };
    const result = await callTool(client, 'pool_pay', args);
    const waiting = structured(t, result);
    t.like(waiting, { paymentStatus: 'awaiting_approval' });
    t.truthy(waiting.expiresAt);
    const text = result.content.map((c) => (c.type === 'text' ? c.text : '')).join('');
    t.true(text.includes(waiting.paymentId as string) && /approv/.test(text), text);
    const again = structured(t, await callTool(client, 'pool_pay', args));
    t.like(again, { paymentId: waiting.paymentId, paymentStatus: 'awaiting_approval' });
    const denied = await postJson(`${pay.proxy.url}/api/approvals/${waiting.paymentId}/deny`, {}, own);
    t.is(denied.status, 200, denied.text);
    t.is((await policy({})).status, 200);
  },
);

test.serial(
  'a payment the service refuses is an isError result with its reason; the service gets nothing; a retry pays nothing',
  async (t) => {
    // Without its facilitator the demo service can neither verify nor settle the payment it is offered.
    await pay.x402.facilitator.close();
    const payTo = pay.x402.demoPayTo;
    const before = await snapshot();
    const payToBefore = await stack.usdcBalance(payTo);
    const args = { url: pay.x402.demo.quoteUrl, idempotencyKey: 'http-fail-0001' };

    const failed = problem(t, await callTool(client, 'pool_pay', args));
    t.is(failed.code, 'payment_rejected', 'the reason the proxy gives');
    t.is(failed.paymentStatus, 'failed');
    t.regex(failed.paymentId as string, /^[0-9a-f-]{36}$/);
    t.truthy(failed.batchId);
    t.is(failed.status, 502, 'the REST answer is a payment_failed problem');

    // The same key again: the same payment and the same answer, never a new payment.
    const again = problem(t, await callTool(client, 'pool_pay', args));
    t.like(again, { code: 'payment_rejected', paymentId: failed.paymentId, paymentStatus: 'failed' });

    t.is(await stack.usdcBalance(payTo), payToBefore, 'the service was not paid');
    t.is(await poolUsdc(), before.pool);
    t.is(await stack.usdcBalance(me()), before.wallet);
    t.is(await stack.usdcBalance(operator()), before.operator);
  },
);
