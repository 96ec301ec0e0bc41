// What the payment flow needs from the batch operator, whichever runs it: in-process on a LevelDB store
// (batch-operator.ts), or a queue in the database shared by the replicas of a PostgreSQL store, executed by
// the elected batch leader (replicated-batches.ts). A payment is reserved before it joins; its outcome comes
// back to the request that asked for it.
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import type { Quote, SafeRequest } from '../../x402/index.ts';

/** A payment the batch operator runs: what was quoted, for whom, and what to send. */
export interface QueuedPayment {
  paymentId: string;
  agent: string;
  quote: Quote;
  request: SafeRequest;
  /** the caller's idempotency key: the authorization's nonce derives from it (payment-nonce.ts) */
  idempotencyKey?: string;
  /** the first attempt index (0 unless a replay found earlier attempts on chain) */
  attempt?: number;
}

/** Where a reserved payment stands in the batch queue, for reconciliation. */
export type QueueState =
  /** queued, or executing under the leader that took it: its outcome is coming, leave it alone */
  | 'live'
  /** taken by a leader that is gone: whatever it left is for reconciliation to decide */
  | 'abandoned'
  /** not in the queue (never queued, or its outcome was delivered) */
  | 'none';

export interface PaymentBatches {
  /** Starts taking part (on replicas: listening, polling, campaigning for the batch leadership). */
  start(): Promise<void>;
  /** Refuses with `queue_full` (or `service_unavailable` while stopping) when no more payments may wait. */
  checkCapacity(): Promise<void>;
  /**
   * Adds a reserved payment to the current batch (throws, having queued nothing, when it may not join);
   * `outcome` resolves once its batch ran.
   */
  enqueue(p: QueuedPayment): Promise<{ outcome: Promise<PaymentOutcome> }>;
  queueState(paymentId: string): Promise<QueueState>;
  /**
   * Runs `write` — the journal write of a signed authorization, made before it is sent — only while this
   * process may still execute the payment (on replicas: it leads the batch operator under the database's
   * current epoch, checked in the write's own transaction). Throws otherwise, and nothing is sent.
   */
  fenced<T>(paymentId: string, write: () => Promise<T>): Promise<T>;
  /** Stops taking payments; queued payments run first, and the requests waiting here get their outcomes. */
  stop(): Promise<void>;
}
