// The proxy's domain errors: one root type raised by flows, payments, services and auth, with a stable `code`
// (the problem code callers see), a detail, an optional cause, field issues and extra members, and — where a
// caller should come back later — how many seconds to wait. Nothing here decides HTTP: the edge
// (http/problem.ts) alone maps a code to its status and headers (Retry-After, WWW-Authenticate).
import type { FieldIssue, ProblemCode } from '../../api/problem.ts';

export interface DomainErrorOptions {
  issues?: FieldIssue[];
  /** extra members of the answer (e.g. the txHash of a reverted transaction) */
  extra?: Record<string, string | number | boolean>;
  /** when asking again may succeed, in whole seconds */
  retryAfterSeconds?: number;
  cause?: unknown;
}

export class DomainError extends Error {
  readonly code: ProblemCode;
  readonly issues?: FieldIssue[];
  readonly extra?: Record<string, string | number | boolean>;
  readonly retryAfterSeconds?: number;

  constructor(code: ProblemCode, detail: string, options: DomainErrorOptions = {}) {
    super(detail, { cause: options.cause });
    this.name = 'DomainError';
    this.code = code;
    this.issues = options.issues;
    this.extra = options.extra;
    this.retryAfterSeconds = options.retryAfterSeconds;
  }
}

/** The error's code when it is a domain error, else `internal_error`. */
export function codeOf(error: unknown): ProblemCode {
  return error instanceof DomainError ? error.code : 'internal_error';
}

/** The error's message, whatever was thrown (a rejected promise may carry any value). */
export function messageOf(error: unknown): string {
  return error instanceof Error ? error.message : String(error);
}
