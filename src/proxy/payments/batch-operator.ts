// The batch operator of a single process (a LevelDB store): payments join the current batch in memory; when
// its window ends (or it is full), the batch runs as one burst in random order (batch-run.ts), so an observer
// of the ledger sees a batch of transfers from the pool wallet whose order says nothing about who asked
// first. The queue is bounded. Each payment's outcome goes back to the request waiting for it. Replicas on a
// shared store queue in the database instead (replicated-batches.ts).
import { randomUUID } from 'node:crypto';
import { DomainError } from '../domain/errors.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import type { PaymentBatches, QueuedPayment, QueueState } from './batches.ts';
import { runBatch } from './batch-run.ts';

export interface BatchOperatorOptions {
  windowMs: number;
  batchMax: number;
  queueMax: number;
  concurrency: number;
  logger: Logger;
  /** The proxy's clock (the batch summary's times). */
  clock: Clock;
  /** Runs one payment inside batch `batchId`; never throws (failures are outcomes). */
  execute: (p: QueuedPayment, batchId: string) => Promise<PaymentOutcome>;
}

interface Waiting {
  payment: QueuedPayment;
  resolve: (outcome: PaymentOutcome) => void;
}

export class BatchOperator implements PaymentBatches {
  readonly #o: BatchOperatorOptions;
  #queue: Waiting[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #executing = new Set<string>();
  #running = 0;
  #stopped = false;

  constructor(options: BatchOperatorOptions) {
    this.#o = options;
  }

  /** Payments queued or executing. */
  get size(): number {
    return this.#queue.length + this.#executing.size;
  }

  async queueState(paymentId: string): Promise<QueueState> {
    const live = this.#executing.has(paymentId) || this.#queue.some((w) => w.payment.paymentId === paymentId);
    return live ? 'live' : 'none';
  }

  async start(): Promise<void> {}

  async checkCapacity(): Promise<void> {
    this.#checkCapacity();
  }

  #checkCapacity(): void {
    if (this.#stopped) throw new DomainError('service_unavailable', 'the service is stopping; retry');
    if (this.size >= this.#o.queueMax)
      throw new DomainError('queue_full', `the payment queue is full (${this.#o.queueMax}); retry later`, {
        retryAfterSeconds: Math.ceil(this.#o.windowMs / 1000),
      });
  }

  /** One process executes every payment it queues: nothing to fence. */
  fenced<T>(_paymentId: string, write: () => Promise<T>): Promise<T> {
    return write();
  }

  async enqueue(payment: QueuedPayment): Promise<{ outcome: Promise<PaymentOutcome> }> {
    this.#checkCapacity();
    const outcome = new Promise<PaymentOutcome>((resolve) => {
      this.#queue.push({ payment, resolve });
    });
    if (this.#queue.length >= this.#o.batchMax) this.#runNow();
    else if (this.#timer === undefined) {
      this.#timer = setTimeout(() => this.#runNow(), this.#o.windowMs);
    }
    return { outcome };
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    if (this.#queue.length > 0) this.#runNow();
    while (this.#running > 0) await new Promise((r) => setTimeout(r, 50));
  }

  #runNow(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#queue.splice(0, this.#o.batchMax);
    if (batch.length === 0) return;
    if (this.#queue.length > 0) this.#timer = setTimeout(() => this.#runNow(), this.#o.windowMs);
    this.#running++;
    void this.#run(batch).finally(() => this.#running--);
  }

  async #run(batch: Waiting[]): Promise<void> {
    const batchId = randomUUID();
    for (const w of batch) this.#executing.add(w.payment.paymentId);
    const summary = await runBatch(
      batchId,
      batch,
      this.#o.concurrency,
      (w) => this.#o.execute(w.payment, batchId),
      (w, outcome) => {
        this.#executing.delete(w.payment.paymentId);
        w.resolve(outcome);
      },
      this.#o.clock,
    );
    this.#o.logger.log('info', 'batch executed', { ...summary });
  }
}
