// What a transaction's zero-valued second output carries: an agent's sealed registration (so the chain alone
// rebuilds the agent), or, for the proxy's own float account (recovered with its derived key, never listed
// as an agent), an ordinary encrypted zero note.
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { isInternalAccount } from '../domain/float-account.ts';
import type { FlowContext } from './context.ts';

/** What this flow uses of the flows' context. */
export type SealForDeps = Pick<FlowContext, 'keyring'>;

export function sealFor(ctx: SealForDeps, ref: AgentRef): Uint8Array | undefined {
  return isInternalAccount(scopedId(ref)) ? undefined : ctx.keyring.sealRegistration(ref);
}
