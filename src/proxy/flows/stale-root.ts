// Whether a refused pool transaction failed because a root it proved against moved (pool root left the history,
// or the allowlist/blocklist root changed): such a proof can be made again over the new roots.
import { ProblemError } from '../errors.ts';

const STALE_POOL_ERRORS = new Set([7, 8]);

export function isStaleRoot(error: unknown): boolean {
  if (!(error instanceof ProblemError) || error.code !== 'ledger_rejected') return false;
  const code = error.extra?.contractError;
  return typeof code === 'number' && STALE_POOL_ERRORS.has(code);
}
