// Consolidation: merges the agent's two largest notes into one (ext_amount 0), so that two notes can cover a
// larger amount. Its own journaled operation: the notes it locks are released if it fails.
import { randomUUID } from 'node:crypto';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import type { FlowContext } from './context.ts';
import { proveAndRelay } from './relay.ts';
import { settleFailure } from './settle-failure.ts';

export async function consolidate(ctx: FlowContext, ref: AgentRef): Promise<void> {
  const agent = scopedId(ref);
  const notes = (await ctx.notes.unspentNotes(agent))
    .sort((a, b) => (a.amount > b.amount ? -1 : 1))
    .slice(0, 2);
  const opId = randomUUID();
  await ctx.journal.begin({ opId, kind: 'consolidate', agent, state: 'proving', amount: 0n });
  try {
    await ctx.notes.lock(
      agent,
      opId,
      notes.map((n) => n.commitment),
    );
    const { confirmed } = await proveAndRelay(
      ctx,
      { opId, flow: 'consolidate', agent, owner: ref.owner },
      () =>
        ctx.prover.prove(
          ctx.keyring.crypto(agent),
          notes,
          notes[0].amount + notes[1].amount,
          0n,
          ctx.deployment.operator.publicKey(),
          ctx.keyring.sealRegistration(ref),
        ),
    );
    await ctx.journal.update(opId, { state: 'confirmed', txHash: confirmed.hash });
    ctx.metrics.ledgerOperations.inc({ kind: 'consolidate', outcome: 'confirmed' });
    await ctx.stats.recordTransaction();
  } catch (error) {
    await settleFailure(ctx, opId, error);
    throw error;
  }
}
