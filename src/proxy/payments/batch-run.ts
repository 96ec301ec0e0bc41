// One batch, as every batch operator runs it: the payments in a random order (Fisher–Yates with a
// cryptographic generator, so the ledger's order says nothing about who asked first), a few at a time,
// each outcome handed back as soon as it is known, then the batch's summary for the service log (the public
// stats count confirmed payments only, as each confirms: services/stats.ts).
import { randomInt } from 'node:crypto';
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import type { Clock } from '../util/clock.ts';

/** What the log says of a batch that ran. */
export interface BatchRun {
  batchId: string;
  size: number;
  executedAt: string;
  durationMs: number;
  confirmed: number;
  failed: number;
}

export async function runBatch<T>(
  batchId: string,
  items: T[],
  concurrency: number,
  /** Runs one payment; never throws (failures are outcomes). */
  execute: (item: T) => Promise<PaymentOutcome>,
  done: (item: T, outcome: PaymentOutcome) => void | Promise<void>,
  clock: Clock,
): Promise<BatchRun> {
  const started = clock();
  const order = [...items];
  for (let i = order.length - 1; i > 0; i--) {
    const j = randomInt(i + 1);
    [order[i], order[j]] = [order[j] as T, order[i] as T];
  }
  let confirmed = 0;
  let failed = 0;
  let next = 0;
  const worker = async () => {
    while (next < order.length) {
      const item = order[next++] as T;
      const outcome = await execute(item);
      if (outcome.paymentStatus === 'confirmed') confirmed++;
      else failed++;
      await done(item, outcome);
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, order.length) }, worker));
  return {
    batchId,
    size: order.length,
    executedAt: new Date(started).toISOString(),
    durationMs: clock() - started,
    confirmed,
    failed,
  };
}
