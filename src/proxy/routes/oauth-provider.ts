// The proxy's OAuth 2.1 authorization server as the MCP SDK's handlers call it (their OAuthServerProvider):
// clients (dynamic registration), authorization requests handed to the wallet page for the owner's consent,
// codes bound to the client, redirect URI, PKCE challenge and resource, and the tokens a code or refresh token
// gives. What an MCP client receives is an agent-scoped token (auth/tokens.ts) whose jti is its grant's id:
// the grant is one agent token record (services/agent-tokens.ts), so the owner lists and revokes it with the
// agent's other tokens, and revoking it ends every access token and the refresh token of that connection.
// Refresh tokens rotate; a code or refresh token used a second time ends its grant (OAuth 2.1 §4.3.1, §6.1).
// Refusals are the SDK's OAuth errors, which its handlers answer as RFC 6749 JSON or error redirects.
import { randomUUID } from 'node:crypto';
import type { Response } from 'express';
import {
  InvalidClientMetadataError,
  InvalidGrantError,
  InvalidTargetError,
  InvalidTokenError,
} from '@modelcontextprotocol/sdk/server/auth/errors.js';
import type {
  AuthorizationParams,
  OAuthServerProvider,
} from '@modelcontextprotocol/sdk/server/auth/provider.js';
import type { OAuthRegisteredClientsStore } from '@modelcontextprotocol/sdk/server/auth/clients.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import type {
  OAuthClientInformationFull,
  OAuthTokenRevocationRequest,
  OAuthTokens,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { isLoopbackAddress } from '../../http/loopback.ts';
import { newSecret, type OAuthRecords, type RefreshGrant } from '../auth/oauth-records.ts';
import type { TokenService } from '../auth/tokens.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import type { AgentTokens } from '../services/agent-tokens.ts';
import type { Clock } from '../util/clock.ts';

/** How long the owner has to decide on the wallet page. */
export const REQUEST_TTL_SECONDS = 600;
/** How long a code may wait for its exchange. */
export const CODE_TTL_SECONDS = 120;
/** An access token's life; the client refreshes it. */
const ACCESS_TTL_SECONDS = 3600;
/** A connection's life (its refresh tokens'); the owner may end it sooner on the wallet page. */
const GRANT_TTL_SECONDS = 30 * 86_400;
export const REFRESH_PREFIX = 'ppr_';

export interface OAuthProviderDeps {
  records: OAuthRecords;
  agentTokens: AgentTokens;
  tokens: TokenService;
  clock: Clock;
  /** The one resource tokens are issued for: this proxy's /mcp URL. */
  resource: string;
  /** The wallet page, which shows the consent view for `?oauth=<requestId>`. */
  consentPage: string;
}

export class PoolOAuthProvider implements OAuthServerProvider {
  readonly #deps: OAuthProviderDeps;
  readonly clientsStore: OAuthRegisteredClientsStore;

  constructor(deps: OAuthProviderDeps) {
    this.#deps = deps;
    const { records } = deps;
    this.clientsStore = {
      getClient: (clientId) => records.client(clientId),
      registerClient: async (metadata) => {
        for (const uri of metadata.redirect_uris) checkRedirectUri(uri);
        const client: OAuthClientInformationFull = {
          ...metadata,
          client_id: randomUUID(),
          client_id_issued_at: this.#nowSeconds(),
        };
        await records.addClient(client);
        return client;
      },
    };
  }

  #nowSeconds(): number {
    return Math.floor(this.#deps.clock() / 1000);
  }

  /** The resource a request names must be this /mcp (RFC 8707); none means it. */
  #checkResource(resource: URL | string | undefined): void {
    if (resource === undefined) return;
    const named = typeof resource === 'string' ? resource : resource.href;
    if (named !== this.#deps.resource)
      throw new InvalidTargetError(`this server issues tokens for ${this.#deps.resource} only, not ${named}`);
  }

