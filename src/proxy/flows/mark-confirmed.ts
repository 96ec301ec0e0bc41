// An operation's transaction landed: mark it confirmed exactly once. The flow that sent it and reconciliation
// (which may see the transaction land first) both call this; whichever moves the operation out of its open
// state counts it in the public statistics, so the count stays the number of transactions on the ledger.
import type { OperationRecord, OperationState } from '../journal/journal.ts';
import type { FlowContext } from './context.ts';

export async function markConfirmed(
  ctx: Pick<FlowContext, 'journal' | 'stats'>,
  opId: string,
  patch: Partial<Pick<OperationRecord, 'txHash'>> = {},
  from: OperationState[] = ['submitted'],
): Promise<boolean> {
  const { applied } = await ctx.journal.transition(opId, from, { ...patch, state: 'confirmed' });
  if (applied) await ctx.stats.recordTransaction();
  return applied;
}
