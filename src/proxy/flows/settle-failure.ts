// After a flow failed: a definite failure releases what the operation held (reservation, note locks, pending
// outputs) and closes it; an uncertain one keeps everything held — the journal says `submitted` — and
// reconciliation decides it by hash, so a late landing can never overdraw or be paid twice. Once a transaction
// is sent, only the ledger's refusal is definite: any other error after it (not decided in time, or confirmed
// but not credited yet) leaves the operation to reconciliation.
import { FLOAT_ACCOUNT_ID } from '../domain/float-account.ts';
import { DomainError } from '../domain/errors.ts';
import { UncertainOutcome } from '../services/chain-client.ts';
import type { FlowContext } from './context.ts';

/** What this flow uses of the flows' context. */
export type SettleFailureDeps = Pick<FlowContext, 'journal' | 'notes' | 'crediting'>;

export async function settleFailure(ctx: SettleFailureDeps, opId: string, error: unknown): Promise<void> {
  if (error instanceof UncertainOutcome) return;
  const record = await ctx.journal.get(opId);
  if (record === undefined) return;
  if (record.state === 'submitted' && !refusedByTheLedger(error)) return;
  const reason =
    error instanceof DomainError
      ? { code: error.code, detail: error.message }
      : { code: 'internal_error', detail: 'unexpected error' };
  await releaseOperation(ctx, opId, 'failed', reason);
}

/** The ledger refused the transaction as sent (or its proof's root had moved): it did not and will not land. */
export function refusedByTheLedger(error: unknown): error is DomainError {
  return error instanceof DomainError && (error.code === 'ledger_rejected' || error.code === 'prepare_stale');
}

/** Releases everything an operation holds and closes it in `state`. */
export async function releaseOperation(
  ctx: SettleFailureDeps,
  opId: string,
  state: 'failed' | 'released' | 'expired',
  reason?: { code: string; detail: string },
): Promise<void> {
  const record = await ctx.journal.get(opId);
  if (record === undefined) return;
  // A settlement held part of the agent's unsettled debts, not new money: give it back to them, and unlock the
  // float-account note it may have merged.
  if (record.kind === 'settlement') {
    await ctx.notes.returnToUnsettled(record.agent, opId);
    await ctx.notes.release(FLOAT_ACCOUNT_ID, opId);
  } else await ctx.notes.release(record.agent, opId);
  await ctx.journal.update(opId, { state, reason }, ctx.crediting.dropPendingOps(record.outputs ?? []));
}
