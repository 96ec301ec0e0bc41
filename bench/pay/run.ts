// Payments through the batch operator on the embedded sandbox, in one process as `pool-proxy start` runs them:
// N agents (operator deposits), then P payments of the demo x402 service sent at once, so they all fall in one
// batch window. Prints, after the window ends: the time until every payment answered, p50/p95 of each answer
// after the window end, how many confirmed; then the settlement time (until the pool wallet's float is back).
// Target: a batch of 1000 payments done within the window + 10 s.
// The sandbox and the local x402 pair run on worker threads as `pool-proxy start` runs them (threads=0: all
// on the main thread, for comparison). Also prints the process's CPU time (all threads) from the window's
// end until the last answer, per payment.
// Then settlement and refill after the burst: shielded transfers to the float account and float refills,
// counted on the ledger with their fees and time.
// Usage: npx tsx bench/pay/run.ts [agents=100] [payments=1000] [windowMs=15000] [channels=128] [ledgerMs=1000]
//        [threads=1] [roundSize=8]
// BENCH_CPU_PROFILE=<file.cpuprofile> records a V8 CPU profile of the main thread from the window's end until
// the last answer (with threads=0 it holds the sandbox's and the x402 pair's work too; open it in Chrome's
// DevTools or summarise it with bench/pay/profile-summary.ts).
import { Session } from 'node:inspector/promises';
import { performance } from 'node:perf_hooks';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { Agent } from 'node:http';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import { FeeBumpTransaction, humanizeEvents, rpc, TransactionBuilder } from '#stellar-sdk';
import { callJson } from '../helpers/http.ts';
import { benchOperator, benchProxyEnv, startBenchProver } from '../helpers/stack.ts';
import { loadConfig } from '../../src/proxy/config.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { startPoolSandboxThread } from '../../src/cli/threads/sandbox-thread.ts';
import { startLocalX402Thread } from '../../src/cli/threads/x402-thread.ts';
import { startLocalX402 } from '../../src/x402/local-services.ts';

const [agents, payments, windowMs, channels, ledgerMs, threads, roundSize] = [
  100, 1000, 15_000, 128, 1000, 1, 8,
].map((d, i) => Number(process.argv[2 + i] ?? d));
// A fresh connection per request: a kept-alive socket the server closed meanwhile would reset a request.
const http = new Agent({ keepAlive: false, maxSockets: 2048 });

let operator: Record<string, string> | undefined;
const call = (url: string, body?: unknown) =>
  callJson(url, { body, agent: http, headers: (operator ??= benchOperator(base)), timeoutMs: 600_000 });

const rpcBody = (method: string, params?: unknown) => ({
  method: 'POST',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify({ jsonrpc: '2.0', id: 1, method, ...(params !== undefined && { params }) }),
});

/** A humanized SAC `transfer` event's amount: its data, or the data's `amount` (CAP-67, with a muxed id). */
function transferAmount(data: unknown): bigint {
  if (typeof data === 'object' && data !== null && 'amount' in data) return BigInt(String(data.amount));
  return BigInt(String(data));
}

/** Every transaction from `startLedger` on: its source, fee, USDC transfers and whether it refilled the float. */
async function ledgerTransactions(startLedger: number) {
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  const out: { source: string; fee: number; transfers: number; refill: boolean; amount: string }[] = [];
  let page = await server.getTransactions({ startLedger, pagination: { limit: 200 } });
  for (;;) {
    for (const tx of page.transactions) {
      const transfers = humanizeEvents((tx.events?.contractEventsXdr ?? []).flat()).filter(
        (e) => e.type === 'contract' && e.topics[0] === 'transfer',
      );
      const refill = transfers.find(
        (e) =>
          String(e.topics[1]) === info.contracts.pool && String(e.topics[2]) === info.accounts.poolWallet,
      );
      const parsed = TransactionBuilder.fromXDR(tx.envelopeXdr.toXDR('base64'), info.networkPassphrase);
      out.push({
        source: parsed instanceof FeeBumpTransaction ? parsed.innerTransaction.source : parsed.source,
        fee: Number(tx.resultXdr.feeCharged),
        transfers: transfers.length,
        refill: refill !== undefined,
        amount: refill === undefined ? '' : (Number(transferAmount(refill.data)) / 1e7).toFixed(2),
      });
    }
    if (page.transactions.length < 200) return out;
    page = await server.getTransactions({ pagination: { cursor: page.cursor, limit: 200 } });
  }
}

const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? NaN;
const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';

