// The receiving side of the replicas' payment queue (replicated-batches.ts): the requests of this replica
// waiting for the outcome of a payment they queued. An outcome comes from the row the batch leader answered —
// read when its notification arrives, or by the poll once a second (a notification is lost when a connection
// drops) — or, for a payment whose leader died (or whose row was missed), from the journal once
// reconciliation decided it. At the deadline the request answers with the payment's state (`pending`).
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import type { PaymentQueue } from '../cluster/payment-queue.ts';
import type { FlowContext } from '../flows/context.ts';
import { isFinal } from '../journal/journal.ts';
import type { QueuedPayment } from './batches.ts';
import { outcomeOf } from './payment-state.ts';
import type { PaymentRecords } from './records.ts';

/** A waiting request also reads its payment's journal once the batch is this late. */
const JOURNAL_AFTER_MS = 5000;

export interface QueueWaitersDeps {
  flows: Pick<FlowContext, 'journal' | 'clock'>;
  records: PaymentRecords;
  /** This replica's float commitment for a payment ends (its outcome is known here). */
  uncommit(paymentId: string): void;
}

interface Waiter {
  resolve: (outcome: PaymentOutcome) => void;
  since: number;
  deadline: number;
}

export class QueueWaiters {
  readonly #deps: QueueWaitersDeps;
  readonly #queue: PaymentQueue<QueuedPayment>;
  /** When the journal is read: this long after a payment was queued (the window, then a margin). */
  readonly #journalAfterMs: number;
  readonly #waiters = new Map<string, Waiter>();
  /** Row id → payment id (notifications name rows). */
  readonly #rows = new Map<string, string>();

  constructor(deps: QueueWaitersDeps, queue: PaymentQueue<QueuedPayment>, windowMs: number) {
    this.#deps = deps;
    this.#queue = queue;
    this.#journalAfterMs = windowMs + JOURNAL_AFTER_MS;
  }

  get size(): number {
    return this.#waiters.size;
  }

  has(paymentId: string): boolean {
    return this.#waiters.has(paymentId);
  }

  /** The outcome of a payment just queued, once known (its state at `waitMs` at the latest). */
  wait(paymentId: string, waitMs: number): Promise<PaymentOutcome> {
    const now = this.#deps.flows.clock();
    const outcome = new Promise<PaymentOutcome>((resolve) => {
      this.#waiters.set(paymentId, { resolve, since: now, deadline: now + waitMs });
    });
    this.#rows.set(this.#queue.idOf(paymentId), paymentId);
    return outcome;
  }

  /** A row was answered (its notification). */
  answered(rowId: string): void {
    const paymentId = this.#rows.get(rowId);
    if (paymentId !== undefined) void this.#collect([paymentId]);
  }

  /** Every second: the answered rows, then the journal for late payments, then the deadlines. */
  async poll(): Promise<void> {
    if (this.#waiters.size === 0) return;
    await this.#collect([...this.#waiters.keys()]);
    const now = this.#deps.flows.clock();
    for (const [paymentId, w] of this.#waiters) {
      if (now - w.since < this.#journalAfterMs) continue;
      const record = await this.#deps.flows.journal.get(paymentId).catch(() => undefined);
      if ((record !== undefined && isFinal(record.state)) || now > w.deadline)
        this.resolve(paymentId, await outcomeOf(this.#deps, paymentId));
    }
  }

  async #collect(paymentIds: string[]): Promise<void> {
    const outcomes = await this.#queue.outcomes<PaymentOutcome>(paymentIds).catch(() => new Map());
    for (const [paymentId, outcome] of outcomes) this.resolve(paymentId, outcome);
  }

  /** Answers the request waiting for `paymentId` (if any) and removes its row. */
  resolve(paymentId: string, outcome: PaymentOutcome): void {
    const waiter = this.#waiters.get(paymentId);
    if (waiter === undefined) return;
    this.#waiters.delete(paymentId);
    this.#rows.delete(this.#queue.idOf(paymentId));
    this.#deps.uncommit(paymentId);
    waiter.resolve(outcome);
    void this.#queue.remove([paymentId]).catch(() => {});
  }
}
