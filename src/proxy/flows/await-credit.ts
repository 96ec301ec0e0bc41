// After a confirmation: wait until the indexer has credited the transaction's outputs to the agent (or to each
// output's own owner, e.g. the float account's note of a settlement).
import { DomainError } from '../domain/errors.ts';
import type { FlowContext } from './context.ts';

/** What this flow uses of the flows' context. */
export type AwaitCreditDeps = Pick<FlowContext, 'indexer' | 'notes'>;

export async function awaitCredit(
  ctx: AwaitCreditDeps,
  agent: string,
  ledger: number,
  outputs: Array<{ commitment: bigint; owner?: string }>,
): Promise<void> {
  await ctx.indexer.waitForLedger(ledger);
  for (const o of outputs) {
    // The indexer credits the note; one more pass covers a poll that raced with this confirmation.
    const owner = o.owner ?? agent;
    if (!(await ctx.notes.hasNote(owner, o.commitment))) await ctx.indexer.sync();
    if (!(await ctx.notes.hasNote(owner, o.commitment))) {
      throw new DomainError(
        'service_unavailable',
        'the transaction is confirmed but not indexed yet; the balance will follow',
      );
    }
  }
}
