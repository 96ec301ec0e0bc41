// Pending approvals at the top of the page: each payment that waits for the owner (agent, service, method,
// price, when asked, until when it waits) with Approve and Deny. A decision's result shows in the section's
// status line and the list, balances and payments are fetched again; a refusal (already decided, agent frozen)
// shows on its own row. The section is hidden while nothing waits and nothing was just decided.
import { type Approval, api } from './api.ts';
import { $, el, setStatus } from './dom.ts';
import { dateTime, shortAddress, usdc } from './format.ts';
import { explain, toProblem } from './problem.ts';

interface Deps {
  /** Bumped whenever the account's data is cleared. */
  epoch: () => number;
  /** Fetches the balances and payments again after a decision. */
  refresh: () => void;
}

let deps: Deps;

function showSection(count: number): void {
  $('approvals').hidden = count === 0 && $('approvals-status').textContent === '';
  $('approvals-count').textContent = count === 0 ? '' : String(count);
}

function row(approval: Approval): HTMLLIElement {
  const item = el('li', undefined, 'approval');
  item.dataset.payment = approval.paymentId;
  const what = el('div', undefined, 'approval-what');
  const price = el('p', `${usdc(approval.amount)} USDC`, 'approval-price');
  const service = el('p', `${approval.method} ${approval.serviceUrl}`, 'mono approval-service');
  const agent = el('span', shortAddress(approval.agentId), 'mono');
  agent.title = approval.agentId;
  const facts = el('p', undefined, 'muted approval-facts');
  facts.append(
    'Agent ',
    agent,
    ' · asked ',
    el('time', dateTime(approval.createdAt)),
    ' · waits until ',
    el('time', dateTime(approval.expiresAt)),
  );
  what.append(price, service, facts);
  const approve = el('button', 'Approve', 'btn btn-primary btn-small');
  const deny = el('button', 'Deny', 'btn btn-danger btn-small');
  const problem = el('p', undefined, 'field-error approval-problem');
  problem.setAttribute('role', 'alert');
  problem.hidden = true;
  for (const [button, yes] of [
    [approve, true],
    [deny, false],
  ] as const) {
    button.type = 'button';
    button.setAttribute(
      'aria-label',
      `${yes ? 'Approve' : 'Deny'} ${usdc(approval.amount)} USDC to ${approval.serviceUrl}`,
    );
    button.addEventListener('click', () => void decide(approval, yes, [approve, deny], problem));
  }
  const actions = el('div', undefined, 'actions');
  actions.append(approve, deny);
  item.append(what, actions, problem);
  return item;
}

async function decide(
  approval: Approval,
  approve: boolean,
  buttons: HTMLButtonElement[],
  problem: HTMLElement,
): Promise<void> {
  const epoch = deps.epoch();
  for (const button of buttons) button.disabled = true;
  problem.hidden = true;
  try {
    await api.decideApproval(approval.paymentId, approve);
    if (epoch !== deps.epoch()) return;
    const price = `${usdc(approval.amount)} USDC to ${approval.serviceUrl}`;
    setStatus(
      'approvals',
      approve
        ? `Approved: ${price} joins the next batch.`
        : `Denied: ${price} was not paid; its reservation was released.`,
      true,
    );
    await loadApprovals();
    deps.refresh();
  } catch (error) {
    if (epoch !== deps.epoch()) return;
    const said = explain(toProblem(error));
    problem.textContent = `${said.title}: ${said.detail}`;
    problem.hidden = false;
    for (const button of buttons) button.disabled = false;
  }
}

/** Fetches the waiting payments and shows them (none: the section hides, unless it says a result). */
export async function loadApprovals(): Promise<void> {
  const epoch = deps.epoch();
  const { approvals } = await api.approvals();
  if (epoch !== deps.epoch()) return;
  $('approvals-list').replaceChildren(...approvals.map(row));
  if (approvals.length === 0)
    $('approvals-list').append(el('li', 'Nothing else waits for your approval.', 'muted'));
  showSection(approvals.length);
}

/** Forgets the account's approvals (logged out, another account). */
export function resetApprovals(): void {
  $('approvals-list').replaceChildren();
  setStatus('approvals', '');
  showSection(0);
}

export function wireApprovals(d: Deps): void {
  deps = d;
  resetApprovals();
}
