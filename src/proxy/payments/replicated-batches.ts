// The batch operator of replicas sharing a PostgreSQL store: a payment may arrive at any replica, and every
// replica's payments join one batch. The receiving replica reserves the payment (as alone), adds it to the
// queue in the database (cluster/payment-queue.ts) and notifies; the replica elected batch leader
// (cluster/leadership.ts) opens a window when payments wait, takes every waiting payment into its batch under
// its epoch, runs the batch in random order (batch-run.ts) and writes each outcome back, notifying; the
// receiving replica's request wakes with its outcome (queue-waiters.ts). Notifications can be lost (a dropped
// connection), so both sides also poll once a second. A leader signs a payment only while the database's
// epoch is the one it took the payment under (`fenced`); payments a dead leader took are decided by
// reconciliation (reconcile-payment.ts), and their waiting requests read the decision from the journal.
import { randomUUID } from 'node:crypto';
import { DomainError, messageOf } from '../domain/errors.ts';
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import type { Cluster } from '../cluster/cluster.ts';
import { type Campaign, FencedError } from '../cluster/leadership.ts';
import type { PaymentQueue } from '../cluster/payment-queue.ts';
import { isFinal } from '../journal/journal.ts';
import type { Mutex } from '../store/backend.ts';
import type { Logger } from '../util/logger.ts';
import { runBatch } from './batch-run.ts';
import type { FlowContext } from '../flows/context.ts';
import type { PaymentBatches, QueuedPayment, QueueState } from './batches.ts';
import { outcomeOf } from './payment-state.ts';
import { QueueWaiters, type QueueWaitersDeps } from './queue-waiters.ts';

const JOB = 'batch-operator';
const QUEUED = 'pool_payment_queued';
const ANSWERED = 'pool_payment_answered';
/** Both sides look at the queue this often, whatever notifications say. */
const POLL_MS = 1000;
/** Beyond the window and the payment deadline, how long a request waits before answering `pending`. */
const WAIT_MARGIN_MS = 90_000;
const SWEEP_EVERY_MS = 600_000;

export interface ReplicatedBatchesOptions {
  windowMs: number;
  batchMax: number;
  queueMax: number;
  concurrency: number;
  /** How long one payment may take once its batch runs. */
  payDeadlineMs: number;
  logger: Logger;
  /** Runs one payment inside batch `batchId`; never throws (failures are outcomes). */
  execute: (p: QueuedPayment, batchId: string) => Promise<PaymentOutcome>;
}

/** What the operator needs of the payment side: the store and journal, the payment records, the float. */
export interface ReplicatedBatchesDeps extends QueueWaitersDeps {
  flows: Pick<FlowContext, 'store' | 'journal' | 'clock'>;
}

export class ReplicatedBatches implements PaymentBatches {
  readonly #pctx: ReplicatedBatchesDeps;
  readonly #o: ReplicatedBatchesOptions;
  readonly #cluster: Cluster;
  readonly #queue: PaymentQueue<QueuedPayment>;
  readonly #campaign: Campaign;
  readonly #opLock: Mutex;
  /** This replica's requests waiting for their payments' outcomes. */
  readonly #waiters: QueueWaiters;
  /** Payments this leader executes, with the epoch it took them under. */
  readonly #executing = new Map<string, number>();
  readonly #unsubscribe: Array<() => void> = [];
  #epoch: number | undefined;
  #window: NodeJS.Timeout | undefined;
  #poll: NodeJS.Timeout | undefined;
  #running = 0;
  #lastSweep = 0;
  #stopped = false;
  /** Stopping and about to give the leadership up: no new batch starts. */
  #leaving = false;

