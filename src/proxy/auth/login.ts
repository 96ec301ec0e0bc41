// Wallet login: SEP-53 challenge → signature → JWT. Issuing a challenge stores nothing: its nonce carries
// a MAC (key derived from the master key) over the domain, URI, network, account, issue and expiry time,
// so the service recognises its own challenges without remembering them and unauthenticated traffic
// cannot grow the store. A challenge is single-use: the first verify attempt that names a genuine,
// unexpired challenge consumes it, whether the attempt succeeds or not, and only that consumed nonce is
// stored, until the challenge expires (`sweepExpired` removes it then).
import { createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { Keypair } from '#stellar-sdk';
import { DomainError } from '../domain/errors.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import { type ChallengeFields, formatChallenge, parseChallenge } from './challenge-message.ts';
import { decodeSignature } from './signature.ts';
import type { TokenService } from './tokens.ts';
import { type Clock, systemClock } from '../util/clock.ts';

const RANDOM_BYTES = 16;
const MAC_BYTES = 16;
/** Store namespace of consumed nonces. */
const USED = 'login-nonce';
/** Namespace where earlier versions stored every issued challenge; swept away. */
const LEGACY_CHALLENGES = 'challenge';

interface UsedNonce {
  expiresAt: number;
}

export interface LoginSettings {
  /** Host (and port) of the service as wallets see it; first line of the message. */
  domain: string;
  uri: string;
  network: string;
  challengeTtlSeconds: number;
  /** 32-byte key of the challenge MAC (derived from the master key, purpose `challenge-mac`). */
  challengeKey: Uint8Array;
}

export class LoginService {
  readonly #store: EncryptedStore;
  readonly #tokens: TokenService;
  readonly #settings: LoginSettings;
  readonly #mutex;
  readonly #now: Clock;

  constructor(
    store: EncryptedStore,
    tokens: TokenService,
    settings: LoginSettings,
    now: Clock = systemClock,
  ) {
    if (settings.challengeKey.length !== 32) throw new Error('challenge key must be 32 bytes');
    this.#store = store;
    this.#mutex = store.mutex('login-nonce');
    this.#tokens = tokens;
    this.#settings = settings;
    this.#now = now;
  }

  /** A fresh challenge for `publicKey` (already validated as a G address). Nothing is stored. */
  async challenge(publicKey: string): Promise<string> {
    const issuedAt = this.#now();
    const fields: Omit<ChallengeFields, 'nonce'> = {
      domain: this.#settings.domain,
      uri: this.#settings.uri,
      address: publicKey,
      network: this.#settings.network,
      issuedAt: new Date(issuedAt),
      expiresAt: new Date(issuedAt + this.#settings.challengeTtlSeconds * 1000),
    };
    const random = randomBytes(RANDOM_BYTES).toString('hex');
    return formatChallenge({ ...fields, nonce: random + this.#mac(fields, random).toString('hex') });
  }

  /** Checks the signed challenge and returns a token; every refusal is 400/401 and issues nothing. */
  async verify(input: {
    publicKey: string;
    challenge: string;
    signature: string;
  }): Promise<{ token: string; expiresIn: number }> {
    const fields = parseChallenge(input.challenge);
    if (fields === undefined)
      throw new DomainError('unauthorized', 'challenge was not issued by this service');
    const random = fields.nonce.slice(0, RANDOM_BYTES * 2);
    const mac = Buffer.from(fields.nonce.slice(RANDOM_BYTES * 2), 'hex');
    if (!timingSafeEqual(mac, this.#mac(fields, random))) {
      throw new DomainError(
        'unauthorized',
        'challenge text was altered or the challenge was not issued by this service',
      );
    }
    if (
      fields.domain !== this.#settings.domain ||
      fields.uri !== this.#settings.uri ||
      fields.network !== this.#settings.network
    ) {
      throw new DomainError('unauthorized', 'challenge was issued for another domain or network');
    }
    const expiresAt = fields.expiresAt.getTime();
    if (this.#now() > expiresAt)
      throw new DomainError('unauthorized', 'challenge expired; request a new one');
    if (fields.address !== input.publicKey) {
      throw new DomainError('unauthorized', 'challenge was issued for another account');
    }
    if (!(await this.#consume(fields.nonce, expiresAt))) {
      throw new DomainError('unauthorized', 'challenge was already used; request a new one');
    }
    const signature = decodeSignature(input.signature);
    if (!Keypair.fromPublicKey(input.publicKey).verifyMessage(input.challenge, signature)) {
      throw new DomainError(
        'unauthorized',
        'signature does not verify for this account and challenge (SEP-53)',
      );
    }
    return {
      token: await this.#tokens.issue(input.publicKey, new Date(this.#now())),
      expiresIn: this.#tokens.ttlSeconds,
    };
  }

  /** Deletes consumed nonces whose challenge has expired (it is refused as expired anyway). */
  async sweepExpired(): Promise<number> {
    const now = this.#now();
    const expired = (await this.#store.entries<UsedNonce>(`${USED}/`)).filter(([, n]) => n.expiresAt < now);
    const legacy = await this.#store.entries<unknown>(`${LEGACY_CHALLENGES}/`);
    const keys = [...expired, ...legacy].map(([key]) => key);
    await this.#store.batch(keys.map((key) => ({ type: 'del' as const, key })));
    return expired.length;
  }

  #mac(fields: Omit<ChallengeFields, 'nonce'>, random: string): Buffer {
    const text = JSON.stringify([
      fields.domain,
      fields.uri,
      fields.network,
      fields.address,
      random,
      fields.issuedAt.toISOString(),
      fields.expiresAt.toISOString(),
    ]);
    return createHmac('sha256', this.#settings.challengeKey).update(text).digest().subarray(0, MAC_BYTES);
  }

  /** Records the nonce as used; false when it already was. */
  async #consume(nonce: string, expiresAt: number): Promise<boolean> {
    const key = this.#store.key(USED, nonce);
    // The mutex makes get+put one step: two concurrent verifies cannot both consume the nonce.
    return this.#mutex.run(key, async () => {
      if ((await this.#store.get<UsedNonce>(key)) !== undefined) return false;
      await this.#store.put(key, { expiresAt } satisfies UsedNonce);
      return true;
    });
  }
}
