// The pool's lifetime, modelled and checked: prints model.ts's figures (transactions and leaves a day, days per
// tree, XLM a day, settlement backlog) for the traffic profiles and settlement settings docs/OPERATIONS.md sizes
// by; then runs a small profile for real on the sandbox (the real host, prover and proxy, our local x402 pair) at
// a tree capacity of 8 leaves, and compares the trees the model predicts with the trees the pool opened. It also
// lists the fees of the fresh pool's first operations apart from the later ones'.
// Usage: npx tsx bench/lifetime/run.ts [paymentSeconds=60]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { cpus, tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  FeeBumpTransaction,
  rpc,
  scValToNative,
  type Transaction,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';
import { PoolApi } from '../../src/api/client.ts';
import { loadConfig } from '../../src/proxy/config.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { localX402Env, startLocalX402 } from '../../src/x402/local-services.ts';
import { benchOperator, benchProxyEnv, startBenchProver } from '../helpers/stack.ts';
import { DEFAULT_SETTLEMENT, lifetime, PROFILES, type SettlementSettings } from './model.ts';

const paymentSeconds = Number(process.argv[2] ?? 60);
const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';
const n = (x: number, digits = 0) => x.toLocaleString('en-US', { maximumFractionDigits: digits });

// ---- the model ----
const settings: SettlementSettings[] = [
  DEFAULT_SETTLEMENT,
  { ...DEFAULT_SETTLEMENT, intervalSeconds: 300 },
  { ...DEFAULT_SETTLEMENT, roundSize: 32 },
];
console.log(
  '| profile | round size, interval | pool tx/day (settlement) | leaves/day | days per 2^20-leaf tree | XLM/day (proxy) | XLM/day (facilitators) | settlement wait | unsettled USDC |',
);
console.log('| --- | --- | --- | --- | --- | --- | --- | --- | --- |');
for (const s of settings)
  for (const p of PROFILES) {
    const l = lifetime(p, s);
    console.log(
      `| ${p.name} | ${s.roundSize}, ${s.intervalSeconds} s | ${n(l.transactionsPerDay.total)} (${n(l.transactionsPerDay.settlement)}) | ${n(l.leavesPerDay)} | ${n(l.daysPerTree, 1)} | ${n(l.xlmPerDay, 1)} | ${n(l.facilitatorXlmPerDay, 1)} | ${n(l.settlementWaitSeconds / 60, 1)} min | ${n(l.unsettledUsdc, 2)} |`,
    );
  }

// ---- a real run at a small tree capacity ----
const CAPACITY = 8;
const SETTLE_INTERVAL_MS = 2000;
const ROUND_SIZE = 2;
const AGENTS = 3;
const dataDir = mkdtempSync(join(tmpdir(), 'bench-lifetime-'));
const sandbox = await startPoolSandbox({ port: 0, ledgerMs: 250, treeCapacity: CAPACITY });
const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
const startLedger = (await server.getLatestLedger()).sequence;
const daemon = await startBenchProver();
const mint = await fetch(`${sandbox.url}/friendbot?addr=${sandbox.info.accounts.poolWallet}&usdc=100`);
if (!mint.ok) throw new Error(await mint.text());
await fetch(`${sandbox.url}/friendbot?addr=${sandbox.info.accounts.operator}&usdc=1000`);
const x402 = await startLocalX402({
  rpcUrl: sandbox.rpcUrl,
  networkPassphrase: sandbox.info.networkPassphrase,
  asset: sandbox.info.contracts.token,
  facilitator: { host: '127.0.0.1', port: 0 },
  demo: { host: '127.0.0.1', port: 0 },
});
const env = {
  ...benchProxyEnv(sandbox, daemon, dataDir),
  ...localX402Env(x402, undefined),
  POOL_PROXY_POOL_WALLET_SECRET: sandbox.secrets().poolWallet,
  POOL_PROXY_NETWORK_PASSPHRASE: sandbox.info.networkPassphrase,
  POOL_PROXY_BATCH_WINDOW_MS: '300',
  POOL_PROXY_SETTLE_INTERVAL_MS: String(SETTLE_INTERVAL_MS),
  POOL_PROXY_SETTLE_ROUND_SIZE: String(ROUND_SIZE),
  POOL_PROXY_INDEXER_POLL_MS: '100',
};
const proxy = await startProxy(loadConfig(env), { logger: silentLogger });
await proxy.ready;
const token = /^Bearer (.+)$/.exec(benchOperator(env).authorization!)![1]!;
const op = new PoolApi({ baseUrl: proxy.url, caller: { kind: 'operator', token }, timeoutMs: 600_000 });

