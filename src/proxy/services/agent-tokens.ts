// The agent-scoped tokens an owner issued, per agent, so the owner can list and revoke them: one encrypted
// record per token (its id, the jti, and its lifetime), keyed by owner, agent and token id. A connection an MCP
// client got through OAuth is one record too (its grant id is every access token's jti; routes/oauth-provider.ts). The token itself is
// never kept. A revoked token's record is deleted here and its jti written to the revocations
// (auth/revocations.ts), which every replica reads and which survive restarts.
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { DomainError } from '../domain/errors.ts';
import type { Mutex } from '../store/backend.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';

/** The most live tokens one agent may hold (docs/POLICY.md): the owner revokes one to issue another. */
export const MAX_LIVE_TOKENS_PER_AGENT = 20;

export interface AgentTokenRecord {
  tokenId: string;
  agentId: string;
  /** Unix seconds */
  issuedAt: number;
  /** Unix seconds */
  expiresAt: number;
  /** Set when an MCP client got the token through OAuth (the owner's consent): which client. */
  client?: { clientId: string; name: string };
}

export class AgentTokens {
  readonly #store: EncryptedStore;
  readonly #lock: Mutex;

  constructor(store: EncryptedStore) {
    this.#store = store;
    this.#lock = store.mutex('agent-token');
  }

  /**
   * Issues a token with `make` and keeps its record, unless the agent already holds MAX_LIVE_TOKENS_PER_AGENT
   * live ones (`conflict`). Under the agent's token lock, so replicas issuing at once cannot pass the cap.
   */
  async issue<T>(
    ref: AgentRef,
    nowSeconds: number,
    make: () => Promise<{ record: AgentTokenRecord; result: T }>,
  ): Promise<T> {
    return this.#lock.run(scopedId(ref), async () => {
      const live = await this.list(ref, nowSeconds);
      if (live.length >= MAX_LIVE_TOKENS_PER_AGENT)
        throw new DomainError(
          'conflict',
          `agent ${ref.agentId} already holds ${live.length} live tokens, the most one agent may hold: revoke one (DELETE /api/agents/${ref.agentId}/tokens/{tokenId}) before issuing another`,
          { extra: { limit: MAX_LIVE_TOKENS_PER_AGENT } },
        );
      const { record, result } = await make();
      await this.add(ref, record);
      return result;
    });
  }

  #key(ref: AgentRef, tokenId: string): string {
    return this.#store.key('agent-token', ref.owner, ref.agentId, tokenId);
  }

  /** Keeps a record as it is (AgentTokens.issue, and tests that set one up). */
  async add(ref: AgentRef, record: AgentTokenRecord): Promise<void> {
    await this.#store.put(this.#key(ref, record.tokenId), record);
  }

  async get(ref: AgentRef, tokenId: string): Promise<AgentTokenRecord | undefined> {
    return this.#store.get<AgentTokenRecord>(this.#key(ref, tokenId));
  }

  /** The agent's tokens that have not expired by `nowSeconds`, oldest first. */
  async list(ref: AgentRef, nowSeconds: number): Promise<AgentTokenRecord[]> {
    const all = await this.#store.entries<AgentTokenRecord>(
      this.#store.prefix('agent-token', ref.owner, ref.agentId),
    );
    return all
      .map(([, r]) => r)
      .filter((r) => r.expiresAt > nowSeconds)
      .sort((a, b) => a.issuedAt - b.issuedAt);
  }

  async remove(ref: AgentRef, tokenId: string): Promise<void> {
    await this.#store.del(this.#key(ref, tokenId));
  }

  /** Forgets every agent's tokens that expired by `nowSeconds` (they are refused anyway); returns how many. */
  async sweepExpired(nowSeconds: number): Promise<number> {
    const expired = (await this.#store.entries<AgentTokenRecord>('agent-token/')).filter(
      ([, r]) => r.expiresAt <= nowSeconds,
    );
    await this.#store.batch(expired.map(([key]) => ({ type: 'del' as const, key })));
    return expired.length;
  }
}
