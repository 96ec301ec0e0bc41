// Tokens ended before their expiry (a wallet's Log out). A revoked token's id (jti) is written to the encrypted
// store with the token's expiry and kept there until then, so a restart does not bring the token back; the set
// is also held in memory, because every authenticated request checks it. An entry is useless once its token
// has expired (the signature check refuses it anyway), so `sweepExpired` deletes it then.
import type { EncryptedStore } from '../store/encrypted-store.ts';

/** Store namespace of revoked token ids. */
const REVOKED = 'revoked-token';

interface RevokedToken {
  /** The token's `exp` (Unix seconds). */
  exp: number;
}

export class TokenRevocations {
  readonly #store: EncryptedStore;
  /** jti → exp (Unix seconds). */
  readonly #revoked = new Map<string, number>();

  private constructor(store: EncryptedStore) {
    this.#store = store;
  }

  /** Loads the revocations recorded by earlier runs. */
  static async open(store: EncryptedStore): Promise<TokenRevocations> {
    const revocations = new TokenRevocations(store);
    for (const [, entry] of await store.entries<RevokedToken & { jti: string }>(`${REVOKED}/`))
      revocations.#revoked.set(entry.jti, entry.exp);
    return revocations;
  }

  has(jti: string): boolean {
    return this.#revoked.has(jti);
  }

  /** Records the token as ended; it is refused from now on, also after a restart, until `exp`. */
  async revoke(jti: string, exp: number): Promise<void> {
    await this.#store.put(this.#store.key(REVOKED, jti), { jti, exp });
    this.#revoked.set(jti, exp);
  }

  /** Forgets revocations of tokens that have expired since (`nowSeconds`, Unix); returns how many. */
  async sweepExpired(nowSeconds = Date.now() / 1000, toleranceSeconds = 0): Promise<number> {
    const expired = [...this.#revoked].filter(([, exp]) => exp + toleranceSeconds < nowSeconds);
    await this.#store.batch(
      expired.map(([jti]) => ({ type: 'del' as const, key: this.#store.key(REVOKED, jti) })),
    );
    for (const [jti] of expired) this.#revoked.delete(jti);
    return expired.length;
  }
}
