// The message a wallet signs to confirm one money-out action of one of its agents, when the agent's policy asks
// for a fresh wallet signature: a withdrawal (amount, destination), a policy change that loosens the policy
// (the whole policy it makes), or an unfreeze. The wallet's token only: the operator has no wallet, an agent token never moves money out. A
// withdrawal to a destination the policy's address book does not hold is refused here, before the wallet is
// asked to sign anything.
import { formatAmount } from '../../api/amount.ts';
import { ProblemError } from '../../api/problem.ts';
import { BalanceParams, walletConfirmationRequest, WalletConfirmationMessage } from '../../api/schemas.ts';
import {
  policyChangeAction,
  unfreezeAction,
  type WalletConfirmations,
  withdrawalAction,
} from '../auth/wallet-confirmation.ts';
import type { OperatorLimits } from '../domain/agent-policy.ts';
import { loosenedFields } from '../domain/policy-loosening.ts';
import type { Clock } from '../util/clock.ts';
import { checkedPolicy } from './policy-body.ts';
import { unknownAgent } from '../flows/require-agent.ts';
import { checkDestination } from '../flows/withdrawal-policy.ts';
import type { ApiRouter } from '../http/api-router.ts';
import type { AgentPolicies } from '../services/agent-policies.ts';
import type { AgentRegistry } from '../services/agents.ts';

export function registerWalletConfirmationRoutes(
  api: ApiRouter,
  deps: {
    agents: AgentRegistry;
    policies: AgentPolicies;
    confirmations: WalletConfirmations;
    maxWithdraw: bigint;
    /** the largest amount a policy field may hold, and the operator's limits a policy may only tighten */
    maxPolicyAmount: bigint;
    operator: OperatorLimits;
    clock: Clock;
  },
): void {
  api.add({
    method: 'post',
    path: '/api/agents/:agentId/wallet-confirmation',
    summary:
      'A message for the wallet to sign, confirming one withdrawal, one policy change that loosens the policy, or an unfreeze',
    description:
      'Name exactly one action: `withdraw`, `policy` (the body the policy change will send, without ' +
      '`confirmation`) or `unfreeze`. The message (SEP-53: sign it with the wallet’s signMessage) names the ' +
      'action (for a policy change, the whole policy it makes and the fields it loosens), the network and a ' +
      'nonce; it is valid for 5 minutes and once: send `{nonce, signature}` as `confirmation` with the ' +
      'withdrawal, policy change or unfreeze it names. A policy change that loosens nothing needs no ' +
      'signature and gets no message (`invalid_request`).',
    tag: 'withdraw',
    access: 'wallet',
    params: BalanceParams,
    body: walletConfirmationRequest(deps.maxWithdraw, deps.maxPolicyAmount),
    response: WalletConfirmationMessage,
    errors: ['not_found', 'invalid_request', 'policy_destination_not_allowed'],
    handler: async ({ params, body, auth }) => {
      const ref = { owner: auth.sub, agentId: params.agentId };
      if ((await deps.agents.get(ref)) === undefined) throw unknownAgent(ref.agentId);
      if (body.withdraw !== undefined)
        checkDestination(await deps.policies.find(ref), body.withdraw.destination);
      let action: string;
      if (body.withdraw !== undefined)
        action = withdrawalAction(ref.agentId, formatAmount(body.withdraw.amount), body.withdraw.destination);
      else if (body.policy !== undefined) {
        // The message names the policy the change makes of the policy as it is now, as the change will.
        const current = await deps.policies.get(ref);
        const next = checkedPolicy(ref, body.policy, current, {
          operator: deps.operator,
          now: deps.clock(),
        });
        const loosened = loosenedFields(current, next);
        if (loosened.length === 0)
          throw new ProblemError(
            'invalid_request',
            'this policy change loosens nothing: send it without a confirmation',
          );
        action = policyChangeAction(ref.agentId, next, loosened);
      } else action = unfreezeAction(ref.agentId);
      return deps.confirmations.issue(ref.owner, action);
    },
  });
}
