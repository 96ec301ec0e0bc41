// An agent's policy, for the wallet that owns it (its token) and for the operator's own agents (the operator
// token): read it with what is left of each budget, replace it, freeze and unfreeze the agent. A policy looser
// than the operator's limits is refused with the fields that would not hold (domain/agent-policy.ts).
import { formatAmount } from '../../api/amount.ts';
import {
  AgentPolicyView,
  APPROVAL_TIMEOUT_DEFAULT_S,
  BalanceParams,
  policyRequest,
  UnfreezeRequest,
} from '../../api/schemas.ts';
import {
  type AgentPolicy,
  type BudgetWindow,
  effectiveLimits,
  type OperatorLimits,
} from '../domain/agent-policy.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { unknownAgent } from '../flows/require-agent.ts';
import type { ApiRouter } from '../http/api-router.ts';
import { spendingOf } from '../payments/budget.ts';
import type { PaymentRecords } from '../payments/records.ts';
import type { AgentPolicies } from '../services/agent-policies.ts';
import type { AgentRegistry } from '../services/agents.ts';
import type { PoolAccess } from './pool-access.ts';
import type { WalletConfirmations } from '../auth/wallet-confirmation.ts';
import { confirmPolicyChange, confirmUnfreeze, stillConfirmed } from '../flows/withdrawal-policy.ts';
import { checkedPolicy } from './policy-body.ts';

export interface PolicyRouteDeps {
  agents: AgentRegistry;
  policies: AgentPolicies;
  records: PaymentRecords;
  runtime: PoolAccess;
  operator: OperatorLimits;
  /** the largest amount a policy field may hold (the REST API's amount limit) */
  maxAmount: bigint;
  /** the wallet signatures that loosening the withdrawal settings needs */
  confirmations: WalletConfirmations;
}

