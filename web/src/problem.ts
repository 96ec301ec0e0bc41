// What the page shows when something fails: a title and a detail, never a stack or raw JSON. Errors from the
// proxy (problem+json), the wallet (Freighter's {code, message}) and the network all become a Problem.

export interface FieldIssue {
  path: string;
  message: string;
}

export class Problem extends Error {
  readonly title: string;
  readonly detail: string;
  readonly code: string;
  readonly status: number;
  readonly issues: FieldIssue[];

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
