// Settlement keeps the books true without telling the ledger who spent what. Payments leave through the pool
// wallet's float, so each agent's debt must move out of its notes, but a public withdrawal of that debt
// would publish the agent's spending (its amount is the sum of the agent's payments, which an observer
// matches by subset-sum). So debts move INSIDE the pool: a shielded transfer (`transact`, ext_amount 0)
// spends the agent's notes into its change and a note of the operator's float account
// (`domain/float-account.ts`); when one agent note covers the debt, the float account's largest note is the
// second input, so the float account's notes merge as debts arrive. The float account refills the pool wallet
// separately (`float-refill.ts`).
//
// Nothing here counts agents: rounds start on a random schedule (mean POOL_PROXY_SETTLE_INTERVAL_MS, ± half)
// that no payment moves, and every round makes exactly POOL_PROXY_SETTLE_ROUND_SIZE transfers of one shape
// (two nullifiers, two commitments, two 120-byte encrypted notes, signed by the operator): agents' settlements
// in random order, an agent's note consolidation when two notes do not cover its debt, and padding transfers
// of the float account (merging its two smallest notes) for the slots left. A round is skipped when no agent
// owes anything and the float account has at most two notes (nothing to merge for its refills). More indebted
// agents than slots wait for the next round.
//
// A settlement is a journaled operation: the debt moves into its reservation (available balances never
// move), and goes back to the agent's debts if it fails; reconciliation decides one a crash interrupted.
import { randomInt, randomUUID } from 'node:crypto';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { FLOAT_ACCOUNT, FLOAT_ACCOUNT_ID } from '../domain/float-account.ts';
import { codeOf, messageOf } from '../domain/errors.ts';
import { consolidate, type ConsolidateDeps } from '../flows/consolidate.ts';
import type { FlowContext } from '../flows/context.ts';
import { proveAndRelay, type RelayDeps } from '../flows/relay.ts';
import { settleFailure, type SettleFailureDeps } from '../flows/settle-failure.ts';
import { selectNotes, type SpendNotesDeps } from '../flows/spend-notes.ts';
import type { PaymentContext } from './context.ts';
import { markConfirmed, type MarkConfirmedDeps } from '../flows/mark-confirmed.ts';

/** What this module uses of the payment context. */
export type SettlementDeps = Pick<PaymentContext, 'config'> & {
  flows: Pick<
    FlowContext,
    | 'spendLock'
    | 'agents'
    | 'notes'
    | 'keyring'
    | 'journal'
    | 'prover'
    | 'registrar'
    | 'deployment'
    | 'metrics'
    | 'logger'
  > &
    SpendNotesDeps &
    ConsolidateDeps &
    RelayDeps &
    SettleFailureDeps &
    MarkConfirmedDeps;
};

export type SlotOutcome = 'settled' | 'consolidated' | 'nothing owed';

/** One slot for an agent: its whole debt to the float account, or a consolidation when two notes do not cover it. */
export async function settleAgent(pctx: SettlementDeps, ref: AgentRef): Promise<SlotOutcome> {
  const { flows } = pctx;
  const agent = scopedId(ref);
  return flows.spendLock.run(agent, async () => {
    const debt = (await flows.notes.account(agent)).unsettled;
    if (debt <= 0n) return 'nothing owed';
    const notes = await selectNotes(flows, agent, debt);
    if (notes === undefined) {
      await consolidate(flows, ref, { sealed: false, metricKind: 'settlement' });
      return 'consolidated';
    }
    const total = notes.reduce((s, n) => s + n.amount, 0n);
    const opId = randomUUID();
    await flows.journal.begin({ opId, kind: 'settlement', agent, state: 'reserved', amount: debt });
    try {
      await flows.notes.reserveFromUnsettled(agent, opId, debt);
      await flows.notes.lock(
        agent,
        opId,
        notes.map((n) => n.commitment),
      );
      const own = flows.keyring.crypto(agent);
      const float = flows.keyring.crypto(FLOAT_ACCOUNT_ID);
      // One agent note leaves the second input free: the float account's largest note in the same tree joins
      // the transfer, so its notes merge as debts arrive (locked for this operation, released with it if it
      // fails).
      const tree = flows.prover.treeOf(notes[0]!);
      const merged =
        notes.length === 1
          ? await flows.spendLock.run(FLOAT_ACCOUNT_ID, async () => {
              const largest = (await flows.notes.unspentNotes(FLOAT_ACCOUNT_ID))
                .filter((n) => flows.prover.treeOf(n) === tree)
                .sort((a, b) => (a.amount > b.amount ? -1 : a.amount < b.amount ? 1 : 0))[0];
              if (largest !== undefined) await flows.notes.lock(FLOAT_ACCOUNT_ID, opId, [largest.commitment]);
              return largest;
            })
          : undefined;
      const { confirmed } = await proveAndRelay(
        flows,
        { opId, flow: 'settlement', agent, owner: ref.owner },
        () =>
          flows.prover.proveTransfer({
            spender: own,
            inputs: merged === undefined ? notes : [...notes, { note: merged, owner: float }],
            outputs: [
              { amount: total - debt, to: own },
              { amount: debt + (merged?.amount ?? 0n), to: float, owner: FLOAT_ACCOUNT_ID },
            ],
            extAmount: 0n,
            recipient: flows.deployment.operator.publicKey(),
          }),
      );
      await markConfirmed(flows, opId, { txHash: confirmed.hash });
      flows.metrics.ledgerOperations.inc({ kind: 'settlement', outcome: 'confirmed' });
      flows.logger.log('info', 'settlement confirmed', { opId, txHash: confirmed.hash });
      return 'settled';
    } catch (error) {
      await settleFailure(flows, opId, error);
      flows.logger.log('warn', 'settlement failed; will retry', { opId, code: codeOf(error) });
      throw error;
    }
  });
}

