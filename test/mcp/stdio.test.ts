// `pool-proxy mcp` over stdio, driven by the MCP SDK's own Client (StdioClientTransport spawns the CLI), against a
// real proxy on the sandbox ledger with the native prover daemon. Every value is checked against the REST API
// and the chain. One stack for the file; the flows are serial because they share one agent and one ledger.
import test from 'ava';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Keypair, rpc } from '@stellar/stellar-sdk';
import { getJson } from '../proxy/helpers/http.ts';
import { type Stack, startStack, USDC } from '../proxy/helpers/stack.ts';
import { callTool, problem, sdkValidationError, structured } from './helpers.ts';

const CLI = fileURLToPath(new URL('../../bin/pool-proxy.js', import.meta.url));
const AGENT = 'mcp-stdio-agent';

let stack: Stack;
let client: Client;
let stderr = '';
const clientErrors: Error[] = [];

async function connect(args: string[], env: Record<string, string> = {}): Promise<Client> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', ...args],
    env: { ...(process.env as Record<string, string>), ...env },
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
  stack = await startStack();
  client = await connect(['--proxy', stack.proxy.url, '--agent-id', AGENT]);
});
test.after.always(async () => {
  await client?.close();
  await stack?.close();
});

const operator = () => stack.sandbox.info.accounts.operator;
const poolUsdc = () => stack.usdcBalance(stack.sandbox.info.contracts.pool);

/** The agent's balance as the REST API reports it to the loopback operator. */
async function restBalance(agentId = AGENT): Promise<string> {
  const res = await getJson(`${stack.proxy.url}/api/balance/${agentId}`, { 'x-pool-operator': 'true' });
  if (res.status !== 200) throw new Error(`balance: ${res.text}`);
  return res.json.balance;
}

async function snapshot() {
  return {
    balance: await restBalance(),
    pool: await poolUsdc(),
    operator: await stack.usdcBalance(operator()),
    stats: (await getJson(`${stack.proxy.url}/api/pool/stats`)).json,
  };
}

