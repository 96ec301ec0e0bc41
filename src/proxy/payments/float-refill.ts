// Float refills that no agent determines: the pool wallet's public float is topped up from the float account
// (the operator's shielded account that settlements pay into) by withdrawals to the pool wallet. The job wakes
// at random times (mean POOL_PROXY_FLOAT_REFILL_INTERVAL_MS, ± half); when the pool wallet holds less than
// POOL_PROXY_FLOAT_LOW it withdraws what brings it back to POOL_PROXY_FLOAT_TARGET, rounded DOWN to whole
// POOL_PROXY_FLOAT_UNITs. The amount is a function of the pool wallet's public balance and the settings only:
// never capped by what the float account holds (that would publish a rounded sum of the debts settled so
// far). When the float account cannot pay it yet from two notes, the refill waits: settlements fill the
// account and the rounds' padding transfers merge its notes. Over time the refills add up to what was paid
// (public anyway), less what the float account keeps back.
//
// A refill is a journaled operation (`float_refill`): the amount is reserved on the float account before its
// notes are locked and the disbursement is proved and sent; reconciliation decides one a crash interrupted.
import { randomInt, randomUUID } from 'node:crypto';
import { FLOAT_ACCOUNT, FLOAT_ACCOUNT_ID } from '../domain/float-account.ts';
import { codeOf } from '../domain/errors.ts';
import type { FlowContext } from '../flows/context.ts';
import { settleFailure, type SettleFailureDeps } from '../flows/settle-failure.ts';
import { proveAndRelay, type RelayDeps } from '../flows/relay.ts';
import { selectNotes, type SpendNotesDeps } from '../flows/spend-notes.ts';
import { usdcBalance, type UsdcBalanceDeps } from '../flows/usdc-balance.ts';
import type { PaymentContext } from './context.ts';
import { markConfirmed, type MarkConfirmedDeps } from '../flows/mark-confirmed.ts';

/** What this module uses of the payment context. */
export type FloatRefillDeps = Pick<PaymentContext, 'config' | 'poolWallet'> & {
  flows: Pick<FlowContext, 'spendLock' | 'notes' | 'keyring' | 'journal' | 'prover' | 'metrics' | 'logger'> &
    UsdcBalanceDeps &
    SpendNotesDeps &
    RelayDeps &
    SettleFailureDeps &
    MarkConfirmedDeps;
};

/** The refill the float needs now (0 = none): up to the target in whole units, if the float account can pay it. */
export async function refillAmount(pctx: FloatRefillDeps): Promise<bigint> {
  const { flows, config } = pctx;
  const { target, low, unit } = config.float;
  const held = await usdcBalance(flows, pctx.poolWallet.publicKey());
  if (held >= low) return 0n;
  const amount = ((target - held) / unit) * unit;
  if (amount <= 0n) return 0n;
  const largest = (await flows.notes.unspentNotes(FLOAT_ACCOUNT_ID))
    .map((n) => n.amount)
    .sort((a, b) => (a > b ? -1 : a < b ? 1 : 0))
    .slice(0, 2)
    .reduce((s, v) => s + v, 0n);
  if (amount > largest || amount > (await flows.notes.available(FLOAT_ACCOUNT_ID))) return 0n;
  return amount;
}

/** Refills the pool wallet now if its float is low; returns the amount withdrawn (0 = none). */
export async function refillFloat(pctx: FloatRefillDeps): Promise<bigint> {
  const { flows } = pctx;
  // The float account's spends (refills, padding transfers) take turns: notes are chosen on a settled set.
  return flows.spendLock.run(FLOAT_ACCOUNT_ID, async () => {
    const amount = await refillAmount(pctx);
    if (amount <= 0n) return 0n;
    const notes = await selectNotes(flows, FLOAT_ACCOUNT_ID, amount);
    if (notes === undefined) return 0n;
    const total = notes.reduce((s, n) => s + n.amount, 0n);
    const opId = randomUUID();
    await flows.journal.begin({
      opId,
      kind: 'float_refill',
      agent: FLOAT_ACCOUNT_ID,
      state: 'reserved',
      amount,
    });
    try {
      await flows.notes.reserve(FLOAT_ACCOUNT_ID, opId, amount);
      await flows.notes.lock(
        FLOAT_ACCOUNT_ID,
        opId,
        notes.map((n) => n.commitment),
      );
      const { confirmed } = await proveAndRelay(
        flows,
        {
          opId,
          flow: 'float_refill',
          agent: FLOAT_ACCOUNT_ID,
          owner: FLOAT_ACCOUNT.owner,
          method: 'disburse',
        },
        () =>
          flows.prover.prove({
            agent: flows.keyring.crypto(FLOAT_ACCOUNT_ID),
            inputs: notes,
            change: total - amount,
            extAmount: -amount,
            recipient: pctx.poolWallet.publicKey(),
          }),
      );
      await markConfirmed(flows, opId, { txHash: confirmed.hash });
      flows.metrics.ledgerOperations.inc({ kind: 'float_refill', outcome: 'confirmed' });
      flows.logger.log('info', 'float refilled', { opId, txHash: confirmed.hash });
      return amount;
    } catch (error) {
      await settleFailure(flows, opId, error);
      flows.logger.log('warn', 'float refill failed; will retry', {
        opId,
        code: codeOf(error),
      });
      throw error;
    }
  });
}

export class FloatRefillJob {
  readonly #pctx: FloatRefillDeps;
  #timer: NodeJS.Timeout | undefined;
  #running: Promise<unknown> | undefined;
  #stopped = false;

  constructor(pctx: FloatRefillDeps, gate: () => Promise<boolean> = async () => true) {
    this.#pctx = pctx;
    this.#gate = gate;
  }

  get running(): boolean {
    return this.#running !== undefined;
  }

  /** Asked before every check: false skips it (another replica leads settlement and refills). */
  readonly #gate: () => Promise<boolean>;

  start(): void {
    this.#schedule();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#timer);
    await this.#running?.catch(() => undefined);
  }

  #schedule(): void {
    if (this.#stopped) return;
    const mean = this.#pctx.config.float.refillIntervalMs;
    const delay = Math.round(mean / 2) + randomInt(Math.max(1, mean));
    this.#timer = setTimeout(() => {
      this.#running = this.#gate()
        .then((lead) => (lead ? refillFloat(this.#pctx) : 0n))
        .catch(() => undefined)
        .finally(() => {
          this.#running = undefined;
          this.#schedule();
        });
    }, delay);
    this.#timer.unref();
  }
}
