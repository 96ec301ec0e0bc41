// What the page shows when something fails: one title and one sentence a person can act on, never a stack,
// raw JSON or a ledger's host error, and whether anything moved. Errors from the proxy (problem+json), the
// wallet (Freighter's {code, message}) and the network all become a Problem; `explain` rewrites the ones whose
// detail is written for developers.

export interface FieldIssue {
  path: string;
  message: string;
}

/** Whether money may have moved when the action failed. */
export type Moved = 'nothing' | 'unknown';

export class Problem extends Error {
  readonly title: string;
  readonly detail: string;
  readonly code: string;
  readonly status: number;
  readonly issues: FieldIssue[];
  /** Set by a flow that failed after it sent a transaction whose outcome is not known. */
  moved: Moved = 'nothing';
  /** When the proxy expects a retry to succeed (its `registrationAt`), for a problem that says to retry. */
  retryAt?: string;

  constructor(title: string, detail: string, code = 'error', status = 0, issues: FieldIssue[] = []) {
    super(`${title}: ${detail}`);
    this.title = title;
    this.detail = detail;
    this.code = code;
    this.status = status;
    this.issues = issues;
  }
}

/** Any thrown value → Problem (network failures and programming errors get a generic, stack-free text). */
export function toProblem(error: unknown): Problem {
  if (error instanceof Problem) return error;
  if (error instanceof TypeError)
    return new Problem(
      'Network error',
      'The server could not be reached. Check that it is running.',
      'network',
    );
  return new Problem(
    'Unexpected error',
    error instanceof Error ? error.message : String(error),
    'unexpected',
  );
}

const FIELD_LABELS: Record<string, string> = {
  amount: 'Amount',
  destination: 'To Stellar address',
  'withdraw.amount': 'Amount',
  'withdraw.destination': 'To Stellar address',
  agentId: 'Agent',
  publicKey: 'Wallet address',
};

/** "amount: amount 0 must be greater than 0" → "Amount: amount 0 must be greater than 0." */
function issueSentence(issue: FieldIssue): string {
  const label = FIELD_LABELS[issue.path] ?? issue.path;
  const text = issue.message.replace(/[.\s]+$/, '');
  return `${label}: ${text}.`;
}

function rewritten(from: Problem, title: string, detail: string): Problem {
  const out = new Problem(title, detail, from.code, from.status);
  out.moved = from.moved;
  return out;
}

const HOST_ERROR = /HostError|Error\(Contract|Error\(WasmVm|Error\(Auth|Error\(Budget|Error\(Storage/;

/** The same problem, said so that a person knows what happened and what to do. */
export function explain(problem: Problem): Problem {
  const { code, detail } = problem;
  if (/TrustlineMissing|trustline/i.test(detail))
    return rewritten(
      problem,
      'That account cannot receive USDC yet',
      'The destination has no USDC trustline (or does not exist yet): in the wallet of that account, add the ' +
        'USDC asset (Freighter: Manage assets → Add an asset), then withdraw again.',
    );
  if (HOST_ERROR.test(detail))
    return rewritten(
      problem,
      'Refused by the ledger',
      'The ledger refused the transaction and applied none of it. Try again; if it is refused again, the ' +
        "service's operator finds the ledger's reason in its log.",
    );
  if (code === 'invalid_request' && problem.issues.length > 0)
    return rewritten(problem, 'Check the form', problem.issues.map(issueSentence).join(' '));
  switch (code) {
    case 'prepare_mismatch':
      return rewritten(
        problem,
        'The wallet signed something else',
        'The signed transaction is not the prepared deposit, which happens when Freighter switched account or ' +
          'network in between. Connect again and deposit again.',
      );
    case 'prepare_expired':
      return rewritten(
        problem,
        'The deposit waited too long',
        'The prepared deposit expired before it was signed. Deposit again.',
      );
    case 'prepare_cancelled':
      return rewritten(
        problem,
        'The deposit was cancelled',
        'This prepared deposit was cancelled, so it can no longer be sent. Deposit again.',
      );
    case 'prepare_stale':
      return rewritten(
        problem,
        'Other deposits landed first',
        'The pool moved on while this deposit waited, so it must be prepared again. Deposit again.',
      );
    case 'registration_pending':
      return rewritten(
        problem,
        'The new agent is not registered yet',
        "Its key waits for the pool's next allowlist registration slot. Deposit again in a minute.",
      );
    case 'unauthorized':
      return rewritten(problem, 'Your session ended', 'Log in again to continue.');
    case 'approval_not_pending':
      return rewritten(
        problem,
        'Already decided',
        'This payment was already approved, denied or expired: refresh to see the list as it is now.',
      );
    case 'agent_frozen':
      return rewritten(
        problem,
        'The agent is frozen',
        'Unfreeze it in the agent controls to approve; the payment keeps waiting until its deadline.',
      );
    case 'wallet_signature_required':
    case 'wallet_signature_invalid':
      return rewritten(
        problem,
        'Your wallet must confirm this',
        "The agent's policy asks for a fresh signature of your wallet, and this one was not accepted. Try " +
          'again and sign the message in Freighter.',
      );
    case 'rate_limited':
      return rewritten(problem, 'Too many requests', 'Wait a moment, then try again.');
    default:
      return problem;
  }
}

/** Whether a failure after a transaction was sent leaves its outcome open (the server did not decide it). */
export function outcomeUnknown(problem: Problem): boolean {
  if (problem.code === 'network') return true;
  // A proof that failed was never sent; any other 5xx may have come after the transaction left.
  return problem.status >= 500 && problem.code !== 'proof_failed';
}

export const MOVED_TEXT: Record<Moved, string> = {
  nothing: 'Nothing moved: your wallet and the pool are as they were.',
  unknown:
    'Whether it went through is not known yet: a transaction that was sent lands at most once. Refresh your ' +
    'balances in a minute before trying again.',
};
