// Agents and who owns them. A wallet owns the agents it creates (JWT `sub`); the operator owns the
// agents of local MCP callers. Another wallet naming an owned agent gets 403.
import { ProblemError } from '../errors.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import { KeyedMutex } from '../util/keyed-mutex.ts';

import { OPERATOR_OWNER } from '../domain/agent-id.ts';

export { OPERATOR_OWNER };

export interface AgentRecord {
  agentId: string;
  owner: string;
  createdAt: string;
  /** Set once the agent's note key is in the ASP allowlist (required before its notes can be spent). */
  membershipLeafIndex?: number;
}

export class AgentRegistry {
  readonly #store: EncryptedStore;
  readonly #mutex = new KeyedMutex();

  constructor(store: EncryptedStore) {
    this.#store = store;
  }

  recordKey(agentId: string): string {
    return this.#store.key('agent', agentId);
  }

  async get(agentId: string): Promise<AgentRecord | undefined> {
    return this.#store.get<AgentRecord>(this.recordKey(agentId));
  }

  /** The agent if `owner` may use it; undefined if it does not exist yet; 403 if someone else owns it. */
  async authorize(agentId: string, owner: string): Promise<AgentRecord | undefined> {
    const agent = await this.get(agentId);
    if (agent !== undefined && agent.owner !== owner) {
      throw new ProblemError('forbidden', `agent ${agentId} belongs to another account`);
    }
    return agent;
  }

  /** Returns the agent, creating it for `owner` on first use. */
  async ensure(agentId: string, owner: string): Promise<AgentRecord> {
    return this.#mutex.run(agentId, async () => {
      const existing = await this.authorize(agentId, owner);
      if (existing !== undefined) return existing;
      const created: AgentRecord = { agentId, owner, createdAt: new Date().toISOString() };
      await this.#store.put(this.recordKey(agentId), created);
      return created;
    });
  }

  async update(agent: AgentRecord): Promise<void> {
    await this.#store.put(this.recordKey(agent.agentId), agent);
  }

  async all(): Promise<AgentRecord[]> {
    return (await this.#store.entries<AgentRecord>('agent/')).map(([, agent]) => agent);
  }
}
