// An agent is (owner, agentId): the owner is a wallet (the JWT subject, a G… address) or the operator (local
// MCP agents). Two owners may use the same agentId without meeting; inside the proxy an agent is named by
// its scoped id `owner/agentId`, which keys its notes, balance and key derivation.
import { OPERATOR_OWNER } from '../../api/agent-id.ts';

export interface AgentRef {
  owner: string;
  agentId: string;
}

/** `owner/agentId` (neither part may contain `/`: owners are G… addresses or `operator`, ids are [A-Za-z0-9._:-]). */
export function scopedId(ref: AgentRef): string {
  return `${ref.owner}/${ref.agentId}`;
}

export function parseScopedId(scoped: string): AgentRef {
  const slash = scoped.indexOf('/');
  if (slash <= 0) throw new Error(`not a scoped agent id: ${scoped}`);
  return { owner: scoped.slice(0, slash), agentId: scoped.slice(slash + 1) };
}

export function isOperator(ref: AgentRef): boolean {
  return ref.owner === OPERATOR_OWNER;
}