export function registerPolicyRoutes(api: ApiRouter, deps: PolicyRouteDeps): void {
  const { agents, policies, operator } = deps;
  const owned = async (auth: { sub: string }, agentId: string): Promise<AgentRef> => {
    const ref = { owner: auth.sub, agentId };
    if ((await agents.get(ref)) === undefined) throw unknownAgent(agentId);
    return ref;
  };
  const view = async (ref: AgentRef, policy: AgentPolicy) => {
    const flows = deps.runtime.require();
    const spent = await spendingOf({ flows, records: deps.records }, ref);
    return policyView(ref, policy, operator, spent);
  };

  api.add({
    method: 'get',
    path: '/api/agents/:agentId/policy',
    summary: "An agent's policy, with what is left of each budget",
    description:
      'The owner’s own limits (null where it set none), its allowed and denied services, whether the agent is ' +
      'frozen, and under `effective` what applies to the next payment: the tighter of the owner’s and the ' +
      'operator’s limits, with what the agent spent and has left in each rolling window.',
    tag: 'policy',
    access: 'wallet-or-operator',
    agentToken: 'own-agent',
    params: BalanceParams,
    response: AgentPolicyView,
    errors: ['not_found', 'invalid_request', 'service_unavailable'],
    handler: async ({ params, auth }) => {
      const ref = await owned(auth, params.agentId);
      return view(ref, await policies.get(ref));
    },
  });

  api.add({
    method: 'put',
    path: '/api/agents/:agentId/policy',
    summary: "Replace an agent's policy (its owner only)",
    description:
      'Sets the owner’s per-payment cap, budgets (rolling hour, 24 hours, 30 days), allowed/denied services and ' +
      'approval threshold (a payment above it waits for the owner’s approval up to `approvalTimeoutSeconds`); ' +
      'an absent or null field sets none of the owner’s own (the operator’s default applies). `frozen` changes ' +
      'the frozen flag when given, and the withdrawal settings change only when named. While the owner requires ' +
      'wallet signatures, a change that loosens anything (a cap, budget or approval threshold raised or removed, ' +
      'an allowed service added or the list emptied, a denied service removed, an unfreeze, the withdrawal ' +
      'settings loosened) needs a fresh one of exactly this change (`confirmation`, from ' +
      'POST /api/agents/{agentId}/wallet-confirmation with `{"policy": …}`; else `wallet_signature_required`, ' +
      'naming the loosened fields); tightening never does. A cap or budget above the operator’s is refused ' +
      '(`invalid_request`, naming the field) and nothing changes: an owner can only tighten the operator’s limits.',
    tag: 'policy',
    access: 'wallet-or-operator',
    params: BalanceParams,
    body: policyRequest(deps.maxAmount),
    response: AgentPolicyView,
    errors: [
      'not_found',
      'invalid_request',
      'wallet_signature_required',
      'wallet_signature_invalid',
      'service_unavailable',
    ],
    handler: async ({ params, auth, body }) => {
      const ref = await owned(auth, params.agentId);
      const context = { operator, now: deps.runtime.require().clock() };
      // Checked, and the wallet's confirmation consumed, before the lock; under it the policy as it is then
      // must need no other signature (a concurrent change is refused rather than loosened unsigned).
      const current = await policies.get(ref);
      const next = checkedPolicy(ref, body, current, context);
      const confirmed = await confirmPolicyChange(current, next, deps.confirmations, ref, body.confirmation);
      const updated = await policies.update(ref, (fresh) => {
        const again = checkedPolicy(ref, body, fresh, context);
        stillConfirmed(fresh, again, ref, confirmed);
        return again;
      });
      return view(ref, updated);
    },
  });

  api.add({
    method: 'post',
    path: '/api/agents/:agentId/freeze',
    summary: 'Freeze an agent: it pays nothing, its queued unsigned payments are not paid (its owner only)',
    description:
      'New payments are refused at once with `agent_frozen`; payments already queued and not yet signed fail ' +
      'with reason `agent_frozen` and give their reservation back. Withdrawals by the owner still work. A ' +
      'freeze never needs a signature, and the owner’s brakes have their own rate bucket, which its agents ' +
      'never use.',
    tag: 'policy',
    access: 'wallet-or-operator',
    brake: true,
    params: BalanceParams,
    response: AgentPolicyView,
    errors: ['not_found', 'invalid_request', 'service_unavailable'],
    handler: async ({ params, auth }) => {
      const ref = await owned(auth, params.agentId);
      const now = deps.runtime.require().clock();
      return view(ref, await policies.update(ref, (fresh) => ({ ...fresh, frozen: true, updatedAt: now })));
    },
  });

  api.add({
    method: 'post',
    path: '/api/agents/:agentId/unfreeze',
    summary: 'Unfreeze an agent: it may pay again within its policy (its owner only)',
    description:
      'No body is needed, except while the owner requires wallet signatures: then the body carries ' +
      '`confirmation`, a fresh signature of the message POST /api/agents/{agentId}/wallet-confirmation ' +
      'answers for `{"unfreeze": true}` (else `wallet_signature_required`).',
    tag: 'policy',
    access: 'wallet-or-operator',
    brake: true,
    params: BalanceParams,
    body: UnfreezeRequest,
    bodyOptional: true,
    response: AgentPolicyView,
    errors: [
      'not_found',
      'invalid_request',
      'wallet_signature_required',
      'wallet_signature_invalid',
      'service_unavailable',
    ],
    handler: async ({ params, auth, body }) => {
      const ref = await owned(auth, params.agentId);
      const now = deps.runtime.require().clock();
      const current = await policies.get(ref);
      const confirmed = await confirmUnfreeze(current, deps.confirmations, ref, body?.confirmation);
      const updated = await policies.update(ref, (fresh) => {
        const next = { ...fresh, frozen: false, updatedAt: now };
        stillConfirmed(fresh, next, ref, confirmed);
        return next;
      });
      return view(ref, updated);
    },
  });
}

function policyView(
  ref: AgentRef,
  policy: AgentPolicy,
  operator: OperatorLimits,
  spent: Record<BudgetWindow, bigint>,
) {
  const effective = effectiveLimits(policy, operator);
  const opt = (v: bigint | undefined) => (v === undefined ? null : formatAmount(v));
  const state = (window: BudgetWindow) => {
    const budget = effective.budgets[window];
    if (budget === undefined) return null;
    const left = budget - spent[window];
    return {
      budget: formatAmount(budget),
      spent: formatAmount(spent[window]),
      remaining: formatAmount(left > 0n ? left : 0n),
    };
  };
  return {
    agentId: ref.agentId,
    perPaymentCap: opt(policy.perPaymentCap),
    budgetPerHour: opt(policy.budgets.hour),
    budgetPerDay: opt(policy.budgets.day),
    budgetPer30Days: opt(policy.budgets.days30),
    allowedServices: policy.allowedServices,
    deniedServices: policy.deniedServices,
    frozen: policy.frozen,
    approvalThreshold: opt(policy.approvalThreshold),
    approvalTimeoutSeconds: policy.approvalTimeoutSeconds ?? APPROVAL_TIMEOUT_DEFAULT_S,
    requireWithdrawalSignature: policy.requireWithdrawalSignature ?? false,
    withdrawalDestinations: policy.withdrawalDestinations ?? [],
    effective: {
      perPaymentCap: formatAmount(effective.perPaymentCap),
      budgets: { hour: state('hour'), day: state('day'), days30: state('days30') },
    },
    updatedAt: policy.updatedAt === 0 ? null : new Date(policy.updatedAt).toISOString(),
  };
}
