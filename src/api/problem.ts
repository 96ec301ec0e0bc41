// Errors the proxy reports to callers: a stable machine-readable `code`, an HTTP status and a reason.
// Rendered as RFC 9457 problem+json by http/problem.ts; services throw them directly.

export const PROBLEM_STATUS = {
  invalid_request: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  method_not_allowed: 405,
  insufficient_balance: 409,
  prepare_stale: 409,
  service_not_payable: 422,
  price_too_high: 422,
  budget_exceeded: 429,
  agent_frozen: 403,
  policy_service_denied: 403,
  policy_service_not_allowed: 403,
  policy_per_payment_cap: 422,
  policy_budget_hour: 429,
  policy_budget_day: 429,
  policy_budget_30d: 429,
  forbidden_for_agent_token: 403,
  approval_not_pending: 409,
  policy_destination_not_allowed: 403,
  wallet_signature_required: 403,
  wallet_signature_invalid: 403,
  service_unreachable: 502,
  conflict: 409,
  prepare_expired: 410,
  prepare_cancelled: 409,
  prepare_mismatch: 422,
  ledger_rejected: 422,
  payload_too_large: 413,
  unsupported_media_type: 415,
  rate_limited: 429,
  internal_error: 500,
  proof_failed: 502,
  payment_failed: 502,
  queue_full: 503,
  registration_pending: 503,
  service_unavailable: 503,
} as const;

export type ProblemCode = keyof typeof PROBLEM_STATUS;

export const PROBLEM_TITLES: Record<ProblemCode, string> = {
  invalid_request: 'Invalid request',
  unauthorized: 'Unauthorized',
  forbidden: 'Forbidden',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  insufficient_balance: 'Insufficient balance',
  prepare_stale: 'Prepared deposit is stale; prepare again',
  service_not_payable: 'Service cannot be paid',
  price_too_high: 'Price too high',
  budget_exceeded: 'Budget exceeded',
  agent_frozen: 'Agent frozen by its owner',
  policy_service_denied: 'Service denied by the owner’s policy',
  policy_service_not_allowed: 'Service not among those the owner’s policy allows',
  policy_per_payment_cap: 'Price above the owner’s per-payment cap',
  policy_budget_hour: 'Owner’s hourly budget exceeded',
  policy_budget_day: 'Owner’s daily budget exceeded',
  policy_budget_30d: 'Owner’s 30-day budget exceeded',
  forbidden_for_agent_token: 'Not allowed with an agent token',
  approval_not_pending: 'The payment no longer waits for approval',
  policy_destination_not_allowed: 'Destination not in the owner’s address book',
  wallet_signature_required: 'A fresh wallet signature is required',
  wallet_signature_invalid: 'Wallet signature refused',
  service_unreachable: 'Service unreachable',
  conflict: 'Conflict',
  prepare_expired: 'Prepared deposit expired',
  prepare_cancelled: 'Prepared deposit was cancelled',
  prepare_mismatch: 'Signed transaction does not match the prepared deposit',
  ledger_rejected: 'Rejected by the ledger',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  rate_limited: 'Too many requests',
  internal_error: 'Internal error',
  proof_failed: 'Proof generation failed',
  payment_failed: 'Payment failed',
  queue_full: 'Queue full',
  registration_pending: 'Allowlist registration scheduled; retry later',
  service_unavailable: 'Service unavailable',
};

export interface FieldIssue {
  path: string;
  message: string;
}

export class ProblemError extends Error {
  readonly code: ProblemCode;
  readonly status: number;
  readonly issues?: FieldIssue[];
  readonly headers?: Record<string, string>;
  /** Extra members for the problem body (e.g. txHash of a reverted transaction). */
  readonly extra?: Record<string, string | number | boolean>;

  constructor(
    code: ProblemCode,
    detail: string,
    options: {
      issues?: FieldIssue[];
      headers?: Record<string, string>;
      extra?: Record<string, string | number | boolean>;
      cause?: unknown;
    } = {},
  ) {
    super(detail, { cause: options.cause });
    this.name = 'ProblemError';
    this.code = code;
    this.status = PROBLEM_STATUS[code];
    this.issues = options.issues;
    this.headers = options.headers;
    this.extra = options.extra;
  }
}
