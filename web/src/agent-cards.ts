// Each agent as a card: its name (shortened when it is an address, with Copy), its balance, frozen or active,
// what is left of each budget drawn as a bar, its cap and services, and a button to open its controls. The
// policy comes separately (one request per agent); a card without it yet says so.
import type { AgentBalance, AgentPolicy } from './api.ts';
import { copyButton, shortened } from './copy.ts';
import { el } from './dom.ts';
import { usdc } from './format.ts';

const WINDOWS = [
  ['hour', 'Last hour'],
  ['day', 'Last 24 hours'],
  ['days30', 'Last 30 days'],
] as const;

function budgetBar(
  label: string,
  budget: { budget: string; spent: string; remaining: string },
): HTMLLIElement {
  const item = el('li');
  const spent = Number(budget.spent);
  const total = Number(budget.budget);
  const share = total > 0 ? Math.min(1, spent / total) : 1;
  const head = el('div', undefined, 'budget-label');
  head.append(
    el('span', label),
    el('span', `${usdc(budget.remaining)} of ${usdc(budget.budget)} USDC left`, 'num'),
  );
  const bar = el('div', undefined, 'bar');
  bar.setAttribute('role', 'meter');
  bar.setAttribute('aria-label', `${label}: spent`);
  bar.setAttribute('aria-valuemin', '0');
  bar.setAttribute('aria-valuemax', budget.budget);
  bar.setAttribute('aria-valuenow', budget.spent);
  bar.setAttribute('aria-valuetext', `${usdc(budget.spent)} of ${usdc(budget.budget)} USDC spent`);
  const fill = el('div', undefined, 'bar-fill');
  // Set through the CSSOM, which the page's style-src 'self' allows (a style attribute it would not).
  fill.style.width = `${(share * 100).toFixed(1)}%`;
  fill.classList.toggle('is-low', share >= 0.8 && share < 1);
  fill.classList.toggle('is-out', share >= 1);
  fill.classList.toggle('is-some', spent > 0);
  bar.append(fill);
  item.append(head, bar);
  item.dataset.window = label;
  return item;
}

function policySummary(policy: AgentPolicy): HTMLElement {
  const parts = [`Cap ${usdc(policy.effective.perPaymentCap)} USDC per payment`];
  if (policy.allowedServices.length > 0)
    parts.push(
      `pays only ${policy.allowedServices.length} service${policy.allowedServices.length > 1 ? 's' : ''}`,
    );
  if (policy.deniedServices.length > 0) parts.push(`${policy.deniedServices.length} denied`);
  if (policy.approvalThreshold) parts.push(`asks you above ${usdc(policy.approvalThreshold)} USDC`);
  if (policy.requireWithdrawalSignature) parts.push('withdrawals signed by your wallet');
  return el('p', parts.join(' · '), 'policy-facts');
}

export function agentCard(
  agent: AgentBalance,
  policy: AgentPolicy | undefined,
  selected: boolean,
  onManage: (agentId: string) => void,
): HTMLLIElement {
  const card = el('li', undefined, 'agent-card');
  card.dataset.agent = agent.agentId;
  card.classList.toggle('is-frozen', policy?.frozen === true);
  card.classList.toggle('is-selected', selected);
  const top = el('div', undefined, 'agent-top');
  const name = el('span', undefined, 'agent-name');
  if (agent.agentId.length > 16) name.append(shortened(agent.agentId, 'agent id'));
  else name.append(el('span', agent.agentId), copyButton(agent.agentId, 'agent id'));
  const badge = policy === undefined ? el('span', 'policy…', 'badge') : undefined;
  top.append(
    name,
    badge ??
      (policy!.frozen ? el('span', 'Frozen', 'badge badge-bad') : el('span', 'Active', 'badge badge-ok')),
  );
  const balance = el('p', usdc(agent.balance), 'balance');
  balance.title = `${agent.balance} ${agent.currency}`;
  balance.append(' ', el('span', agent.currency, 'unit'));
  card.append(top, balance);
  if (policy) {
    const bars = WINDOWS.flatMap(([key, label]) => {
      const state = policy.effective.budgets[key];
      return state ? [budgetBar(label, state)] : [];
    });
    const list = el('ul', undefined, 'budgets');
    if (bars.length > 0) list.append(...bars);
    else list.append(el('li', 'No budget: only the per-payment cap limits spending.', 'policy-facts'));
    card.append(list, policySummary(policy));
  }
  const manage = el('button', 'Manage', 'btn btn-small');
  manage.type = 'button';
  manage.setAttribute('aria-label', `Manage agent ${agent.agentId}`);
  manage.addEventListener('click', () => onManage(agent.agentId));
  const actions = el('div', undefined, 'actions');
  actions.append(manage);
  card.append(actions);
  return card;
}
