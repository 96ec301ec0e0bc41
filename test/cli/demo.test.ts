// `pool-proxy demo` against `pool-proxy start`: it exits 0, and its observer table is what the chain holds
// (token transfers read here independently from the sandbox RPC); the agent ids appear in no transaction.
// With --start it runs its own service and stops it. Bad --proxy values, --proxy with --start and an
// unreachable proxy exit 1 with a clear message.
import anyTest, { type TestFn } from 'ava';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { scValToNative } from '#stellar-sdk';
import { freePort, type RunningService, startService, USDC } from '../web/helpers/pool-proxy-start.ts';
import { runCli } from '../helpers/cli.ts';

const test = anyTest as TestFn<{ service: RunningService }>;

test.before(async (t) => {
  t.context = { service: await startService() };
});

test.after.always(async (t) => {
  await t.context.service?.stop();
});

async function demo(
  args: string[],
  env: Record<string, string> = {},
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const run = runCli(['demo', ...args], env);
  const code = await run.exited;
  return { code, stdout: run.stdout(), stderr: run.stderr() };
}

const short = (id: string) => `${id.slice(0, 5)}…${id.slice(-4)}`;

test.serial('pool-proxy demo exits 0 and its observer table matches the chain', async (t) => {
  const { service } = t.context;
  const dir = mkdtempSync(join(tmpdir(), 'pool-proxy-demo-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const jsonFile = join(dir, 'report.json');
  const run = await demo(['--proxy', service.proxyUrl, '--json', jsonFile]);
  t.log(run.stdout);
  t.is(run.code, 0, run.stderr);
  const report = JSON.parse(readFileSync(jsonFile, 'utf8'));
  t.is(report.parties.length, 2);

  // Every USDC transfer of the ledger range, read here from the RPC without the demo's code.
  const events = await service.server.getEvents({
    startLedger: report.startLedger,
    endLedger: report.endLedger + 1,
    filters: [{ type: 'contract', contractIds: [service.token] }],
    limit: 1000,
  });
  const onChain = events.events
    .filter((e) => e.ledger <= report.endLedger && scValToNative(e.topic[0]!) === 'transfer')
    .map((e) => ({
      txHash: e.txHash,
      from: String(scValToNative(e.topic[1]!)),
      to: String(scValToNative(e.topic[2]!)),
      amount: BigInt(scValToNative(e.value)),
    }));
  const ledgers = new Map(events.events.map((e) => [e.txHash, e.ledger]));
  const ledgerOf = (txHash: string) => ledgers.get(txHash) ?? Number.POSITIVE_INFINITY;
  const reported = report.observer.transfers.map(
    (m: { txHash: string; from: string; to: string; amount: string }) => ({
      txHash: m.txHash,
      from: m.from,
      to: m.to,
      amount: BigInt(m.amount.replace('.', '')),
    }),
  );
  t.deepEqual(reported, onChain);
  t.true(onChain.length >= 4, 'two deposits and two withdrawals at least');

  // The printed observer table lists each of those transactions and amounts.
  for (const m of onChain) {
    t.true(run.stdout.includes(short(m.txHash)), `transaction ${m.txHash} is in the table`);
    const whole = `${m.amount / USDC}.${(m.amount % USDC).toString().padStart(7, '0')} USDC`;
    t.true(run.stdout.includes(whole), `${whole} is in the table`);
  }

  const pool = report.contracts.pool;
  for (const p of report.parties) {
    // Deposits are public transfers from the wallet; withdrawals come from the pool contract.
    t.true(onChain.some((m) => m.from === p.wallet && m.to === pool));
    t.true(onChain.some((m) => m.from === pool && m.to === p.destination));
    t.false(onChain.some((m) => m.from === p.wallet && m.to === p.destination));
    t.is(await service.usdcBalance(p.destination), BigInt(p.withdrawn.replace('.', '')));
    const agentRow = report.knowledge.find((r: { fact: string }) => r.fact.includes(`"${p.agentId}"`));
    t.regex(agentRow.knows.observer, /^no:/);
    t.regex(agentRow.knows[p.name], /^yes/);
    const link = report.knowledge.find(
      (r: { fact: string }) => r.fact === `that withdrawal came from ${p.name}`,
    );
    t.regex(link.knows.observer, /^no:/);
  }

  // Both agents paid the demo x402 service: on chain, transfers from the pool wallet, naming no agent.
  for (const p of report.parties) {
    t.is(p.payments.length, 1, `${p.name} paid once`);
    const payment = p.payments[0];
    const transfer = onChain.find((m) => m.txHash === payment.transaction);
    t.truthy(transfer, 'the receipt names an observed transaction');
    t.is(transfer!.from, report.poolWallet);
    t.is(transfer!.to, payment.payTo);
    const row = report.knowledge.find(
      (r: { fact: string }) => r.fact === `${p.name}'s agent paid ${payment.serviceUrl}`,
    );
    t.regex(row.knows.observer, /^no:/);
  }

  // The amount view, checked against the transfers read here: no public amount out of the pool to the pool
  // wallet equals an agent's spending, and each payment could have come from every wallet that deposited.
  const depositors = (ledger: number) =>
    new Set(
      onChain
        .filter((m) => m.to === pool && m.from !== pool && ledgerOf(m.txHash) < ledger)
        .map((m) => m.from),
    ).size;
  for (const p of report.parties) {
    const spent = p.payments.reduce(
      (s: bigint, x: { amount: string }) => s + BigInt(x.amount.replace('.', '')),
      0n,
    );
    const row = report.knowledge.find((r: { fact: string }) => r.fact.startsWith(`${p.name}'s agent spent `));
    t.truthy(row, `${p.name}'s spending row`);
    const equal = onChain.some((m) => m.from === pool && m.to === report.poolWallet && m.amount === spent);
    t.is(/^yes/.test(row.knows.observer), equal, row.knows.observer);
    t.regex(row.knows.observer, /^no:/);
    const funded = report.knowledge.find((r: { fact: string }) =>
      r.fact.startsWith(`${p.name}'s wallet funded`),
    );
    const n = depositors(ledgerOf(p.payments[0].transaction));
    t.is(funded.knows.observer, `no: ${n} depositing wallets could have paid it`);
  }
  t.true(
    report.knowledge.some((r: { fact: string }) => / agents paid in the batch of ledgers /.test(r.fact)),
  );

  // Independently: no transaction of the range carries an agent id.
  const txs = await service.server.getTransactions({
    startLedger: report.startLedger,
    pagination: { limit: 200 },
  });
  t.true(txs.transactions.length > 0);
  for (const tx of txs.transactions) {
    const bytes = Buffer.concat(
      [tx.envelopeXdr.toXDR(), tx.resultMetaXdr.toXDR()].map((b) => Buffer.from(b)),
    );
    for (const p of report.parties)
      t.false(bytes.includes(Buffer.from(p.agentId)), `${tx.txHash} names ${p.agentId}`);
  }
  t.regex(run.stdout, /What each party knows/);
  t.regex(run.stdout, /What an on-chain observer sees/);
  // The facilitator's channel accounts submit the services' settlements: named, not "(other)".
  t.regex(run.stdout, /\(x402 facilitator channel\)/);
  t.notRegex(run.stdout, /\(other\)/);
});

test('pool-proxy demo refuses a bad --proxy and reports an unreachable proxy', async (t) => {
  const bad = await demo(['--proxy', 'ftp://example.org']);
  t.is(bad.code, 1);
  t.regex(bad.stderr, /--proxy must be an http\(s\) URL/);
  const port = await freePort();
  const down = await demo(['--proxy', `http://127.0.0.1:${port}`]);
  t.is(down.code, 1);
  t.regex(
    down.stderr,
    /Proxy unreachable: the pool proxy at http:\/\/127\.0\.0\.1:\d+ is not reachable \(ECONNREFUSED\)/,
  );
});

test('pool-proxy demo --start runs a private service for the demo and stops it', async (t) => {
  const dir = mkdtempSync(join(tmpdir(), 'pool-proxy-demo-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const jsonFile = join(dir, 'report.json');
  // Fast ledgers and short batches for the test (pool-proxy start reads both from the environment).
  const run = await demo(['--start', '--json', jsonFile], {
    POOL_PROXY_SANDBOX_LEDGER_MS: '100',
    POOL_PROXY_BATCH_WINDOW_MS: '500',
  });
  t.is(run.code, 0, run.stderr);
  t.regex(run.stdout, /^starting a private pool-proxy/);
  const report = JSON.parse(readFileSync(jsonFile, 'utf8'));
  t.deepEqual(
    report.parties.map((p: { payments: unknown[] }) => p.payments.length),
    [1, 1],
  );
  t.regex(run.stdout, /What an on-chain observer sees/);
  // The private service is gone: its proxy no longer answers.
  await t.throwsAsync(fetch(`${report.proxy}/health`));
});

test('pool-proxy demo refuses --proxy together with --start', async (t) => {
  const both = await demo(['--start', '--proxy', 'http://127.0.0.1:8080']);
  t.is(both.code, 1);
  t.regex(both.stderr, /use either --proxy URL .* or --start/);
});
