// An agent's policy, for the wallet that owns it (its token) and for the operator's own agents (the operator
// token): read it with what is left of each budget, replace it, freeze and unfreeze the agent. A policy looser
// than the operator's limits is refused with the fields that would not hold (domain/agent-policy.ts).
import { formatAmount } from '../../api/amount.ts';
import { ProblemError } from '../../api/problem.ts';
import {
  AgentPolicyView,
  APPROVAL_TIMEOUT_DEFAULT_S,
  BalanceParams,
  policyRequest,
} from '../../api/schemas.ts';
import type { AgentPolicyChange } from '../../api/types.ts';
import {
  type AgentPolicy,
  type BudgetWindow,
  effectiveLimits,
  loosenings,
  type OperatorLimits,
} from '../domain/agent-policy.ts';
import { parseServicePattern } from '../domain/service-rules.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { unknownAgent } from '../flows/require-agent.ts';
import type { ApiRouter } from '../http/api-router.ts';
import { spendingOf } from '../payments/budget.ts';
import type { PaymentRecords } from '../payments/records.ts';
import type { AgentPolicies } from '../services/agent-policies.ts';
import type { AgentRegistry } from '../services/agents.ts';
import type { PoolAccess } from './pool-access.ts';
import type { WalletConfirmations } from '../auth/wallet-confirmation.ts';
import { checkSettingsChange } from '../flows/withdrawal-policy.ts';
import { OPERATOR_OWNER } from '../services/agents.ts';

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
      'the frozen flag when given, and the withdrawal settings change only when named; loosening them while a wallet ' +
      'signature is required needs one (`confirmation`, else `wallet_signature_required`). A cap or budget above the operator’s is refused (`invalid_request`, naming ' +
      'the field) and nothing changes: an owner can only tighten the operator’s limits.',
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
      const now = deps.runtime.require().clock();
      const next = (current: AgentPolicy) => policyOf(body, current, now);
      const current = await policies.get(ref);
      const checked = next(current);
      if (ref.owner === OPERATOR_OWNER && checked.requireWithdrawalSignature === true)
        throw new ProblemError(
          'invalid_request',
          'the operator’s agents have no wallet to sign withdrawals',
          {
            issues: [{ path: 'requireWithdrawalSignature', message: 'a wallet’s agents only' }],
          },
        );
      const loose = loosenings(checked, operator);
      if (loose.length > 0)
        throw new ProblemError(
          'invalid_request',
          `the policy is looser than the operator's limits: ${loose.map((l) => `${l.path}: ${l.message}`).join('; ')}`,
          { issues: loose },
        );
      await checkSettingsChange(current, checked, deps.confirmations, ref, body.confirmation);
      return view(ref, await policies.update(ref, next));
    },
  });

  for (const [action, frozen] of [
    ['freeze', true],
    ['unfreeze', false],
  ] as const) {
    api.add({
      method: 'post',
      path: `/api/agents/:agentId/${action}`,
      summary: frozen
        ? 'Freeze an agent: it pays nothing, its queued unsigned payments are not paid (its owner only)'
        : 'Unfreeze an agent: it may pay again within its policy (its owner only)',
      description: frozen
        ? 'New payments are refused at once with `agent_frozen`; payments already queued and not yet signed fail ' +
          'with reason `agent_frozen` and give their reservation back. Withdrawals by the owner still work.'
        : undefined,
      tag: 'policy',
      access: 'wallet-or-operator',
      params: BalanceParams,
      response: AgentPolicyView,
      errors: ['not_found', 'invalid_request', 'service_unavailable'],
      handler: async ({ params, auth }) => {
        const ref = await owned(auth, params.agentId);
        const now = deps.runtime.require().clock();
        return view(ref, await policies.update(ref, (current) => ({ ...current, frozen, updatedAt: now })));
      },
    });
  }
}

/** The policy a PUT body makes of the current one (only `frozen` is kept when absent). */
function policyOf(body: AgentPolicyChange, current: AgentPolicy, now: number): AgentPolicy {
  const amount = (value: bigint | null | undefined) => value ?? undefined;
  const budgets: Partial<Record<BudgetWindow, bigint>> = {};
  const hour = amount(body.budgetPerHour);
  const day = amount(body.budgetPerDay);
  const days30 = amount(body.budgetPer30Days);
  if (hour !== undefined) budgets.hour = hour;
  if (day !== undefined) budgets.day = day;
  if (days30 !== undefined) budgets.days30 = days30;
  const perPaymentCap = amount(body.perPaymentCap);
  const approvalThreshold = amount(body.approvalThreshold);
  const approvalTimeoutSeconds = body.approvalTimeoutSeconds ?? undefined;
  return {
    ...(perPaymentCap !== undefined && { perPaymentCap }),
    ...(approvalThreshold !== undefined && { approvalThreshold }),
    ...(approvalTimeoutSeconds !== undefined && { approvalTimeoutSeconds }),
    budgets,
    allowedServices: services(body.allowedServices ?? [], 'allowedServices'),
    deniedServices: services(body.deniedServices ?? [], 'deniedServices'),
    frozen: body.frozen ?? current.frozen,
    // the withdrawal settings change only when named (turning them off may need the wallet)
    requireWithdrawalSignature:
      body.requireWithdrawalSignature ?? current.requireWithdrawalSignature ?? false,
    withdrawalDestinations: body.withdrawalDestinations ?? current.withdrawalDestinations ?? [],
    updatedAt: now,
  };
}

function services(patterns: string[], field: string): string[] {
  const out: string[] = [];
  const issues: Array<{ path: string; message: string }> = [];
  patterns.forEach((value, i) => {
    const parsed = parseServicePattern(value);
    if (typeof parsed === 'string') {
      if (!out.includes(parsed)) out.push(parsed);
    } else issues.push({ path: `${field}.${i}`, message: parsed.error });
  });
  if (issues.length > 0)
    throw new ProblemError(
      'invalid_request',
      `invalid request body: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      { issues },
    );
  return out;
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