/** A padding slot: the float account merges its two smallest notes (a transfer of the same shape). */
export async function paddingTransfer(pctx: SettlementDeps): Promise<void> {
  const { flows } = pctx;
  await flows.spendLock.run(FLOAT_ACCOUNT_ID, () =>
    consolidate(flows, FLOAT_ACCOUNT, {
      sealed: false,
      pick: 'smallest',
      flow: 'float_transfer',
      metricKind: 'settlement',
    }),
  );
}

export class SettlementJob {
  readonly #pctx: SettlementDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<void> | undefined;
  #stopped = false;

  constructor(pctx: SettlementDeps, gate: () => Promise<boolean> = async () => true) {
    this.#pctx = pctx;
    this.#gate = gate;
  }

  /** Whether a round is under way. */
  get running(): boolean {
    return this.#running !== undefined;
  }

  start(): void {
    // The float account's key joins the allowlist once, before any debt waits for it (a no-op once there),
    // asked by the process that leads settlement only (each round asks again, once it leads).
    void this.#gate()
      .then((leads) => (leads ? this.#pctx.flows.registrar.register(FLOAT_ACCOUNT) : undefined))
      .catch((error: unknown) =>
        this.#pctx.flows.logger.log('warn', 'float account registration failed; the next round asks again', {
          error: messageOf(error),
        }),
      );
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running;
  }

  /** Runs one round now (tests and the periodic run). */
  async runOnce(): Promise<void> {
    while (this.#running !== undefined) await this.#running;
    this.#running = this.#round().finally(() => {
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
        .catch((error) =>
          this.#pctx.flows.logger.log('warn', 'settlement round failed', { error: messageOf(error) }),
        )
        .finally(() => this.#schedule());
    }, delay);
    this.#timer.unref();
  }

  /**
   * Asked before every round and every slot: false skips them (another replica leads settlement, or this
   * one lost its leadership meanwhile). Always true for a proxy alone on its store.
   */
  readonly #gate: () => Promise<boolean>;

  async #round(): Promise<void> {
    if (!(await this.#gate())) return;
    const { flows, config } = this.#pctx;
    const owing: AgentRef[] = [];
    for (const a of await flows.agents.all())
      if ((await flows.notes.account(scopedId(a))).unsettled > 0n) owing.push(a);
    if (owing.length === 0 && (await flows.notes.unspentNotes(FLOAT_ACCOUNT_ID)).length <= 2) return;
    for (let i = owing.length - 1; i > 0; i--) {
      const j = randomInt(i + 1);
      [owing[i], owing[j]] = [owing[j]!, owing[i]!];
    }
    // The float account's key joins the allowlist once (at once when it is there already).
    await flows.registrar.register(FLOAT_ACCOUNT);
    let slots = 0;
    while (slots < config.settleRoundSize) {
      if (this.#stopped || !(await this.#gate())) return;
      const next = owing.shift();
      try {
        if (next === undefined) {
          await paddingTransfer(this.#pctx);
        } else {
          const outcome = await settleAgent(this.#pctx, next);
          if (outcome === 'nothing owed') continue;
          if (outcome === 'consolidated') owing.unshift(next);
        }
      } catch (error) {
        flows.logger.log('warn', 'settlement slot failed; the next round retries', {
          code: codeOf(error),
        });
      }
      slots += 1;
    }
  }
}