test.serial(
  'lists the five tools with input and output schemas, annotations and the spending warning',
  async (t) => {
    const { tools } = await client.listTools();
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    t.deepEqual(
      [...byName.keys()].sort(),
      ['pool_balance', 'pool_deposit', 'pool_pay', 'pool_stats', 'pool_withdraw'],
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

    const pay = byName.get('pool_pay')!;
    t.deepEqual(pay.inputSchema.required, ['url']);
    t.deepEqual(Object.keys(pay.inputSchema.properties ?? {}).sort(), [
      'body',
      'idempotencyKey',
      'maxAmount',
      'method',
      'url',
    ]);
    t.regex(pay.description!, /SPENDS THE AGENT’S MONEY/);
    t.regex(pay.description!, /SAME idempotencyKey/);

    for (const name of ['pool_deposit', 'pool_pay', 'pool_withdraw']) {
      const a = byName.get(name)!.annotations!;
      t.like(
        a,
        { readOnlyHint: false, destructiveHint: true, idempotentHint: false },
        `${name} spends money`,
      );
    }
    for (const name of ['pool_balance', 'pool_stats']) {
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
    t.is(before.balance, '0.0000000');

    // Operator-funded deposit of "3" (a bare integer, normalised).
    const deposit = structured(t, await callTool(client, 'pool_deposit', { amount: '3' }));
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
    const rest = (await getJson(`${stack.proxy.url}/api/pool/stats`)).json;
    t.deepEqual(stats, rest, 'pool_stats is the REST answer');
    t.true((stats.activeAgents as number) >= 1);
    t.is(stats.totalTransactions, before.stats.totalTransactions + 2, 'the deposit and the withdrawal');
  },
);

test.serial('bad input is refused with the problem code and nothing changes', async (t) => {
  const before = await snapshot();
  const destination = Keypair.random().publicKey();

  for (const amount of ['0', '-1', '1.12345678', 'abc', '1e3', '01', ' 1', '']) {
    const p = problem(t, await callTool(client, 'pool_deposit', { amount }));
    t.is(p.code, 'invalid_request', `deposit ${JSON.stringify(amount)}`);
    t.is(p.errors?.[0]?.path, 'amount');
  }
  const tooMuch = problem(t, await callTool(client, 'pool_deposit', { amount: '100001' }));
  t.is(tooMuch.code, 'invalid_request', 'above the proxy’s maximum deposit');
  t.regex(tooMuch.detail, /exceeds the maximum/);
  sdkValidationError(t, await callTool(client, 'pool_deposit', { amount: 5 }));
  sdkValidationError(t, await callTool(client, 'pool_deposit', {}));

  t.is(
    problem(t, await callTool(client, 'pool_withdraw', { amount: '1.5.0', destination })).code,
    'invalid_request',
  );
  const badDestination = problem(
    t,
    await callTool(client, 'pool_withdraw', { amount: '1', destination: 'GABC' }),
  );
  t.is(badDestination.code, 'invalid_request');
  t.regex(badDestination.detail, /destination/);
  const overdraw = problem(t, await callTool(client, 'pool_withdraw', { amount: '1000', destination }));
  t.is(overdraw.code, 'insufficient_balance');
  t.is(overdraw.status, 409);

  for (const url of ['not a url', 'ftp://example.com/x', 'file:///etc/passwd', '/relative']) {
    const p = problem(t, await callTool(client, 'pool_pay', { url }));
    t.is(p.code, 'invalid_request', url);
    t.is(p.errors?.[0]?.path, 'url');
  }
  const badMax = problem(
    t,
    await callTool(client, 'pool_pay', { url: 'http://example.com/', maxAmount: '-2' }),
  );
  t.is(badMax.code, 'invalid_request');
  t.regex(badMax.detail, /^maxAmount: /);
  sdkValidationError(t, await callTool(client, 'pool_pay', { url: 'http://example.com/', method: 'TRACE' }));

  const after = await snapshot();
  t.is(after.balance, before.balance);
  t.is(after.pool, before.pool);
  t.is(after.operator, before.operator);
  t.deepEqual(after.stats, before.stats);
});

test.serial('an unknown agent has nothing to spend; a wallet’s agent is not the operator’s', async (t) => {
  const stranger = await connect(['--proxy', stack.proxy.url], {
    POOL_PROXY_MCP_AGENT_ID: 'never-seen-agent',
  });
  t.teardown(() => stranger.close());
  const { tools } = await stranger.listTools();
  t.regex(tools.find((tool) => tool.name === 'pool_deposit')!.description!, /never-seen-agent/);
  t.like(structured(t, await callTool(stranger, 'pool_balance')), {
    agentId: 'never-seen-agent',
    balance: '0.0000000',
  });
  const destination = Keypair.random().publicKey();
  t.is(
    problem(t, await callTool(stranger, 'pool_withdraw', { amount: '1', destination })).code,
    'insufficient_balance',
  );

  // A wallet's own agent (created by its deposit prepare) cannot be read or spent by the operator.
  const wallet = Keypair.random();
  await stack.fund(wallet.publicKey(), 10);
  const token = await stack.login(wallet);
  const prepared = await fetch(`${stack.proxy.url}/api/deposit/prepare`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
    body: JSON.stringify({ amount: '1', publicKey: wallet.publicKey(), agentId: 'wallet-owned-agent' }),
  });
  t.is(prepared.status, 200, await prepared.clone().text());
  const intruder = await connect(['--proxy', stack.proxy.url, '--agent-id', 'wallet-owned-agent']);
  t.teardown(() => intruder.close());
  const forbidden = problem(t, await callTool(intruder, 'pool_balance'));
  t.is(forbidden.code, 'forbidden');
  t.is(forbidden.status, 403);
  t.is(problem(t, await callTool(intruder, 'pool_withdraw', { amount: '1', destination })).code, 'forbidden');
});

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

    const child = spawn(process.execPath, [CLI, 'mcp', '--proxy', stack.proxy.url], {
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
  const cases: [string[], Record<string, string>, RegExp][] = [
    [['--proxy', 'ftp://127.0.0.1:8080'], {}, /--proxy.*http/],
    [['--proxy', 'http://127.0.0.1:8080/api'], {}, /origin only/],
    [['--agent-id', 'has space'], {}, /--agent-id.*1–64 characters/],
    [['--bogus'], {}, /unknown option '--bogus'/],
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

test.serial.skip('pool_pay pays the demo x402 service (waits for POST /api/pay on main)', async (t) => {
  t.pass();
});
