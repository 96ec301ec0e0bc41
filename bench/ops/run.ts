// What each of the pool's operations costs on the real Soroban host, against testnet's per-transaction
// limits: a deposit, a withdrawal, a settlement transfer (a shielded transfer inside the pool), an ASP
// allowlist insert and an x402 payment (a USDC transfer), each made by the proxy as in production, on the
// embedded sandbox (which prices and limits with testnet's published settings). For every transaction of the
// run it reads what the ledger reports: stellar-core's `core_metrics` diagnostic events (CPU instructions,
// memory, entries and bytes read and written, event bytes), the declared resources and the envelope size,
// and the resource fee charged (SorobanTransactionMetaExtV1), and prints each operation's figures with the
// headroom left under testnet's limit (100 % − used / limit).
// Usage: npx tsx bench/ops/run.ts [repeats=3]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent } from 'node:http';
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
import { callJson } from '../helpers/http.ts';
import { benchOperator, benchProxyEnv, startBenchProver } from '../helpers/stack.ts';
import { loadConfig } from '../../src/proxy/config.ts';
import { startProxy } from '../../src/proxy/server.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';
import { startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { startLocalX402 } from '../../src/x402/local-services.ts';

const repeats = Number(process.argv[2] ?? 3);
const http = new Agent({ keepAlive: false });
let operator: Record<string, string> | undefined;
const call = (url: string, body?: unknown) =>
  callJson(url, { body, agent: http, headers: (operator ??= benchOperator(env)), timeoutMs: 300_000 });
const cpu = /model name\s*:\s*(.*)/.exec(readFileSync('/proc/cpuinfo', 'utf8'))?.[1] ?? 'unknown CPU';

const dataDir = mkdtempSync(join(tmpdir(), 'bench-ops-'));
const sandbox = await startPoolSandbox({ port: 0, ledgerMs: 500 });
const info = sandbox.info;
const limits = sandbox.chain.host.info().limits;
const daemon = await startBenchProver();
await fetch(`${sandbox.url}/friendbot?addr=${info.accounts.operator}&usdc=1000`);
await fetch(`${sandbox.url}/friendbot?addr=${info.accounts.poolWallet}&usdc=100`);
const x402 = await startLocalX402({
  rpcUrl: sandbox.rpcUrl,
  networkPassphrase: info.networkPassphrase,
  asset: info.contracts.token,
  facilitator: { host: '127.0.0.1', port: 0 },
  demo: { host: '127.0.0.1', port: 0 },
});
const env = benchProxyEnv(sandbox, daemon, dataDir);
const proxy = await startProxy(
  loadConfig({
    ...env,
    POOL_PROXY_POOL_WALLET_SECRET: sandbox.secrets().poolWallet,
    POOL_PROXY_PAY_ALLOWED_HOSTS: new URL(x402.demo.quoteUrl).host,
    POOL_PROXY_BATCH_WINDOW_MS: '500',
    POOL_PROXY_SETTLE_INTERVAL_MS: '2000',
    POOL_PROXY_SETTLE_ROUND_SIZE: '1',
    POOL_PROXY_REGISTRATION_SLOT_SECONDS: '2',
    POOL_PROXY_SIGNING_WINDOW_SECONDS: '1',
  }),
  { logger: silentLogger },
);
await proxy.ready;
const startLedger = (await new rpc.Server(sandbox.rpcUrl, { allowHttp: true }).getLatestLedger()).sequence;

for (let i = 0; i < repeats; i++) {
  const agentId = `ops-${i}`;
  const ok = (what: string, r: { status: number; json: unknown }) => {
    if (r.status !== 200) throw new Error(`${what}: ${r.status} ${JSON.stringify(r.json)}`);
  };
  ok('deposit', await call(`${proxy.url}/api/deposit`, { agentId, amount: '5' }));
  ok('pay', await call(`${proxy.url}/api/pay`, { agentId, serviceUrl: x402.demo.quoteUrl, method: 'GET' }));
  ok(
    'withdraw',
    await call(`${proxy.url}/api/withdraw`, {
      agentId,
      amount: '1',
      destination: info.accounts.operator,
    }),
  );
}
// settlement moves the agents' debts inside the pool: wait for its transfers
const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
const deadline = Date.now() + 120_000;
const rows = new Map<string, Row[]>();
interface Row {
  cpu: number;
  mem: number;
  readEntries: number;
  writeEntries: number;
  diskReadBytes: number;
  writeBytes: number;
  eventBytes: number;
  txBytes: number;
  footprint: number;
  declaredInstructions: number;
  resourceFee: bigint;
  feeCharged: bigint;
}

function kindOf(tx: Transaction): string | undefined {
  const op = tx.operations[0];
  if (op?.type !== 'invokeHostFunction' || op.func.type !== 'hostFunctionTypeInvokeContract')
    return undefined;
  const args = op.func.value as xdr.InvokeContractArgs;
  const contract = scValToNative(xdr.ScVal.scvAddress(args.contractAddress)) as string;
  const fn = String(args.functionName);
  if (contract === info.contracts.asp_membership && fn === 'insert_leaf') return 'ASP insert';
  if (contract === info.contracts.token && fn === 'transfer') return 'x402 payment (USDC transfer)';
  if (contract === info.contracts.pool && (fn === 'transact' || fn === 'disburse')) {
    const ext = scValToNative(args.args[1] as xdr.ScVal) as { ext_amount: bigint };
    const amount = BigInt(ext.ext_amount);
    if (fn === 'disburse') return 'float refill (disburse)';
    return amount > 0n ? 'deposit' : amount < 0n ? 'withdrawal' : 'settlement transfer';
  }
  return undefined;
}

async function collect(): Promise<void> {
  rows.clear();
  let page = await server.getTransactions({ startLedger, pagination: { limit: 200 } });
  for (;;) {
    for (const t of page.transactions) {
      if (t.status !== rpc.Api.GetTransactionStatus.SUCCESS) continue;
      const parsed = TransactionBuilder.fromXDR(t.envelopeXdr.toXdr('base64'), info.networkPassphrase);
      const tx = parsed instanceof FeeBumpTransaction ? parsed.innerTransaction : parsed;
      const kind = kindOf(tx);
      if (!kind) continue;
      const metrics = new Map<string, number>();
      for (const d of t.diagnosticEventsXdr ?? []) {
        const body = d.event.body.value as xdr.ContractEventV0;
        if (body.topics[0]?.type === 'scvSymbol' && String(body.topics[0].value) === 'core_metrics')
          metrics.set(String(body.topics[1]?.value), Number(scValToNative(body.data)));
      }
      const env = tx.toEnvelope();
      const data =
        env.type === 'envelopeTypeTx' && env.value.tx.ext.type === 'sorobanData'
          ? env.value.tx.ext.value
          : undefined;
      const meta = t.resultMetaXdr;
      const soroban = meta.type === 'v4' ? meta.value.sorobanMeta : undefined;
      const fees = soroban?.ext.type === 'v1' ? soroban.ext.value : undefined;
      const row: Row = {
        cpu: metrics.get('cpu_insn') ?? NaN,
        mem: metrics.get('mem_byte') ?? NaN,
        readEntries: metrics.get('read_entry') ?? NaN,
        writeEntries: metrics.get('write_entry') ?? NaN,
        diskReadBytes: metrics.get('ledger_read_byte') ?? NaN,
        writeBytes: metrics.get('ledger_write_byte') ?? NaN,
        eventBytes: metrics.get('emit_event_byte') ?? NaN,
        txBytes: t.envelopeXdr.toXdr().length,
        footprint: data
          ? data.resources.footprint.readOnly.length + data.resources.footprint.readWrite.length
          : NaN,
        declaredInstructions: data ? Number(data.resources.instructions) : NaN,
        resourceFee: fees
          ? BigInt(fees.totalNonRefundableResourceFeeCharged as unknown as bigint) +
            BigInt(fees.totalRefundableResourceFeeCharged as unknown as bigint)
          : 0n,
        feeCharged: BigInt(t.resultXdr.feeCharged as unknown as bigint),
      };
      rows.set(kind, [...(rows.get(kind) ?? []), row]);
    }
    if (page.transactions.length < 200) return;
    page = await server.getTransactions({ pagination: { cursor: page.cursor, limit: 200 } });
  }
}

for (;;) {
  await collect();
  if ((rows.get('settlement transfer')?.length ?? 0) >= 1 || Date.now() > deadline) break;
  await new Promise((r) => setTimeout(r, 2000));
}
await proxy.close();
await x402.close();
await daemon.stop({ force: true });
await sandbox.close();
rmSync(dataDir, { recursive: true, force: true });

const median = (v: number[]) => [...v].sort((a, b) => a - b)[Math.floor(v.length / 2)] ?? NaN;
const medianBig = (v: bigint[]) =>
  [...v].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))[Math.floor(v.length / 2)] ?? 0n;
