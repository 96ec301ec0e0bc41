// The agent-scoped tokens an owner issued, per agent, so the owner can list and revoke them: one encrypted
// record per token (its id, the jti, and its lifetime), keyed by owner, agent and token id. A connection an MCP
// client got through OAuth is one record too (its grant id is every access token's jti; routes/oauth-provider.ts). The token itself is
// never kept. A revoked token's record is deleted here and its jti written to the revocations
// (auth/revocations.ts), which every replica reads and which survive restarts.
import type { AgentRef } from '../domain/agent-ref.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';

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

  constructor(store: EncryptedStore) {
    this.#store = store;
  }

  #key(ref: AgentRef, tokenId: string): string {
    return this.#store.key('agent-token', ref.owner, ref.agentId, tokenId);
  }

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
