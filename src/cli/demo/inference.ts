// What an adversary with the whole ledger and arithmetic can infer about who paid what, from public data only
// (an ObserverView read from the RPC, and the pool's public addresses). It sorts the public USDC moves into
// deposits (→ pool), payments (pool wallet → services, clustered into batches by time), pool outflows to the
// pool wallet (settlement or float refills) and other withdrawals, and counts the pool transactions that move
// no USDC (shielded transfers). On that it runs the attacks a careful observer would:
//   - subset-sum: which payments could add up to each pool outflow (an outflow equal to one agent's spending
//     groups that agent's payments and tells how much it spent);
//   - deposit → payment: which depositing wallets could have paid each payment (the anonymity set);
//   - counting: how many pool transactions follow each batch (one per paying agent would count them).
// `pool-proxy demo` prints these; test/privacy/observer.test.ts runs them against ground truth.
import type { ObserverView } from './observer.ts';

export interface PublicAddresses {
  pool: string;
  poolWallet: string;
}

export interface Move {
  ledger: number;
  txHash: string;
  from: string;
  to: string;
  amount: bigint;
}

export interface Batch {
  firstLedger: number;
  lastLedger: number;
  payments: Move[];
}

export interface AmountView {
  deposits: Move[];
  /** pool wallet → anyone but the pool: x402 payments */
  payments: Move[];
  batches: Batch[];
  /** pool → pool wallet */
  refills: Move[];
  /** pool → anyone else */
  withdrawals: Move[];
  /** successful pool transactions that move no USDC (shielded transfers, consolidations) */
  shielded: { ledger: number; txHash: string; source: string }[];
}

/** Sorts the public moves. Payments more than `gapLedgers` ledgers apart start a new batch. */
export function amountView(view: ObserverView, pub: PublicAddresses, gapLedgers: number): AmountView {
  const moves = view.transfers.map((t) => ({ ...t }));
  const deposits = moves.filter((m) => m.to === pub.pool && m.from !== pub.pool);
  const payments = moves.filter((m) => m.from === pub.poolWallet && m.to !== pub.pool);
  const refills = moves.filter((m) => m.from === pub.pool && m.to === pub.poolWallet);
  const withdrawals = moves.filter((m) => m.from === pub.pool && m.to !== pub.poolWallet);
  const batches: Batch[] = [];
  for (const p of [...payments].sort((a, b) => a.ledger - b.ledger)) {
    const last = batches.at(-1);
    if (last !== undefined && p.ledger - last.lastLedger <= gapLedgers) {
      last.payments.push(p);
      last.lastLedger = p.ledger;
    } else batches.push({ firstLedger: p.ledger, lastLedger: p.ledger, payments: [p] });
  }
  const moving = new Set(moves.map((m) => m.txHash));
  const shielded = view.transactions
    .filter((t) => t.successful && !moving.has(t.txHash) && t.calls.some((c) => c === 'transact'))
    .map((t) => ({ ledger: t.ledger, txHash: t.txHash, source: t.source }));
  return { deposits, payments, batches, refills, withdrawals, shielded };
}

/**
 * How many subsets of `amounts` add up to exactly `target` (each element used at most once; equal amounts
 * count as different payments). Dynamic programming over the sums, reduced by the amounts' common divisor.
 */
export function countSubsetSums(amounts: bigint[], target: bigint): bigint {
  if (target < 0n) return 0n;
  let g = target;
  for (const a of amounts) g = gcd(g, a);
  if (g === 0n) return 1n;
  const t = Number(target / g);
  // Sums above ~10^6 units would make the table too large: treat them as "unknown" (reported as -1).
  if (t > 1_000_000) return -1n;
  const ways = new Array<bigint>(t + 1).fill(0n);
  ways[0] = 1n;
  for (const a of amounts) {
    const k = Number(a / g);
    if (k > t) continue;
    for (let s = t; s >= k; s--) if (ways[s - k] !== 0n) ways[s] += ways[s - k];
  }
  return ways[t];
}

function gcd(a: bigint, b: bigint): bigint {
  let x = a < 0n ? -a : a;
  let y = b < 0n ? -b : b;
  while (y !== 0n) [x, y] = [y, x % y];
  return x;
}

export interface OutflowMatch {
  outflow: Move;
  /** subsets of the payments of the batches before it (within the last batch, then across all) that match */
  withinLastBatch: bigint;
  acrossBatches: bigint;
  /** the outflow equals the total of some run of consecutive batches (that total is public anyway) */
  equalsABatchTotal: boolean;
}

/** Subset-sum matching of every pool → pool wallet outflow against the payments made before it. */
export function matchOutflows(av: AmountView): OutflowMatch[] {
  return av.refills.map((outflow) => {
    const before = av.batches.filter((b) => b.lastLedger <= outflow.ledger);
    const last = before.at(-1);
    const all = before.flatMap((b) => b.payments.map((p) => p.amount));
    let equalsABatchTotal = false;
    for (let i = 0; i < before.length && !equalsABatchTotal; i++) {
      let sum = 0n;
      for (let j = i; j < before.length; j++) {
        sum += before[j]!.payments.reduce((s, p) => s + p.amount, 0n);
        if (sum === outflow.amount) equalsABatchTotal = true;
      }
    }
    return {
      outflow,
      withinLastBatch:
        last === undefined
          ? 0n
          : countSubsetSums(
              last.payments.map((p) => p.amount),
              outflow.amount,
            ),
      acrossBatches: countSubsetSums(all, outflow.amount),
      equalsABatchTotal,
    };
  });
}

/**
 * The depositing wallets that could have paid `payment`: those whose deposits before it add up to at least
 * its price (less what the pool paid back to the same wallet before it).
 */
export function candidatePayers(av: AmountView, payment: Move): string[] {
  const funded = new Map<string, bigint>();
  for (const d of av.deposits)
    if (d.ledger < payment.ledger) funded.set(d.from, (funded.get(d.from) ?? 0n) + d.amount);
  for (const w of av.withdrawals)
    if (w.ledger < payment.ledger && funded.has(w.to)) funded.set(w.to, funded.get(w.to)! - w.amount);
  return [...funded.entries()].filter(([, v]) => v >= payment.amount).map(([k]) => k);
}

/** Per batch: the smallest set of wallets any one of its payments could have come from. */
export function anonymitySets(av: AmountView): number[] {
  return av.batches.map((b) => Math.min(...b.payments.map((p) => candidatePayers(av, p).length)));
}

/**
 * The counting attack: the pool transactions between each batch and the next one (shielded transfers and
 * outflows to the pool wallet). With one settlement per paying agent this is the number of agents.
 */
export function transactionsAfterBatches(av: AmountView): number[] {
  return av.batches.map((b, i) => {
    const until = av.batches[i + 1]?.firstLedger ?? Number.POSITIVE_INFINITY;
    const inRange = (l: number) => l > b.lastLedger && l < until;
    return (
      av.shielded.filter((s) => inRange(s.ledger)).length + av.refills.filter((r) => inRange(r.ledger)).length
    );
  });
}