const agents = Array.from({ length: AGENTS }, (_, i) => `life-${i}`);
for (const agentId of agents) await op.operatorDeposit({ agentId, amount: '2' });
const paying = performance.now();
let paid = 0;
while (performance.now() - paying < paymentSeconds * 1000) {
  await Promise.all(
    agents.map((agentId) =>
      op.pay({ agentId, serviceUrl: x402.demo.quoteUrl, method: 'GET' }).then(() => paid++),
    ),
  );
}
const paymentPhase = (performance.now() - paying) / 1000;
for (;;) {
  const books = await op.books();
  if (books.unsettled === '0.0000000' && !books.settling) break;
  await new Promise((r) => setTimeout(r, 250));
}
const destination = sandbox.info.accounts.operator;
for (const agentId of agents) {
  const { balance } = await op.balance(agentId);
  if (balance !== '0.0000000') await op.withdraw({ agentId, amount: balance, destination });
}
const trees = (await op.info()).trees;

// every transaction of the run, in order, by kind
function kindOf(tx: Transaction): string | undefined {
  const o = tx.operations[0];
  if (o?.type !== 'invokeHostFunction' || o.func.type !== 'hostFunctionTypeInvokeContract') return undefined;
  const args = o.func.value as xdr.InvokeContractArgs;
  const contract = scValToNative(xdr.ScVal.scvAddress(args.contractAddress)) as string;
  const fn = String(args.functionName);
  if (contract === sandbox.info.contracts.asp_membership && fn === 'insert_leaf') return 'ASP insert';
  if (contract !== sandbox.info.contracts.pool) return undefined;
  if (fn === 'disburse') return 'refill';
  if (fn !== 'transact') return undefined;
  const amount = BigInt((scValToNative(args.args[1] as xdr.ScVal) as { ext_amount: bigint }).ext_amount);
  return amount > 0n ? 'deposit' : amount < 0n ? 'withdrawal' : 'transfer';
}
const fees = new Map<string, bigint[]>();
let page = await server.getTransactions({ startLedger, pagination: { limit: 200 } });
for (;;) {
  for (const t of page.transactions) {
    if (t.status !== rpc.Api.GetTransactionStatus.SUCCESS) continue;
    const parsed = TransactionBuilder.fromXDR(t.envelopeXdr.toXdr('base64'), sandbox.info.networkPassphrase);
    const kind = kindOf(parsed instanceof FeeBumpTransaction ? parsed.innerTransaction : parsed);
    if (kind)
      fees.set(kind, [...(fees.get(kind) ?? []), BigInt(t.resultXdr.feeCharged as unknown as bigint)]);
  }
  if (page.transactions.length < 200) break;
  page = await server.getTransactions({ pagination: { cursor: page.cursor, limit: 200 } });
}
const count = (k: string) => fees.get(k)?.length ?? 0;
const poolTx = count('deposit') + count('withdrawal') + count('transfer') + count('refill');
const fromCounts = Math.ceil((2 * poolTx) / CAPACITY);
const modelled =
  count('deposit') +
  count('withdrawal') +
  count('refill') +
  Math.round((paymentPhase * 1000) / SETTLE_INTERVAL_MS) * ROUND_SIZE;
const xlm = (s: bigint) => (Number(s) / 1e7).toFixed(4);
const median = (l: bigint[]) =>
  [...l].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[Math.floor(l.length / 2)] ?? 0n;

console.log(
  `\nreal run: ${cpus().length}× ${cpu}, tree capacity ${CAPACITY}, ${AGENTS} agents, ${paid} payments in ${paymentPhase.toFixed(0)} s, rounds of ${ROUND_SIZE} every ${SETTLE_INTERVAL_MS} ms (mean)`,
);
console.log(`| kind | transactions | first fee (XLM) | median fee (XLM) |`);
console.log(`| --- | --- | --- | --- |`);
for (const [kind, list] of fees)
  console.log(`| ${kind} | ${list.length} | ${xlm(list[0]!)} | ${xlm(median(list))} |`);
console.log(
  `trees opened: ${trees.count} (current ${trees.current}, ${trees.leavesUsed} of ${trees.capacity} leaves used); ` +
    `predicted from the transactions counted: ${fromCounts}; from the model's settlement rate over the payment ` +
    `phase (${modelled} transactions): ${Math.ceil((2 * modelled) / CAPACITY)}`,
);
await proxy.close();
await x402.close();
await daemon.stop({ force: true });
await sandbox.close();
rmSync(dataDir, { recursive: true, force: true });
