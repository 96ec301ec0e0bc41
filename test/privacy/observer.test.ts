// The adversarial observer: agents deposit from their own wallets and pay x402 services of several prices in
// several batch windows (three scenarios: different agent counts, prices and windows, on one stack). Then
// everything the sandbox recorded (transactions, signers, USDC transfers, pool events, ledgers) is read back
// through the public RPC and attacked with src/cli/demo/inference.ts: subset-sum matching of the pool's public
// outflows to per-agent sums (within a batch and across batches), deposit → payment linking by amounts and
// times, and counting the agents who paid in a window. Ground truth (who paid what) is known here only to
// judge the attacks. A self-check runs the same judgement on what per-agent `disburse` settlement published
// (one outflow per agent and window, of that agent's debt) and must find it broken. All along, the observer
// also polls the proxy's public statistics and its metrics: the metrics refuse it, and every statistic is
// what the chain shows (across the settlement rounds, only the count of pool transactions moves, by exactly
// the transactions the rounds put on the ledger), so polling them counts no paying agents either.
// The second test checks the books: pool USDC = Σ unspent notes (agents' and the float account's),
// available balances never dipped, the float came back, and an empty store rebuilds the float account.
// Requests go through PoolApi (wallets, the operator, the public); raw only for /metrics, which is not the
// REST API.
import { join } from 'node:path';
import { Keypair, TransactionBuilder } from '#stellar-sdk';
import test from 'ava';
import {
  type AmountView,
  amountView,
  anonymitySets,
  candidatePayers,
  matchOutflows,
  type Move,
  transactionsAfterBatches,
} from '../../src/cli/demo/inference.ts';
import { observe } from '../../src/cli/demo/observer.ts';
import type { ProxyHandle } from '../../src/proxy/server.ts';
import { type DemoServiceHandle, startDemoService } from '../../src/x402/demo-service.ts';
import { type LocalX402, localX402Env, startLocalX402 } from '../../src/x402/local-services.ts';
import type { OperatorBooks, PoolStats } from '../../src/api/types.ts';
import { PoolApi } from '../proxy/helpers/api.ts';
import { getJson } from '../proxy/helpers/http.ts';
import { type Stack, startStack, USDC } from '../proxy/helpers/stack.ts';

const ROUND_SIZE = 4;
const FLOAT = USDC; // the pool wallet's float: 1 USDC
const UNIT = USDC / 10n;
const LOW = (8n * USDC) / 10n;
const GAP_LEDGERS = 3;

let stack: Stack;
let proxy: ProxyHandle;
let local: LocalX402;
const services: Record<string, DemoServiceHandle> = {};
let poolWallet: string;

/** Ground truth, known to the test only. */
interface Paid {
  scenario: string;
  window: number;
  wallet: string;
  amount: bigint;
  txHash: string;
  batchId: string;
}
const truth: Paid[] = [];
const deposits: Array<{ wallet: string; amount: bigint }> = [];
/** Each agent's available balance right after its last payment, and every sample taken since. */
const balances = new Map<string, { api: PoolApi; after: bigint; samples: bigint[] }>();
let window = 0;

const stroops = (s: string) => {
  const [w, f = ''] = s.split('.');
  return BigInt(w!) * USDC + BigInt(f.padEnd(7, '0'));
};
const fmt = (v: bigint) => `${v / USDC}.${(v % USDC).toString().padStart(7, '0')}`;
/** The operator's token (the proxy's books and metrics). */
let operator: Record<string, string>;
/** The public's client (no credentials): what any observer may ask the proxy. */
const publicApi = () => new PoolApi({ baseUrl: proxy.url });

