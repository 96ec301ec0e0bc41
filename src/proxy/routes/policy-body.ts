// The policy a PUT /api/agents/:agentId/policy body makes of the agent's current one, with its service
// patterns normalised (a bad one refused naming its field). Shared by the change itself and the wallet
// confirmation of a change, so the message the wallet signs names exactly the policy the change makes.
import { ProblemError } from '../../api/problem.ts';
import type { AgentPolicyChange } from '../../api/types.ts';
import {
  type AgentPolicy,
  type BudgetWindow,
  loosenings,
  type OperatorLimits,
} from '../domain/agent-policy.ts';
import { parseServicePattern } from '../domain/service-rules.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { OPERATOR_OWNER } from '../services/agents.ts';

/**
 * The policy `body` makes of `current`, refused (`invalid_request`, naming the fields) when a cap or budget is
 * above the operator's, or when it asks the operator's own agents for a wallet signature they have no wallet for.
 */
export function checkedPolicy(
  ref: AgentRef,
  body: Omit<AgentPolicyChange, 'confirmation'>,
  current: AgentPolicy,
  context: { operator: OperatorLimits; now: number },
): AgentPolicy {
  const next = policyOf(body, current, context.now);
  if (ref.owner === OPERATOR_OWNER && next.requireWithdrawalSignature === true)
    throw new ProblemError('invalid_request', 'the operator’s agents have no wallet to sign withdrawals', {
      issues: [{ path: 'requireWithdrawalSignature', message: 'a wallet’s agents only' }],
    });
  const loose = loosenings(next, context.operator);
  if (loose.length > 0)
    throw new ProblemError(
      'invalid_request',
      `the policy is looser than the operator's limits: ${loose.map((l) => `${l.path}: ${l.message}`).join('; ')}`,
      { issues: loose },
    );
  return next;
}

/** The policy a PUT body makes of the current one (only `frozen` is kept when absent). */
function policyOf(
  body: Omit<AgentPolicyChange, 'confirmation'>,
  current: AgentPolicy,
  now: number,
): AgentPolicy {
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