  async authorize(client: OAuthClientInformationFull, params: AuthorizationParams, res: Response) {
    this.#checkResource(params.resource);
    const requestId = newSecret('ppa_');
    await this.#deps.records.addRequest({
      requestId,
      clientId: client.client_id,
      redirectUri: params.redirectUri,
      codeChallenge: params.codeChallenge,
      ...(params.state !== undefined && { state: params.state }),
      resource: this.#deps.resource,
      scopes: params.scopes ?? [],
      expiresAt: this.#nowSeconds() + REQUEST_TTL_SECONDS,
    });
    const consent = new URL(this.#deps.consentPage);
    consent.searchParams.set('oauth', requestId);
    res.redirect(302, consent.href);
  }

  async challengeForAuthorizationCode(client: OAuthClientInformationFull, code: string): Promise<string> {
    const found = await this.#deps.records.peekCode(code, this.#nowSeconds());
    if (found.kind === 'spent') {
      await this.#endSpentGrant(found);
      throw new InvalidGrantError('this authorization code was already used; the tokens it gave are revoked');
    }
    if (found.kind === 'unknown' || found.value.clientId !== client.client_id)
      throw new InvalidGrantError('unknown or expired authorization code');
    return found.value.codeChallenge;
  }

  async exchangeAuthorizationCode(
    client: OAuthClientInformationFull,
    code: string,
    _codeVerifier?: string,
    redirectUri?: string,
    resource?: URL,
  ): Promise<OAuthTokens> {
    const now = this.#nowSeconds();
    const peeked = await this.#deps.records.peekCode(code, now);
    if (peeked.kind !== 'fresh' || peeked.value.clientId !== client.client_id)
      throw new InvalidGrantError('unknown or expired authorization code');
    if (redirectUri !== undefined && redirectUri !== peeked.value.redirectUri)
      throw new InvalidGrantError('redirect_uri is not the one the code was issued for');
    this.#checkResource(resource);
    // Taken once, across replicas: of two exchanges of one code, one gets tokens.
    const grantId = randomUUID();
    const taken = await this.#deps.records.takeCode(code, now, grantId);
    if (taken.kind !== 'fresh') throw new InvalidGrantError('this authorization code was already used');
    const { owner, agentId } = taken.value;
    const expiresAt = now + GRANT_TTL_SECONDS;
    await this.#deps.agentTokens.add(
      { owner, agentId },
      {
        tokenId: grantId,
        agentId,
        issuedAt: now,
        expiresAt,
        client: { clientId: client.client_id, name: clientName(client) },
      },
    );
    return this.#issue({
      grantId,
      clientId: client.client_id,
      resource: this.#deps.resource,
      owner,
      agentId,
      expiresAt,
    });
  }

  async exchangeRefreshToken(
    client: OAuthClientInformationFull,
    refreshToken: string,
    _scopes?: string[],
    resource?: URL,
  ): Promise<OAuthTokens> {
    const now = this.#nowSeconds();
    const peeked = await this.#deps.records.peekRefresh(refreshToken, now);
    if (peeked.kind === 'spent') {
      // A rotated refresh token presented again: stolen or replayed; the connection ends (OAuth 2.1 §4.3.1).
      await this.#endSpentGrant(peeked);
      throw new InvalidGrantError('this refresh token was already used; the connection is revoked');
    }
    if (peeked.kind === 'unknown' || peeked.value.clientId !== client.client_id)
      throw new InvalidGrantError('unknown or expired refresh token');
    this.#checkResource(resource);
    const grant = peeked.value;
    if ((await this.#liveGrant(grant)) === undefined)
      throw new InvalidGrantError('the owner revoked this connection; authorize again');
    const taken = await this.#deps.records.takeRefresh(refreshToken, now);
    if (taken.kind !== 'fresh') throw new InvalidGrantError('this refresh token was already used');
    return this.#issue(grant);
  }

  async verifyAccessToken(token: string): Promise<AuthInfo> {
    const claims = await this.#deps.tokens.verify(token).catch(() => {
      throw new InvalidTokenError('token not valid');
    });
    return {
      token,
      clientId: claims.sub,
      scopes: [],
      expiresAt: claims.exp,
      resource: new URL(this.#deps.resource),
    };
  }

  /** Ends the connection a refresh or access token of `client` belongs to; anything else is ignored (RFC 7009). */
  async revokeToken(client: OAuthClientInformationFull, request: OAuthTokenRevocationRequest): Promise<void> {
    if (request.token.startsWith(REFRESH_PREFIX)) {
      const found = await this.#deps.records.peekRefresh(request.token, this.#nowSeconds());
      if (found.kind === 'fresh' && found.value.clientId === client.client_id)
        await this.#endGrant(found.value);
      return;
    }
    const claims = await this.#deps.tokens.verify(request.token).catch(() => undefined);
    if (claims?.agt === undefined) return;
    const ref = { owner: claims.sub, agentId: claims.agt };
    const record = await this.#deps.agentTokens.get(ref, claims.jti);
    if (record?.client?.clientId === client.client_id)
      await this.#endGrant({ ...ref, grantId: claims.jti, expiresAt: record.expiresAt });
  }

  /** The grant's record while the owner has not revoked it. */
  async #liveGrant(grant: { owner: string; agentId: string; grantId: string }) {
    return this.#deps.agentTokens.get({ owner: grant.owner, agentId: grant.agentId }, grant.grantId);
  }

  async #endSpentGrant(spent: { grantId?: string; owner?: string; agentId?: string }): Promise<void> {
    if (spent.grantId === undefined || spent.owner === undefined || spent.agentId === undefined) return;
    const record = await this.#liveGrant({
      owner: spent.owner,
      agentId: spent.agentId,
      grantId: spent.grantId,
    });
    if (record !== undefined)
      await this.#endGrant({
        owner: spent.owner,
        agentId: spent.agentId,
        grantId: spent.grantId,
        expiresAt: record.expiresAt,
      });
  }

  /** Revokes every token of the grant, as the owner's revoke on the wallet page does. */
  async #endGrant(grant: AgentRef & { grantId: string; expiresAt: number }): Promise<void> {
    await this.#deps.tokens.revoke({ sub: grant.owner, jti: grant.grantId, iat: 0, exp: grant.expiresAt });
    await this.#deps.agentTokens.remove({ owner: grant.owner, agentId: grant.agentId }, grant.grantId);
  }

  /** An access token (jti = the grant) and a new refresh token, neither outliving the grant. */
  async #issue(grant: RefreshGrant): Promise<OAuthTokens> {
    const ttl = Math.min(ACCESS_TTL_SECONDS, grant.expiresAt - this.#nowSeconds());
    if (ttl <= 0) throw new InvalidGrantError('this connection has expired; authorize again');
    const { token } = await this.#deps.tokens.issueForAgent(grant.owner, grant.agentId, ttl, {
      jti: grant.grantId,
      resource: grant.resource,
    });
    const refreshToken = newSecret(REFRESH_PREFIX);
    await this.#deps.records.addRefresh(refreshToken, grant);
    return { access_token: token, token_type: 'Bearer', expires_in: ttl, refresh_token: refreshToken };
  }
}

export function clientName(client: OAuthClientInformationFull): string {
  return (client.client_name ?? client.client_id).slice(0, 100);
}

/** OAuth 2.1 §2.3.1 / MCP: a redirect URI is HTTPS, or HTTP on a loopback host (a native client). */
function checkRedirectUri(uri: string): void {
  const parsed = URL.canParse(uri) ? new URL(uri) : undefined;
  const ok =
    parsed !== undefined &&
    parsed.hash === '' &&
    (parsed.protocol === 'https:' ||
      (parsed.protocol === 'http:' &&
        (parsed.hostname === 'localhost' || isLoopbackAddress(parsed.hostname.replace(/^\[|\]$/g, '')))));
  if (!ok)
    throw new InvalidClientMetadataError(
      `redirect URI ${uri.slice(0, 200)} must be https, or http on localhost / a loopback address, without a fragment`,
    );
}
