// The policy form of the agent controls: fills it from the proxy's view, reads it back into a PUT body
// (empty field: no limit of the owner's own), checks amounts before sending, and shows each problem at its
// field — the page's own checks and the proxy's (`errors[].path` such as `perPaymentCap` or `allowedServices.1`)
// alike. The approval deadline is typed in minutes and sent in seconds; `loosens` says when a change of the
// withdrawal settings needs the wallet's signature (docs/POLICY.md, "Withdrawals need the wallet").
import type { AgentPolicy, PolicyChange } from './api.ts';
import { $ } from './dom.ts';
import { usdc } from './format.ts';
import type { FieldIssue } from './problem.ts';

const AMOUNTS = [
  ['policy-cap', 'perPaymentCap'],
  ['policy-hour', 'budgetPerHour'],
  ['policy-day', 'budgetPerDay'],
  ['policy-30d', 'budgetPer30Days'],
  ['policy-approval', 'approvalThreshold'],
] as const;
const LISTS = [
  ['policy-allowed', 'allowedServices'],
  ['policy-denied', 'deniedServices'],
  ['policy-destinations', 'withdrawalDestinations'],
] as const;
const FIELD_IDS: Record<string, string> = Object.fromEntries([
  ...[...AMOUNTS, ...LISTS].map(([id, f]) => [f, id]),
  ['approvalTimeoutSeconds', 'policy-approval-minutes'],
  ['requireWithdrawalSignature', 'policy-signature'],
]);
/** The proxy's bounds of the approval deadline, in seconds (30 s to 24 h). */
const WAIT_S = [30, 86_400] as const;

const AMOUNT = /^\d{1,15}(\.\d{1,7})?$/;

export function fillPolicyForm(policy: AgentPolicy | undefined): void {
  for (const [id, field] of AMOUNTS) {
    const value = policy?.[field];
    $<HTMLInputElement>(id).value = value ? usdc(value) : '';
  }
  for (const [id, field] of LISTS) $<HTMLTextAreaElement>(id).value = (policy?.[field] ?? []).join('\n');
  const wait = policy?.approvalTimeoutSeconds;
  $<HTMLInputElement>('policy-approval-minutes').value = wait === undefined ? '' : String(wait / 60);
  $<HTMLInputElement>('policy-signature').checked = policy?.requireWithdrawalSignature ?? false;
  clearFieldIssues();
}

/** The PUT body the form says, or the issues that keep it from being sent. */
export function readPolicyForm(): { change: PolicyChange } | { issues: FieldIssue[] } {
  const change: Record<string, unknown> = {};
  const issues: FieldIssue[] = [];
  for (const [id, field] of AMOUNTS) {
    const text = $<HTMLInputElement>(id).value.trim();
    if (text === '') change[field] = null;
    else if (!AMOUNT.test(text))
      issues.push({ path: field, message: 'write an amount in USDC, like 0.5 (at most 7 decimals)' });
    else if (Number(text) <= 0)
      issues.push({ path: field, message: 'must be more than 0 (leave it empty for no limit)' });
    else change[field] = text;
  }
  for (const [id, field] of LISTS)
    change[field] = $<HTMLTextAreaElement>(id)
      .value.split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '');
  const minutes = $<HTMLInputElement>('policy-approval-minutes').value.trim();
  const seconds = Math.round(Number(minutes) * 60);
  if (minutes === '') change.approvalTimeoutSeconds = null;
  else if (!/^\d+(\.\d+)?$/.test(minutes) || seconds < WAIT_S[0] || seconds > WAIT_S[1])
    issues.push({ path: 'approvalTimeoutSeconds', message: 'write minutes from 0.5 to 1440 (24 hours)' });
  else change.approvalTimeoutSeconds = seconds;
  change.requireWithdrawalSignature = $<HTMLInputElement>('policy-signature').checked;
  return issues.length > 0 ? { issues } : { change: change as PolicyChange };
}

export function clearFieldIssues(): void {
  for (const id of Object.values(FIELD_IDS)) {
    $(id).removeAttribute('aria-invalid');
    $(id).removeAttribute('aria-describedby');
    const box = $(`${id}-error`);
    box.textContent = '';
    box.hidden = true;
  }
}

/** Shows each issue under its field; returns the issues that name no field of the form. */
export function showFieldIssues(issues: readonly FieldIssue[]): FieldIssue[] {
  clearFieldIssues();
  const elsewhere: FieldIssue[] = [];
  let first: HTMLElement | undefined;
  for (const issue of issues) {
    const [field, index] = issue.path.split('.');
    const id = FIELD_IDS[field ?? ''];
    if (id === undefined) {
      elsewhere.push(issue);
      continue;
    }
    const input = $(id);
    const box = $(`${id}-error`);
    const line = index === undefined ? '' : `Entry ${Number(index) + 1}: `;
    const text = `${line}${issue.message.replace(/^[\w.]+: /, '')}`;
    box.textContent = box.textContent ? `${box.textContent} ${text}` : text;
    box.hidden = false;
    input.setAttribute('aria-invalid', 'true');
    input.setAttribute('aria-describedby', box.id);
    first ??= input;
  }
  first?.focus();
  return elsewhere;
}
