// The agent controls: which agent they act on, its policy (form, save, problems at the fields; a loosening the
// proxy asks the wallet to sign is signed and sent again), freeze and unfreeze (likewise), its agent tokens (issue — shown
// once —, list, revoke) and the export of its payments for a period. The policies fetched here also feed the
// agent cards. Each action runs through the page's `guarded`, so a failure shows in its own panel; results for
// an account the page no longer shows are dropped.
import { type AgentPolicy, api, type Confirmable, type Confirmation } from './api.ts';
import { $, setStatus } from './dom.ts';
import { saveFile } from './download.ts';
import { shortAddress } from './format.ts';
import { clearFieldIssues, fillPolicyForm, readPolicyForm, showFieldIssues } from './policy-form.ts';
import { Problem } from './problem.ts';
import { renderTokens, showNewToken } from './token-list.ts';

type Guarded = (section: string, action: () => Promise<void>) => Promise<void>;

interface Deps {
  guarded: Guarded;
  /** Bumped whenever the account's data is cleared. */
  epoch: () => number;
  /** Draws the agent cards again (a policy or the selection changed). */
  redraw: () => void;
  /** Has the wallet sign the proxy's confirmation message for `action` of `agentId`. */
  confirm: (agentId: string, action: Confirmable) => Promise<Confirmation>;
}

const policies = new Map<string, AgentPolicy>();
let selected: string | undefined;
/** The id of the token whose text is on screen (shown once, after it was issued). */
let shownTokenId: string | undefined;
/** The agent whose saved policy the form was filled with: a refresh does not overwrite edits under way. */
let formFor: string | undefined;
let deps: Deps;

export function policyOf(agentId: string): AgentPolicy | undefined {
  return policies.get(agentId);
}

export function selectedAgent(): string | undefined {
  return selected;
}

/** Fetches every agent's policy (for the cards), then shows the selected agent's in the form. */
export async function loadPolicies(agentIds: readonly string[]): Promise<void> {
  const epoch = deps.epoch();
  const views = await Promise.all(agentIds.map((id) => api.policy(id)));
  if (epoch !== deps.epoch()) return;
  for (const view of views) policies.set(view.agentId, view);
  deps.redraw();
  showSelected();
}

/** The agents the page shows changed: keep the selection when it still exists, else the first agent. */
export function agentsChanged(agentIds: readonly string[]): void {
  const select = $<HTMLSelectElement>('manage-agent');
  select.replaceChildren(
    ...agentIds.map((id) => {
      const option = document.createElement('option');
      option.value = id;
      option.textContent = shortAddress(id);
      return option;
    }),
  );
  if (selected === undefined || !agentIds.includes(selected)) selected = agentIds[0];
  if (selected !== undefined) select.value = selected;
  for (const id of policies.keys()) if (!agentIds.includes(id)) policies.delete(id);
  $('manage').hidden = agentIds.length === 0;
}

/** Forgets everything of the account (policies, tokens on screen, messages). */
export function resetManage(): void {
  policies.clear();
  selected = undefined;
  formFor = undefined;
  agentsChanged([]);
  fillPolicyForm(undefined);
  renderTokens([], () => {});
  showNewToken('');
  $<HTMLFormElement>('export-form').reset();
  for (const section of ['policy', 'freeze', 'tokens', 'export']) setStatus(section, '');
}

export function setManageEnabled(enabled: boolean): void {
  for (const id of ['policy-submit', 'freeze-toggle', 'tokens-issue', 'export-submit'])
    $<HTMLButtonElement>(id).disabled = !enabled;
}

/** Shows the selected agent's freeze state, and its policy in the form unless the form already holds it
 * (`refill`: it was just saved). */
function showSelected(refill = false): void {
  const policy = selected === undefined ? undefined : policies.get(selected);
  if (refill || formFor !== selected) {
    fillPolicyForm(policy);
    formFor = policy === undefined ? undefined : selected;
  }
  const toggle = $('freeze-toggle');
  toggle.textContent = policy?.frozen ? 'Unfreeze agent' : 'Freeze agent';
  toggle.className = policy?.frozen ? 'btn btn-primary' : 'btn btn-danger';
  $('freeze-state').textContent = policy?.frozen
    ? 'This agent is frozen: it pays nothing until you unfreeze it. You can still withdraw.'
    : 'Freezing stops every new payment at once; queued payments not yet signed are not paid. You can still ' +
      'withdraw.';
}

/** Opens the controls on `agentId` (from its card's Manage button or the select). */
export function selectAgent(agentId: string, scroll = false): void {
  if (agentId !== selected) {
    selected = agentId;
    showNewToken('');
    for (const section of ['policy', 'freeze', 'tokens', 'export']) setStatus(section, '');
  }
  $<HTMLSelectElement>('manage-agent').value = agentId;
  showSelected();
  deps.redraw();
  void deps.guarded('tokens', loadTokens);
  if (scroll) $('manage').scrollIntoView({ block: 'start' });
}

function current(): string {
  if (selected === undefined) throw new Problem('No agent', 'Deposit to an agent first.', 'no_agent');
  return selected;
}

function accept(view: AgentPolicy, refill = false): void {
  policies.set(view.agentId, view);
  deps.redraw();
  if (view.agentId === selected) showSelected(refill);
}

/**
 * Sends a change; when the proxy answers that the owner's wallet must sign it (a loosening of a protected
 * agent), has the wallet sign the proxy's message and sends it once more with the signature.
 */
