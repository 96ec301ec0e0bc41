// Consolidation: merges up to two of an account's notes into one (ext_amount 0), so that two notes can cover a
// larger amount. Its own journaled operation: the notes it locks are released if it fails. By default the two
// largest notes of an agent, with the agent's sealed registration in the zero-valued output; a settlement round
// uses it unsealed (both outputs ordinary 120-byte notes, like every transfer of the round), and the float
// account's padding transfers merge its two smallest notes (or re-randomise one, or none: dummy inputs).
import { randomUUID } from 'node:crypto';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import type { NoteRecord } from '../services/notebook.ts';
import type { FlowContext } from './context.ts';
import { sealFor, type SealForDeps } from './seal-for.ts';
import { proveAndRelay, type RelayDeps } from './relay.ts';
import { settleFailure, type SettleFailureDeps } from './settle-failure.ts';
import { markConfirmed, type MarkConfirmedDeps } from './mark-confirmed.ts';

/** What this flow uses of the flows' context. */
export type ConsolidateDeps = Pick<
  FlowContext,
  'notes' | 'journal' | 'prover' | 'keyring' | 'deployment' | 'metrics'
> &
  SealForDeps &
  RelayDeps &
  SettleFailureDeps &
  MarkConfirmedDeps;

export interface ConsolidateOptions {
  /** carry the agent's sealed registration in the zero-valued output (default true) */
  sealed?: boolean;
  /** which two notes (default: the largest) */
  pick?: 'largest' | 'smallest';
  /** flow name for logs and fault injection (default `consolidate`) */
  flow?: string;
  /** kind counted in the ledger-operations metric (default `consolidate`; a settlement round's transfers all count as `settlement`) */
  metricKind?: 'consolidate' | 'settlement';
}

export async function consolidate(
  ctx: ConsolidateDeps,
  ref: AgentRef,
  opts: ConsolidateOptions = {},
): Promise<void> {
  const agent = scopedId(ref);
  const sign = opts.pick === 'smallest' ? 1 : -1;
  const notes = pickPair(
    ctx,
    (await ctx.notes.unspentNotes(agent)).sort((a, b) =>
      a.amount > b.amount ? sign : a.amount < b.amount ? -sign : 0,
    ),
  );
  const total = notes.reduce((s, n) => s + n.amount, 0n);
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
      { opId, flow: opts.flow ?? 'consolidate', agent, owner: ref.owner },
      () =>
        ctx.prover.prove({
          agent: ctx.keyring.crypto(agent),
          inputs: notes,
          change: total,
          extAmount: 0n,
          recipient: ctx.deployment.operator.publicKey(),
          registration: opts.sealed === false ? undefined : sealFor(ctx, ref),
        }),
    );
    await markConfirmed(ctx, opId, { txHash: confirmed.hash });
    ctx.metrics.ledgerOperations.inc({ kind: opts.metricKind ?? 'consolidate', outcome: 'confirmed' });
  } catch (error) {
    await settleFailure(ctx, opId, error);
    throw error;
  }
}

/**
 * The first two notes in `sorted` order that share a tree (one proof spends notes of one tree). When no two
 * do, the first note outside the current tree alone: re-proved, it moves into the current tree, where later
 * consolidations can merge it. With one note or none, those.
 */
function pickPair(ctx: ConsolidateDeps, sorted: NoteRecord[]): NoteRecord[] {
  for (let i = 0; i < sorted.length; i++)
    for (let j = i + 1; j < sorted.length; j++)
      if (ctx.prover.treeOf(sorted[i]!) === ctx.prover.treeOf(sorted[j]!)) return [sorted[i]!, sorted[j]!];
  const outside = sorted.find((n) => ctx.prover.treeOf(n) !== ctx.prover.currentTree);
  return outside === undefined ? sorted.slice(0, 2) : [outside];
}
