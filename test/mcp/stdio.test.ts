// `pool-proxy mcp` over stdio, driven by the MCP SDK's own Client (StdioClientTransport spawns the CLI), against a
// real proxy on the sandbox ledger with the native prover daemon. Every value is checked against the REST API
// and the chain. One stack for the file; the flows are serial because they share one agent and one ledger. A
// payment above its agent's approval threshold is put to the operator through MCP elicitation.
import test from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { Keypair, rpc, TransactionBuilder } from '#stellar-sdk';
import { InvalidArgumentError } from 'commander';
import type { Balance, PoolStats, PreparedDeposit } from '../../src/api/types.ts';
import { parseAgentId, parseProxyUrl } from '../../src/cli/commands/mcp.ts';
import { getJson, jsonOf, postJson, problemOf } from '../proxy/helpers/http.ts';
import { type Stack, USDC } from '../proxy/helpers/stack.ts';
import { type PayStack, startPayStack } from './pay-stack.ts';
import { callTool, problem, sdkValidationError, structured } from './helpers.ts';

/** The same address with its last character changed: the right shape, a wrong checksum. */
const withBadChecksum = (address: string) => address.slice(0, 55) + (address.endsWith('A') ? 'B' : 'A');

const CLI = fileURLToPath(new URL('../../bin/pool-proxy.js', import.meta.url));
const AGENT = 'mcp-stdio-agent';

let pay: PayStack;
let stack: Stack;
let client: Client;
let stderr = '';
const clientErrors: Error[] = [];

async function connect(args: string[], env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...args],
    // The proxy's data directory, which holds its operator token, in the environment both share (as
    // `pool-proxy start` and `pool-proxy mcp` share ./data by default).
    env: {
      ...(process.env as Record<string, string>),
      POOL_PROXY_DATA_DIR: stack.env.POOL_PROXY_DATA_DIR!,
      ...env,
    },
    stderr: 'pipe',
  });
  transport.stderr?.on('data', (chunk) => (stderr += chunk));
  const c = new Client({ name: 'stdio-test', version: '1.0.0' });
  // A line on stdout that is not JSON-RPC surfaces here.
  c.onerror = (error) => clientErrors.push(error);
  await c.connect(transport);
  return c;
}

test.before(async () => {
  // A per-agent budget of 0.015 USDC an hour: one demo payment (0.01) fits, a second does not.
  pay = await startPayStack({ POOL_PROXY_AGENT_BUDGET_PER_HOUR: '0.015' });
  stack = pay.stack;
  client = await connect(['--proxy', pay.proxy.url, '--agent-id', AGENT]);
});
test.after.always(async () => {
  await client?.close();
  await pay?.close();
});

const operator = () => stack.sandbox.info.accounts.operator;
const poolUsdc = () => stack.usdcBalance(stack.sandbox.info.contracts.pool);

/** The agent's balance as the REST API reports it to the loopback operator ("unknown" before its first deposit). */
async function restBalance(agentId = AGENT): Promise<string> {
  const res = await getJson(`${pay.proxy.url}/api/balance/${agentId}`, stack.operator);
  if (res.status === 404 && problemOf(res).code === 'not_found') return 'unknown';
  if (res.status !== 200) throw new Error(`balance: ${res.text}`);
  return jsonOf<Balance>(res).balance;
}

/** Stroops as the API's `<int>.<7 digits>`. */
function formatStroops(stroops: bigint): string {
  return `${stroops / USDC}.${(stroops % USDC).toString().padStart(7, '0')}`;
}

async function snapshot() {
  return {
    balance: await restBalance(),
    pool: await poolUsdc(),
    operator: await stack.usdcBalance(operator()),
    stats: jsonOf<PoolStats>(await getJson(`${pay.proxy.url}/api/pool/stats`)),
  };
}

