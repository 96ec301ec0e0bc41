// Agent-scoped tokens, for the owner of an agent (its wallet's token, or the operator's for its own agents):
// issue one for the agent, list the live ones, revoke one. The token is answered once and never kept; the
// proxy keeps its id and lifetime (services/agent-tokens.ts) and, once revoked, its id among the revocations
// every replica reads (auth/revocations.ts). What an agent token may do is decided in http/api-router.ts.
import { ProblemError } from '../../api/problem.ts';
import {
  AgentTokenIssued,
  AgentTokenList,
  AgentTokenParams,
  AgentTokenRequest,
  AgentTokenRevoked,
  BalanceParams,
} from '../../api/schemas.ts';
import type { TokenService } from '../auth/tokens.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { unknownAgent } from '../flows/require-agent.ts';
import type { ApiRouter } from '../http/api-router.ts';
import { type AgentTokens, MAX_LIVE_TOKENS_PER_AGENT } from '../services/agent-tokens.ts';
import type { AgentRegistry } from '../services/agents.ts';
import type { Clock } from '../util/clock.ts';

const DEFAULT_TTL_SECONDS = 30 * 86_400;

export interface AgentTokenRouteDeps {
  agents: AgentRegistry;
  records: AgentTokens;
  tokens: TokenService;
  clock: Clock;
}

export function registerAgentTokenRoutes(api: ApiRouter, deps: AgentTokenRouteDeps): void {
  const { agents, records, tokens, clock } = deps;
  const owned = async (owner: string, agentId: string): Promise<AgentRef> => {
    const ref = { owner, agentId };
    if ((await agents.get(ref)) === undefined) throw unknownAgent(agentId);
    return ref;
  };
  const iso = (seconds: number) => new Date(seconds * 1000).toISOString();

  api.add({
    method: 'post',
    path: '/api/agents/:agentId/tokens',
    summary: 'Issue a token for one agent (its owner only)',
    description:
      'The token pays within the agent’s policy and reads the agent’s balance, policy and payments, over REST ' +
      'and /mcp. Everything else (withdrawals, deposits, policy changes, freeze, tokens, other agents, wallet ' +
      'routes) answers 403 `forbidden_for_agent_token`. Send `{}` for the default lifetime (30 days). An agent ' +
      `holds at most ${MAX_LIVE_TOKENS_PER_AGENT} live tokens: beyond that, \`conflict\` until one is revoked or expires.`,
    tag: 'policy',
    access: 'wallet-or-operator',
    params: BalanceParams,
    body: AgentTokenRequest,
    response: AgentTokenIssued,
    errors: ['not_found', 'invalid_request', 'conflict'],
    handler: async ({ params, body, auth }) => {
      const ref = await owned(auth.sub, params.agentId);
      const ttl = body.expiresInSeconds ?? DEFAULT_TTL_SECONDS;
      return records.issue(ref, clock() / 1000, async () => {
        const { token, claims } = await tokens.issueForAgent(ref.owner, ref.agentId, ttl);
        const record = {
          tokenId: claims.jti,
          agentId: ref.agentId,
          issuedAt: claims.iat,
          expiresAt: claims.exp,
        };
        return {
          record,
          result: {
            tokenId: claims.jti,
            agentId: ref.agentId,
            issuedAt: iso(claims.iat),
            expiresAt: iso(claims.exp),
            token,
          },
        };
      });
    },
  });

  api.add({
    method: 'get',
    path: '/api/agents/:agentId/tokens',
    summary: "An agent's live tokens (ids and lifetimes, never the tokens)",
    tag: 'policy',
    access: 'wallet-or-operator',
    params: BalanceParams,
    response: AgentTokenList,
    errors: ['not_found', 'invalid_request'],
    handler: async ({ params, auth }) => {
      const ref = await owned(auth.sub, params.agentId);
      const live = await records.list(ref, clock() / 1000);
      return {
        tokens: live.map((r) => ({
          tokenId: r.tokenId,
          agentId: r.agentId,
          issuedAt: iso(r.issuedAt),
          expiresAt: iso(r.expiresAt),
          ...(r.client && { client: r.client }),
        })),
      };
    },
  });

  api.add({
    method: 'delete',
    path: '/api/agents/:agentId/tokens/:tokenId',
    summary: "Revoke one of an agent's tokens: refused everywhere from now on, also after a restart",
    description:
      'One of the owner’s brakes: counted in the wallet’s own brake bucket, which no agent token uses, so an ' +
      'agent flooding the proxy cannot hold its owner off it.',
    tag: 'policy',
    access: 'wallet-or-operator',
    brake: true,
    params: AgentTokenParams,
    response: AgentTokenRevoked,
    errors: ['not_found', 'invalid_request'],
    handler: async ({ params, auth }) => {
      const ref = await owned(auth.sub, params.agentId);
      const record = await records.get(ref, params.tokenId);
      if (record === undefined)
        throw new ProblemError('not_found', `no token ${params.tokenId} for agent ${params.agentId}`);
      await tokens.revoke({
        sub: ref.owner,
        jti: record.tokenId,
        iat: record.issuedAt,
        exp: record.expiresAt,
      });
      await records.remove(ref, params.tokenId);
      return { tokenId: params.tokenId, revoked: true as const };
    },
  });
}