test.before(async () => {
  stack = await startStack({
    POOL_PROXY_BATCH_WINDOW_MS: '1500',
    POOL_PROXY_SETTLE_INTERVAL_MS: '3000',
    POOL_PROXY_SETTLE_ROUND_SIZE: String(ROUND_SIZE),
    POOL_PROXY_FLOAT_TARGET: fmt(FLOAT),
    POOL_PROXY_FLOAT_LOW: fmt(LOW),
    POOL_PROXY_FLOAT_UNIT: fmt(UNIT),
    POOL_PROXY_FLOAT_REFILL_INTERVAL_MS: '2000',
    POOL_PROXY_RECONCILE_INTERVAL_MS: '1000',
  });
  await stack.proxy.close();
  operator = stack.operator;
  const { sandbox } = stack;
  poolWallet = sandbox.info.accounts.poolWallet;
  await stack.fund(poolWallet, Number(FLOAT) / Number(USDC));
  local = await startLocalX402({
    rpcUrl: sandbox.rpcUrl,
    networkPassphrase: stack.config.ledger.networkPassphrase,
    asset: sandbox.info.contracts.token,
    facilitator: { host: '127.0.0.1', port: 0 },
    // authorizations that outlive a slow burst on a loaded machine
    demo: { host: '127.0.0.1', port: 0, maxTimeoutSeconds: 300 },
    channelCount: 16,
  });
  services['0.01'] = local.demo;
  for (const price of ['0.07', '0.02', '0.05']) {
    const payTo = Keypair.random().publicKey();
    await stack.fund(payTo, 0);
    services[price] = await startDemoService({
      host: '127.0.0.1',
      port: 0,
      facilitator: local.facilitator.client,
      network: local.facilitator.network,
      asset: sandbox.info.contracts.token,
      payTo,
      price: stroops(price).toString(),
      maxTimeoutSeconds: 300,
    });
  }
  const hosts = Object.values(services).map((s) => new URL(s.url).host);
  ({ proxy } = await stack.startProxy({
    ...localX402Env(local, hosts.join(',')),
    POOL_PROXY_POOL_WALLET_SECRET: sandbox.secrets().poolWallet,
  }));
});

test.after.always(async () => {
  await proxy?.close();
  for (const [price, s] of Object.entries(services)) if (price !== '0.01') await s.close();
  await local?.close();
  await stack?.close();
});

/** The operator's books of the proxy under test, or of the one at `url`. */
function books(url = proxy.url): Promise<OperatorBooks> {
  return stack.operatorApi(url).books();
}

/** The pool wallet's float in `b` (the books of a proxy with payments on hold it). */
function poolWalletOf(b: OperatorBooks): bigint {
  if (b.poolWallet === undefined) throw new Error(`books without the pool wallet: ${JSON.stringify(b)}`);
  return stroops(b.poolWallet);
}

/** What the observer polls besides the chain: the public stats and the metrics (status only: it is refused). */
const polled: Array<{ metricsStatus: number; stats: PoolStats }> = [];
let polling: NodeJS.Timeout | undefined;
function pollPublic(): void {
  polling = setInterval(() => {
    void Promise.all([getJson(`${proxy.url}/metrics`), publicApi().stats()])
      .then(([metrics, stats]) => polled.push({ metricsStatus: metrics.status, stats }))
      .catch(() => undefined);
  }, 300);
}

/**
 * The public stats at a quiet moment: no settlement round or refill under way over 1.5 s (more than a
 * reconciliation interval, so no confirmation is still being counted), the stats the same at both ends, and
 * no ledger closed while they were read; with the ledger they describe, and the operator's metrics text.
 */
async function quiet(): Promise<{ stats: PoolStats; ledger: number; metrics: string }> {
  const read = () => publicApi().stats();
  for (;;) {
    const first = await read();
    const before = await books();
    await new Promise((r) => setTimeout(r, 1500));
    const during = await books();
    const ledger = (await stack.server.getLatestLedger()).sequence;
    const stats = await read();
    const metrics = (await getJson(`${proxy.url}/metrics`, operator)).text;
    const after = await books();
    const still = (await stack.server.getLatestLedger()).sequence === ledger;
    const idle = !before.settling && !during.settling && !after.settling;
    if (idle && still && JSON.stringify(first) === JSON.stringify(stats)) return { stats, ledger, metrics };
  }
}

async function until(what: string, check: () => Promise<boolean>, ms = 300_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await check())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

async function sampleBalances(): Promise<void> {
  for (const b of balances.values()) {
    const { agents } = await b.api.agents();
    b.samples.push(stroops(agents[0]!.balance));
  }
}

