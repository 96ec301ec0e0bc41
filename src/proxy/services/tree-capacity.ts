// Keeps the pool's tree capacity in sight: after every indexer pass, the operator's gauges say where the current
// tree stands, and the log warns once per tree when it passes 80 % and 95 % of its leaves. A full tree freezes
// nothing (the pool opens the next one), so these are for planning: rent of the trees' state, the indexer's
// memory (each tree's nodes), and how fast a deployment's traffic fills trees (docs/OPERATIONS.md).
import type { Logger } from '../util/logger.ts';
import type { ProxyMetrics } from '../util/metrics.ts';
import type { TreeState } from './pool-transaction.ts';

/** Fractions of a tree's leaves past which the log warns (once per tree each). */
export const TREE_WARNINGS = [0.8, 0.95] as const;

export class TreeCapacityWatch {
  readonly #metrics: ProxyMetrics;
  readonly #logger: Logger;
  /** the highest warning given, by tree ("tree:fraction") */
  #warned = new Set<string>();

  constructor(metrics: ProxyMetrics, logger: Logger) {
    this.#metrics = metrics;
    this.#logger = logger;
  }

  /** Updates the gauges and warns for the thresholds `state` has newly passed. */
  observe(state: TreeState): void {
    const gauge = this.#metrics.poolTree;
    gauge.set({ measure: 'current' }, state.tree);
    gauge.set({ measure: 'leaves_used' }, state.leaves);
    gauge.set({ measure: 'leaves_free' }, state.capacity - state.leaves);
    gauge.set({ measure: 'capacity' }, state.capacity);
    const passed = TREE_WARNINGS.filter((f) => state.leaves >= f * state.capacity).at(-1);
    if (passed === undefined) return;
    const key = `${state.tree}:${passed}`;
    if (this.#warned.has(key)) return;
    // one line per threshold and tree: the lower one is implied once the higher is logged
    for (const f of TREE_WARNINGS) if (f <= passed) this.#warned.add(`${state.tree}:${f}`);
    this.#logger.log('warn', `pool tree ${state.tree} is ${Math.round(passed * 100)} % full`, {
      tree: state.tree,
      leavesUsed: state.leaves,
      capacity: state.capacity,
      next: 'the pool opens the next tree when this one is full; nothing is frozen',
    });
  }
}