test.serial(
  'lists the six tools with input and output schemas, annotations and the spending warning',
  async (t) => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    t.deepEqual(
      [...byName.keys()].sort(),
      ['pool_balance', 'pool_deposit', 'pool_pay', 'pool_policy', 'pool_stats', 'pool_withdraw'],
      'the stdio server has no wallet-only tool',
    );
    for (const tool of tools) {
      t.is(tool.inputSchema.type, 'object', tool.name);
      t.is(tool.outputSchema?.type, 'object', `${tool.name} declares its output`);
      t.truthy(tool.description, tool.name);
      t.false(
        Object.hasOwn(tool.inputSchema.properties ?? {}, 'agentId'),
        `${tool.name}: the agent is fixed by --agent-id`,
      );
    }
    const deposit = byName.get('pool_deposit')!;
    t.deepEqual(deposit.inputSchema.required, ['amount']);
    t.deepEqual(deposit.outputSchema?.required?.slice().sort(), [
      'agentId',
      'amount',
      'status',
      'txHash',
      'zkProof',
    ]);
    t.regex(deposit.description!, /mcp-stdio-agent/);

    const payTool = byName.get('pool_pay')!;
    t.deepEqual(payTool.inputSchema.required, ['url']);
    t.deepEqual(Object.keys(payTool.inputSchema.properties ?? {}).sort(), [
      'body',
      'dryRun',
      'headers',
      'idempotencyKey',
      'maxAmount',
      'method',
      'url',
    ]);
    // The formats an agent must follow are in the schemas, not only in the descriptions.
    const format = (tool: string, field: string) => {
      // an amount is a string of this pattern or a JSON number (anyOf)
      const property = byName.get(tool)!.inputSchema.properties?.[field] as
        { pattern?: string; anyOf?: Array<{ pattern?: string }> } | undefined;
      return new RegExp(property?.pattern ?? property?.anyOf?.[0]?.pattern ?? '(?!)');
    };
    for (const [tool, field] of [
      ['pool_deposit', 'amount'],
      ['pool_withdraw', 'amount'],
      ['pool_pay', 'maxAmount'],
    ]) {
      const pattern = format(tool!, field!);
      t.true(
        ['10', '2.5', '0.0000001'].every((v) => pattern.test(v)),
        `${tool}.${field} accepts amounts`,
      );
      t.false(
        ['01', '1e3', '-1', '1.12345678', ' 1'].some((v) => pattern.test(v)),
        `${tool}.${field} pattern`,
      );
    }
    t.true(format('pool_withdraw', 'destination').test(Keypair.random().publicKey()));
    t.false(format('pool_withdraw', 'destination').test('GABC'));
    t.true(format('pool_pay', 'idempotencyKey').test('retry-key-1'));
    t.false(format('pool_pay', 'idempotencyKey').test('short'));
    t.regex(payTool.description!, /SPENDS THE AGENT’S MONEY/);
    t.regex(payTool.description!, /SAME idempotencyKey/);

    for (const name of ['pool_deposit', 'pool_pay', 'pool_withdraw']) {
      const a = byName.get(name)!.annotations!;
      t.like(
        a,
        { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
        `${name} spends money`,
      );
    }
    for (const name of ['pool_balance', 'pool_policy', 'pool_stats']) {
      t.like(
        byName.get(name)!.annotations!,
        { readOnlyHint: true, destructiveHint: false },
        `${name} only reads`,
      );
    }
  },
);

test.serial(
  'deposit (bare integer), balance, withdraw and stats match the REST API and the chain',
  async (t) => {
    const before = await snapshot();
    t.is(before.balance, 'unknown', 'the agent exists from its first deposit');
    const none = problem(t, await callTool(client, 'pool_balance'));
    t.is(none.code, 'not_found');
    t.regex(none.detail, /deposit to it first/);

    // Operator-funded deposit of "3" (a bare integer, normalised).
    const progress: Progress[] = [];
    const deposit = structured(
      t,
      await callTool(client, 'pool_deposit', { amount: '3' }, (p) => progress.push(p)),
    );
    t.like(progress[0], { progress: 1, message: 'proving the deposit and waiting for the ledger' });
    t.like(deposit, { status: 'confirmed', agentId: AGENT, amount: '3.0000000' });
    t.like(deposit.zkProof as object, { generated: true, onChain: true });
    const depositTx = await stack.server.getTransaction(deposit.txHash as string);
    t.is(depositTx.status, rpc.Api.GetTransactionStatus.SUCCESS);
    t.is(await poolUsdc(), before.pool + 3n * USDC, 'the pool contract holds 3 USDC more');
    t.is(await stack.usdcBalance(operator()), before.operator - 3n * USDC, 'the operator paid for it');
    t.is(await restBalance(), '3.0000000');

    const balance = structured(t, await callTool(client, 'pool_balance'));
    t.deepEqual(balance, { agentId: AGENT, balance: '3.0000000', currency: 'USDC' });

    // Withdraw 1.25 to a fresh account.
    const destination = Keypair.random().publicKey();
    await stack.fund(destination, 1);
    const withdrawal = structured(
      t,
      await callTool(client, 'pool_withdraw', { amount: '1.25', destination }),
    );
    t.like(withdrawal, { status: 'confirmed', agentId: AGENT, amount: '1.2500000', destination });
    const withdrawTx = await stack.server.getTransaction(withdrawal.txHash as string);
    t.is(withdrawTx.status, rpc.Api.GetTransactionStatus.SUCCESS);
    t.is(await stack.usdcBalance(destination), USDC + 12_500_000n, 'the destination received 1.25 USDC');
    t.is(await poolUsdc(), before.pool + 3n * USDC - 12_500_000n);
    t.is(await restBalance(), '1.7500000');
    t.deepEqual(structured(t, await callTool(client, 'pool_balance')), {
      agentId: AGENT,
      balance: '1.7500000',
      currency: 'USDC',
    });

    const stats = structured(t, await callTool(client, 'pool_stats'));
    const rest = (await getJson(`${pay.proxy.url}/api/pool/stats`)).json;
    t.deepEqual(stats, rest, 'pool_stats is the REST answer');
    t.true((stats.activeAgents as number) >= 1);
    t.is(stats.totalTransactions, before.stats.totalTransactions + 2, 'the deposit and the withdrawal');
  },
);

