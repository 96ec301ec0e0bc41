// The record of one agent's payments over a period, for its owner's books: each payment's time, service,
// amount, status, batch and receipt transaction, oldest first, as JSON rows or as CSV (RFC 4180 quoting; a
// cell that a spreadsheet would read as a formula is prefixed with an apostrophe); and a payment as
// GET /api/payments lists it.
import { formatAmount } from '../../api/amount.ts';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import type { FlowContext } from '../flows/context.ts';
import type { PaymentContext } from './context.ts';
import { paymentStatusOf } from './payment-state.ts';
import { paymentData } from './payment-data.ts';
import type { PaymentListEntry } from '../../api/types.ts';
import type { OperationRecord } from '../journal/journal.ts';

/** What this module uses of the payment context. */
export type ExportPaymentsDeps = Pick<PaymentContext, 'records'> & { flows: Pick<FlowContext, 'journal'> };

export interface ExportRow {
  time: string;
  service: string;
  amount: string;
  status: ReturnType<typeof paymentStatusOf>;
  batch: string;
  transaction: string;
  paymentId: string;
}

const COLUMNS: Array<keyof ExportRow> = [
  'time',
  'service',
  'amount',
  'status',
  'batch',
  'transaction',
  'paymentId',
];

/** The agent's payments asked for in [fromMs, toMs), oldest first. */
export async function exportPayments(
  pctx: ExportPaymentsDeps,
  ref: AgentRef,
  fromMs: number,
  toMs: number,
): Promise<ExportRow[]> {
  const agent = scopedId(ref);
  const rows: Array<ExportRow & { at: number }> = [];
  for (const paymentId of await pctx.records.paymentsOf(ref.owner)) {
    const record = await pctx.flows.journal.get(paymentId);
    if (record === undefined || record.kind !== 'payment' || record.agent !== agent) continue;
    if (record.createdAt < fromMs || record.createdAt >= toMs) continue;
    const data = paymentData(record);
    rows.push({
      at: record.createdAt,
      time: new Date(record.createdAt).toISOString(),
      service: data.serviceUrl ?? '',
      amount: formatAmount(record.amount),
      status: paymentStatusOf(record.state),
      batch: data.batchId ?? '',
      transaction: data.receipt?.transaction ?? '',
      paymentId,
    });
  }
  rows.sort((a, b) => a.at - b.at || a.paymentId.localeCompare(b.paymentId));
  return rows.map(({ at: _at, ...row }) => row);
}

function cell(value: string): string {
  const safe = /^[=+\-@\t\r]/.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(safe) ? `"${safe.replace(/"/g, '""')}"` : safe;
}

export function toCsv(rows: ExportRow[]): string {
  const lines = [COLUMNS.join(','), ...rows.map((row) => COLUMNS.map((c) => cell(row[c])).join(','))];
  return `${lines.join('\r\n')}\r\n`;
}

/** A payment as GET /api/payments lists it. */
export function paymentEntry(record: OperationRecord): PaymentListEntry {
  const data = paymentData(record);
  return {
    paymentId: record.opId,
    agentId: data.agentId ?? '',
    serviceUrl: data.serviceUrl ?? '',
    amount: formatAmount(record.amount),
    paymentStatus: paymentStatusOf(record.state),
    batchId: data.batchId ?? '',
    receipt: data.receipt,
    createdAt: new Date(record.createdAt).toISOString(),
  };
}
