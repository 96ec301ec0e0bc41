// Everything secret about an agent is derived from the master key on demand: note keys, encryption
// keys, the ASP allowlist leaf (cached per agent), and the sealed on-chain registration.
import { parseScopedId } from '../domain/agent-ref.ts';
import { RecoveryKey, type Registration } from './agent-registration.ts';
import { type AgentCrypto, agentCrypto } from './pool-transaction.ts';

export class AgentKeyring {
  readonly #masterKey: Uint8Array;
  readonly #cache = new Map<string, AgentCrypto>();
  readonly #recovery: RecoveryKey;

  constructor(masterKey: Uint8Array) {
    this.#masterKey = masterKey;
    this.#recovery = new RecoveryKey(masterKey);
  }

  /** Keys of the agent named by its scoped id (`owner/agentId`). */
  crypto(scoped: string): AgentCrypto {
    let c = this.#cache.get(scoped);
    if (c === undefined) {
      c = agentCrypto(this.#masterKey, parseScopedId(scoped));
      this.#cache.set(scoped, c);
    }
    return c;
  }

  /** The agent's registration sealed for the chain (the zero-value output's encrypted bytes). */
  sealRegistration(registration: Registration): Uint8Array {
    return this.#recovery.seal(registration);
  }

  openRegistration(bytes: Uint8Array): Registration | undefined {
    return this.#recovery.open(bytes);
  }
}
