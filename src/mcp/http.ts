// Streamable HTTP MCP at POST /mcp on the proxy's Koa app: stateless (a new server and transport per POST, JSON
// answers), authenticated with the wallet's Bearer JWT (or an agent-scoped token, whose tools act for its one
// agent, as an MCP client gets through OAuth) exactly like the REST API; a 401 names the protected resource
// metadata in WWW-Authenticate, and acting through the proxy's own REST API with that same token, in process
// (src/http/in-process-fetch.ts: the app's handler, no socket). GET and DELETE (SSE streams, sessions) answer 405.
// Each request counts against the wallet's rate limit, and so does each REST call its tools make (those are
// marked as internal calls, which the per-address limit of the loopback address does not count).
// Bodies have the REST API's JSON limits (size, UTF-8, depth, repeated member names).
// A request whose Origin header is present and is not the proxy's public origin (or a configured allowed
// origin) is refused with 403 before anything else (MCP 2025-11-25, Transports: servers MUST validate Origin,
// so a web page cannot reach /mcp through DNS rebinding or the visitor's browser).
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js';
import type { Context, Middleware, Next } from 'koa';
import { ProblemError } from '../api/problem.ts';
import { bearerToken } from '../http/bearer.ts';
import { inProcessFetch, type NodeHandler } from '../http/in-process-fetch.ts';
import { INTERNAL_CALL_HEADER } from '../http/internal-call.ts';
import { checkedJsonText, readBody } from '../http/json-body.ts';
import { PoolApi } from '../api/client.ts';
import { connectPoolMcpServer, createPoolMcpServer } from './server.ts';

export const MCP_PATH = '/mcp';
/** The origin the tools' in-process REST calls name (no socket is opened for it). */
const IN_PROCESS_ORIGIN = 'http://pool-proxy.internal';

export interface McpHttpOptions {
  /** The proxy app's request handler, which the tools' REST calls are handed to. Read per request. */
  handler: () => NodeHandler;
  /**
   * Verifies a Bearer token as the REST API does (throws its 401 otherwise); `sub` is the wallet (the owner
   * for an agent token, whose `agt` names its one agent).
   */
  verifyToken: (token: string) => Promise<{ sub: string; exp: number; agt?: string }>;
  /** Counts the request in its token's rate bucket: the wallet's, or its agent's (throws its 429 beyond it). */
  takeWalletRate: (wallet: string, agent?: string) => Promise<void>;
  /** Marks the tools' REST calls as this process's own (src/http/internal-call.ts). */
  internalCallKey: string;
  maxBodyBytes: number;
  /** Origins a request may name in its Origin header (the proxy's public origin and any configured ones). */
  allowedOrigins: ReadonlySet<string>;
  /** Where a client finds how to get a token (RFC 9728), named in every 401's WWW-Authenticate. */
  resourceMetadataUrl: string;
}

export function mcpHttpMiddleware(options: McpHttpOptions): Middleware {
  return async (ctx: Context, next: Next) => {
    if (ctx.path !== MCP_PATH) return next();
    // The route label of the proxy's request metrics (set by the router for its own routes).
    (ctx as Context & { _matchedRoute?: string })._matchedRoute = MCP_PATH;
    checkOrigin(ctx.get('origin'), options.allowedOrigins);
    if (ctx.method !== 'POST') {
      throw new ProblemError(
        'method_not_allowed',
        `${ctx.method} ${MCP_PATH} is not offered: this MCP endpoint is stateless, POST JSON-RPC messages to it`,
        { headers: { Allow: 'POST' } },
      );
    }
    const { token, claims } = await authenticate(ctx, options);
    const { sub: wallet, exp: expiresAt, agt } = claims;
    await options.takeWalletRate(wallet, agt);
    const body = await readBody(ctx.req, options.maxBodyBytes);
    // The REST API's limits on JSON (UTF-8, nesting depth, repeated member names) hold here too.
    checkedJsonText(body);

    const api = new PoolApi({
      baseUrl: IN_PROCESS_ORIGIN,
      fetch: inProcessFetch(options.handler()),
      caller: { kind: 'wallet', token },
      headers: { [INTERNAL_CALL_HEADER]: options.internalCallKey },
    });
    // An agent token's tools act for its agent only (and the REST API refuses it anything else).
    const mode =
      agt === undefined ? { kind: 'wallet' as const, wallet } : { kind: 'agent' as const, agentId: agt };
    const server = createPoolMcpServer({ api, mode });
    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: undefined,
      enableJsonResponse: true,
    });
    try {
      await connectPoolMcpServer(server, transport);
      const headers = new Headers();
      for (const [name, value] of Object.entries(ctx.req.headers)) {
        if (value !== undefined) headers.set(name, Array.isArray(value) ? value.join(', ') : value);
      }
      const request = new Request(`http://localhost${MCP_PATH}`, {
        method: 'POST',
        headers,
        body: new Uint8Array(body),
      });
      const response = await transport.handleRequest(request, {
        authInfo: { token, clientId: wallet, scopes: [], expiresAt },
      });
      ctx.status = response.status;
      response.headers.forEach((value, name) => ctx.set(name, value));
      ctx.body = Buffer.from(await response.arrayBuffer());
    } finally {
      await server.close();
    }
  };
}

/** Refuses (403) an Origin header that is present and not allowed; no Origin (a non-browser client) passes. */
function checkOrigin(origin: string, allowed: ReadonlySet<string>): void {
  if (origin === '' || allowed.has(origin)) return;
  throw new ProblemError(
    'forbidden',
    `Origin ${JSON.stringify(origin.slice(0, 200))} may not call ${MCP_PATH}: only the proxy's own origin ` +
      'and those in POOL_PROXY_MCP_ALLOWED_ORIGINS may',
  );
}

/**
 * The caller's token and its claims; a 401 names the protected resource metadata (MCP Authorization, RFC 9728
 * §5.1), where an MCP client learns how to get a token from the URL alone.
 */
async function authenticate(ctx: Context, options: McpHttpOptions) {
  const presented = ctx.get('authorization') !== '';
  try {
    const token = bearerToken(ctx);
    return { token, claims: await options.verifyToken(token) };
  } catch (error) {
    if ((error as { code?: unknown }).code !== 'unauthorized') throw error;
    const challenge = [
      `Bearer resource_metadata="${options.resourceMetadataUrl}"`,
      ...(presented ? ['error="invalid_token"'] : []),
    ].join(', ');
    throw new ProblemError('unauthorized', (error as Error).message, {
      headers: { 'WWW-Authenticate': challenge },
    });
  }
}
