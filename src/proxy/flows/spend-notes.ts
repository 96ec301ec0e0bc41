// Spending an agent's notes to pay `amount` out of the pool to `recipient` (a withdrawal, or a settlement to
// the pool wallet): select up to two unspent notes (consolidating first when more are needed), lock them for
// the operation, prove with their nullifiers and ext_amount = −amount, and relay as the operator. One spend
// at a time per agent: note selection and change depend on the last result.
import type { AgentRef } from '../domain/agent-ref.ts';
import { scopedId } from '../domain/agent-ref.ts';
import { DomainError } from '../domain/errors.ts';
import type { Confirmed } from '../services/chain-client.ts';
import type { NoteRecord } from '../services/notebook.ts';
import { consolidate, type ConsolidateDeps } from './consolidate.ts';
import type { FlowContext } from './context.ts';
import { sealFor, type SealForDeps } from './seal-for.ts';
import { proveAndRelay, type RelayDeps } from './relay.ts';

/** What this flow uses of the flows' context. */
export type SpendNotesDeps = Pick<FlowContext, 'spendLock' | 'keyring' | 'notes' | 'prover'> &
  ConsolidateDeps &
  SealForDeps &
  RelayDeps;

export async function spendNotes(
  ctx: SpendNotesDeps,
  ref: AgentRef,
  opId: string,
  flow: string,
  amount: bigint,
  recipient: string,
  method: 'transact' | 'disburse' = 'transact',
): Promise<{ confirmed: Confirmed; proveMs: number; consolidations: number }> {
  const agent = scopedId(ref);
  return ctx.spendLock.run(agent, async () => {
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
      { opId, flow, agent, owner: ref.owner, method },
      () =>
        ctx.prover.prove({
          agent: crypto,
          inputs: notes,
          change: total - amount,
          extAmount: -amount,
          recipient,
          registration: sealFor(ctx, ref),
        }),
    );
    return { confirmed, proveMs, consolidations };
  });
}

/**
 * Up to two unspent notes covering `amount` (smallest sufficient; a pair from one tree, as one proof needs), or
 * undefined when consolidation is needed first.
 */
export async function selectNotes(
  ctx: SpendNotesDeps,
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
      if (
        notes[i].amount + notes[j].amount >= amount &&
        ctx.prover.treeOf(notes[i]) === ctx.prover.treeOf(notes[j])
      )
        return [notes[i], notes[j]];
  }
  if (notes.reduce((sum, n) => sum + n.amount, 0n) < amount)
    throw new DomainError('insufficient_balance', 'the agent notes do not cover the amount');
  return undefined;
}
