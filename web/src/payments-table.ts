// The recent-payments table: when, agent, service, amount in USDC, status, and the receipt in words (paid in
// USDC to whom, its transaction, when it settled). Narrow screens show each row as a small card (style.css);
// dates and amounts never break mid-token.
import type { Payment } from './api.ts';
import { shortened } from './copy.ts';
import { $, el } from './dom.ts';
import { dateTime, shortAddress, transactionUrl, usdc } from './format.ts';

export function emptyRow(text: string, columns: number): HTMLTableRowElement {
  const row = el('tr');
  const cell = el('td', text);
  cell.colSpan = columns;
  row.append(cell);
  return row;
}

/** A table cell with the column's name, which narrow screens show beside the value. */
function cell(label: string, text: string, className?: string): HTMLTableCellElement {
  const td = el('td', text, className);
  td.dataset.label = label;
  return td;
}

export function renderPayments(payments: readonly Payment[], emptyText: string): void {
  const body = $('payments-table').querySelector('tbody')!;
  body.replaceChildren(
    ...payments.map((p) => {
      const row = el('tr');
      row.dataset.payment = p.paymentId;
      const when = cell('When', '');
      const time = el('time', dateTime(p.createdAt));
      time.dateTime = p.createdAt;
      when.append(time);
      const agent = cell('Agent', '');
      agent.append(shortened(p.agentId, 'agent id'));
      const status = cell('Status', '');
      const tone = {
        confirmed: 'badge-ok',
        failed: 'badge-bad',
        pending: 'badge-warn',
        awaiting_approval: 'badge-warn',
      }[p.paymentStatus];
      const label = p.paymentStatus === 'awaiting_approval' ? 'awaiting approval' : p.paymentStatus;
      status.append(el('span', label, `badge ${tone}`));
      row.append(
        when,
        agent,
        cell('Service', p.serviceUrl, 'service mono'),
        cell('Amount', `${usdc(p.amount)} USDC`, 'num'),
        status,
        receiptCell(p),
      );
      return row;
    }),
  );
  if (payments.length === 0) body.append(emptyRow(emptyText, 6));
}

/** The receipt in words: what was paid in USDC, to whom, settled when, and its transaction. */
function receiptCell(p: Payment): HTMLTableCellElement {
  const td = cell('Receipt', '');
  if (!p.receipt) {
    td.textContent = '—';
    return td;
  }
  const r = p.receipt;
  td.dataset.network = r.network;
  const paid = el('span', `${usdc(r.amount)} USDC to `, 'nowrap');
  paid.append(shortened(r.payTo, 'payee address'));
  const settled = el('time', `settled ${dateTime(r.settledAt)}`);
  settled.dateTime = r.settledAt;
  td.append(paid, el('br'), transactionRef(r.transaction, r.network), el('br'), settled);
  return td;
}

/** A transaction: linked to the public explorer where the network has one, else shortened with Copy. */
export function transactionRef(hash: string, network: string): HTMLElement {
  const url = transactionUrl(network, hash);
  if (url === undefined) {
    const wrap = el('span', 'Transaction ', 'nowrap');
    wrap.append(shortened(hash, 'transaction hash'));
    return wrap;
  }
  const link = el('a', `Transaction ${shortAddress(hash)}`);
  link.href = url;
  link.target = '_blank';
  link.rel = 'noopener noreferrer';
  link.title = hash;
  link.dataset.full = hash;
  return link;
}