const dataDir = mkdtempSync(join(tmpdir(), 'bench-pay-'));
const sandbox = threads
  ? await startPoolSandboxThread({ port: 0, ledgerMs })
  : await startPoolSandbox({ port: 0, ledgerMs });
const daemon = await startBenchProver();
const info = sandbox.info;
const friendbot = (addr: string, usdc: number) => fetch(`${sandbox.url}/friendbot?addr=${addr}&usdc=${usdc}`);
await friendbot(info.accounts.operator, 100_000);
const FLOAT = 1000;
await friendbot(info.accounts.poolWallet, FLOAT);
const x402 = await (threads ? startLocalX402Thread : startLocalX402)({
  rpcUrl: sandbox.rpcUrl,
  networkPassphrase: info.networkPassphrase,
  asset: info.contracts.token,
  facilitator: { host: '127.0.0.1', port: 0 },
  demo: { host: '127.0.0.1', port: 0 },
  channelCount: channels,
});
const base = {
  ...benchProxyEnv(sandbox, daemon, dataDir),
  POOL_PROXY_POOL_WALLET_SECRET: sandbox.secrets().poolWallet,
};
const proxy = await startProxy(
  loadConfig({
    ...base,
    POOL_PROXY_PAY_ALLOWED_HOSTS: new URL(x402.demo.quoteUrl).host,
    POOL_PROXY_BATCH_WINDOW_MS: String(windowMs),
    POOL_PROXY_BATCH_MAX: String(payments * 2),
    POOL_PROXY_BATCH_CONCURRENCY: '512',
    POOL_PROXY_SETTLE_INTERVAL_MS: '86400000',
    // new agents' keys are inserted every 4 s, so the setup's operator deposits wait little (no wallet
    // signs here, so the signing window a wallet is promised can be short)
    POOL_PROXY_REGISTRATION_SLOT_SECONDS: '4',
    POOL_PROXY_SIGNING_WINDOW_SECONDS: '2',
  }),
  { logger: silentLogger },
);
await proxy.ready;
console.log(
  `${cpu}, ${cpus().length} CPUs; sandbox ledger every ${ledgerMs} ms; ${channels} facilitator channels; ` +
    (threads ? 'sandbox and x402 pair on worker threads' : 'everything on the main thread'),
);

let t = performance.now();
const ids = Array.from({ length: agents }, (_, i) => `bench-${i}`);
for (let i = 0; i < ids.length; i += 4) {
  await Promise.all(
    ids.slice(i, i + 4).map(async (agentId) => {
      const res = await call(`${proxy.url}/api/deposit`, { agentId, amount: '1' });
      if (res.status !== 200) throw new Error(`deposit: ${JSON.stringify(res.json)}`);
    }),
  );
}
console.log(`setup: ${agents} agents deposited in ${((performance.now() - t) / 1000).toFixed(1)} s`);

const started = performance.now();
let cpuAtWindowEnd: NodeJS.CpuUsage | undefined;
type Elu = ReturnType<typeof performance.eventLoopUtilization>;
const threadsOf = () =>
  [
    ['main', (since?: Elu) => performance.eventLoopUtilization(since)],
    ...('utilization' in sandbox ? [['sandbox', sandbox.utilization] as const] : []),
    ...('utilization' in x402 ? [['x402 pair', x402.utilization] as const] : []),
  ] as [string, (since?: Elu) => Elu][];
