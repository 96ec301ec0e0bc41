// Turns what the demo did and what the chain shows into its two tables: what each party knows (each fact's
// observer column is computed from the chain, not assumed) and the observer's list of transactions and USDC
// transfers. Plain text for the terminal; the same data as JSON for scripts and tests.
import { StrKey } from '#stellar-sdk';
import { amountView, candidatePayers, countSubsetSums } from './inference.ts';
import type { ObserverView } from './observer.ts';

export interface DemoParty {
  name: string;
  wallet: string;
  agentId: string;
  /** Amounts are decimal USDC strings as the API uses them. */
  deposited: string;
  depositTx: string;
  withdrawn: string;
  withdrawTx: string;
  destination: string;
  balance: string;
  payments: { serviceUrl: string; amount: string; payTo: string; transaction: string; batchId?: string }[];
}

export interface KnowledgeRow {
  fact: string;
  /** One answer per party name, then "proxy" and "observer". */
  knows: Record<string, string>;
}

const STROOPS = 10_000_000n;

export function usdc(stroops: bigint): string {
  return `${stroops / STROOPS}.${(stroops % STROOPS).toString().padStart(7, '0')}`;
}

function toStroops(amount: string): bigint {
  const [whole, fraction = ''] = amount.split('.');
  return BigInt(whole ?? '0') * STROOPS + BigInt(fraction.padEnd(7, '0').slice(0, 7));
}

export function short(id: string): string {
  return id.length > 14 ? `${id.slice(0, 5)}…${id.slice(-4)}` : id;
}

/** Public names of addresses, for reading the tables; the chain itself shows only the addresses. */
export function labeller(
  parties: DemoParty[],
  pub: { pool: string; poolWallet: string; operator: string },
  others: Record<string, string> = {},
): (address: string) => string {
  const names = new Map<string, string>([
    ...Object.entries(others),
    [pub.pool, 'pool contract'],
    [pub.poolWallet, 'pool wallet'],
    [pub.operator, 'proxy operator'],
  ]);
  parties.forEach((p, i) => {
    names.set(p.wallet, `${p.name}'s wallet`);
    names.set(p.destination, `destination ${i + 1}`);
    for (const payment of p.payments) names.set(payment.payTo, 'x402 service');
  });
  return (address) => `${short(address)} (${names.get(address) ?? 'other'})`;
}

function yesNo(value: boolean, yes: string, no: string): string {
  return value ? `yes: ${yes}` : `no: ${no}`;
}

export function knowledge(
  parties: DemoParty[],
  view: ObserverView,
  pool: string,
  poolWallet: string,
): KnowledgeRow[] {
  const rows: KnowledgeRow[] = [];
  const row = (fact: string, owner: DemoParty, observer: string) => {
    const knows: Record<string, string> = {};
    for (const p of parties) knows[p.name] = p === owner ? 'yes' : 'no';
    knows.proxy = 'yes';
    knows.observer = observer;
    rows.push({ fact, knows });
  };
  const seen = (address: string) =>
    view.transactions.some((t) => t.source === address) ||
    view.transfers.some((t) => t.from === address || t.to === address);
  for (const p of parties) {
    row(`${p.name}'s wallet address`, p, yesNo(seen(p.wallet), 'it signs its deposit', 'never on chain'));
    const withAgent = view.transactionsContaining(p.agentId);
    row(
      `${p.name}'s agent id "${p.agentId}"`,
      p,
      yesNo(withAgent.length > 0, `in ${withAgent.map(short).join(', ')}`, 'in no transaction or event'),
    );
    const deposit = view.transfers.some(
      (t) => t.from === p.wallet && t.to === pool && t.amount === toStroops(p.deposited),
    );
    row(
      `${p.name} deposited ${p.deposited} USDC`,
      p,
      yesNo(deposit, 'a public transfer into the pool', 'no such transfer'),
    );
    row(
      `${p.name}'s agent holds ${p.balance} USDC`,
      p,
      'no: the pool holds only encrypted notes behind commitments',
    );
    const payout = view.transfers.some(
      (t) => t.from === pool && t.to === p.destination && t.amount === toStroops(p.withdrawn),
    );
    row(
      `${short(p.destination)} received ${p.withdrawn} USDC`,
      p,
      yesNo(payout, 'from the pool contract', 'no such transfer'),
    );
    // A link would be a direct transfer, or a transaction of the wallet that names the destination.
    const raw = StrKey.decodeEd25519PublicKey(p.destination);
    const linked =
      view.transfers.some((t) => t.from === p.wallet && t.to === p.destination) ||
      view.transactions.some(
        (t) => t.source === p.wallet && view.transactionsContaining(raw).includes(t.txHash),
      );
    row(
      `that withdrawal came from ${p.name}`,
      p,
      yesNo(linked, 'a transaction links them', 'the pool paid; no transaction names the wallet or agent'),
    );
    for (const payment of p.payments) {
      const paid = view.transfers.some(
        (t) => t.from === poolWallet && t.to === payment.payTo && t.amount === toStroops(payment.amount),
      );
      row(
        `the pool wallet paid ${payment.amount} USDC to ${short(payment.payTo)}`,
        p,
        yesNo(paid, 'a public transfer from the pool wallet', 'no such transfer'),
      );
      const byAgent =
        view.transactionsContaining(p.agentId).includes(payment.transaction) ||
        view.transactions.some((t) => t.txHash === payment.transaction && t.source === p.wallet);
      row(
        `${p.name}'s agent paid ${payment.serviceUrl}`,
        p,
        yesNo(byAgent, 'the payment names the agent', 'the transfer names only the pool wallet'),
      );
    }
  }
  return rows;
}