/** Agents deposit from their own wallets, then pay `windows[w][agent]` (prices) in window w. */
async function scenario(name: string, deposit: string[], windows: string[][][]): Promise<void> {
  const agents = await Promise.all(
    deposit.map(async (amount) => {
      const wallet = Keypair.random();
      await stack.fund(wallet.publicKey(), 1);
      const api = await stack.walletApi(wallet, proxy.url);
      const prepared = await api.prepareDeposit({ amount, publicKey: wallet.publicKey() });
      const tx = TransactionBuilder.fromXDR(prepared.transactionXDR, stack.config.ledger.networkPassphrase);
      tx.sign(wallet);
      const submitted = await api.submitDeposit({
        prepareId: prepared.prepareId,
        signedTransactionXDR: tx.toXDR(),
      });
      if (submitted.status !== 'confirmed') throw new Error(`submit: ${JSON.stringify(submitted)}`);
      deposits.push({ wallet: wallet.publicKey(), amount: stroops(amount) });
      return { wallet: wallet.publicKey(), api };
    }),
  );
  for (const prices of windows) {
    window += 1;
    const results = await Promise.all(
      prices.flatMap((list, i) =>
        list.map(async (price) => {
          const a = agents[i]!;
          const res = await a.api.pay({ serviceUrl: services[price]!.quoteUrl, method: 'GET' });
          if (res.paymentStatus !== 'confirmed' || res.receipt === undefined)
            throw new Error(`pay: ${JSON.stringify(res)}`);
          return { a, price, res, receipt: res.receipt };
        }),
      ),
    );
    for (const { a, price, res, receipt } of results) {
      truth.push({
        scenario: name,
        window,
        wallet: a.wallet,
        amount: stroops(price),
        txHash: receipt.transaction,
        batchId: res.batchId,
      });
    }
    for (const a of agents) {
      const { agents: listed } = await a.api.agents();
      balances.set(a.wallet, { api: a.api, after: stroops(listed[0]!.balance), samples: [] });
    }
    await sampleBalances();
  }
}

/** Judges the subset-sum attack with ground truth: does any outflow equal one agent's spending over a run of windows? */
function spendingLeaks(
  outflows: Array<{ amount: bigint; ledger: number }>,
  windowLedger: Map<number, number>,
) {
  const leaks: string[] = [];
  const windows = [...new Set(truth.map((p) => p.window))].sort((a, b) => a - b);
  for (const o of outflows) {
    const before = windows.filter((w) => windowLedger.get(w)! <= o.ledger);
    for (let i = 0; i < before.length; i++) {
      for (let j = i; j < before.length; j++) {
        const range = truth.filter((p) => p.window >= before[i]! && p.window <= before[j]!);
        const total = range.reduce((s, p) => s + p.amount, 0n);
        const perAgent = new Map<string, bigint>();
        for (const p of range) perAgent.set(p.wallet, (perAgent.get(p.wallet) ?? 0n) + p.amount);
        for (const [wallet, sum] of perAgent) {
          if (sum === o.amount && sum !== total)
            leaks.push(
              `${fmt(o.amount)} = spending of ${wallet.slice(0, 6)} in windows ${before[i]}–${before[j]}`,
            );
        }
      }
    }
  }
  return leaks;
}

/** Deposit → payment links: a payment only one wallet could have made, or a spending group only one could fund. */
function depositLinks(av: AmountView, leaks: Array<{ amount: bigint; ledger: number }>): string[] {
  const links: string[] = [];
  for (const p of av.payments) {
    const c = candidatePayers(av, p);
    if (c.length === 1)
      links.push(`payment ${fmt(p.amount)} at ledger ${p.ledger}: only ${c[0]!.slice(0, 6)}`);
  }
  for (const o of leaks) {
    const c = candidatePayers(av, { ...o, txHash: '', from: '', to: '' });
    if (c.length === 1) links.push(`spending ${fmt(o.amount)}: only ${c[0]!.slice(0, 6)} deposited enough`);
  }
  return links;
}

/** What per-agent `disburse` settlement published: per window, one outflow per paying agent of its debt. */
function perAgentDisburse(av: AmountView, windowLedger: Map<number, number>): Move[] {
  const out: Move[] = [];
  for (const [w, ledger] of windowLedger) {
    const perAgent = new Map<string, bigint>();
    for (const p of truth.filter((x) => x.window === w))
      perAgent.set(p.wallet, (perAgent.get(p.wallet) ?? 0n) + p.amount);
    for (const sum of perAgent.values())
      out.push({ ledger: ledger + 1, txHash: '', from: 'pool', to: poolWallet, amount: sum });
  }
  return out.sort((a, b) => a.ledger - b.ledger);
}

