// The owner's policy on the payment path, in the order docs/POLICY.md gives: before the service is asked for
// its price, the frozen flag and the service rules; once it quoted, the per-payment cap against that price;
// under the agent's budget lock, right before the price is reserved, the frozen flag again and the budgets
// (the operator's, then the owner's hour, day and 30 days) against what the agent spent. A refusal is a
// problem naming its rule, thrown before anything is journaled, reserved or signed.
import { formatAmount } from '../../api/amount.ts';
import { DomainError } from '../domain/errors.ts';
import { type AgentPolicy, checkBudgets, checkPerPaymentCap, frozenRefusal } from '../domain/agent-policy.ts';
import { checkService } from '../domain/service-rules.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { spendingOf, type SpendingDeps } from './budget.ts';
import type { PaymentContext } from './context.ts';

/** What this module uses of the payment context. */
export type PolicyCheckDeps = Pick<PaymentContext, 'policies' | 'config'> & SpendingDeps;

/** Rules that need no price: frozen, denied services, allowed services. Returns the policy read. */
export async function checkBeforeQuote(
  pctx: PolicyCheckDeps,
  ref: AgentRef,
  serviceUrl: string,
): Promise<AgentPolicy | undefined> {
  const policy = await pctx.policies.find(ref);
  if (policy === undefined) return undefined;
  if (policy.frozen) throw frozenRefusal(ref.agentId);
  checkService(policy, serviceUrl);
  return policy;
}

/** The owner's per-payment cap against the quoted price (after the operator's own cap). */
export function checkQuotedPrice(policy: AgentPolicy | undefined, price: bigint): void {
  if (policy !== undefined) checkPerPaymentCap(policy, price);
}

/** Under the agent's budget lock: the policy read again (frozen, budgets) and the operator's budgets. */
export async function checkBeforeReserve(pctx: PolicyCheckDeps, ref: AgentRef, price: bigint): Promise<void> {
  const policy = await pctx.policies.find(ref);
  if (policy?.frozen === true) throw frozenRefusal(ref.agentId);
  const { budgetPerHour, budgetPerDay } = pctx.config;
  if (policy === undefined && budgetPerHour === 0n && budgetPerDay === 0n) return;
  const spent = await spendingOf(pctx, ref);
  const operator: Array<[bigint, bigint, string]> = [
    [budgetPerHour, spent.hour, 'hour'],
    [budgetPerDay, spent.day, 'day'],
  ];
  for (const [budget, used, name] of operator) {
    if (budget > 0n && used + price > budget)
      throw new DomainError(
        'budget_exceeded',
        `this agent spent ${formatAmount(used)} USDC in the last ${name}; ${formatAmount(price)} more would pass its budget of ${formatAmount(budget)} USDC`,
        { extra: { rule: `operatorBudget:${name}` } },
      );
  }
  if (policy !== undefined) checkBudgets(policy, spent, price);
}

/**
 * Whether the agent's budgets must be checked and reserved one payment at a time (under its lock). Without
 * budgets the frozen flag is still read again right before reserving, and the batch run reads it before
 * signing, so a freeze stops whatever slips between.
 */
export function isBudgeted(pctx: PolicyCheckDeps, policy: AgentPolicy | undefined): boolean {
  const owners = policy !== undefined && Object.values(policy.budgets).some((b) => b !== undefined);
  return pctx.config.budgetPerHour > 0n || pctx.config.budgetPerDay > 0n || owners;
}

/**
 * In the batch run, right before a payment's first signature: whether its agent was frozen since it was
 * reserved (by this replica or another: the flag is read from the shared store). Such a payment is not paid.
 */
export async function frozenSinceReserved(pctx: PolicyCheckDeps, ref: AgentRef): Promise<boolean> {
  return (await pctx.policies.find(ref))?.frozen === true;
}