async function withSignatureIfAsked<T>(
  send: (confirmation?: Confirmation) => Promise<T>,
  sign: () => Promise<Confirmation>,
): Promise<T> {
  try {
    return await send();
  } catch (error) {
    if (!(error instanceof Problem) || error.code !== 'wallet_signature_required') throw error;
    return send(await sign());
  }
}

async function onSavePolicy(): Promise<void> {
  const agentId = current();
  const epoch = deps.epoch();
  setStatus('policy', '');
  const form = readPolicyForm();
  if ('issues' in form) {
    showFieldIssues(form.issues);
    throw new Problem(
      'Check the policy',
      'The highlighted fields need a change; nothing was saved.',
      'invalid',
    );
  }
  clearFieldIssues();
  const change = form.change;
  try {
    const view = await withSignatureIfAsked(
      (confirmation) => api.setPolicy(agentId, { ...change, ...(confirmation && { confirmation }) }),
      async () => {
        setStatus('policy', 'This loosens a policy your wallet protects: sign it in Freighter…');
        const confirmation = await deps.confirm(agentId, { policy: change });
        setStatus('policy', '');
        return confirmation;
      },
    );
    if (epoch !== deps.epoch()) return;
    accept(view, true);
    setStatus('policy', `Policy saved for ${shortAddress(agentId)}.`, true);
  } catch (error) {
    if (!(error instanceof Problem) || error.issues.length === 0) throw error;
    const elsewhere = showFieldIssues(error.issues);
    throw new Problem(
      'The proxy refused the policy',
      elsewhere.length > 0
        ? elsewhere.map((i) => `${i.path}: ${i.message}`).join(' ')
        : 'See the highlighted fields; nothing was saved.',
      error.code,
      error.status,
    );
  }
}

async function onToggleFreeze(): Promise<void> {
  const agentId = current();
  const epoch = deps.epoch();
  const frozen = !(policies.get(agentId)?.frozen ?? false);
  const view = await withSignatureIfAsked(
    (confirmation) => api.setFrozen(agentId, frozen, confirmation),
    async () => {
      setStatus('freeze', 'Your wallet protects this agent: sign the unfreeze in Freighter…');
      const confirmation = await deps.confirm(agentId, { unfreeze: true });
      setStatus('freeze', '');
      return confirmation;
    },
  );
  if (epoch !== deps.epoch()) return;
  accept(view);
  setStatus(
    'freeze',
    view.frozen
      ? `${shortAddress(agentId)} is frozen: its payments are refused until you unfreeze it.`
      : `${shortAddress(agentId)} is active again: it pays within its policy.`,
    true,
  );
}

async function loadTokens(): Promise<void> {
  const agentId = selected;
  const epoch = deps.epoch();
  if (agentId === undefined) return renderTokens([], onRevoke);
  const { tokens } = await api.agentTokens(agentId);
  if (epoch === deps.epoch() && agentId === selected) renderTokens(tokens, onRevoke);
}

async function onIssueToken(): Promise<void> {
  const agentId = current();
  const epoch = deps.epoch();
  const seconds = Number($<HTMLSelectElement>('tokens-lifetime').value);
  const issued = await api.issueAgentToken(agentId, seconds);
  if (epoch !== deps.epoch() || agentId !== selected) return;
  showNewToken(issued.token);
  shownTokenId = issued.tokenId;
  setStatus('tokens', '');
  await loadTokens();
}

function onRevoke(tokenId: string): void {
  void deps.guarded('tokens', async () => {
    const agentId = current();
    await api.revokeAgentToken(agentId, tokenId);
    // A revoked token is of no use to anyone: its text goes from the screen too.
    if (tokenId === shownTokenId) showNewToken('');
    await loadTokens();
    setStatus('tokens', `Token ${shortAddress(tokenId)} revoked: the proxy refuses it from now on.`, true);
  });
}

/** "2026-11-27" (a date input, UTC) → that midnight; `next` → the midnight after it. */
function midnight(day: string, next = false): string | undefined {
  if (day === '') return undefined;
  const at = new Date(`${day}T00:00:00Z`);
  if (next) at.setUTCDate(at.getUTCDate() + 1);
  return at.toISOString();
}

async function onExport(): Promise<void> {
  const agentId = current();
  const fromDay = $<HTMLInputElement>('export-from').value;
  const toDay = $<HTMLInputElement>('export-to').value;
  if (fromDay !== '' && toDay !== '' && fromDay > toDay)
    throw new Problem('Check the period', '"From" must not be after "Until".', 'invalid');
  const format = $<HTMLSelectElement>('export-format').value === 'json' ? 'json' : 'csv';
  const text = await api.exportPayments(agentId, format, {
    from: midnight(fromDay),
    to: midnight(toDay, true),
  });
  const name = `payments-${agentId.slice(-8)}-${fromDay || 'start'}-to-${toDay || 'now'}.${format}`;
  saveFile(name, format === 'csv' ? 'text/csv' : 'application/json', text);
  setStatus('export', `Downloaded ${name}.`, true);
}

export function wireManage(d: Deps): void {
  deps = d;
  $('manage-agent').addEventListener('change', (event) =>
    selectAgent((event.target as HTMLSelectElement).value),
  );
  $('policy-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void deps.guarded('policy', onSavePolicy);
  });
  $('freeze-toggle').addEventListener('click', () => void deps.guarded('freeze', onToggleFreeze));
  $('tokens-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void deps.guarded('tokens', onIssueToken);
  });
  $('export-form').addEventListener('submit', (event) => {
    event.preventDefault();
    void deps.guarded('export', onExport);
  });
  resetManage();
}
