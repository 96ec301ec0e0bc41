// The consent view: an MCP client sent its user here (`/?oauth=<requestId>`, from the proxy's OAuth authorize
// endpoint) to ask for a token of one of the wallet's agents. Once the owner is logged in, it shows which client
// asks (the name it gave itself, flagged unverified, and the host that receives the authorization), lets the
// owner choose the agent and tighten its per-payment cap, daily budget and approval threshold, then approves
// (the browser goes to the client's redirect URI with a code) or refuses (with `access_denied`).
import { type AgentPolicy, api, type PolicyChange } from './api.ts';
import { $, el, setStatus } from './dom.ts';
import { usdc } from './format.ts';
import { Problem } from './problem.ts';

/** The three limits the consent view lets the owner tighten, by input id. */
const LIMITS = [
  ['consent-cap', 'perPaymentCap'],
  ['consent-day', 'budgetPerDay'],
  ['consent-approval', 'approvalThreshold'],
] as const;
const AMOUNT = /^\d{1,15}(\.\d{1,7})?$/;

interface Deps {
  guarded: (section: string, action: () => Promise<void>) => Promise<void>;
}

let requestId: string | undefined;
let policy: AgentPolicy | undefined;
let decided = false;

/** The request this page was opened for, if any (shows the view, asking the owner to log in first). */
export function wireConsent(deps: Deps): void {
  requestId = new URLSearchParams(location.search).get('oauth') ?? undefined;
  if (requestId === undefined) return;
  $('consent').hidden = false;
  $('consent-agent').addEventListener('change', () => void deps.guarded('consent', loadPolicy));
  $('consent-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void deps.guarded('consent', approve);
  });
  $('consent-refuse').addEventListener('click', () => void deps.guarded('consent', refuse));
}

/** After login: the request's details and the wallet's agents to choose from. */
export async function loadConsent(agentIds: readonly string[]): Promise<void> {
  if (requestId === undefined || decided) return;
  const view = await api.oauthRequest(requestId);
  $('consent-client').textContent = view.clientName;
  $('consent-client-id').textContent = view.clientId;
  $('consent-unverified').hidden = view.verified;
  $('consent-redirect').textContent = view.redirectHost;
  $('consent-resource').textContent = view.resource;
  const select = $<HTMLSelectElement>('consent-agent');
  const previous = select.value;
  select.replaceChildren(...agentIds.map((id) => Object.assign(el('option', id), { value: id })));
  if (agentIds.includes(previous)) select.value = previous;
  $('consent-no-agents').hidden = agentIds.length > 0;
  $<HTMLButtonElement>('consent-approve').disabled = agentIds.length === 0;
  $('consent-intro').hidden = true;
  $('consent-details').hidden = false;
  if (agentIds.length > 0) await loadPolicy();
}

/** Forgets what the logged-out account saw (the request stays open for the next login). */
export function resetConsent(): void {
  if (requestId === undefined) return;
  policy = undefined;
  $('consent-details').hidden = true;
  $('consent-intro').hidden = false;
  $<HTMLSelectElement>('consent-agent').replaceChildren();
}

async function loadPolicy(): Promise<void> {
  const agentId = $<HTMLSelectElement>('consent-agent').value;
  policy = await api.policy(agentId);
  for (const [id, field] of LIMITS) {
    const value = policy[field];
    $<HTMLInputElement>(id).value = value ? usdc(value) : '';
  }
  // Which agent's limits the form shows now.
  $('consent-form').dataset.agent = agentId;
}

/** The policy with the three limits as typed, or a Problem when one would loosen it or is not an amount. */
function tightened(current: AgentPolicy): PolicyChange | undefined {
  const change: PolicyChange = {
    perPaymentCap: current.perPaymentCap,
    budgetPerHour: current.budgetPerHour,
    budgetPerDay: current.budgetPerDay,
    budgetPer30Days: current.budgetPer30Days,
    allowedServices: current.allowedServices,
    deniedServices: current.deniedServices,
    approvalThreshold: current.approvalThreshold,
    approvalTimeoutSeconds: current.approvalTimeoutSeconds,
  };
  let changed = false;
  for (const [id, field] of LIMITS) {
    const text = $<HTMLInputElement>(id).value.trim();
    const before = current[field];
    if (text === '' && before === null) continue;
    if (text === '')
      throw new Problem(
        'Only tighter here',
        `Keep a limit for ${label(id)}, or change it under Agent controls.`,
      );
    if (!AMOUNT.test(text) || Number(text) <= 0)
      throw new Problem('Not an amount', `${label(id)}: write an amount in USDC, like 0.5.`);
    if (before !== null && Number(text) > Number(before))
      throw new Problem(
        'Only tighter here',
        `${label(id)} may only go down here (now ${usdc(before)} USDC); raise it under Agent controls.`,
      );
    if (before === null || Number(text) !== Number(before)) {
      change[field] = text;
      changed = true;
    }
  }
  return changed ? change : undefined;
}

function label(id: string): string {
  return $(`${id}-label`).textContent ?? id;
}

async function approve(): Promise<void> {
  if (requestId === undefined || policy === undefined) return;
  const agentId = $<HTMLSelectElement>('consent-agent').value;
  const change = tightened(policy);
  if (change !== undefined) {
    setStatus('consent', 'Saving the tighter policy…');
    policy = await api.setPolicy(agentId, change);
  }
  setStatus('consent', 'Approving…');
  const { redirectTo } = await api.approveOAuth(requestId, agentId);
  leave(redirectTo, 'Approved: returning to the client…');
}

async function refuse(): Promise<void> {
  if (requestId === undefined) return;
  const { redirectTo } = await api.refuseOAuth(requestId);
  leave(redirectTo, 'Refused: returning to the client…');
}

function leave(redirectTo: string, text: string): void {
  decided = true;
  $<HTMLButtonElement>('consent-approve').disabled = true;
  $<HTMLButtonElement>('consent-refuse').disabled = true;
  setStatus('consent', text, true);
  location.assign(redirectTo);
}