test.serial('bad input is refused with the problem code and nothing changes', async (t) => {
  const before = await snapshot();
  const destination = Keypair.random().publicKey();

  // The amount's format is in the tool's schema: the SDK refuses what does not match it.
  for (const amount of ['-1', '1.12345678', 'abc', '1e3', '01', ' 1', '']) {
    sdkValidationError(t, await callTool(client, 'pool_deposit', { amount }));
  }
  const zero = problem(t, await callTool(client, 'pool_deposit', { amount: '0' }));
  t.is(zero.code, 'invalid_request', 'zero has the format but is no amount');
  t.is(zero.errors?.[0]?.path, 'amount');
  const tooMuch = problem(t, await callTool(client, 'pool_deposit', { amount: '100001' }));
  t.is(tooMuch.code, 'invalid_request', 'above the proxy’s maximum deposit');
  t.regex(tooMuch.detail, /exceeds the maximum/);
  // A JSON number is an amount too (the Inspector's `--tool-arg amount=3` sends one), but only an exact one.
  sdkValidationError(t, await callTool(client, 'pool_deposit', { amount: -5 }));
  sdkValidationError(t, await callTool(client, 'pool_deposit', { amount: 0 }));
  const inexact = problem(t, await callTool(client, 'pool_deposit', { amount: 1.123456789 }));
  t.is(inexact.code, 'invalid_request');
  t.regex(inexact.detail, /more than 7 decimals/);
  const huge = problem(t, await callTool(client, 'pool_deposit', { amount: 1e300 }));
  t.is(huge.code, 'invalid_request');
  sdkValidationError(t, await callTool(client, 'pool_deposit', {}));

  sdkValidationError(t, await callTool(client, 'pool_withdraw', { amount: '1.5.0', destination }));
  sdkValidationError(t, await callTool(client, 'pool_withdraw', { amount: '1', destination: 'GABC' }));
  // The right shape with a wrong checksum: the proxy refuses it.
  const badChecksum = problem(
    t,
    await callTool(client, 'pool_withdraw', { amount: '1', destination: withBadChecksum(destination) }),
  );
  t.is(badChecksum.code, 'invalid_request');
  t.regex(badChecksum.detail, /destination/);
  const overdraw = problem(t, await callTool(client, 'pool_withdraw', { amount: '1000', destination }));
  t.is(overdraw.code, 'insufficient_balance');
  t.is(overdraw.status, 409);

  for (const url of ['not a url', 'ftp://example.com/x', 'file:///etc/passwd', '/relative']) {
    const p = problem(t, await callTool(client, 'pool_pay', { url }));
    t.is(p.code, 'invalid_request', url);
    t.is(p.errors?.[0]?.path, 'url');
  }
  sdkValidationError(t, await callTool(client, 'pool_pay', { url: 'http://example.com/', maxAmount: '-2' }));
  const zeroMax = problem(
    t,
    await callTool(client, 'pool_pay', { url: 'http://example.com/', maxAmount: '0' }),
  );
  t.is(zeroMax.code, 'invalid_request');
  t.regex(zeroMax.detail, /^maxAmount: /);
  sdkValidationError(
    t,
    await callTool(client, 'pool_pay', { url: 'http://example.com/', idempotencyKey: 'short' }),
  );
  sdkValidationError(t, await callTool(client, 'pool_pay', { url: 'http://example.com/', method: 'TRACE' }));

  const after = await snapshot();
  t.is(after.balance, before.balance);
  t.is(after.pool, before.pool);
  t.is(after.operator, before.operator);
  t.deepEqual(after.stats, before.stats);
});

