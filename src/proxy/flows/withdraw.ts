// Withdrawal: reserve the amount, select up to two of the agent's notes (consolidating first when more are
// needed), lock them, prove with their nullifiers and ext_amount = −amount, and relay as the operator. The
// balance falls when the spend is confirmed; a failure releases the reservation and the notes.
import { randomUUID } from 'node:crypto';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { formatAmount } from '../domain/amount.ts';
import { ProblemError } from '../errors.ts';
import type { NoteRecord } from '../services/notebook.ts';
import { fault } from '../util/faults.ts';
import { consolidate } from './consolidate.ts';
import type { FlowContext } from './context.ts';
import { requireAgent } from './require-agent.ts';
import { proveAndRelay } from './relay.ts';
import { settleFailure } from './settle-failure.ts';

export interface FlowResult {
  txHash: string;
  amount: bigint;
  proveMs: number;
}

export async function withdraw(
  ctx: FlowContext,
  ref: AgentRef,
  amount: bigint,
  destination: string,
): Promise<FlowResult> {
  await requireAgent(ctx, ref);
  const agent = scopedId(ref);
  const available = await ctx.notes.available(agent);
  if (available < amount) {
    throw new ProblemError(
      'insufficient_balance',
      `available balance ${formatAmount(available)} USDC is less than ${formatAmount(amount)} USDC`,
    );
  }
  const opId = randomUUID();
  await ctx.journal.begin({
    opId,
    kind: 'withdraw',
    agent,
    state: 'reserved',
    amount,
    data: { destination },
  });
  try {
    await ctx.notes.reserve(agent, opId, amount);
    fault('withdraw', 'before-prove');
    return await ctx.spendLock.run(agent, async () => {
      const crypto = ctx.keyring.crypto(agent);
      let consolidations = 0;
      let inputs = await selectNotes(ctx, agent, amount);
      while (inputs === undefined) {
        await consolidate(ctx, ref);
        consolidations += 1;
        inputs = await selectNotes(ctx, agent, amount);
      }
      const notes = inputs;
      const total = notes.reduce((s, n) => s + n.amount, 0n);
      await ctx.notes.lock(
        agent,
        opId,
        notes.map((n) => n.commitment),
      );
      const { confirmed, proveMs } = await proveAndRelay(
        ctx,
        { opId, flow: 'withdraw', agent, owner: ref.owner },
        () =>
          ctx.prover.prove(
            crypto,
            notes,
            total - amount,
            -amount,
            destination,
            ctx.keyring.sealRegistration(ref),
          ),
      );
      // The indexer applied the spend: notes spent, change credited, the reservation gone with the locks.
      await ctx.journal.update(opId, { state: 'confirmed', txHash: confirmed.hash });
      ctx.metrics.ledgerOperations.inc({ kind: 'withdraw', outcome: 'confirmed' });
      await ctx.stats.recordTransaction();
      ctx.logger.log('info', 'withdrawal confirmed', { opId, txHash: confirmed.hash, consolidations });
      return { txHash: confirmed.hash, amount, proveMs };
    });
  } catch (error) {
    await settleFailure(ctx, opId, error);
    ctx.logger.log('warn', 'withdrawal failed', { opId, code: (error as ProblemError).code });
    throw error;
  }
}

/** Up to two unspent notes covering `amount` (smallest sufficient), or undefined when consolidation is needed. */
async function selectNotes(
  ctx: FlowContext,
  agent: string,
  amount: bigint,
): Promise<NoteRecord[] | undefined> {
  const notes = (await ctx.notes.unspentNotes(agent)).sort((a, b) =>
    a.amount < b.amount ? -1 : a.amount > b.amount ? 1 : 0,
  );
  const single = notes.find((n) => n.amount >= amount);
  if (single) return [single];
  for (let i = 0; i < notes.length; i++) {
    for (let j = i + 1; j < notes.length; j++)
      if (notes[i].amount + notes[j].amount >= amount) return [notes[i], notes[j]];
  }
  if (notes.length <= 2)
    throw new ProblemError('insufficient_balance', 'the agent notes do not cover the amount');
  return undefined;
}
