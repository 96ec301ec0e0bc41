// Starts real daemons on free loopback ports for tests and reads their metrics.
import {
  type ProverDaemon,
  type ProverDaemonOptions,
  startProverDaemon,
} from '../../../src/prover/daemon/server.ts';
import { ensureTestCircuits } from './test-circuits.ts';

export async function startTestDaemon(options: Partial<ProverDaemonOptions> = {}): Promise<ProverDaemon> {
  const daemon = await startProverDaemon({
    listen: '127.0.0.1:0',
    circuitsDir: options.circuitsDir ?? (await ensureTestCircuits()),
    engine: 'snarkjs',
    witnessWorkers: 1,
    ...options,
  });
  return daemon;
}

/** Current value of one metric series (0 when the series does not exist yet). */
export async function metricValue(
  daemon: ProverDaemon,
  name: string,
  labels: Record<string, string> = {},
): Promise<number> {
  const metric = daemon.metrics.registry.getSingleMetric(name);
  if (!metric) throw new Error(`no metric ${name}`);
  const { values } = await metric.get();
  const series = values.find((v) =>
    Object.entries(labels).every(([k, value]) => String((v.labels as Record<string, unknown>)[k]) === value),
  );
  return series?.value ?? 0;
}

/** Polls `condition` (a state the test is waiting for, not a timing assumption) every 10 ms. */
export async function until(
  condition: () => boolean | Promise<boolean>,
  what: string,
  limitMs = 60_000,
): Promise<void> {
  const giveUp = Date.now() + limitMs;
  while (!(await condition())) {
    if (Date.now() > giveUp) throw new Error(`gave up waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}
