// The message a wallet signs to confirm one money-out action of one of its agents, when the agent's policy asks
// for a fresh wallet signature: a withdrawal (amount, destination) or a change that loosens the withdrawal
// settings. The wallet's token only: the operator has no wallet, an agent token never moves money out. A
// withdrawal to a destination the policy's address book does not hold is refused here, before the wallet is
// asked to sign anything.
import { formatAmount } from '../../api/amount.ts';
import { BalanceParams, walletConfirmationRequest, WalletConfirmationMessage } from '../../api/schemas.ts';
import {
  type WalletConfirmations,
  withdrawalAction,
  withdrawalSettingsAction,
} from '../auth/wallet-confirmation.ts';
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
  },
): void {
  api.add({
    method: 'post',
    path: '/api/agents/:agentId/wallet-confirmation',
    summary:
      'A message for the wallet to sign, confirming one withdrawal or one loosening of the withdrawal settings',
    description:
      'Name exactly one action. The message (SEP-53: sign it with the wallet’s signMessage) names the action, the ' +
      'network and a nonce; it is valid for 5 minutes and once: send `{nonce, signature}` as `confirmation` with the ' +
      'withdrawal (or the policy change) it names.',
    tag: 'withdraw',
    access: 'wallet',
    params: BalanceParams,
    body: walletConfirmationRequest(deps.maxWithdraw),
    response: WalletConfirmationMessage,
    errors: ['not_found', 'invalid_request', 'policy_destination_not_allowed'],
    handler: async ({ params, body, auth }) => {
      const ref = { owner: auth.sub, agentId: params.agentId };
      if ((await deps.agents.get(ref)) === undefined) throw unknownAgent(ref.agentId);
      if (body.withdraw !== undefined)
        checkDestination(await deps.policies.find(ref), body.withdraw.destination);
      const action =
        body.withdraw !== undefined
          ? withdrawalAction(ref.agentId, formatAmount(body.withdraw.amount), body.withdraw.destination)
          : withdrawalSettingsAction(
              ref.agentId,
              body.withdrawalSettings!.requireWithdrawalSignature,
              body.withdrawalSettings!.withdrawalDestinations,
            );
      return deps.confirmations.issue(ref.owner, action);
    },
  });
}
