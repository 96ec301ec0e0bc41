// Which fields of an owner's policy a change loosens: what the agent (or whoever holds the owner's token) could
// spend or move after the change that it could not before. A pure comparison of the policy before and after;
// the policy route asks for a fresh wallet signature when it finds any and the owner requires one
// (flows/withdrawal-policy.ts). Tightening, or leaving a field as it was, is never listed.
import type { AgentPolicy, BudgetWindow } from './agent-policy.ts';
import { allows, denies } from './service-rules.ts';

/** A policy field as the REST API names it. */
export type PolicyField =
  | 'perPaymentCap'
  | 'budgetPerHour'
  | 'budgetPerDay'
  | 'budgetPer30Days'
  | 'approvalThreshold'
  | 'allowedServices'
  | 'deniedServices'
  | 'frozen'
  | 'requireWithdrawalSignature'
  | 'withdrawalDestinations';

const BUDGET_FIELDS: Record<BudgetWindow, PolicyField> = {
  hour: 'budgetPerHour',
  day: 'budgetPerDay',
  days30: 'budgetPer30Days',
};

/** A limit (undefined = none of the owner's own) loosens when it is removed or raised. */
function raised(before: bigint | undefined, after: bigint | undefined): boolean {
  return before !== undefined && (after === undefined || after > before);
}

/**
 * Whether every URL `inner` matches is matched by `outer` too (both normalised service patterns), as an allow
 * rule (`allows`) or a deny rule (`denies`) reads them.
 */
function covers(outer: string, inner: string, rule: 'allow' | 'deny'): boolean {
  if (outer === inner) return true;
  try {
    return rule === 'allow' ? allows(outer, new URL(inner)) : denies(outer, new URL(inner));
  } catch {
    return false;
  }
}

/** The allow list loosens when it is emptied (any service) or allows a service it did not cover. */
function widenedAllowList(before: string[], after: string[]): boolean {
  if (before.length === 0) return false;
  return after.length === 0 || after.some((p) => !before.some((q) => covers(q, p, 'allow')));
}

/** The deny list loosens when a service it denied is no longer denied as a whole. */
function narrowedDenyList(before: string[], after: string[]): boolean {
  return before.some((q) => !after.some((p) => covers(p, q, 'deny')));
}

/** The address book loosens when it is emptied (any destination) or gains a destination. */
function widenedBook(before: string[], after: string[]): boolean {
  if (before.length === 0) return false;
  return after.length === 0 || after.some((d) => !before.includes(d));
}

/** The fields `next` loosens against `current`, in the API's order; empty when nothing is loosened. */
export function loosenedFields(current: AgentPolicy, next: AgentPolicy): PolicyField[] {
  const out: PolicyField[] = [];
  if (raised(current.perPaymentCap, next.perPaymentCap)) out.push('perPaymentCap');
  for (const window of Object.keys(BUDGET_FIELDS) as BudgetWindow[])
    if (raised(current.budgets[window], next.budgets[window])) out.push(BUDGET_FIELDS[window]);
  if (raised(current.approvalThreshold, next.approvalThreshold)) out.push('approvalThreshold');
  if (widenedAllowList(current.allowedServices, next.allowedServices)) out.push('allowedServices');
  if (narrowedDenyList(current.deniedServices, next.deniedServices)) out.push('deniedServices');
  if (current.frozen && !next.frozen) out.push('frozen');
  if (current.requireWithdrawalSignature === true && next.requireWithdrawalSignature !== true)
    out.push('requireWithdrawalSignature');
  if (widenedBook(current.withdrawalDestinations ?? [], next.withdrawalDestinations ?? []))
    out.push('withdrawalDestinations');
  return out;
}