const head = (used: number, limit: number) =>
  `${used.toLocaleString('en')} (${(100 - (100 * used) / limit).toFixed(1)} %)`;
console.log(
  `${cpu}, ${cpus().length} CPUs; ${new Date().toISOString()}; medians of each operation's transactions`,
);
console.log(
  `limits (testnet): ${limits.txMaxInstructions.toLocaleString('en')} instructions, ${limits.txMemoryLimit.toLocaleString('en')} bytes of memory, ` +
    `${limits.txMaxFootprintEntries} footprint entries, ${limits.txMaxWriteLedgerEntries} written entries, ` +
    `${limits.txMaxDiskReadBytes.toLocaleString('en')} disk-read bytes, ${limits.txMaxWriteBytes.toLocaleString('en')} written bytes, ` +
    `${limits.txMaxSizeBytes.toLocaleString('en')} transaction bytes, ${limits.txMaxContractEventsSizeBytes.toLocaleString('en')} event bytes`,
);
console.log(
  'operation | n | CPU instructions (headroom) | memory bytes (headroom) | footprint entries | written entries | disk-read bytes | written bytes | tx bytes | event bytes | resource fee (XLM) | fee charged (XLM)',
);
for (const [kind, list] of [...rows].sort()) {
  const m = (f: (r: Row) => number) => median(list.map(f));
  console.log(
    [
      kind,
      list.length,
      head(
        m((r) => r.cpu),
        limits.txMaxInstructions,
      ),
      head(
        m((r) => r.mem),
        limits.txMemoryLimit,
      ),
      head(
        m((r) => r.footprint),
        limits.txMaxFootprintEntries,
      ),
      head(
        m((r) => r.writeEntries),
        limits.txMaxWriteLedgerEntries,
      ),
      head(
        m((r) => r.diskReadBytes),
        limits.txMaxDiskReadBytes,
      ),
      head(
        m((r) => r.writeBytes),
        limits.txMaxWriteBytes,
      ),
      head(
        m((r) => r.txBytes),
        limits.txMaxSizeBytes,
      ),
      head(
        m((r) => r.eventBytes),
        limits.txMaxContractEventsSizeBytes,
      ),
      (Number(medianBig(list.map((r) => r.resourceFee))) / 1e7).toFixed(4),
      (Number(medianBig(list.map((r) => r.feeCharged))) / 1e7).toFixed(4),
    ].join(' | '),
  );
}
process.exit(0);
