// Settlement keeps the books true: payments leave through the pool wallet's float, so the agents' notes must
// pay the float back. A background job (mean interval POOL_PROXY_SETTLE_INTERVAL_MS, ± half at random, agents
// in random order) spends each indebted agent's notes for its whole unsettled debt in one withdrawal to the
// pool wallet — `disburse` (the pool's payout path) by default. Aggregated per agent and delayed, so the
// ledger never mirrors individual payments. A settlement is a journaled operation: the debt it covers moves
// into its reservation, and goes back to the agent's debts if it fails.
import { randomInt, randomUUID } from 'node:crypto';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { ProblemError } from '../../api/problem.ts';
import { settleFailure } from '../flows/settle-failure.ts';
import { spendNotes } from '../flows/spend-notes.ts';
import type { PaymentContext } from './context.ts';

export async function settleAgent(pctx: PaymentContext, ref: AgentRef): Promise<bigint> {
  const { flows } = pctx;
  const agent = scopedId(ref);
  const debt = (await flows.notes.account(agent)).unsettled;
  if (debt <= 0n) return 0n;
  const opId = randomUUID();
  await flows.journal.begin({ opId, kind: 'settlement', agent, state: 'reserved', amount: debt });
  try {
    await flows.notes.reserveFromUnsettled(agent, opId, debt);
    const { confirmed } = await spendNotes(
      flows,
      ref,
      opId,
      'settlement',
      debt,
      pctx.poolWallet.publicKey(),
      'disburse',
    );
    await flows.journal.update(opId, { state: 'confirmed', txHash: confirmed.hash });
    flows.metrics.ledgerOperations.inc({ kind: 'settlement', outcome: 'confirmed' });
    await flows.stats.recordTransaction();
    flows.logger.log('info', 'settlement confirmed', { opId, txHash: confirmed.hash });
    return debt;
  } catch (error) {
    await settleFailure(flows, opId, error);
    flows.logger.log('warn', 'settlement failed; will retry', { opId, code: (error as ProblemError).code });
    throw error;
  }
}

export class SettlementJob {
  readonly #pctx: PaymentContext;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(pctx: PaymentContext) {
    this.#pctx = pctx;
  }

  start(): void {
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** Settles every indebted agent now (tests and the periodic run). */
  async runOnce(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
    this.#running = this.#settleAll().finally(() => {
      this.#running = undefined;
    });
    await this.#running;
  }

  #schedule(): void {
    if (this.#stopped) return;
    const mean = this.#pctx.config.settleIntervalMs;
    const delay = Math.round(mean / 2) + randomInt(Math.max(1, mean));
    this.#timer = setTimeout(() => {
      this.runOnce()
        .catch(() => {})
        .finally(() => this.#schedule());
    }, delay);
    this.#timer.unref();
  }

  /**
   * Asked before every run and every agent: false skips them (another replica leads settlement, or this
   * one lost its leadership meanwhile). Always true for a proxy alone on its store.
   */
  gate: () => Promise<boolean> = async () => true;

  async #settleAll(): Promise<void> {
    if (!(await this.gate())) return;
    const agents = await this.#pctx.flows.agents.all();
    for (let i = agents.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [agents[i], agents[j]] = [agents[j]!, agents[i]!];
    }
    for (const a of agents) {
      if (this.#stopped || !(await this.gate())) return;
      try {
        await settleAgent(this.#pctx, a);
      } catch {
        // logged in settleAgent; the next run retries
      }
    }
  }
}
