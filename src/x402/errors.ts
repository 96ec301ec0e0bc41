// Typed errors of the x402 layer: every failure carries a stable `code` (callers branch on it, never on the
// message text) and, where useful, structured details (what a service offered, which address class refused).

export type X402ErrorCode =
  // safe fetching
  | 'bad_url'
  | 'forbidden_header'
  | 'private_address'
  | 'dns_failed'
  | 'too_many_redirects'
  | 'redirect_refused'
  | 'too_large'
  | 'timeout'
  | 'connection_failed'
  // quoting and signing
  | 'not_x402'
  | 'bad_payment_required'
  | 'no_matching_offer'
  | 'requirements_not_ours'
  | 'simulation_failed'
  | 'signing_failed'
  // sending
  | 'payment_rejected'
  | 'bad_payment_response'
  // confirming and reconciling
  | 'bad_tx_hash'
  | 'tx_not_found'
  | 'tx_failed'
  | 'transfer_mismatch'
  | 'history_unavailable'
  | 'rpc_failed';

export class X402Error extends Error {
  override readonly name = 'X402Error';
  constructor(
    readonly code: X402ErrorCode,
    message: string,
    readonly details: Record<string, unknown> = {},
  ) {
    super(message);
  }
}

/** True for an X402Error with one of the given codes (any code when none are given). */
export function isX402Error(err: unknown, ...codes: X402ErrorCode[]): err is X402Error {
  return err instanceof X402Error && (codes.length === 0 || codes.includes(err.code));
}
