// The float account: the operator's own shielded account inside the pool. Settlement moves agents' debts to it
// by shielded transfers (no public amount), and it refills the pool wallet's public float. It is named like an
// agent (scoped id `pool/float`, so its keys derive from the master key as agents' keys do, and its key is
// registered once in the ASP allowlist), but its owner `pool` is neither a wallet (G…) nor the operator, so no
// caller can ever name it, and it is never listed or counted as an agent.
import { type AgentRef, scopedId } from './agent-ref.ts';

export const FLOAT_ACCOUNT: AgentRef = { owner: 'pool', agentId: 'float' };
export const FLOAT_ACCOUNT_ID = scopedId(FLOAT_ACCOUNT);

/** Whether a scoped id names the proxy's own account rather than an agent. */
export function isInternalAccount(scoped: string): boolean {
  return scoped === FLOAT_ACCOUNT_ID;
}