test.serial(
  'an observer with the whole ledger cannot group payments by agent, link deposits or count payers',
  async (t) => {
    const startLedger = (await stack.server.getLatestLedger()).sequence;
    pollPublic();
    // Scenario A: two agents, two prices, one window.
    await scenario('A', ['0.1', '0.2'], [[['0.01'], ['0.07', '0.01']]]);
    // Scenario B, four agents in one window: a pays 0.01; b 0.07; c 0.01 + 0.01 + 0.07 three times over (more
    // than any other wallet deposited); d 0.01 × 3.
    await scenario(
      'B',
      ['0.05', '0.08', '0.5', '0.05'],
      [[['0.01'], ['0.07'], ['0.01', '0.01', '0.07', '0.07', '0.07'], ['0.01', '0.01', '0.01']]],
    );
    // Scenario C: three agents, other prices, two windows.
    await scenario(
      'C',
      ['0.3', '0.1', '0.1'],
      [
        [['0.02'], ['0.05'], []],
        [['0.05'], [], ['0.02', '0.02']],
      ],
    );
    // The last payments are made: from here on only settlement rounds and refills run.
    const paid = await quiet();
    // Every debt settled, the settlement round finished, the float refilled above its low mark.
    await until('settlement and refill', async () => {
      await sampleBalances();
      const b = await books();
      return stroops(b.unsettled) === 0n && !b.settling && poolWalletOf(b) >= LOW;
    });
    await sampleBalances();
    const settled = await quiet();
    clearInterval(polling);
    const endLedger = settled.ledger;

    const info = stack.sandbox.info;
    const view = await observe(
      stack.sandbox.rpcUrl,
      stack.config.ledger.networkPassphrase,
      info.contracts,
      startLedger,
      endLedger,
    );
    const av = amountView(view, { pool: info.contracts.pool, poolWallet }, GAP_LEDGERS);

    // The observer's batches (public bursts of payments) are the unit of everything below: each true payment is
    // placed in the burst its transfer landed in. (A window's requests usually make one batch; on a loaded
    // machine some may fall into the next one, which changes nothing here.)
    const batchOf = new Map(av.batches.flatMap((b, i) => b.payments.map((p) => [p.txHash, i + 1] as const)));
    for (const p of truth) p.window = batchOf.get(p.txHash) ?? 0;
    t.true(
      truth.every((p) => p.window > 0),
      'every payment is a public transfer in a burst',
    );
    t.true(av.batches.length >= window, `${av.batches.length} bursts for ${window} windows`);
    const windowLedger = new Map<number, number>();
    av.batches.forEach((b, i) => windowLedger.set(i + 1, b.lastLedger));
    t.is(av.payments.length, truth.length);

    // 1. Subset-sum: every public amount out of the pool is a float refill in round units; none is an agent's spending.
    t.true(av.refills.length > 0, 'the float was refilled');
    t.deepEqual(av.withdrawals, [], 'no other outflow');
    for (const r of av.refills) t.is(r.amount % UNIT, 0n, `refill ${fmt(r.amount)} is in round units`);
    const leaks = spendingLeaks(av.refills, windowLedger);
    t.deepEqual(leaks, [], 'no outflow equals an agent’s spending');
    const matches = matchOutflows(av);
    t.log('outflows (amount: subsets of payments matching it within the last batch / across batches)');
    for (const m of matches) t.log(`  ${fmt(m.outflow.amount)}: ${m.withinLastBatch} / ${m.acrossBatches}`);

    // 2. Deposit → payment: every batch's payments could have come from at least two wallets.
    const sets = anonymitySets(av);
    t.log(
      `anonymity set per batch (wallets that could have made its least-covered payment): ${sets.join(', ')}`,
    );
    t.true(
      sets.every((n) => n >= 2),
      `anonymity sets ${sets}`,
    );
    t.deepEqual(depositLinks(av, []), []);

    // 3. Counting: settlement moves no public amount and runs in rounds of a fixed size, whatever the payers.
    const operatorTx = av.shielded.filter((s) => s.source === info.accounts.operator);
    const deposited = new Set(av.deposits.map((d) => d.txHash));
    const transfers = operatorTx.filter((s) => !deposited.has(s.txHash));
    t.is(
      transfers.length % ROUND_SIZE,
      0,
      `${transfers.length} shielded transfers: whole rounds of ${ROUND_SIZE}`,
    );
    const payers = av.batches.map(
      (_, i) => new Set(truth.filter((p) => p.window === i + 1).map((p) => p.wallet)).size,
    );
    const estimate = transactionsAfterBatches(av);
    t.log(
      `paying agents per window ${payers.join(', ')}; pool transactions after each batch ${estimate.join(', ')}`,
    );
    t.false(
      estimate.every((n, i) => n === payers[i]),
      'counting the transactions after a batch does not count its payers',
    );

    // Self-check: the same judgement of what per-agent disburse published finds every agent's spending, a
    // deposit → payment link, and the number of payers.
    const disbursed = perAgentDisburse(av, windowLedger);
    const old = { ...av, refills: disbursed, shielded: [] };
    const oldLeaks = spendingLeaks(disbursed, windowLedger);
    t.log(`per-agent disburse would have published ${disbursed.map((d) => fmt(d.amount)).join(', ')}`);
    t.log(`  spending found: ${oldLeaks.length}; links: ${depositLinks(old, disbursed).join('; ')}`);
    t.true(oldLeaks.length >= 5, oldLeaks.join('\n'));
    t.true(depositLinks(old, disbursed).length > 0);
    t.deepEqual(transactionsAfterBatches(old), payers, 'per-agent disburse counts the payers');

    // 4. The proxy's public numbers, polled all along, are the chain's. The metrics refuse the observer.
    t.true(polled.length > 10, `${polled.length} polls`);
    t.true(
      polled.every((p) => p.metricsStatus === 401),
      'the metrics (requests and ledger operations by kind) are the operator’s only',
    );
    // (the pool's transactions: transfers, deposits and withdrawals call `transact`, float refills `disburse`)
    const poolTransactions = (from: number, to: number) =>
      view.transactions.filter(
        (x) =>
          x.successful &&
          x.calls.some((c) => c === 'transact' || c === 'disburse') &&
          x.ledger > from &&
          x.ledger <= to,
      ).length;
    const final = settled.stats;
    t.is(final.activeAgents, new Set(av.deposits.map((d) => d.from)).size, 'agents: the depositing wallets');
    t.is(final.servicesUsed, new Set(av.payments.map((p) => p.to)).size, 'services: the distinct payees');
    // at every quiet moment, the count of transactions is the chain's (pool transactions and payments)
    const onLedger = (to: number) =>
      poolTransactions(startLedger, to) + av.payments.filter((p) => p.ledger <= to).length;
    for (const q of [paid, settled]) t.is(q.stats.totalTransactions, onLedger(q.ledger), 'the chain’s count');
    const perBatch = new Map<string, number>();
    for (const p of truth) perBatch.set(p.batchId, (perBatch.get(p.batchId) ?? 0) + 1);
    for (const [batchId, n] of perBatch)
      t.is(
        final.recentBatches.find((b) => b.batchId === batchId)?.payments,
        n,
        'a batch: its confirmed payments, each a public transfer',
      );
    t.true(
      polled.every(
        (p) =>
          Object.keys(p.stats.recentBatches[0] ?? { batchId: 0, executedAt: 0, payments: 0 }).length === 3,
      ),
      'nothing else of a batch (no failures, no duration)',
    );
    // Around the settlement rounds that followed the last payments, only the number of pool transactions
    // moved, by the transactions the rounds put on the ledger: polling counts no paying agents.
    t.deepEqual(
      { ...settled.stats, totalTransactions: 0 },
      { ...paid.stats, totalTransactions: 0 },
      'nothing but the transaction count moved across the rounds',
    );
    t.log(
      `pool transactions between the two quiet moments: ${poolTransactions(paid.ledger, settled.ledger)}`,
    );
    // The operator's own metrics count every transfer of a round as a settlement (agents' settlements,
    // consolidations in a round and padding alike): even its monitoring cannot tell them apart.
    const settlementsCounted = Number(
      /pool_proxy_ledger_operations_total\{kind="settlement",outcome="confirmed"\} (\d+)/.exec(
        settled.metrics,
      )?.[1],
    );
    t.is(settlementsCounted, transfers.length, 'every shielded transfer of the rounds, one kind');
    t.false(/kind="consolidate"/.test(settled.metrics));
  },
);

