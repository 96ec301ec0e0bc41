// What the payment flows need besides the money flows' context: the pool wallet (the G account whose USDC
// float pays services), the network it pays on, how agent-named URLs are fetched, the payment settings, the
// payment records, the batch operator and the float.
import type { Keypair } from '@stellar/stellar-sdk';
import type { PayerNetwork, SafeFetchOptions } from '../../x402/index.ts';
import type { PaymentsConfig } from '../config.ts';
import type { FlowContext } from '../flows/context.ts';
import type { BatchOperator } from './batch-operator.ts';
import type { PoolWalletFloat } from './float.ts';
import type { PaymentNonces } from './payment-nonce.ts';
import type { PaymentRecords } from './records.ts';

export interface PaymentContext {
  flows: FlowContext;
  poolWallet: Keypair;
  payer: PayerNetwork;
  fetchOptions: SafeFetchOptions;
  config: PaymentsConfig;
  /** Largest price one payment may have (stroops). */
  paymentCap: bigint;
  records: PaymentRecords;
  /** Derives each payment attempt's authorization nonce (and opens nonces found on chain). */
  nonces: PaymentNonces;
  batches: BatchOperator;
  float: PoolWalletFloat;
}

/** A payment's answer to its caller. */
export interface PaymentOutcome {
  paymentId: string;
  paymentStatus: 'confirmed' | 'failed' | 'pending';
  batchId: string;
  receipt?: PaymentReceipt;
  serviceStatus?: number;
  contentType?: string;
  /** the service's body: UTF-8 text, or base64 when `contentEncoding` says so */
  content?: string;
  contentEncoding?: 'utf8' | 'base64';
  reason?: { code: string; detail: string };
}

export interface PaymentReceipt {
  amount: string;
  asset: string;
  payTo: string;
  network: string;
  transaction: string;
  settledAt: string;
}
