// MCP authorization (MCP 2025-11-25, Authorization): the proxy is both the protected resource (/mcp) and its
// OAuth 2.1 authorization server. Served here: protected resource metadata (RFC 9728) at
// /.well-known/oauth-protected-resource/mcp, authorization server metadata (RFC 8414) at
// /.well-known/oauth-authorization-server, and the MCP SDK's own handlers for /oauth/authorize, /oauth/token,
// /oauth/register (RFC 7591) and /oauth/revoke (RFC 7009) — the SDK's handlers are Express routers, run here on
// the request Koa received (an Express app only gives them Express's request and response) —; and, for the
// wallet page's consent view, the owner's side: read a waiting request, approve it for one of the wallet's
// agents, or refuse it. The per-address rate limit and the proxy's headers apply before any of them.
import express from 'express';
import type { Context, Middleware, Next } from 'koa';
import { authorizationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/authorize.js';
import { metadataHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/metadata.js';
import { clientRegistrationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/register.js';
import { revocationHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/revoke.js';
import { tokenHandler } from '@modelcontextprotocol/sdk/server/auth/handlers/token.js';
import {
  OAuthMetadataSchema,
  OAuthProtectedResourceMetadataSchema,
} from '@modelcontextprotocol/sdk/shared/auth.js';
import { ProblemError } from '../../api/problem.ts';
import { OAuthApproval, OAuthDecision, OAuthRequestParams, OAuthRequestView } from '../../api/schemas.ts';
import { newSecret, type OAuthRecords, type PendingAuthorization } from '../auth/oauth-records.ts';
import { unknownAgent } from '../flows/require-agent.ts';
import type { ApiRouter } from '../http/api-router.ts';
import type { AgentRegistry } from '../services/agents.ts';
import type { Clock } from '../util/clock.ts';
import { clientName, CODE_TTL_SECONDS, type PoolOAuthProvider } from './oauth-provider.ts';

export const PROTECTED_RESOURCE_PATH = '/.well-known/oauth-protected-resource/mcp';
const AUTHORIZATION_SERVER_PATH = '/.well-known/oauth-authorization-server';
const ENDPOINTS = {
  authorize: '/oauth/authorize',
  token: '/oauth/token',
  register: '/oauth/register',
  revoke: '/oauth/revoke',
};

export interface OAuthRouteDeps {
  provider: PoolOAuthProvider;
  records: OAuthRecords;
  agents: AgentRegistry;
  clock: Clock;
  /** The proxy's public URL (the issuer). */
  publicUrl: string;
  /** The protected resource: the public /mcp URL. */
  resource: string;
}

/** The metadata documents, checked against the SDK's own schemas. */
function metadata(publicUrl: string, resource: string) {
  const at = (path: string) => new URL(path, publicUrl).href;
  const issuer = new URL(publicUrl).href;
  const authorizationServer = OAuthMetadataSchema.parse({
    issuer,
    authorization_endpoint: at(ENDPOINTS.authorize),
    token_endpoint: at(ENDPOINTS.token),
    registration_endpoint: at(ENDPOINTS.register),
    revocation_endpoint: at(ENDPOINTS.revoke),
    response_types_supported: ['code'],
    response_modes_supported: ['query'],
    grant_types_supported: ['authorization_code', 'refresh_token'],
    code_challenge_methods_supported: ['S256'],
    authorization_response_iss_parameter_supported: true,
    token_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    revocation_endpoint_auth_methods_supported: ['none', 'client_secret_post'],
    service_documentation: at('/docs'),
  });
  const protectedResource = OAuthProtectedResourceMetadataSchema.parse({
    resource,
    authorization_servers: [issuer],
    bearer_methods_supported: ['header'],
    resource_name: 'privacy-pool-proxy MCP',
  });
  return { authorizationServer, protectedResource };
}

/** Koa middleware running the SDK's OAuth handlers (an Express app) for their paths; other paths pass. */
export function oauthMiddleware(deps: OAuthRouteDeps): Middleware {
  const { authorizationServer, protectedResource } = metadata(deps.publicUrl, deps.resource);
  const app = express();
  app.disable('x-powered-by');
  // The proxy's own per-address limit has run already; the SDK's in-memory one would count per replica.
  const rateLimit = false as const;
  app.use(ENDPOINTS.authorize, authorizationHandler({ provider: deps.provider, rateLimit }));
  app.use(ENDPOINTS.token, tokenHandler({ provider: deps.provider, rateLimit }));
  app.use(
    ENDPOINTS.register,
    clientRegistrationHandler({
      clientsStore: deps.provider.clientsStore,
      rateLimit,
      // public clients (PKCE, no secret) are what MCP clients are; a secret, when asked for, does not expire
      clientSecretExpirySeconds: 0,
    }),
  );
  app.use(ENDPOINTS.revoke, revocationHandler({ provider: deps.provider, rateLimit }));
  app.use(AUTHORIZATION_SERVER_PATH, metadataHandler(authorizationServer));
  app.use(PROTECTED_RESOURCE_PATH, metadataHandler(protectedResource));
  const paths = new Set([...Object.values(ENDPOINTS), AUTHORIZATION_SERVER_PATH, PROTECTED_RESOURCE_PATH]);

  return async (ctx: Context, next: Next) => {
    if (!paths.has(ctx.path)) return next();
    (ctx as Context & { _matchedRoute?: string })._matchedRoute = ctx.path;
    ctx.respond = false;
    await new Promise<void>((resolve, reject) => {
      ctx.res.once('finish', resolve);
      ctx.res.once('close', resolve);
      // Express turns them into its own request and response (its app sets their prototypes) as it starts.
      app(ctx.req as express.Request, ctx.res as express.Response, (error?: unknown) =>
        error ? reject(toError(error)) : resolve(),
      );
    });
  };
}

function toError(error: unknown): Error {
  return error instanceof Error ? error : new Error(String(error));
}

/** The owner's side of a request, on the wallet page: read it, approve it for an agent, refuse it. */
export function registerOAuthConsentRoutes(api: ApiRouter, deps: OAuthRouteDeps): void {
  const { records, agents, clock } = deps;
  const now = () => Math.floor(clock() / 1000);
  const gone = () =>
    new ProblemError(
      'not_found',
      'no such authorization request waits for consent: it was decided already or expired (10 minutes); ' +
        'start again from the MCP client',
    );
  const redirect = (request: PendingAuthorization, params: Record<string, string>) => {
    const target = new URL(request.redirectUri);
    for (const [name, value] of Object.entries(params)) target.searchParams.set(name, value);
    if (request.state !== undefined) target.searchParams.set('state', request.state);
    target.searchParams.set('iss', new URL(deps.publicUrl).href);
    return { redirectTo: target.href };
  };

  api.add({
    method: 'get',
    path: '/api/oauth/requests/:requestId',
    summary: 'An MCP client’s authorization request waiting for consent',
    description:
      'What the consent view shows: the client’s name (its own claim when unverified) and where it receives ' +
      'the authorization. Any logged-in wallet may read it; only its approval decides for whose agent.',
    tag: 'oauth',
    access: 'wallet',
    params: OAuthRequestParams,
    response: OAuthRequestView,
    errors: ['not_found', 'invalid_request'],
    handler: async ({ params }) => {
      const request = await records.request(params.requestId, now());
      if (request === undefined) throw gone();
      const client = await deps.provider.clientsStore.getClient(request.clientId);
      if (client === undefined) throw gone();
      return {
        requestId: request.requestId,
        clientId: client.client_id,
        clientName: clientName(client),
        redirectHost: new URL(request.redirectUri).host,
        verified: false,
        resource: request.resource,
        expiresAt: new Date(request.expiresAt * 1000).toISOString(),
      };
    },
  });

  api.add({
    method: 'post',
    path: '/api/oauth/requests/:requestId/approve',
    summary: 'Approve an MCP client’s request for one of the wallet’s agents',
    description:
      'The client gets an authorization code at its redirect URI, which its PKCE verifier exchanges for an ' +
      'agent-scoped token of this agent (listed and revoked with the agent’s tokens). Another owner’s agent, ' +
      'or one that does not exist, answers 404 and the request stays open.',
    tag: 'oauth',
    access: 'wallet',
    params: OAuthRequestParams,
    body: OAuthApproval,
    response: OAuthDecision,
    errors: ['not_found', 'invalid_request'],
    handler: async ({ params, body, auth }) => {
      const ref = { owner: auth.sub, agentId: body.agentId };
      if ((await agents.get(ref)) === undefined) throw unknownAgent(body.agentId);
      const request = await records.takeRequest(params.requestId, now());
      if (request === undefined) throw gone();
      const code = newSecret('ppc_');
      await records.addCode(code, {
        clientId: request.clientId,
        redirectUri: request.redirectUri,
        codeChallenge: request.codeChallenge,
        resource: request.resource,
        owner: ref.owner,
        agentId: ref.agentId,
        expiresAt: now() + CODE_TTL_SECONDS,
      });
      return redirect(request, { code });
    },
  });

  api.add({
    method: 'post',
    path: '/api/oauth/requests/:requestId/refuse',
    summary: 'Refuse an MCP client’s request',
    description: 'The client is told `access_denied` at its redirect URI; nothing is issued.',
    tag: 'oauth',
    access: 'wallet',
    params: OAuthRequestParams,
    response: OAuthDecision,
    errors: ['not_found', 'invalid_request'],
    handler: async ({ params }) => {
      const request = await records.takeRequest(params.requestId, now());
      if (request === undefined) throw gone();
      return redirect(request, {
        error: 'access_denied',
        error_description: 'the wallet owner refused the request',
      });
    },
  });
}