/**
 * The amount view: what arithmetic on the public amounts tells the observer (src/cli/demo/inference.ts), each
 * answer computed from the chain: whether a public amount out of the pool equals an agent's spending
 * (subset-sum), which depositing wallets could have made each payment, and whether the pool transactions
 * after the batch count its payers.
 */
export function amountKnowledge(
  parties: DemoParty[],
  view: ObserverView,
  pool: string,
  poolWallet: string,
): KnowledgeRow[] {
  const av = amountView(view, { pool, poolWallet }, 3);
  const rows: KnowledgeRow[] = [];
  const row = (fact: string, owner: DemoParty | undefined, observer: string) => {
    const knows: Record<string, string> = {};
    for (const p of parties) knows[p.name] = p === owner ? 'yes' : 'no';
    knows.proxy = 'yes';
    knows.observer = observer;
    rows.push({ fact, knows });
  };
  const outflows = av.refills.map((r) => usdc(r.amount));
  for (const p of parties) {
    if (p.payments.length === 0) continue;
    const spent = p.payments.reduce((s, x) => s + toStroops(x.amount), 0n);
    const batchTotal = av.batches
      .filter((b) => b.payments.some((x) => p.payments.some((y) => y.transaction === x.txHash)))
      .flatMap((b) => b.payments)
      .reduce((s, x) => s + x.amount, 0n);
    const equal = av.refills.filter((r) => r.amount === spent && r.amount !== batchTotal);
    // A withdrawal back to the depositing wallet publishes deposit − withdrawal (docs/PRIVACY.md).
    const back = av.withdrawals.filter((w) => w.to === p.wallet);
    const subsets = countSubsetSums(
      av.payments.map((x) => x.amount),
      spent,
    );
    row(
      `${p.name}'s agent spent ${usdc(spent)} USDC on payments`,
      p,
      equal.length > 0
        ? `yes: the pool paid ${usdc(spent)} out to the pool wallet`
        : back.length > 0
          ? `maybe: a withdrawal went back to the depositing wallet (deposit − withdrawal is public)`
          : `no: ${
              outflows.length === 0
                ? 'no amount left the pool for the pool wallet'
                : `the pool's outflows (${outflows.join(', ')}) are float refills`
            }; ${subsets} subsets of the public payments add up to it`,
    );
    for (const payment of p.payments) {
      const moved = av.payments.find((x) => x.txHash === payment.transaction);
      if (moved === undefined) continue;
      const could = candidatePayers(av, moved);
      row(
        `${p.name}'s wallet funded the ${payment.amount} USDC payment ${short(payment.transaction)}`,
        p,
        could.length === 1
          ? 'yes: no other wallet had deposited enough before it'
          : `no: ${could.length} depositing wallets could have paid it`,
      );
    }
  }
  av.batches.forEach((b) => {
    const payers = parties.filter((p) =>
      p.payments.some((x) => b.payments.some((y) => y.txHash === x.transaction)),
    ).length;
    if (payers === 0) return;
    const next = av.batches[av.batches.indexOf(b) + 1]?.firstLedger ?? Number.POSITIVE_INFINITY;
    const after = av.refills.filter((r) => r.ledger > b.lastLedger && r.ledger < next);
    const shielded = av.shielded.filter((s) => s.ledger > b.lastLedger && s.ledger < next).length;
    row(
      `${payers} agents paid in the batch of ledgers ${b.firstLedger}–${b.lastLedger}`,
      undefined,
      after.length === payers
        ? `yes: ${after.length} public outflows to the pool wallet followed it`
        : `no: ${b.payments.length} payments; ${shielded} shielded transfers and ${after.length} refills followed (settlement runs in rounds of a fixed size)`,
    );
  });
  return rows;
}

function table(header: string[], rows: string[][]): string {
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i] ?? 0)))
      .join('  ')
      .trimEnd();
  return [line(header), line(widths.map((w) => '-'.repeat(w))), ...rows.map(line)].join('\n');
}

export function renderKnowledge(parties: DemoParty[], rows: KnowledgeRow[]): string {
  const names = [...parties.map((p) => p.name), 'proxy', 'observer'];
  return table(
    ['fact', ...parties.map((p) => p.name), 'proxy', 'on-chain observer'],
    rows.map((r) => [r.fact, ...names.map((n) => r.knows[n] ?? '')]),
  );
}

export function renderObserver(view: ObserverView, label: (address: string) => string): string {
  const rows: string[][] = [];
  for (const t of view.transactions) {
    const moves = view.transfers.filter((m) => m.txHash === t.txHash);
    const mints = view.mints.filter((m) => m.txHash === t.txHash);
    const first = [String(t.ledger), short(t.txHash), label(t.source), t.calls.join(',') || '(classic)'];
    const lines = [
      ...moves.map((m) => `${label(m.from)} → ${label(m.to)}  ${usdc(m.amount)} USDC`),
      ...mints.map((m) => `minted → ${label(m.to)}  ${usdc(m.amount)} USDC`),
    ];
    if (lines.length === 0) lines.push(t.successful ? '' : '(failed)');
    lines.forEach((text, i) => rows.push(i === 0 ? [...first, text] : ['', '', '', '', text]));
  }
  return [
    table(['ledger', 'transaction', 'submitted by', 'calls', 'USDC moved'], rows),
    `pool events: ${view.commitments} commitments, ${view.nullifiers} nullifiers (opaque field elements)`,
  ].join('\n');
}
