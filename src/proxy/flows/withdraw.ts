// Withdrawal: reserve the amount, select up to two of the agent's notes (consolidating first when more are
// needed), lock them, prove with their nullifiers and ext_amount = −amount, and relay as the operator. The
// balance falls when the spend is confirmed; a failure releases the reservation and the notes.
import { randomUUID } from 'node:crypto';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { formatAmount } from '../../api/amount.ts';
import { codeOf, DomainError } from '../domain/errors.ts';
import { fault } from '../util/faults.ts';
import type { FlowContext } from './context.ts';
import { requireAgent, type RequireAgentDeps } from './require-agent.ts';
import { spendNotes, type SpendNotesDeps } from './spend-notes.ts';
import type { WithdrawalData } from './operation-data.ts';
import { settleFailure, type SettleFailureDeps } from './settle-failure.ts';
import { markConfirmed, type MarkConfirmedDeps } from './mark-confirmed.ts';
import { LedgerRejected } from '../services/chain-client.ts';

/** What this flow uses of the flows' context. */
export type WithdrawDeps = Pick<FlowContext, 'notes' | 'journal' | 'metrics' | 'logger'> &
  RequireAgentDeps &
  SpendNotesDeps &
  SettleFailureDeps &
  MarkConfirmedDeps;

export interface FlowResult {
  txHash: string;
  amount: bigint;
  proveMs: number;
}

export async function withdraw(
  ctx: WithdrawDeps,
  ref: AgentRef,
  amount: bigint,
  destination: string,
): Promise<FlowResult> {
  await requireAgent(ctx, ref);
  const agent = scopedId(ref);
  const available = await ctx.notes.available(agent);
  if (available < amount) {
    throw new DomainError(
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
    data: { destination } satisfies WithdrawalData,
  });
  try {
    await ctx.notes.reserve(agent, opId, amount);
    fault('withdraw', 'before-prove');
    const { confirmed, proveMs, consolidations } = await spendNotes(
      ctx,
      ref,
      opId,
      'withdraw',
      amount,
      destination,
    );
    await markConfirmed(ctx, opId, { txHash: confirmed.hash });
    ctx.metrics.ledgerOperations.inc({ kind: 'withdraw', outcome: 'confirmed' });
    ctx.logger.log('info', 'withdrawal confirmed', { opId, txHash: confirmed.hash, consolidations });
    return { txHash: confirmed.hash, amount, proveMs };
  } catch (error) {
    await settleFailure(ctx, opId, error);
    ctx.logger.log('warn', 'withdrawal failed', { opId, code: codeOf(error) });
    throw explained(error, destination);
  }
}

/**
 * A refusal of the USDC transfer to the destination, said so that its owner knows what to do (the page says
 * the same); any other failure as it is.
 */
function explained(error: unknown, destination: string): unknown {
  if (!(error instanceof LedgerRejected)) return error;
  const missing = ['TrustlineMissingError', 'AccountMissingError'].find((name) =>
    error.contractError?.is('token', name),
  );
  if (missing === undefined) return error;
  return new DomainError(
    'ledger_rejected',
    `the destination ${destination} cannot receive USDC: it has no USDC trustline (or does not exist yet). ` +
      'Add the USDC asset in that account’s wallet (a change-trust operation; Freighter: Manage assets → Add an ' +
      'asset), then withdraw again. Nothing was withdrawn.',
    {
      cause: error,
      extra: { reason: missing === 'TrustlineMissingError' ? 'trustline_missing' : 'account_missing' },
    },
  );
}
