// Access tokens: EdDSA (Ed25519) JWTs signed with a key derived from the master key and the store's session
// epoch (session-epoch.ts), so tokens survive restarts, a proxy with another master key cannot mint tokens this
// one accepts, and `store recover` ends every earlier token. A token ended by Log out is refused until it
// expires (revocations.ts). Tokens of a later epoch name it in their `kid` header. An agent-scoped token (issued
// by an agent's owner for that one agent) carries the agent's id in an `agt` claim; its subject is the owner
// (a wallet, or `operator` for the operator's own agents). Wallet tokens carry no `agt` and are unchanged.
import { createPrivateKey, createPublicKey, type KeyObject, randomUUID } from 'node:crypto';
import { compactVerify, decodeProtectedHeader, errors as joseErrors, jwtVerify, SignJWT } from 'jose';
import { isAccountAddress } from '../../api/address.ts';
import { isAgentId, OPERATOR_OWNER } from '../../api/agent-id.ts';
import { DomainError } from '../domain/errors.ts';
import { deriveEpochKey } from '../store/derived-keys.ts';
import type { TokenRevocations } from './revocations.ts';
import { type Clock, systemClock } from '../util/clock.ts';

// PKCS#8 DER header for a raw 32-byte Ed25519 seed (RFC 8410).
const ED25519_PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');

const CLOCK_TOLERANCE_SECONDS = 5;
/** Verified tokens remembered at most (oldest forgotten first). */
const VERIFIED_CACHE_SIZE = 10_000;

export interface TokenClaims {
  /** The wallet's G address (for an agent token: its agent's owner, a wallet or `operator`). */
  sub: string;
  jti: string;
  iat: number;
  exp: number;
  /** Only in an agent-scoped token: the one agent (of `sub`) it acts for. */
  agt?: string;
}

export interface TokenSettings {
  issuer: string;
  audience: string;
  ttlSeconds: number;
}

export class TokenService {
  readonly #privateKey: KeyObject;
  readonly #publicKey: KeyObject;
  /** Another epoch's verification key (to tell a token of an earlier epoch from one never issued here). */
  readonly #publicKeyOf: (epoch: string) => KeyObject;
  readonly #settings: TokenSettings;
  readonly #verified = new Map<string, TokenClaims>();
  readonly #revocations: TokenRevocations | undefined;
  /** The session epoch the signing key belongs to ('' = the first, whose tokens carry no `kid`). */
  readonly #epoch: string;
  /** Milliseconds since the epoch: what issue and every expiry check read (tests pass their own clock). */
  readonly #now: Clock;

  constructor(
    masterKey: Uint8Array,
    settings: TokenSettings,
    revocations?: TokenRevocations,
    now: Clock = systemClock,
    epoch = '',
  ) {
    this.#epoch = epoch;
    const privateKeyOf = (e: string) =>
      createPrivateKey({
        key: Buffer.concat([ED25519_PKCS8_PREFIX, deriveEpochKey(masterKey, 'jwt-signing', e)]),
        format: 'der',
        type: 'pkcs8',
      });
    this.#privateKey = privateKeyOf(epoch);
    this.#publicKey = createPublicKey(this.#privateKey);
    this.#publicKeyOf = (e) => createPublicKey(privateKeyOf(e));
    this.#settings = settings;
    this.#revocations = revocations;
    this.#now = now;
  }

  get ttlSeconds(): number {
    return this.#settings.ttlSeconds;
  }