test.serial(
  'an unknown agent, or another owner’s agent of the same name, is not_found and nothing moves',
  async (t) => {
    const stranger = await connect(['--proxy', pay.proxy.url], {
      POOL_PROXY_MCP_AGENT_ID: 'never-seen-agent',
    });
    t.teardown(() => stranger.close());
    const { tools } = await stranger.listTools();
    t.regex(tools.find((tool) => tool.name === 'pool_deposit')!.description!, /never-seen-agent/);
    const destination = Keypair.random().publicKey();
    const unknown = problem(t, await callTool(stranger, 'pool_balance'));
    t.is(unknown.code, 'not_found');
    t.is(unknown.status, 404);
    t.is(
      problem(t, await callTool(stranger, 'pool_withdraw', { amount: '1', destination })).code,
      'not_found',
    );

    // A wallet's agent named "shared-name": the operator's agent of that name is another agent, and not there.
    const wallet = Keypair.random();
    await stack.fund(wallet.publicKey(), 10);
    const token = await stack.login(wallet, pay.proxy.url);
    const bearer = { authorization: `Bearer ${token}` };
    const prepared = await postJson(
      `${pay.proxy.url}/api/deposit/prepare`,
      { amount: '1', publicKey: wallet.publicKey(), agentId: 'shared-name' },
      bearer,
    );
    t.is(prepared.status, 200, prepared.text);
    const { transactionXDR, prepareId } = jsonOf<PreparedDeposit>(prepared);
    const signed = TransactionBuilder.fromXDR(transactionXDR, stack.config.ledger.networkPassphrase);
    signed.sign(wallet);
    const submitted = await postJson(
      `${pay.proxy.url}/api/deposit/submit`,
      { prepareId, signedTransactionXDR: signed.toXDR() },
      bearer,
    );
    t.is(submitted.status, 200, submitted.text);
    const walletBalance = async () =>
      jsonOf<Balance>(await getJson(`${pay.proxy.url}/api/balance/shared-name`, bearer)).balance;
    t.is(await walletBalance(), '1.0000000');

    const namesake = await connect(['--proxy', pay.proxy.url, '--agent-id', 'shared-name']);
    t.teardown(() => namesake.close());
    const other = problem(t, await callTool(namesake, 'pool_balance'));
    t.is(other.code, 'not_found');
    t.is(
      other.detail,
      unknown.detail.replace('never-seen-agent', 'shared-name'),
      'answers exactly like an agent that does not exist',
    );
    t.is(
      problem(t, await callTool(namesake, 'pool_withdraw', { amount: '1', destination })).code,
      'not_found',
    );
    t.is(await walletBalance(), '1.0000000', 'the wallet’s agent is untouched');
  },
);

test.serial('a proxy that is not running is a clear tool error, not a crash', async (t) => {
  const orphan = await connect(['--proxy', 'http://127.0.0.1:9', '--agent-id', 'x']);
  t.teardown(() => orphan.close());
  const p = problem(t, await callTool(orphan, 'pool_balance'));
  t.is(p.code, 'proxy_unreachable');
  t.regex(p.detail, /127\.0\.0\.1:9/);
  t.like(
    structured(t, await callTool(client, 'pool_balance')),
    { agentId: AGENT },
    'the other server still works',
  );
});

test.serial(
  'stdout carries only JSON-RPC; the banner goes to stderr; stdin closing ends the process',
  async (t) => {
    t.deepEqual(clientErrors, [], 'the SDK client saw no unparsable output');
    t.regex(stderr, /pool-proxy mcp: serving agent "mcp-stdio-agent"/);

    const child = spawn(process.execPath, [CLI, 'mcp', '--proxy', pay.proxy.url], {
      stdio: ['pipe', 'pipe', 'pipe'],
    });
    let out = '';
    child.stdout.on('data', (d) => (out += d));
    const exited = once(child, 'exit');
    child.stdin.write(
      `${JSON.stringify({
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: {
          protocolVersion: '2025-06-18',
          capabilities: {},
          clientInfo: { name: 'raw', version: '1' },
        },
      })}\n`,
    );
    while (!out.includes('\n')) await new Promise((r) => setTimeout(r, 50));
    child.stdin.end();
    const [code] = await exited;
    t.is(code, 0);
    const lines = out.split('\n').filter((line) => line !== '');
    t.is(lines.length, 1, out);
    const answer = JSON.parse(lines[0]!);
    t.is(answer.jsonrpc, '2.0');
    t.is(answer.id, 1);
    t.is(answer.result.serverInfo.name, 'privacy-pool-proxy');
  },
);

