// Whether a refused pool transaction failed because a root it proved against moved: the pool root left the
// root history (`UnknownRoot`), or an ASP root changed (the pool then refuses with `InvalidProof`, SPP's code
// for a stale allowlist or blocklist root). Such a proof can be made again over the new roots. The error is
// read from the ledger's diagnostic events (`LedgerRejected.contractError`), never from message text.
import { LedgerRejected } from '../services/ledger-client.ts';

export function isStaleRoot(error: unknown): boolean {
  if (!(error instanceof LedgerRejected) || error.contractError === undefined) return false;
  return error.contractError.is('pool', 'UnknownRoot') || error.contractError.is('pool', 'InvalidProof');
}
