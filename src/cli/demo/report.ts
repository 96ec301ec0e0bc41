// Turns what the demo did and what the chain shows into its two tables: what each party knows (each fact's
// observer column is computed from the chain, not assumed) and the observer's list of transactions and USDC
// transfers. Plain text for the terminal; the same data as JSON for scripts and tests.
import { StrKey } from '@stellar/stellar-sdk';
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
