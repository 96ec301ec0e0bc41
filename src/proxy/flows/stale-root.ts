// Whether a refused pool transaction failed because the pool moved on after it was proved and prepared: the pool
// root left the root history (`UnknownRoot`), an ASP root changed (the pool then refuses with `InvalidProof`,
// SPP's code for a stale allowlist or blocklist root), or another transaction landed first so that this one
// now writes Merkle-tree entries outside the footprint its simulation declared (the host's
// `Storage, ExceededLimit`). Such a transaction can be proved and simulated again over the new state. The
// reason is read from the ledger's diagnostic events (`LedgerRejected`), never from message text.
import { LedgerRejected } from '../services/chain-client.ts';

export function isStaleRoot(error: unknown): boolean {
  if (!(error instanceof LedgerRejected)) return false;
  const contract = error.contractError;
  if (contract !== undefined)
    return contract.is('pool', 'UnknownRoot') || contract.is('pool', 'InvalidProof');
  return error.hostError?.type === 'Storage' && error.hostError.code === 'ExceededLimit';
}
