// Wallet login: SEP-53 challenge → signature → JWT. A challenge is single-use: the first verify
// attempt that names it consumes it, whether the attempt succeeds or not.
import { randomBytes } from 'node:crypto';
import { Keypair } from '@stellar/stellar-sdk';
import { ProblemError } from '../errors.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import { KeyedMutex } from '../util/keyed-mutex.ts';
import { challengeNonce, formatChallenge } from './challenge-message.ts';
import { decodeSignature } from './signature.ts';
import type { TokenService } from './tokens.ts';

interface StoredChallenge {
  publicKey: string;
  message: string;
  expiresAt: number;
}

export interface LoginSettings {
  /** Host (and port) of the service as wallets see it; first line of the message. */
  domain: string;
  uri: string;
  network: string;
  challengeTtlSeconds: number;
}

export class LoginService {
  readonly #store: EncryptedStore;
  readonly #tokens: TokenService;
  readonly #settings: LoginSettings;
  readonly #mutex = new KeyedMutex();
  readonly #now: () => number;

  constructor(
    store: EncryptedStore,
    tokens: TokenService,
    settings: LoginSettings,
    now: () => number = Date.now,
  ) {
    this.#store = store;
    this.#tokens = tokens;
    this.#settings = settings;
    this.#now = now;
  }

  /** Issues and stores a challenge for `publicKey` (already validated as a G address). */
  async challenge(publicKey: string): Promise<string> {
    const nonce = randomBytes(24).toString('hex');
    const issuedAt = this.#now();
    const expiresAt = issuedAt + this.#settings.challengeTtlSeconds * 1000;
    const message = formatChallenge({
      domain: this.#settings.domain,
      uri: this.#settings.uri,
      address: publicKey,
      network: this.#settings.network,
      nonce,
      issuedAt: new Date(issuedAt),
      expiresAt: new Date(expiresAt),
    });
    const record: StoredChallenge = { publicKey, message, expiresAt };
    await this.#store.put(this.#store.key('challenge', nonce), record);
    return message;
  }

  /** Checks the signed challenge and returns a token; every refusal is 400/401 and issues nothing. */
  async verify(input: {
    publicKey: string;
    challenge: string;
    signature: string;
  }): Promise<{ token: string; expiresIn: number }> {
    const nonce = challengeNonce(input.challenge);
    if (nonce === undefined)
      throw new ProblemError('unauthorized', 'challenge was not issued by this service');
    const record = await this.#consume(nonce);
    if (record === undefined)
      throw new ProblemError('unauthorized', 'challenge is unknown, expired or already used');
    const signature = decodeSignature(input.signature);
    if (record.message !== input.challenge)
      throw new ProblemError('unauthorized', 'challenge text was altered');
    if (record.publicKey !== input.publicKey) {
      throw new ProblemError('unauthorized', 'challenge was issued for another account');
    }
    if (this.#now() > record.expiresAt)
      throw new ProblemError('unauthorized', 'challenge expired; request a new one');
    if (!Keypair.fromPublicKey(input.publicKey).verifyMessage(input.challenge, signature)) {
      throw new ProblemError(
        'unauthorized',
        'signature does not verify for this account and challenge (SEP-53)',
      );
    }
    return {
      token: await this.#tokens.issue(input.publicKey, new Date(this.#now())),
      expiresIn: this.#tokens.ttlSeconds,
    };
  }

  /** Deletes challenges past their expiry (they can no longer be used, only take space). */
  async sweepExpired(): Promise<number> {
    const now = this.#now();
    const expired = (await this.#store.entries<StoredChallenge>('challenge/')).filter(
      ([, c]) => c.expiresAt < now,
    );
    await this.#store.batch(expired.map(([key]) => ({ type: 'del' as const, key })));
    return expired.length;
  }

  async #consume(nonce: string): Promise<StoredChallenge | undefined> {
    const key = this.#store.key('challenge', nonce);
    // The mutex makes get+delete one step: two concurrent verifies cannot both obtain the record.
    return this.#mutex.run(key, async () => {
      const record = await this.#store.get<StoredChallenge>(key);
      if (record !== undefined) await this.#store.del(key);
      return record;
    });
  }
}
