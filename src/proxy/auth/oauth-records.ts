// What the proxy's OAuth authorization server keeps (routes/oauth-provider.ts speaks the protocol over it), in
// the encrypted store so every replica sees it: registered clients, authorization requests waiting for their
// owner's consent, authorization codes and refresh tokens. Codes and refresh tokens are record keys (HMACed),
// never stored in the clear. A code or refresh token is taken once: taking it leaves a spent marker until it
// expires, so a second use is told apart from an unknown value (and the grant it made can be ended). Every
// take runs under the store's mutex, so two replicas cannot both take one value.
import { randomBytes } from 'node:crypto';
import type { OAuthClientInformationFull } from '@modelcontextprotocol/sdk/shared/auth.js';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { Mutex } from '../store/backend.ts';

/** An authorization request as the authorize endpoint received it, waiting for the owner on the wallet page. */
export interface PendingAuthorization {
  requestId: string;
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  state?: string;
  /** The resource (RFC 8707) the token will be bound to: this proxy's /mcp. */
  resource: string;
  scopes: string[];
  /** Unix seconds */
  expiresAt: number;
}

/** What an authorization code stands for: the owner's consent to one agent for one client. */
export interface CodeGrant {
  clientId: string;
  redirectUri: string;
  codeChallenge: string;
  resource: string;
  owner: string;
  agentId: string;
  /** Unix seconds */
  expiresAt: number;
}

/** A refresh token's grant: the connection (agent token record `grantId`) it renews. */
export interface RefreshGrant {
  grantId: string;
  clientId: string;
  resource: string;
  owner: string;
  agentId: string;
  /** Unix seconds: the grant's end, which rotation does not move. */
  expiresAt: number;
}

/** A value taken once: what it stood for, or that it was already spent (and which grant spending it made). */
export type Taken<T> =
  | { kind: 'fresh'; value: T }
  | { kind: 'spent'; grantId?: string; owner?: string; agentId?: string }
  | { kind: 'unknown' };

interface Spent {
  spent: true;
  grantId?: string;
  owner?: string;
  agentId?: string;
  expiresAt: number;
}

const CLIENT = 'oauth-client';
const REQUEST = 'oauth-request';
const CODE = 'oauth-code';
const REFRESH = 'oauth-refresh';

/** A random value of 32 bytes, base64url, with a prefix that says what it is. */
export function newSecret(prefix: string): string {
  return `${prefix}${randomBytes(32).toString('base64url')}`;
}

export class OAuthRecords {
  readonly #store: EncryptedStore;
  readonly #mutex: Mutex;

  constructor(store: EncryptedStore) {
    this.#store = store;
    this.#mutex = store.mutex('oauth');
  }

  async client(clientId: string): Promise<OAuthClientInformationFull | undefined> {
    return this.#store.get<OAuthClientInformationFull>(this.#store.key(CLIENT, clientId));
  }

  async addClient(client: OAuthClientInformationFull): Promise<void> {
    await this.#store.put(this.#store.key(CLIENT, client.client_id), client);
  }

  async addRequest(request: PendingAuthorization): Promise<void> {
    await this.#store.put(this.#store.key(REQUEST, request.requestId), request);
  }

  /** A pending request still open at `nowSeconds`. */
  async request(requestId: string, nowSeconds: number): Promise<PendingAuthorization | undefined> {
    const found = await this.#store.get<PendingAuthorization>(this.#store.key(REQUEST, requestId));
    return found !== undefined && found.expiresAt > nowSeconds ? found : undefined;
  }

  /** Ends a pending request (approved or refused): once decided, it cannot be decided again. */
  async takeRequest(requestId: string, nowSeconds: number): Promise<PendingAuthorization | undefined> {
    const key = this.#store.key(REQUEST, requestId);
    return this.#mutex.run(key, async () => {
      const found = await this.#store.get<PendingAuthorization>(key);
      if (found === undefined) return undefined;
      await this.#store.del(key);
      return found.expiresAt > nowSeconds ? found : undefined;
    });
  }

  async addCode(code: string, grant: CodeGrant): Promise<void> {
    await this.#store.put(this.#store.key(CODE, code), grant);
  }

  /** The code's grant without taking it (the PKCE check reads its challenge first). */
  async peekCode(code: string, nowSeconds: number): Promise<Taken<CodeGrant>> {
    return this.#read<CodeGrant>(this.#store.key(CODE, code), nowSeconds);
  }

  async takeCode(code: string, nowSeconds: number, grantId: string): Promise<Taken<CodeGrant>> {
    return this.#take<CodeGrant>(this.#store.key(CODE, code), nowSeconds, grantId);
  }

  async addRefresh(token: string, grant: RefreshGrant): Promise<void> {
    await this.#store.put(this.#store.key(REFRESH, token), grant);
  }

  async peekRefresh(token: string, nowSeconds: number): Promise<Taken<RefreshGrant>> {
    return this.#read<RefreshGrant>(this.#store.key(REFRESH, token), nowSeconds);
  }

  async takeRefresh(token: string, nowSeconds: number): Promise<Taken<RefreshGrant>> {
    return this.#take<RefreshGrant>(this.#store.key(REFRESH, token), nowSeconds);
  }

  /** Forgets requests, codes and refresh tokens (and their spent markers) expired by `nowSeconds`. */
  async sweepExpired(nowSeconds: number): Promise<number> {
    let swept = 0;
    for (const namespace of [REQUEST, CODE, REFRESH]) {
      const expired = (await this.#store.entries<{ expiresAt: number }>(`${namespace}/`)).filter(
        ([, record]) => record.expiresAt <= nowSeconds,
      );
      await this.#store.batch(expired.map(([key]) => ({ type: 'del' as const, key })));
      swept += expired.length;
    }
    return swept;
  }

  async #read<T extends { expiresAt: number }>(key: string, nowSeconds: number): Promise<Taken<T>> {
    const found = await this.#store.get<T | Spent>(key);
    if (found === undefined || found.expiresAt <= nowSeconds) return { kind: 'unknown' };
    if ('spent' in found) return { kind: 'spent', ...spentOf(found) };
    return { kind: 'fresh', value: found };
  }

  async #take<T extends { expiresAt: number; owner: string; agentId: string; grantId?: string }>(
    key: string,
    nowSeconds: number,
    grantId?: string,
  ): Promise<Taken<T>> {
    return this.#mutex.run(key, async () => {
      const taken = await this.#read<T>(key, nowSeconds);
      if (taken.kind !== 'fresh') return taken;
      const { owner, agentId, expiresAt } = taken.value;
      const spentBy = grantId ?? taken.value.grantId;
      const marker: Spent = { spent: true, owner, agentId, expiresAt, ...(spentBy && { grantId: spentBy }) };
      await this.#store.put(key, marker);
      return taken;
    });
  }
}

function spentOf(marker: Spent): { grantId?: string; owner?: string; agentId?: string } {
  return {
    ...(marker.grantId && { grantId: marker.grantId }),
    ...(marker.owner && { owner: marker.owner }),
    ...(marker.agentId && { agentId: marker.agentId }),
  };
}
