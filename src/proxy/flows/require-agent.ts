// An agent the caller may use: one that exists for this owner. An agent of another owner and an agent that
// does not exist get the same answer (status and body), so the API is no oracle for who uses the pool.
import type { AgentRef } from '../domain/agent-ref.ts';
import { DomainError } from '../domain/errors.ts';
import type { AgentRecord } from '../services/agents.ts';
import type { FlowContext } from './context.ts';

/** What this flow uses of the flows' context. */
export type RequireAgentDeps = Pick<FlowContext, 'agents'>;

export async function requireAgent(ctx: RequireAgentDeps, ref: AgentRef): Promise<AgentRecord> {
  const agent = await ctx.agents.get(ref);
  if (agent === undefined) throw unknownAgent(ref.agentId);
  return agent;
}

export function unknownAgent(agentId: string): DomainError {
  return new DomainError('not_found', `no agent ${agentId} for this account (deposit to it first)`);
}
