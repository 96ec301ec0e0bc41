// Agents and who owns them. An agent is (owner, agentId): a wallet's agents (owner = the JWT subject) and the
// operator's agents (local MCP callers) live side by side, so nobody can take another owner's name. An agent
// exists once a deposit to it is confirmed (or the chain's sealed registration is recovered): a prepare that is
// never submitted leaves nothing here.
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { Clock } from '../util/clock.ts';

import { OPERATOR_OWNER } from '../../api/agent-id.ts';

export { OPERATOR_OWNER };

export interface AgentRecord {
  owner: string;
  agentId: string;
  createdAt: string;
}

export class AgentRegistry {
  readonly #store: EncryptedStore;
  readonly #mutex;

  readonly #clock: Clock;

  /** `clock`: the proxy's, which dates each agent's first confirmation. */
  constructor(store: EncryptedStore, clock: Clock) {
    this.#store = store;
    this.#clock = clock;
    this.#mutex = store.mutex('agent');
  }

  #key(ref: AgentRef): string {
    return this.#store.key('agent', ref.owner, ref.agentId);
  }

  async get(ref: AgentRef): Promise<AgentRecord | undefined> {
    return this.#store.get<AgentRecord>(this.#key(ref));
  }

  /** Returns the agent, recording it on first confirmation. */
  async ensure(ref: AgentRef): Promise<AgentRecord> {
    return this.#mutex.run(scopedId(ref), async () => {
      const existing = await this.get(ref);
      if (existing !== undefined) return existing;
      const created: AgentRecord = {
        owner: ref.owner,
        agentId: ref.agentId,
        createdAt: new Date(this.#clock()).toISOString(),
      };
      await this.#store.put(this.#key(ref), created);
      return created;
    });
  }

  /** The agents of one owner. */
  async ofOwner(owner: string): Promise<AgentRecord[]> {
    return (await this.#store.entries<AgentRecord>(this.#store.prefix('agent', owner))).map(([, a]) => a);
  }

  async all(): Promise<AgentRecord[]> {
    return (await this.#store.entries<AgentRecord>('agent/')).map(([, agent]) => agent);
  }
}
