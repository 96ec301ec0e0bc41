// An operation's transaction landed: mark it confirmed exactly once. The flow that sent it and reconciliation
// (which may see the transaction land first) both call this; whichever moves the operation out of its open
// state counts it in the public statistics, so the count stays the number of transactions on the ledger.
import type { OperationRecord, OperationState } from '../journal/journal.ts';
import type { FlowContext } from './context.ts';

/** What this flow uses of the flows' context. */
export type MarkConfirmedDeps = Pick<FlowContext, 'journal' | 'stats'>;

export async function markConfirmed(
  ctx: MarkConfirmedDeps,
  opId: string,
  patch: Partial<Pick<OperationRecord, 'txHash'>> = {},
  from: OperationState[] = ['submitted'],
): Promise<boolean> {
  const { applied } = await ctx.journal.transition(opId, from, { ...patch, state: 'confirmed' });
  if (applied) await ctx.stats.recordTransaction();
  return applied;
}
