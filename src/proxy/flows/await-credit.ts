// After a confirmation: wait until the indexer has credited the transaction's outputs to the agent.
import { ProblemError } from '../../api/problem.ts';
import type { FlowContext } from './context.ts';

export async function awaitCredit(
  ctx: FlowContext,
  agent: string,
  ledger: number,
  outputs: Array<{ commitment: bigint }>,
): Promise<void> {
  await ctx.indexer.waitForLedger(ledger);
  for (const o of outputs) {
    // The indexer credits the note; one more pass covers a poll that raced with this confirmation.
    if (!(await ctx.notes.hasNote(agent, o.commitment))) await ctx.indexer.sync();
    if (!(await ctx.notes.hasNote(agent, o.commitment))) {
      throw new ProblemError(
        'service_unavailable',
        'the transaction is confirmed but not indexed yet; the balance will follow',
      );
    }
  }
}
