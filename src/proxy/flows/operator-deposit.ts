// Operator-signed deposit (local MCP agents): the operator account funds the deposit and relays it. A new
// agent's key is queued for the next registration slot first (waiting for it at most the hold limit, else
// `503 registration_pending` with Retry-After, the key staying queued), then the deposit is proved and sent;
// the agent exists once its note is confirmed.
import { randomUUID } from 'node:crypto';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { formatAmount } from '../../api/amount.ts';
import { codeOf, DomainError, messageOf } from '../domain/errors.ts';
import { fault } from '../util/faults.ts';
import type { FlowContext } from './context.ts';
import { proveAndRelay, type RelayDeps } from './relay.ts';
import { settleFailure, type SettleFailureDeps } from './settle-failure.ts';
import { usdcBalance, type UsdcBalanceDeps } from './usdc-balance.ts';
import type { FlowResult } from './withdraw.ts';
import { markConfirmed, type MarkConfirmedDeps } from './mark-confirmed.ts';

/** What this flow uses of the flows' context. */
export type OperatorDepositDeps = Pick<
  FlowContext,
  'deployment' | 'registrar' | 'journal' | 'prover' | 'keyring' | 'metrics' | 'logger'
> &
  UsdcBalanceDeps &
  RelayDeps &
  SettleFailureDeps &
  MarkConfirmedDeps;

export async function operatorDeposit(
  ctx: OperatorDepositDeps,
  ref: AgentRef,
  amount: bigint,
): Promise<FlowResult> {
  const operator = ctx.deployment.operator.publicKey();
  const held = await usdcBalance(ctx, operator);
  if (held < amount) {
    throw new DomainError(
      'service_unavailable',
      `the operator account holds ${formatAmount(held)} USDC and cannot fund ${formatAmount(amount)} USDC; top it up`,
    );
  }
  // Before anything is journaled: a key that lands beyond the hold limit answers at once.
  await ctx.registrar.register(ref);
  const agent = scopedId(ref);
  const opId = randomUUID();
  await ctx.journal.begin({ opId, kind: 'operator_deposit', agent, state: 'proving', amount });
  try {
    fault('operator_deposit', 'before-prove');
    const { confirmed, proveMs } = await proveAndRelay(
      ctx,
      { opId, flow: 'operator_deposit', agent, owner: ref.owner },
      () =>
        ctx.prover.prove({
          agent: ctx.keyring.crypto(agent),
          inputs: [],
          change: amount,
          extAmount: amount,
          recipient: operator,
          registration: ctx.keyring.sealRegistration(ref),
        }),
    );
    await markConfirmed(ctx, opId, { txHash: confirmed.hash });
    ctx.metrics.ledgerOperations.inc({ kind: 'operator_deposit', outcome: 'confirmed' });
    ctx.logger.log('info', 'operator deposit confirmed', { opId, txHash: confirmed.hash });
    return { txHash: confirmed.hash, amount, proveMs };
  } catch (error) {
    await settleFailure(ctx, opId, error);
    ctx.logger.log('warn', 'operator deposit failed', {
      opId,
      code: codeOf(error),
      detail: messageOf(error),
    });
    throw error;
  }
}
