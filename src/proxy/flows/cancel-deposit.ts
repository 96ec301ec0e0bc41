// Wallet deposit, the way out: a prepared deposit the wallet will not sign is cancelled at once instead of
// staying outstanding until its expiry, and the registrar's promise of its validity is given up, so queued
// allowlist registrations need not wait for it.
// Nothing moved at prepare, so cancelling releases nothing but the prepared operation itself; a deposit
// already submitted can no longer be cancelled. The claim is the journal's `prepared → released` transition,
// so a submit and a cancel of the same prepareId racing each other end with exactly one winner. A prepared
// deposit past its deadline is expired by the cancel (as a submit or reconciliation would), and says so.
import { DomainError } from '../domain/errors.ts';
import type { FlowContext } from './context.ts';
import { deadlineOf, ownDeposit } from './operation-data.ts';

/** What this flow uses of the flows' context. */
export type CancelDepositDeps = Pick<FlowContext, 'journal' | 'registrar' | 'logger' | 'clock'>;

/** What became of the prepared deposit: cancelled (now or by an earlier cancel), or it had already ended. */
export type CancelledStatus = 'cancelled' | 'expired' | 'failed';

export const CANCELLED_REASON = { code: 'cancelled', detail: 'cancelled by the wallet before signing' };

export async function cancelDeposit(
  ctx: CancelDepositDeps,
  wallet: string,
  prepareId: string,
): Promise<{ prepareId: string; status: CancelledStatus }> {
  const record = await ctx.journal.get(prepareId);
  // Another wallet's prepareId answers exactly like an unknown one.
  if (record === undefined || ownDeposit(record, wallet) === undefined)
    throw new DomainError('not_found', 'unknown prepareId');
  // Past its deadline it has expired, whether or not reconciliation has seen it yet: the same answer as after.
  const expired = ctx.clock() > deadlineOf(record);
  const { applied, record: now } = await ctx.journal.transition(
    prepareId,
    ['prepared'],
    expired ? { state: 'expired' } : { state: 'released', reason: CANCELLED_REASON },
  );
  if (applied) {
    ctx.registrar.release(prepareId);
    ctx.logger.log('info', expired ? 'wallet deposit expired' : 'wallet deposit cancelled before signing', {
      opId: prepareId,
    });
    return { prepareId, status: expired ? 'expired' : 'cancelled' };
  }
  switch (now.state) {
    case 'released':
      // A replayed cancel gets the same answer; nothing happens twice.
      if (now.reason?.code === CANCELLED_REASON.code) return { prepareId, status: 'cancelled' };
      return { prepareId, status: 'expired' };
    case 'expired':
      return { prepareId, status: 'expired' };
    case 'failed':
      return { prepareId, status: 'failed' };
    case 'proving':
      throw new DomainError('conflict', 'the deposit is still being prepared; cancel it once it is prepared');
    default:
      throw new DomainError(
        'conflict',
        `the deposit was already submitted (${now.state}); it can no longer be cancelled`,
      );
  }
}