test.serial('bad flags: a clear message on stderr, nothing on stdout, a non-zero exit', async (t) => {
  // The parsers themselves, in process (fast): what the command accepts as --proxy and --agent-id.
  t.is(parseProxyUrl('http://127.0.0.1:8080/'), 'http://127.0.0.1:8080');
  t.is(parseProxyUrl('https://[::1]:8443'), 'https://[::1]:8443');
  for (const bad of [
    'ftp://127.0.0.1:8080',
    'http://127.0.0.1:8080/api',
    'http://u:p@127.0.0.1',
    'x',
    'http://h/?q',
  ])
    t.throws(() => parseProxyUrl(bad), { instanceOf: InvalidArgumentError }, bad);
  t.is(parseAgentId('agent-1'), 'agent-1');
  for (const bad of ['', 'has space', 'a/b', '..', 'x'.repeat(65)])
    t.throws(() => parseAgentId(bad), { instanceOf: InvalidArgumentError }, bad);

  // And the process: a message on stderr, nothing on stdout, a non-zero exit.
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--proxy', 'ftp://127.0.0.1:8080'], {}, /--proxy.*http/],
    [['--agent-id', 'has space'], {}, /--agent-id.*1–64 characters/],
    [[], { POOL_PROXY_MCP_AGENT_ID: 'x/y' }, /POOL_PROXY_MCP_AGENT_ID/],
  ];
  const runs = cases.map(async ([args, env, message]) => {
    const child = spawn(process.execPath, [CLI, 'mcp', ...args], { env: { ...process.env, ...env } });
    let out = '';
    let err = '';
    child.stdout.on('data', (d) => (out += d));
    child.stderr.on('data', (d) => (err += d));
    const [code] = await once(child, 'exit');
    return { args, message, code, out, err };
  });
  for (const { args, message, code, out, err } of await Promise.all(runs)) {
    t.not(code, 0, args.join(' '));
    t.is(out, '', args.join(' '));
    t.regex(err, message);
  }
});

test.serial(
  'pool_pay refuses before anything is signed: a price above maxAmount, a free or a private URL',
  async (t) => {
    const { quoteUrl } = pay.x402.demo;
    const before = await snapshot();
    const payToBefore = await stack.usdcBalance(pay.x402.demoPayTo);
    const tooHigh = problem(t, await callTool(client, 'pool_pay', { url: quoteUrl, maxAmount: '0.005' }));
    t.is(tooHigh.code, 'price_too_high');
    t.regex(tooHigh.detail, /0\.0100000/, 'the service’s price is named');
    const free = problem(t, await callTool(client, 'pool_pay', { url: new URL('/health', quoteUrl).href }));
    t.is(free.code, 'service_not_payable', 'a service that does not answer 402');
    const closed = problem(t, await callTool(client, 'pool_pay', { url: 'http://127.0.0.1:1/paid' }));
    t.is(closed.code, 'invalid_request', 'a loopback address that is not allow-listed');
    t.deepEqual(await snapshot(), before, 'nothing changed');
    t.is(await stack.usdcBalance(pay.x402.demoPayTo), payToBefore, 'the service got nothing');
  },
);

