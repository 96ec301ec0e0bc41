// Where agents' policies live: one encrypted record per agent, keyed by its owner and agentId like the agent
// itself (services/agents.ts). Changes run under the agent's budget lock, the lock every payment's
// reservation takes (payments/request-payment.ts), so a freeze or a tighter budget is ordered with the
// payments around it, in every replica on a shared store.
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { type AgentPolicy, NO_POLICY } from '../domain/agent-policy.ts';
import type { Mutex } from '../store/backend.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';

/** The store mutex scope that serialises an agent's reservations and its policy changes. */
export const BUDGET_LOCK_SCOPE = 'budget';

export class AgentPolicies {
  readonly #store: EncryptedStore;
  readonly #lock: Mutex;

  constructor(store: EncryptedStore) {
    this.#store = store;
    this.#lock = store.mutex(BUDGET_LOCK_SCOPE);
  }

  #key(ref: AgentRef): string {
    return this.#store.key('agent-policy', ref.owner, ref.agentId);
  }

  /** The agent's stored policy, or undefined when its owner never set one. */
  async find(ref: AgentRef): Promise<AgentPolicy | undefined> {
    return this.#store.get<AgentPolicy>(this.#key(ref));
  }

  /** The agent's policy (the operator's defaults alone when its owner never set one). */
  async get(ref: AgentRef): Promise<AgentPolicy> {
    return (await this.find(ref)) ?? NO_POLICY;
  }

  /** Replaces the policy with what `change` makes of the current one, under the agent's budget lock. */
  async update(ref: AgentRef, change: (current: AgentPolicy) => AgentPolicy): Promise<AgentPolicy> {
    return this.#lock.run(scopedId(ref), async () => {
      const next = change(await this.get(ref));
      await this.#store.put(this.#key(ref), next);
      return next;
    });
  }
}
