// The batch operator: payments join the current batch; when its window ends (or it is full), the batch runs
// as one burst in random order, so an observer of the ledger sees a batch of transfers from the pool wallet
// whose order says nothing about who asked first. The queue is bounded. Each payment's outcome goes back to
// the request waiting for it.
import { randomInt, randomUUID } from 'node:crypto';
import { ProblemError } from '../../api/problem.ts';
import type { Logger } from '../util/logger.ts';
import type { BatchSummary, PaymentResult as PaymentOutcome } from '../../api/types.ts';

export interface BatchItem {
  paymentId: string;
  /** Runs the payment inside batch `batchId`; never throws (failures are outcomes). */
  execute: (batchId: string) => Promise<PaymentOutcome>;
}

export interface BatchOperatorOptions {
  windowMs: number;
  batchMax: number;
  queueMax: number;
  concurrency: number;
  logger: Logger;
  /** Called after every batch with its summary. */
  onBatch: (summary: BatchSummary) => Promise<void>;
}

interface Waiting {
  item: BatchItem;
  resolve: (outcome: PaymentOutcome) => void;
}

export class BatchOperator {
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

  /** Whether the payment is queued or executing in this process (reconciliation leaves it alone then). */
  isLive(paymentId: string): boolean {
    return this.#executing.has(paymentId) || this.#queue.some((w) => w.item.paymentId === paymentId);
  }

  /** Refuses with `queue_full` when no more payments may wait. */
  checkCapacity(): void {
    if (this.#stopped) throw new ProblemError('service_unavailable', 'the service is stopping; retry');
    if (this.size >= this.#o.queueMax)
      throw new ProblemError('queue_full', `the payment queue is full (${this.#o.queueMax}); retry later`, {
        headers: { 'Retry-After': String(Math.ceil(this.#o.windowMs / 1000)) },
      });
  }

  /** Adds a payment to the current batch; resolves with its outcome once the batch ran. */
  enqueue(item: BatchItem): Promise<PaymentOutcome> {
    this.checkCapacity();
    return new Promise((resolve) => {
      this.#queue.push({ item, resolve });
      if (this.#queue.length >= this.#o.batchMax) this.#runNow();
      else if (this.#timer === undefined) {
        this.#timer = setTimeout(() => this.#runNow(), this.#o.windowMs);
      }
    });
  }

  /** Stops taking payments; waits for executing batches to finish. Queued payments run first. */
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
    const started = Date.now();
    // Fisher–Yates with a cryptographic generator: the execution order is not the request order.
    for (let i = batch.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [batch[i], batch[j]] = [batch[j] as Waiting, batch[i] as Waiting];
    }
    for (const w of batch) this.#executing.add(w.item.paymentId);
    let confirmed = 0;
    let failed = 0;
    let next = 0;
    const worker = async () => {
      while (next < batch.length) {
        const w = batch[next++] as Waiting;
        const outcome = await w.item.execute(batchId);
        this.#executing.delete(w.item.paymentId);
        if (outcome.paymentStatus === 'confirmed') confirmed++;
        else failed++;
        w.resolve(outcome);
      }
    };
    await Promise.all(Array.from({ length: Math.min(this.#o.concurrency, batch.length) }, worker));
    const summary: BatchSummary = {
      batchId,
      size: batch.length,
      executedAt: new Date(started).toISOString(),
      durationMs: Date.now() - started,
      confirmed,
      failed,
    };
    this.#o.logger.log('info', 'batch executed', { ...summary });
    await this.#o
      .onBatch(summary)
      .catch((error) =>
        this.#o.logger.log('warn', 'recording a batch failed', { error: (error as Error).message }),
      );
  }
}