test.serial(
  'pool_pay pays the demo x402 service once per idempotencyKey; a reused key and the budget refuse, nothing changes',
  async (t) => {
    const { quoteUrl } = pay.x402.demo;
    const payTo = pay.x402.demoPayTo;
    const before = await snapshot();
    const payToBefore = await stack.usdcBalance(payTo);
    const available = BigInt(before.balance.replace('.', ''));
    t.true(available >= 100_000n, `the agent can pay 0.01 USDC (has ${before.balance})`);

    const key = 'mcp-stdio-quote-0001';
    const progress: Progress[] = [];
    const paid = structured(
      t,
      await callTool(client, 'pool_pay', { url: quoteUrl, idempotencyKey: key }, (p) => progress.push(p)),
    );
    t.like(progress[0], { progress: 1, message: 'waiting for the payment batch and its settlement' });
    t.like(paid, { paymentStatus: 'confirmed', serviceStatus: 200, contentEncoding: 'utf8' });
    t.regex(paid.contentType as string, /^application\/json/);
    t.truthy(JSON.parse(paid.content as string).quote, 'the service’s content came back');
    const receipt = paid.receipt as Record<string, string>;
    t.like(receipt, { amount: '0.0100000', payTo, asset: stack.sandbox.info.contracts.token });
    const transfer = await stack.server.getTransaction(receipt.transaction!);
    t.is(transfer.status, rpc.Api.GetTransactionStatus.SUCCESS, 'the transfer is on the ledger');
    t.is(await stack.usdcBalance(payTo), payToBefore + 100_000n, 'the service was paid 0.01 USDC');
    const after = formatStroops(available - 100_000n);
    t.is(await restBalance(), after);
    t.like(structured(t, await callTool(client, 'pool_balance')), { balance: after });

    // A retry with the same key is the first answer, not a second payment.
    const retried = structured(t, await callTool(client, 'pool_pay', { url: quoteUrl, idempotencyKey: key }));
    t.deepEqual(retried, paid);
    t.is(await stack.usdcBalance(payTo), payToBefore + 100_000n, 'paid once');
    t.is(await restBalance(), after);

    const refusalsBefore = await snapshot();
    const conflict = problem(
      t,
      await callTool(client, 'pool_pay', { url: quoteUrl, idempotencyKey: key, maxAmount: '1' }),
    );
    t.is(conflict.code, 'conflict', 'the same key with another request');
    t.is(conflict.status, 409);
    const budget = problem(
      t,
      await callTool(client, 'pool_pay', { url: quoteUrl, idempotencyKey: 'mcp-stdio-quote-0002' }),
    );
    t.is(budget.code, 'budget_exceeded', 'a second 0.01 passes the 0.015 hourly budget');
    t.is(budget.status, 429);
    t.deepEqual(await snapshot(), refusalsBefore, 'nothing changed');
    t.is(await stack.usdcBalance(payTo), payToBefore + 100_000n);

    const stats = structured(t, await callTool(client, 'pool_stats'));
    t.deepEqual(stats, (await getJson(`${pay.proxy.url}/api/pool/stats`)).json);
    t.is(stats.servicesUsed, 1);
    const batch = (stats.recentBatches as Record<string, unknown>[]).find((b) => b.batchId === paid.batchId);
    t.like(batch, { payments: 1 });
  },
);

test.serial(
  'pool_pay above the approval threshold asks the operator through elicitation; approved, it is paid once',
  async (t) => {
    const agent = 'mcp-elicit';
    const deposit = await postJson(
      `${pay.proxy.url}/api/deposit`,
      { agentId: agent, amount: '0.1' },
      stack.operator,
    );
    t.is(deposit.status, 200, deposit.text);
    const policy = await fetch(`${pay.proxy.url}/api/agents/${agent}/policy`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json', ...stack.operator },
      body: JSON.stringify({ approvalThreshold: '0.005' }),
    });
    t.is(policy.status, 200, await policy.text());
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--proxy', pay.proxy.url, '--agent-id', agent],
      env: {
        ...(process.env as Record<string, string>),
        POOL_PROXY_DATA_DIR: stack.env.POOL_PROXY_DATA_DIR!,
      },
      stderr: 'pipe',
    });
    const asking = new Client(
      { name: 'elicit-test', version: '1.0.0' },
      { capabilities: { elicitation: {} } },
    );
    const questions: string[] = [];
    asking.setRequestHandler(ElicitRequestSchema, async (request) => {
      questions.push(request.params.message);
      return { action: 'accept', content: { approve: true } };
    });
    await asking.connect(transport);
    t.teardown(() => asking.close());
    const payTo = pay.x402.demoPayTo;
    const payToBefore = await stack.usdcBalance(payTo);
    const paid = structured(t, await callTool(asking, 'pool_pay', { url: pay.x402.demo.quoteUrl }));
    t.is(questions.length, 1);
    t.regex(questions[0]!, /mcp-elicit.*0\.0100000 USDC.*Approve it\?/);
    t.like(paid, { paymentStatus: 'confirmed' });
    t.is(await stack.usdcBalance(payTo), payToBefore + 100_000n, 'paid once');
    t.is(
      jsonOf<Balance>(await getJson(`${pay.proxy.url}/api/balance/${agent}`, stack.operator)).balance,
      '0.0900000',
    );
  },
);
