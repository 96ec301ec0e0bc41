// The proxy's singleton jobs under leadership (leadership.ts) when replicas share a store: reconciliation
// of the journal and settlement of agents' payment debts each run on exactly one replica. A replica elected
// for either job reconciles the journal before it acts (whatever its predecessor left half-done is decided
// first), and every run is fenced with the job's epoch.
import type { PostgresBackend } from '../store/postgres-backend.ts';
import type { Logger } from '../util/logger.ts';
import { Campaign } from './leadership.ts';
import { messageOf } from '../domain/errors.ts';

export interface SingletonJobs {
  /** Decides unfinished operations against the chain. */
  reconcile: () => Promise<unknown>;
}

export interface Singletons {
  /** Reconciles now if this replica leads reconciliation (fenced); resolves false when it does not. */
  reconcile(): Promise<boolean>;
  /** Whether this replica may settle now (it leads settlement under the database's current epoch). */
  maySettle(): Promise<boolean>;
  /** The epochs this replica leads under, by job. */
  leading(): Record<string, number>;
  stop(): Promise<void>;
}

export function leadSingletons(backend: PostgresBackend, jobs: SingletonJobs, logger: Logger): Singletons {
  const reconcileFirst = async (job: string) => {
    await jobs.reconcile().catch((error) =>
      logger.log('warn', 'reconciliation on election failed; will retry', {
        job,
        error: messageOf(error),
      }),
    );
  };
  const reconciler = new Campaign(
    backend,
    'reconcile',
    { elected: () => reconcileFirst('reconcile'), deposed: () => {} },
    logger,
  );
  const settlement = new Campaign(
    backend,
    'settlement',
    { elected: () => reconcileFirst('settlement'), deposed: () => {} },
    logger,
  );
  const campaigns = [reconciler, settlement];
  for (const campaign of campaigns) campaign.start();
  const fenced = (campaign: Campaign) =>
    campaign.epoch === undefined
      ? Promise.resolve(false)
      : campaign.fence().then(
          () => true,
          () => false,
        );
  return {
    async reconcile() {
      if (!(await fenced(reconciler))) return false;
      await jobs.reconcile();
      return true;
    },
    maySettle: () => fenced(settlement),
    leading() {
      const out: Record<string, number> = {};
      for (const c of campaigns) if (c.epoch !== undefined) out[c.job] = c.epoch;
      return out;
    },
    async stop() {
      await Promise.all(campaigns.map((c) => c.stop()));
    },
  };
}
