// What an agent spent within rolling windows: its payments that paid or may still pay (everything but failed
// and released ones) created within each window, read through the proxy's clock. The operator's budgets (per
// hour and per day, off by default) and the owner's policy budgets (hour, day, 30 days) are checked against it.
import { BUDGET_WINDOWS, type BudgetWindow } from '../domain/agent-policy.ts';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import type { FlowContext } from '../flows/context.ts';
import type { PaymentContext } from './context.ts';

/** What this module uses of the payment context. */
export type SpendingDeps = Pick<PaymentContext, 'records'> & {
  flows: Pick<FlowContext, 'journal' | 'clock'>;
};

export type Spending = Record<BudgetWindow, bigint>;

export async function spendingOf(pctx: SpendingDeps, ref: AgentRef): Promise<Spending> {
  const now = pctx.flows.clock();
  const agent = scopedId(ref);
  const spent: Spending = { hour: 0n, day: 0n, days30: 0n };
  for (const paymentId of await pctx.records.paymentsOf(ref.owner)) {
    const record = await pctx.flows.journal.get(paymentId);
    if (record === undefined || record.agent !== agent) continue;
    if (record.state === 'failed' || record.state === 'released') continue;
    for (const window of Object.keys(BUDGET_WINDOWS) as BudgetWindow[])
      if (record.createdAt >= now - BUDGET_WINDOWS[window]) spent[window] += record.amount;
  }
  return spent;
}