let eluAtWindowEnd: Elu[] = [];
const profileFile = process.env.BENCH_CPU_PROFILE;
const profiler = profileFile ? new Session() : undefined;
setTimeout(() => {
  cpuAtWindowEnd = process.cpuUsage();
  eluAtWindowEnd = threadsOf().map(([, elu]) => elu());
  if (profiler) {
    profiler.connect();
    void profiler.post('Profiler.enable').then(() => profiler.post('Profiler.start'));
  }
}, windowMs);
const answers = await Promise.all(
  Array.from({ length: payments }, async (_, i) => {
    const res = await call(`${proxy.url}/api/pay`, {
      agentId: ids[i % agents],
      serviceUrl: x402.demo.quoteUrl,
      method: 'GET',
    });
    return { res, at: performance.now() };
  }),
);
const burstCpu = process.cpuUsage(cpuAtWindowEnd);
if (profiler && profileFile) {
  const { profile } = await profiler.post('Profiler.stop');
  writeFileSync(profileFile, JSON.stringify(profile));
  profiler.disconnect();
  console.log(`CPU profile of the main thread after the window: ${profileFile}`);
}
const burstElu = threadsOf().map(
  ([name, elu], i) => `${name} ${(elu(eluAtWindowEnd[i]).utilization * 100).toFixed(0)}%`,
);
const windowEnd = started + windowMs;
const after = answers.map((a) => a.at - windowEnd).sort((a, b) => a - b);
const confirmed = answers.filter((a) => a.res.json?.paymentStatus === 'confirmed').length;
const statuses = new Map<string, number>();
for (const a of answers) {
  const key = `${a.res.status} ${a.res.json?.paymentStatus ?? a.res.json?.code}`;
  statuses.set(key, (statuses.get(key) ?? 0) + 1);
}
const last = after[after.length - 1] ?? NaN;
console.log(
  `batch: ${payments} payments, window ${windowMs} ms; all answered ${(last / 1000).toFixed(1)} s after the window ` +
    `(target ≤ 10 s: ${last <= 10_000 ? 'met' : 'missed'}); after the window p50 ${(pct(after, 50) / 1000).toFixed(1)} s, ` +
    `p95 ${(pct(after, 95) / 1000).toFixed(1)} s; confirmed ${confirmed}/${payments}`,
);
console.log(`  outcomes: ${[...statuses].map(([k, v]) => `${k} ×${v}`).join(', ')}`);
const cpuMs = (burstCpu.user + burstCpu.system) / 1000;
console.log(
  `  CPU after the window (all threads): ${(cpuMs / 1000).toFixed(1)} s, ${(cpuMs / payments).toFixed(1)} ms per payment; ` +
    `event loops busy: ${burstElu.join(', ')}`,
);

// Settlement and refill: the same store, restarted with rounds back to back (shielded transfers of the
// debts to the float account, padded with the float account's merges) and a float refilled whole units to its
// full level. Counted on the ledger: the pool transactions from here on (operator `transact`s that move no
// USDC; refills pool → pool wallet), their fees, and the seconds until nothing is owed and the float is back.
await proxy.close();
const settleFrom = (await (await fetch(`${sandbox.url}/rpc`, rpcBody('getLatestLedger'))).json()).result
  .sequence;
t = performance.now();
const settler = await startProxy(
  loadConfig({
    ...base,
    POOL_PROXY_SETTLE_INTERVAL_MS: '200',
    POOL_PROXY_SETTLE_ROUND_SIZE: String(roundSize),
    POOL_PROXY_FLOAT_TARGET: String(FLOAT),
    POOL_PROXY_FLOAT_LOW: String(FLOAT),
    POOL_PROXY_FLOAT_UNIT: '1',
    POOL_PROXY_FLOAT_REFILL_INTERVAL_MS: '1000',
  }),
  { logger: silentLogger },
);
{
  await settler.ready;
  let settledAt = NaN;
  let books: Record<string, string | boolean> = {};
  const paid = BigInt(payments) * 100_000n;
  const unit = 10_000_000n;
  const refilledTo = BigInt(FLOAT) * unit - (paid % unit);
  for (let i = 0; i < 7200; i++) {
    await new Promise((r) => setTimeout(r, 500));
    books = (await call(`${settler.url}/api/operator/books`)).json ?? {};
    if (Number.isNaN(settledAt) && books.unsettled === '0.0000000') settledAt = performance.now();
    if (
      !Number.isNaN(settledAt) &&
      !books.settling &&
      BigInt(String(books.poolWallet).replace('.', '')) >= refilledTo
    )
      break;
  }
  const refilledAt = performance.now();
  await settler.close();
  const txs = await ledgerTransactions(settleFrom);
  const pool = info.contracts.pool;
  const shielded = txs.filter((x) => x.source === info.accounts.operator && x.transfers === 0);
  const refills = txs.filter((x) => x.refill);
  const fees = (list: typeof txs) => list.reduce((s, x) => s + x.fee, 0);
  console.log(
    `settlement: ${agents} agents' debts settled in ${((settledAt - t) / 1000).toFixed(1)} s: ${shielded.length} shielded ` +
      `transfers (rounds of ${roundSize}: settlements, consolidations, padding), fees ${(fees(shielded) / 1e7).toFixed(4)} XLM`,
  );
  console.log(
    `refill: pool wallet back to ${books.poolWallet} USDC ${((refilledAt - t) / 1000).toFixed(1)} s after the restart: ` +
      `${refills.length} refills (${refills.map((r) => r.amount).join(', ')} USDC to ${pool.slice(0, 4)}… → pool wallet), ` +
      `fees ${(fees(refills) / 1e7).toFixed(4)} XLM; per 1000 payments: ${(((shielded.length + refills.length) * 1000) / payments).toFixed(0)} transactions`,
  );
}
await x402.close();
await daemon.stop({ force: true });
await sandbox.close();
rmSync(dataDir, { recursive: true, force: true });