  constructor(pctx: ReplicatedBatchesDeps, cluster: Cluster, options: ReplicatedBatchesOptions) {
    this.#pctx = pctx;
    this.#o = options;
    this.#cluster = cluster;
    this.#queue = cluster.paymentQueue<QueuedPayment>(JOB);
    this.#waiters = new QueueWaiters(pctx, this.#queue, options.windowMs);
    this.#opLock = pctx.flows.store.mutex('op');
    this.#campaign = cluster.campaign(JOB, {
      elected: (epoch) => {
        this.#epoch = epoch;
        void this.#check();
      },
      deposed: () => {
        this.#epoch = undefined;
        clearTimeout(this.#window);
        this.#window = undefined;
      },
    });
  }

  /** Listens for queued and answered payments, polls, and campaigns for the batch leadership. */
  async start(): Promise<void> {
    const { notifications } = this.#cluster;
    this.#unsubscribe.push(
      await notifications.on(QUEUED, () => void this.#check()),
      await notifications.on(ANSWERED, (row) => this.#waiters.answered(row)),
    );
    this.#poll = setInterval(() => void this.#tick(), POLL_MS);
    this.#poll.unref();
    this.#campaign.start();
  }

  async checkCapacity(): Promise<void> {
    if (this.#stopped) throw new DomainError('service_unavailable', 'the service is stopping; retry');
    if ((await this.#queue.unanswered()) >= this.#o.queueMax) throw this.#full();
  }

  #full(): DomainError {
    return new DomainError('queue_full', `the payment queue is full (${this.#o.queueMax}); retry later`, {
      retryAfterSeconds: Math.ceil(this.#o.windowMs / 1000),
    });
  }

  async enqueue(p: QueuedPayment): Promise<{ outcome: Promise<PaymentOutcome> }> {
    if (this.#stopped) throw new DomainError('service_unavailable', 'the service is stopping; retry');
    if (!(await this.#queue.add(p.paymentId, p, this.#o.queueMax))) throw this.#full();
    const outcome = this.#waiters.wait(
      p.paymentId,
      this.#o.windowMs + this.#o.payDeadlineMs + WAIT_MARGIN_MS,
    );
    await this.#cluster.notifications.notify(QUEUED).catch(() => {}); // the leader polls too
    return { outcome };
  }

  async queueState(paymentId: string): Promise<QueueState> {
    return this.#queue.state(paymentId);
  }

  async fenced<T>(paymentId: string, write: () => Promise<T>): Promise<T> {
    const takenUnder = this.#executing.get(paymentId);
    if (takenUnder === undefined) throw new FencedError(JOB, 0);
    // The op lock is the journal's: reconciliation's release of this payment waits for this write, or wins.
    return this.#opLock.run(paymentId, async () => {
      if ((await this.#campaign.fence()) !== takenUnder) throw new FencedError(JOB, takenUnder);
      const record = await this.#pctx.flows.journal.get(paymentId);
      if (record === undefined || isFinal(record.state))
        throw new Error(`payment ${paymentId} was decided elsewhere; not sent`);
      return write();
    });
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    // Queued payments run at once while this replica leads (no wait for the window's end).
    for (let round = 0; round < 100 && this.#epoch !== undefined; round++) {
      if ((await this.#queue.waiting().catch(() => 0)) === 0) break;
      await this.#runNow();
    }
    // The requests waiting here get their outcomes. Meanwhile this replica still campaigns and, if it leads,
    // runs batches: replicas stopping together still answer each other's payments.
    while (this.#waiters.size > 0) await sleep(100);
    this.#leaving = true;
    clearTimeout(this.#window);
    this.#window = undefined;
    while (this.#running > 0) await sleep(50);
    await this.#campaign.stop(); // its successor takes what is left
    clearInterval(this.#poll);
    for (const off of this.#unsubscribe) off();
  }

  /**
   * Leader: opens a window when payments wait, or runs at once when a full batch waits. (A replica that is
   * stopping still runs the batches it leads until it gives the leadership up: other replicas' payments wait.)
   */
  async #check(): Promise<void> {
    if (this.#epoch === undefined) return;
    const waiting = await this.#queue.waiting().catch(() => 0);
    if (waiting === 0) return;
    if (waiting >= this.#o.batchMax) void this.#runNow();
    else this.#window ??= setTimeout(() => void this.#runNow(), this.#o.windowMs);
  }

  async #runNow(): Promise<void> {
    clearTimeout(this.#window);
    this.#window = undefined;
    const epoch = this.#epoch;
    if (epoch === undefined || this.#leaving) return;
    this.#running++;
    try {
      const taken = await this.#queue.take(epoch, this.#o.batchMax);
      if (taken.length === 0) return;
      void this.#check(); // more waiting: the next window
      await this.#run(epoch, taken);
    } catch (error) {
      this.#o.logger.log('warn', 'running a batch failed', { error: messageOf(error) });
    } finally {
      this.#running--;
    }
  }

  async #run(epoch: number, taken: QueuedPayment[]): Promise<void> {
    const batchId = randomUUID();
    for (const p of taken) this.#executing.set(p.paymentId, epoch);
    const summary = await runBatch(
      batchId,
      taken,
      this.#o.concurrency,
      (p) => this.#execute(p, batchId),
      async (p, outcome) => {
        this.#executing.delete(p.paymentId);
        const answered = await this.#queue.answer(p.paymentId, epoch, outcome).catch(() => false);
        if (!answered) return; // deposed: the journal and reconciliation answer for it
        if (this.#waiters.has(p.paymentId)) this.#waiters.resolve(p.paymentId, outcome);
        else
          await this.#cluster.notifications.notify(ANSWERED, this.#queue.idOf(p.paymentId)).catch(() => {});
      },
      this.#pctx.flows.clock,
    );
    this.#o.logger.log('info', 'batch executed', { ...summary });
  }

  /** A payment still reserved is executed; one decided meanwhile answers as it was decided. */
  async #execute(p: QueuedPayment, batchId: string): Promise<PaymentOutcome> {
    try {
      const record = await this.#pctx.flows.journal.get(p.paymentId);
      if (record?.state !== 'reserved') return await outcomeOf(this.#pctx, p.paymentId);
    } catch (error) {
      return {
        paymentId: p.paymentId,
        batchId,
        paymentStatus: 'pending',
        reason: { code: 'internal_error', detail: messageOf(error) },
      };
    }
    return this.#o.execute(p, batchId);
  }

  /** Every second: the leader looks for waiting payments, the waiting requests for their outcomes. */
  async #tick(): Promise<void> {
    void this.#check();
    if (this.#epoch !== undefined && this.#pctx.flows.clock() - this.#lastSweep > SWEEP_EVERY_MS) {
      this.#lastSweep = this.#pctx.flows.clock();
      void this.#queue.sweep().catch(() => {});
    }
    await this.#waiters.poll();
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