test.serial(
  'the books: pool USDC = Σ notes (agents and float account), balances never dipped, recovery rebuilds the float account',
  async (t) => {
    await until('nothing owed', async () => {
      const x = await books();
      return stroops(x.unsettled) === 0n && !x.settling;
    });
    const b = await books();
    const poolUsdc = await stack.usdcBalance(stack.sandbox.info.contracts.pool);
    t.is(
      poolUsdc,
      stroops(b.agentNotes) + stroops(b.floatAccount),
      'pool USDC = agents’ notes + float account’s notes',
    );
    // Conservation: the float not in the pool wallet is in the float account (nothing is owed any more).
    t.is(await stack.usdcBalance(poolWallet), poolWalletOf(b));
    t.is(
      poolWalletOf(b) + stroops(b.floatAccount),
      FLOAT,
      'the float came back: pool wallet + float account',
    );
    t.true(poolWalletOf(b) >= LOW, 'the pool wallet was refilled above its low mark');
    for (const [wallet, s] of balances) {
      t.true(
        s.samples.every((v) => v === s.after),
        `${wallet.slice(0, 6)}: ${s.samples.map(fmt).join(' ')} never dipped`,
      );
    }
    // An empty store with the same master key rebuilds the float account's notes from the chain.
    await proxy.close();
    const { proxy: recovered } = await stack.startProxy({
      POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'recovered'),
    });
    try {
      const r = await books(recovered.url);
      t.is(r.floatAccount, b.floatAccount);
      t.is(r.agentNotes, b.agentNotes);
    } finally {
      await recovered.close();
    }
  },
);
