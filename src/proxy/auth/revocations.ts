// Tokens ended before their expiry (a wallet's Log out). A revoked token's id (jti) is written to the store with
// the token's expiry and kept there until then, so a restart does not bring the token back, and replicas sharing
// the store see it too. Every authenticated request asks `isRevoked`: a revocation once seen is remembered here;
// a token not found revoked is looked up in the store again after `RECHECK_MS`, so a logout on another replica
// takes effect here within that time, while a burst of requests with one token costs one store read. An entry is
// useless once its token has expired (the signature check refuses it anyway), so `sweepExpired` deletes it.
import type { EncryptedStore } from '../store/encrypted-store.ts';

/** Store namespace of revoked token ids. */
const REVOKED = 'revoked-token';
/** How long a "not revoked" answer is trusted before the store is asked again. */
export const RECHECK_MS = 1000;
/** Tokens whose "not revoked" answer is remembered at most (oldest forgotten first). */
const CHECKED_CACHE_SIZE = 10_000;

interface RevokedToken {
  jti: string;
  /** The token's `exp` (Unix seconds). */
  exp: number;
}

export class TokenRevocations {
  readonly #store: EncryptedStore;
  /** jti → exp (Unix seconds) of revocations seen. */
  readonly #revoked = new Map<string, number>();
  /** jti → when the store last said it was not revoked (ms). */
  readonly #checked = new Map<string, number>();

  constructor(store: EncryptedStore) {
    this.#store = store;
  }

  /** `now`: the proxy's clock (ms). */
  async isRevoked(jti: string, now: number): Promise<boolean> {
    if (this.#revoked.has(jti)) return true;
    const checkedAt = this.#checked.get(jti);
    if (checkedAt !== undefined && now - checkedAt < RECHECK_MS) return false;
    const entry = await this.#store.get<RevokedToken>(this.#store.key(REVOKED, jti));
    if (entry !== undefined) {
      this.#revoked.set(jti, entry.exp);
      this.#checked.delete(jti);
      return true;
    }
    this.#checked.delete(jti);
    if (this.#checked.size >= CHECKED_CACHE_SIZE)
      this.#checked.delete(this.#checked.keys().next().value as string);
    this.#checked.set(jti, now);
    return false;
  }

  /** Records the token as ended; it is refused from now on, also after a restart and by other replicas. */
  async revoke(jti: string, exp: number): Promise<void> {
    await this.#store.put(this.#store.key(REVOKED, jti), { jti, exp } satisfies RevokedToken);
    this.#revoked.set(jti, exp);
    this.#checked.delete(jti);
  }

  /** Deletes revocations of tokens expired by `nowSeconds` (Unix); returns how many. */
  async sweepExpired(nowSeconds: number, toleranceSeconds = 0): Promise<number> {
    const expired = (await this.#store.entries<RevokedToken>(`${REVOKED}/`)).filter(
      ([, entry]) => entry.exp + toleranceSeconds < nowSeconds,
    );
    await this.#store.batch(expired.map(([key]) => ({ type: 'del' as const, key })));
    for (const [, entry] of expired) this.#revoked.delete(entry.jti);
    return expired.length;
  }
}
