// What a payment's journal record keeps beside the common fields (the journal stores each operation's own data
// as a plain object): written when the payment is reserved, then its batch, authorization, receipt. Payments
// read it back typed through paymentData (the API's view of a payment: payment-export.ts), so neither the
// routes nor the export read untyped journal data.
import type { PaymentReceipt } from '../../api/types.ts';
import type { PaymentRecord } from '../../x402/index.ts';
import type { OperationRecord } from '../journal/journal.ts';
import type { QueuedPayment } from './batches.ts';

export interface PaymentData {
  owner: string;
  agentId: string;
  serviceUrl: string;
  method: string;
  payTo: string;
  asset: string;
  network: string;
  /** the batch that took it */
  batchId?: string;
  /** the latest signed authorization, and every one signed (a record written before attempts were listed has only `auth`) */
  auth?: PaymentRecord;
  attempts?: PaymentRecord[];
  /** the settlement's receipt, once confirmed */
  receipt?: PaymentReceipt;
  /** a payment waiting for approval: its deadline (ms, the proxy's clock) and its queued form */
  approvalExpiresAt?: number;
  queued?: QueuedPayment;
  /** a payment rebuilt from the chain by `store recover` (its service URL is not on chain) */
  recovered?: boolean;
}

/** A payment record's own data, typed. */
export function paymentData(record: OperationRecord): Partial<PaymentData> {
  if (record.kind !== 'payment')
    throw new Error(`operation ${record.opId} is a ${record.kind}, not a payment`);
  return (record.data ?? {}) as Partial<PaymentData>;
}

/** A payment record's data when the record is a payment of `owner` (and of `agentId`, when given). */
export function ownedPaymentData(
  record: OperationRecord | undefined,
  owner: string,
  agentId?: string,
): Partial<PaymentData> | undefined {
  if (record === undefined || record.kind !== 'payment') return undefined;
  const data = paymentData(record);
  if (data.owner !== owner || (agentId !== undefined && data.agentId !== agentId)) return undefined;
  return data;
}