  async issue(address: string, now = new Date(this.#now())): Promise<string> {
    const iat = Math.floor(now.getTime() / 1000);
    return new SignJWT({})
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', ...(this.#epoch !== '' && { kid: this.#epoch }) })
      .setIssuer(this.#settings.issuer)
      .setAudience(this.#settings.audience)
      .setSubject(address)
      .setIssuedAt(iat)
      .setExpirationTime(iat + this.#settings.ttlSeconds)
      .setJti(randomUUID())
      .sign(this.#privateKey);
  }

  /**
   * A token for one agent of `owner`, valid `ttlSeconds`: its claims say what it may do (agt). `jti`: the id
   * that revokes it (an OAuth grant's, shared by the access tokens of one connection; default a new one);
   * `resource`: a further audience, the resource (RFC 8707) an OAuth client asked the token for.
   */
  async issueForAgent(
    owner: string,
    agentId: string,
    ttlSeconds: number,
    options: { jti?: string; resource?: string } = {},
  ): Promise<{ token: string; claims: TokenClaims }> {
    const iat = Math.floor(this.#now() / 1000);
    const jti = options.jti ?? randomUUID();
    const claims: TokenClaims = { sub: owner, jti, iat, exp: iat + ttlSeconds, agt: agentId };
    const audience =
      options.resource === undefined ? this.#settings.audience : [this.#settings.audience, options.resource];
    const token = await new SignJWT({ agt: agentId })
      .setProtectedHeader({ alg: 'EdDSA', typ: 'JWT', ...(this.#epoch !== '' && { kid: this.#epoch }) })
      .setIssuer(this.#settings.issuer)
      .setAudience(audience)
      .setSubject(owner)
      .setIssuedAt(iat)
      .setExpirationTime(claims.exp)
      .setJti(claims.jti)
      .sign(this.#privateKey);
    return { token, claims };
  }

  /**
   * Verifies signature, algorithm, issuer, audience, lifetime and that the token was not revoked; throws 401
   * `unauthorized` otherwise.
   */
  async verify(token: string): Promise<TokenClaims> {
    const claims = await this.#verifyUnrevoked(token);
    if (await this.#revocations?.isRevoked(claims.jti, this.#now()))
      throw new DomainError(
        'unauthorized',
        claims.agt === undefined
          ? 'token was ended by Log out; log in again'
          : 'this agent token was revoked by its owner',
      );
    return claims;
  }

  /** Ends `claims`' token before its expiry (Log out); it is refused from now on, also after a restart. */
  async revoke(claims: TokenClaims): Promise<void> {
    if (this.#revocations === undefined) throw new Error('this token service keeps no revocations');
    await this.#revocations.revoke(claims.jti, claims.exp);
  }

  /** Forgets revocations of tokens that have expired anyway. */
  async sweepRevocations(): Promise<number> {
    return (await this.#revocations?.sweepExpired(this.#now() / 1000, CLOCK_TOLERANCE_SECONDS)) ?? 0;
  }

  async #verifyUnrevoked(token: string): Promise<TokenClaims> {
    // A token is immutable, so a successful signature check is remembered until the token expires; the
    // lifetime is still checked on every use. Wallets reuse one token for many requests.
    const cached = this.#verified.get(token);
    if (cached !== undefined) {
      if (cached.exp + CLOCK_TOLERANCE_SECONDS > this.#now() / 1000) return cached;
      this.#verified.delete(token);
      throw new DomainError('unauthorized', 'token expired');
    }
    const claims = await this.#verifySignature(token);
    if (this.#verified.size >= VERIFIED_CACHE_SIZE) {
      this.#verified.delete(this.#verified.keys().next().value as string);
    }
    this.#verified.set(token, claims);
    return claims;
  }

  /**
   * Why a token naming another key id than the current one is refused: signed with an earlier epoch's key of
   * this service (its store was recovered since), or with a key this service never had.
   */
  async #otherKeyId(token: string, kid: string): Promise<string> {
    const named = `key id "${kid.slice(0, 40)}"`;
    if (kid === '' || EPOCH_KID.test(kid)) {
      const earlier = await compactVerify(token, this.#publicKeyOf(kid), { algorithms: ['EdDSA'] }).then(
        () => true,
        () => false,
      );
      if (earlier)
        return 'token was signed with an earlier key of this service: issued before this service’s store was recovered; log in again';
    }
    return kid === ''
      ? 'token carries no key id and no signature of this service: it was not issued here; log in again'
      : `token names ${named}, which is no signing key of this service: it was not issued here; log in again`;
  }

  async #verifySignature(token: string): Promise<TokenClaims> {
    let payload: Record<string, unknown>;
    // A well-formed token of another epoch (issued before `store recover`) says so; anything else is judged below.
    let kid: string | undefined | null = null;
    try {
      kid = decodeProtectedHeader(token).kid;
    } catch {
      kid = null;
    }
    if (kid !== null && (kid ?? '') !== this.#epoch)
      throw new DomainError('unauthorized', await this.#otherKeyId(token, kid ?? ''));
    try {
      ({ payload } = await jwtVerify(token, this.#publicKey, {
        algorithms: ['EdDSA'],
        issuer: this.#settings.issuer,
        audience: this.#settings.audience,
        requiredClaims: ['sub', 'jti', 'iat', 'exp'],
        clockTolerance: CLOCK_TOLERANCE_SECONDS,
        currentDate: new Date(this.#now()),
      }));
    } catch (error) {
      throw new DomainError('unauthorized', describeJwtError(error));
    }
    const agt = payload.agt;
    if (agt !== undefined && !isAgentId(agt))
      throw new DomainError('unauthorized', 'token agent claim is not an agent id');
    const owner = payload.sub === OPERATOR_OWNER && agt !== undefined ? payload.sub : undefined;
    if ((owner === undefined && !isAccountAddress(payload.sub)) || typeof payload.jti !== 'string') {
      throw new DomainError('unauthorized', 'token subject is not a Stellar account address');
    }
    return {
      sub: payload.sub as string,
      jti: payload.jti,
      iat: payload.iat as number,
      exp: payload.exp as number,
      ...(agt !== undefined && { agt }),
    };
  }
}

/** A session epoch as a `kid` names it (auth/session-epoch.ts: 16 random bytes in hex). */
const EPOCH_KID = /^[0-9a-f]{32}$/;

function describeJwtError(error: unknown): string {
  if (error instanceof joseErrors.JWTExpired) return 'token expired';
  if (error instanceof joseErrors.JWTClaimValidationFailed)
    return `token claim "${error.claim}" is not valid for this service`;
  if (error instanceof joseErrors.JWSSignatureVerificationFailed) return 'token signature is not valid';
  if (error instanceof joseErrors.JOSEAlgNotAllowed) return 'token algorithm is not allowed';
  return 'token is malformed';
}
