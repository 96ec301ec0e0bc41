// What a proxy needs to run beside other replicas on one PostgreSQL store: its run lock (runs.ts), so the
// others can tell its in-flight operations from a dead process's, and the limits that must hold for the
// deployment rather than per process (rate limits, per-wallet quotas). Alone on a LevelDB store there is no
// cluster: everything stays in-process. Beside the singleton jobs' leaders, the replicas share a payment queue
// (payment-queue.ts) and wake each other with notifications (notifications.ts).
import type { RateLimitConfig } from '../config.ts';
import type { WalletQuotaLimits, WalletQuotaPolicy } from '../flows/wallet-quotas.ts';
import type { RequestLimiter } from '../http/rate-limit.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import { PostgresBackend } from '../store/postgres-backend.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import { Campaign, type LeaderCallbacks } from './leadership.ts';
import { Notifications } from './notifications.ts';
import { PaymentQueue } from './payment-queue.ts';
import { ProcessRuns } from './runs.ts';
import { SharedWalletQuotas } from './shared-quotas.ts';
import { SharedRateLimiter } from './shared-rate-limit.ts';
import { leadSingletons, type SingletonJobs, type Singletons } from './singletons.ts';

export interface Cluster {
  runs: ProcessRuns;
  /** A rate limiter whose buckets every replica shares; `scope` names it (`ip`, `token`). */
  limiter(scope: string, config: RateLimitConfig): RequestLimiter;
  /** Per-wallet quotas every replica shares; `slotMs` bounds a dead process's prepare slot. */
  quotas(limits: WalletQuotaLimits, slotMs: number): WalletQuotaPolicy;
  /** Campaigns for the singleton jobs; each elected replica reconciles before it acts. */
  lead(jobs: SingletonJobs): Singletons;
  /** A campaign for the leadership of `job` (not started). */
  campaign(job: string, callbacks: LeaderCallbacks): Campaign;
  /** LISTEN/NOTIFY between the replicas. */
  notifications: Notifications;
  /** The payment queue shared by the replicas, fenced by the epoch of `job`'s leader. */
  paymentQueue<T>(job: string): PaymentQueue<T>;
  close(): Promise<void>;
}

/** Joins the replicas sharing `store`, or undefined when the store is not shared (LevelDB). */
/** `clock`: the proxy's, which the shared rate limits and quotas read. */
export async function joinCluster(
  store: EncryptedStore,
  logger: Logger,
  clock: Clock,
): Promise<Cluster | undefined> {
  const backend = store.backend;
  if (!(backend instanceof PostgresBackend)) return undefined;
  const runs = await ProcessRuns.join(backend, logger);
  logger.log('info', 'joined the replicas on the shared store', {
    runId: runs.runId,
    store: backend.location,
  });
  const notifications = new Notifications(backend, logger);
  return {
    runs,
    notifications,
    campaign: (job, callbacks) => new Campaign(backend, job, callbacks, logger),
    paymentQueue: <T>(job: string) => new PaymentQueue<T>(backend, store, job),
    limiter: (scope, config) => new SharedRateLimiter(backend, store, scope, config, clock),
    quotas: (limits, slotMs) => new SharedWalletQuotas(store, limits, slotMs, clock),
    lead: (jobs) => leadSingletons(backend, jobs, logger),
    async close() {
      await notifications.close();
      await runs.close();
    },
  };
}
