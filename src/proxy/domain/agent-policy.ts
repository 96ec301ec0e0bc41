// An agent's spending policy, set by its owner: a per-payment cap, rolling budgets over an hour, a day and 30
// days, the services it may pay (allowed) and may never pay (denied), and a frozen flag. Pure rules only:
// what a policy is, how the operator's limits bound it and which rule refuses a payment (which services a URL
// matches is service-rules.ts). The store keeps policies (services/agent-policies.ts); payments enforce them
// (payments/policy-check.ts). docs/POLICY.md describes the rules for owners.
import { formatAmount } from '../../api/amount.ts';
import { DomainError } from './errors.ts';

/** The rolling windows a policy can budget, with their lengths. */
export const BUDGET_WINDOWS = {
  hour: 3_600_000,
  day: 86_400_000,
  days30: 30 * 86_400_000,
} as const;

export type BudgetWindow = keyof typeof BUDGET_WINDOWS;

export const WINDOW_NAMES: Record<BudgetWindow, string> = { hour: 'hour', day: 'day', days30: '30 days' };

/** An owner's own limits (stroops; undefined = no own limit, the operator's default applies). */
export interface AgentPolicy {
  perPaymentCap?: bigint;
  budgets: Partial<Record<BudgetWindow, bigint>>;
  /** Services the agent may pay (`origin` or `origin/path-prefix`); empty = any service. */
  allowedServices: string[];
  /** Services the agent may never pay; a denial wins over an allowance. */
  deniedServices: string[];
  frozen: boolean;
  /** A payment whose quoted price is above this waits for the owner's approval (payments/approvals.ts). */
  approvalThreshold?: bigint;
  /** How long such a payment waits before it expires unpaid (seconds; api/schemas.ts APPROVAL_TIMEOUT_DEFAULT_S when unset). */
  approvalTimeoutSeconds?: number;
  /** Each withdrawal needs a fresh signature of the owner's wallet (auth/wallet-confirmation.ts). */
  requireWithdrawalSignature?: boolean;
  /** The only accounts withdrawals may go to; empty or absent: any. */
  withdrawalDestinations?: string[];
  /** When the owner last changed it (ms since the epoch, the proxy's clock). */
  updatedAt: number;
}

/** Whether a payment at `price` must wait for the owner's approval. */
export function needsApproval(policy: AgentPolicy | undefined, price: bigint): boolean {
  return policy?.approvalThreshold !== undefined && price > policy.approvalThreshold;
}

/** What an agent without a policy has: the operator's defaults alone. */
export const NO_POLICY: AgentPolicy = {
  budgets: {},
  allowedServices: [],
  deniedServices: [],
  frozen: false,
  updatedAt: 0,
};

/** The operator's limits: the defaults a policy may tighten, never loosen (stroops; 0n budget = none). */
export interface OperatorLimits {
  paymentCap: bigint;
  budgetPerHour: bigint;
  budgetPerDay: bigint;
}

/** The limits that apply to one payment: the tighter of the owner's and the operator's, per rule. */
export interface EffectiveLimits {
  perPaymentCap: bigint;
  budgets: Partial<Record<BudgetWindow, bigint>>;
}

export function effectiveLimits(policy: AgentPolicy, operator: OperatorLimits): EffectiveLimits {
  const min = (a: bigint | undefined, b: bigint | undefined) =>
    a === undefined ? b : b === undefined ? a : a < b ? a : b;
  const op = (v: bigint) => (v > 0n ? v : undefined);
  const budgets: Partial<Record<BudgetWindow, bigint>> = {};
  const hour = min(policy.budgets.hour, op(operator.budgetPerHour));
  const day = min(policy.budgets.day, op(operator.budgetPerDay));
  if (hour !== undefined) budgets.hour = hour;
  if (day !== undefined) budgets.day = day;
  if (policy.budgets.days30 !== undefined) budgets.days30 = policy.budgets.days30;
  return { perPaymentCap: min(policy.perPaymentCap, operator.paymentCap) as bigint, budgets };
}

/**
 * A policy looser than the operator's limits is refused, not clamped: the owner learns at once which of its
 * numbers would not hold (an owner can only tighten). Returns the offending fields with a message each.
 */
export function loosenings(
  policy: AgentPolicy,
  operator: OperatorLimits,
): Array<{ path: string; message: string }> {
  const out: Array<{ path: string; message: string }> = [];
  const over = (path: string, value: bigint | undefined, limit: bigint, what: string) => {
    if (value !== undefined && limit > 0n && value > limit)
      out.push({
        path,
        message: `${formatAmount(value)} USDC is above the operator's ${what} of ${formatAmount(limit)} USDC: a policy can only tighten it`,
      });
  };
  over('perPaymentCap', policy.perPaymentCap, operator.paymentCap, 'per-payment cap');
  over('budgetPerHour', policy.budgets.hour, operator.budgetPerHour, 'hourly budget');
  over('budgetPerDay', policy.budgets.day, operator.budgetPerDay, 'daily budget');
  return out;
}

/** Raised when an agent is frozen by its owner: nothing is paid for it until it is unfrozen. */
export function frozenRefusal(agentId: string): DomainError {
  return new DomainError(
    'agent_frozen',
    `agent ${agentId} is frozen by its owner: it pays nothing until it is unfrozen`,
    { extra: { rule: 'frozen' } },
  );
}

/** The owner's per-payment cap against the price the service quoted. */
export function checkPerPaymentCap(policy: AgentPolicy, price: bigint): void {
  if (policy.perPaymentCap !== undefined && price > policy.perPaymentCap)
    throw new DomainError(
      'policy_per_payment_cap',
      `the service asks ${formatAmount(price)} USDC, more than the owner's per-payment cap of ${formatAmount(policy.perPaymentCap)} USDC`,
      { extra: { rule: 'perPaymentCap' } },
    );
}

const BUDGET_CODES = {
  hour: 'policy_budget_hour',
  day: 'policy_budget_day',
  days30: 'policy_budget_30d',
} as const;

/** The owner's budgets (hour, day, 30 days, in that order) against what the agent spent plus the price. */
export function checkBudgets(policy: AgentPolicy, spent: Record<BudgetWindow, bigint>, price: bigint): void {
  for (const window of Object.keys(BUDGET_CODES) as BudgetWindow[]) {
    const budget = policy.budgets[window];
    if (budget === undefined || spent[window] + price <= budget) continue;
    throw new DomainError(
      BUDGET_CODES[window],
      `this agent spent ${formatAmount(spent[window])} USDC in the last ${WINDOW_NAMES[window]}; ${formatAmount(price)} more would pass its owner's budget of ${formatAmount(budget)} USDC`,
      { extra: { rule: `budget:${window}`, remaining: formatAmount(budget - spent[window]) } },
    );
  }
}
