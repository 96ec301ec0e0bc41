// One place that turns a route definition (schemas, access rule, handler) into both a Koa route and
// an OpenAPI path. Handlers receive validated input only; every refusal is a ProblemError.
import { OpenAPIRegistry, OpenApiGeneratorV31 } from '@asteasolutions/zod-to-openapi';
import Router from '@koa/router';
import type { Context } from 'koa';
import type { z } from 'zod';
import type { TokenClaims, TokenService } from '../auth/tokens.ts';
import { OPERATOR_OWNER } from '../../api/agent-id.ts';
import {
  type FieldIssue,
  PROBLEM_STATUS,
  PROBLEM_TITLES,
  type ProblemCode,
  ProblemError,
} from '../../api/problem.ts';
import { checkJsonContentType, parseJsonObject, readBody } from '../../http/json-body.ts';
import { bearerToken, bearerValue } from '../../http/bearer.ts';
import { isOperatorToken, type OperatorCredential } from '../auth/operator-token.ts';
import { certainClientAddress, clientAddressOf, type TrustedProxies } from './client-address.ts';
import { isLoopbackAddress } from '../../http/loopback.ts';
import type { ProxyMetrics } from '../util/metrics.ts';
import type { RequestLimiter } from './rate-limit.ts';
import { Problem } from '../../api/schemas.ts';

/**
 * public: anyone; wallet: a wallet's Bearer JWT; operator: the operator's token (`Authorization: Bearer ppo_…`,
 * auth/operator-token.ts); wallet-or-operator: either (the local MCP server reads and spends the operator's own
 * agents with the operator's token). Where a request's socket is never grants operator rights, except under
 * the single-host opt-in POOL_PROXY_OPERATOR_LOOPBACK (#localOperator).
 */
export type Access = 'public' | 'wallet' | 'operator' | 'wallet-or-operator';

/**
 * What an agent-scoped token (a JWT with an `agt` claim, auth/tokens.ts) may do on a route: nothing unless the
 * route says `own-agent`, and then only for its own agent (the route's `agentId` path parameter or body field,
 * when it names one, must be the token's agent; the handler scopes what it reads or does to `auth.agt`).
 */
export type AgentTokenRule = 'own-agent';

/** Under the loopback opt-in, a tokenless caller asks to act as the operator with `X-Pool-Operator: true`. */
export const OPERATOR_HEADER = 'x-pool-operator';

const SECURITY: Record<Access, Record<string, string[]>[]> = {
  public: [],
  wallet: [{ bearerJwt: [] }],
  operator: [{ operatorToken: [] }],
  'wallet-or-operator': [{ bearerJwt: [] }, { operatorToken: [] }],
};

const OPERATOR_CLAIMS: TokenClaims = { sub: OPERATOR_OWNER, jti: 'operator', iat: 0, exp: 0 };

/** Every response carries the request's id (see request-context.ts). */
const REQUEST_ID_DOC = {
  'X-Request-Id': {
    description:
      "The request's id, also in the service log: the caller's own X-Request-Id when it is 1–128 letters, digits or . _ : -, else a fresh UUID.",
    schema: { type: 'string' },
  },
};

/** What a route's handler knows of its caller: nothing on a public route, verified claims on every other. */
export type AuthFor<A extends Access> = A extends 'public' ? undefined : TokenClaims;

export interface RouteInput<B, Q, P, A extends Access = Access> {
  body: B;
  query: Q;
  params: P;
  /** Claims of the verified token (the operator's on its routes), by the route's access rule. */
  auth: AuthFor<A>;
  ctx: Context;
}

export interface RouteDefinition<B, Q, P, R, A extends Access = Access> {
  method: 'get' | 'post' | 'put' | 'delete';
  /** Koa path, e.g. /api/balance/:agentId */
  path: string;
  summary: string;
  description?: string;
  tag: string;
  access: A;
  /** Whether an agent-scoped token may call it (default: refused with `forbidden_for_agent_token`). */
  agentToken?: AgentTokenRule;
  body?: z.ZodType<B>;
  /** A request without a body (no Content-Type, nothing sent) is validated as `{}`. */
  bodyOptional?: boolean;
  /**
   * One of the owner's brakes (freeze, unfreeze, revoking agent tokens): counted in the wallet's own brake
   * bucket instead of the per-address and per-wallet ones, so nothing an agent does can hold the owner off it.
   */
  brake?: boolean;
  query?: z.ZodType<Q>;
  params?: z.ZodType<P>;
  response: z.ZodType<R>;
  /** Problem codes this route can answer with (documented in OpenAPI). */
  errors: ProblemCode[];
  handler: (input: RouteInput<B, Q, P, A>) => Promise<R>;
  /**
   * Answers a result as text instead of JSON when `render` gives a body (e.g. a CSV download, by a query
   * parameter); `contentType` is what the body is, also in the OpenAPI document.
   */
  text?: {
    contentType: string;
    render: (result: R, query: Q) => { body: string; headers?: Record<string, string> } | undefined;
  };
  /** The success status for a result (200 unless given), e.g. 202 for a payment still being decided. */
  status?: (result: R) => 200 | 202 | 503;
  /** What the statuses `status` may answer besides 200 mean (OpenAPI; default: 202, a payment not decided yet). */
  statusDocs?: Partial<Record<202 | 503, string>>;
}

export interface ApiRouterDeps {
  tokens: TokenService;
  operator: {
    credential: OperatorCredential;
    /** the single-host opt-in: loopback callers without a token act as the operator */
    loopback: boolean;
    trustedProxies: TrustedProxies;
  };
  tokenLimiter: RequestLimiter;
  /** The per-address limiter app.ts applies, here for brakes whose token does not verify. */
  ipLimiter: RequestLimiter;
  metrics: ProxyMetrics;
  maxBodyBytes: number;
}

export function zodIssues(error: z.ZodError): FieldIssue[] {
  return error.issues.map((issue) => {
    const path = issue.path.map(String).join('.') || '(body)';
    if (issue.code === 'unrecognized_keys') {
      return { path, message: `unknown field(s): ${issue.keys.map((k) => JSON.stringify(k)).join(', ')}` };
    }
    return { path, message: issue.message };
  });
}

function validate<T>(schema: z.ZodType<T>, value: unknown, where: string): T {
  const result = schema.safeParse(value);
  if (!result.success) {
    const issues = zodIssues(result.error);
    throw new ProblemError(
      'invalid_request',
      `invalid ${where}: ${issues.map((i) => `${i.path}: ${i.message}`).join('; ')}`,
      {
        issues,
      },
    );
  }
  return result.data;
}

/** An agent token acts for its own agent only: an `agentId` the request names must be that agent. */
function checkOwnAgent(agt: string, ...parts: unknown[]): void {
  for (const part of parts) {
    const named = (part as { agentId?: unknown } | undefined)?.agentId;
    if (named !== undefined && named !== agt)
      throw new ProblemError(
        'forbidden_for_agent_token',
        `this agent token acts for agent ${agt} only, not for ${String(named).slice(0, 64)}`,
      );
  }
}

export class ApiRouter {
  readonly router = new Router();
  readonly registry = new OpenAPIRegistry();
  readonly #deps: ApiRouterDeps;
  /** The brake routes, as `METHOD /path` (RouteDefinition.brake). */
  readonly #brakes = new Set<string>();

  constructor(deps: ApiRouterDeps) {
    this.#deps = deps;
    this.registry.register('Problem', Problem);
    this.registry.registerComponent('securitySchemes', 'bearerJwt', {
      type: 'http',
      scheme: 'bearer',
      bearerFormat: 'JWT',
    });
    this.registry.registerComponent('securitySchemes', 'operatorToken', {
      type: 'http',
      scheme: 'bearer',
      description: 'the operator token (ppo_…), kept in operator.token in the data directory',
    });
  }

  add<B = undefined, Q = undefined, P = undefined, R = unknown, A extends Access = Access>(
    def: RouteDefinition<B, Q, P, R, A>,
  ): void {
    this.#document(def);
    if (def.brake === true) this.#brakes.add(`${def.method.toUpperCase()} ${def.path}`);
    this.router[def.method](def.path, async (ctx: Context) => {
      const brake = def.brake === true;
      // A brake whose credentials are refused counts in its address's bucket (app.ts left it to this).
      const auth = await this.#authorize(ctx, def.access, brake).catch(async (error: unknown) => {
        if (brake) await this.#takeAddressRate(ctx);
        throw error;
      });
      if (auth?.agt !== undefined && def.agentToken === undefined)
        throw new ProblemError(
          'forbidden_for_agent_token',
          'an agent token may pay within its agent’s policy and read that agent’s balance, policy and payments; this endpoint needs the owner’s own token',
        );
      const params = def.params
        ? validate(def.params, { ...ctx.params }, 'path parameter')
        : (undefined as P);
      const query = def.query ? validate(def.query, { ...ctx.query }, 'query') : (undefined as Q);
      let body = undefined as B;
      if (def.body) {
        const contentType = ctx.get('content-type') || undefined;
        if (contentType !== undefined || def.bodyOptional !== true) checkJsonContentType(contentType);
        const bytes = await readBody(ctx.req, this.#deps.maxBodyBytes);
        // No Content-Type passed only where the body is optional, and then the body must be empty.
        if (contentType === undefined && bytes.length > 0) checkJsonContentType(contentType);
        body = validate(def.body, contentType === undefined ? {} : parseJsonObject(bytes), 'request body');
      }
      if (auth?.agt !== undefined) checkOwnAgent(auth.agt, params, body);
      // #authorize answers claims for every access rule but 'public' (or throws): what AuthFor<A> says.
      const result = await def.handler({ body, query, params, auth: auth as AuthFor<A>, ctx });
      const text = def.text?.render(result, query);
      if (text !== undefined) {
        ctx.status = 200;
        for (const [name, value] of Object.entries(text.headers ?? {})) ctx.set(name, value);
        ctx.type = def.text!.contentType;
        ctx.body = text.body;
        return;
      }
      ctx.status = def.status?.(result) ?? 200;
      ctx.body = def.response.parse(result);
    });
  }

  /** Plain routes outside the JSON API (metrics text, the OpenAPI document itself). */
  addRaw(
    method: 'get',
    path: string,
    summary: string,
    contentType: string,
    handler: (ctx: Context) => Promise<void>,
    access: 'public' | 'operator' = 'public',
  ): void {
    this.registry.registerPath({
      method,
      path,
      summary,
      tags: ['service'],
      responses: { 200: { description: 'OK', content: { [contentType]: { schema: { type: 'string' } } } } },
    });
    this.router[method](path, async (ctx: Context) => {
      await this.#authorize(ctx, access);
      await handler(ctx);
    });
  }

  document(info: { title: string; version: string; serverUrl: string }) {
    return new OpenApiGeneratorV31(this.registry.definitions).generateDocument({
      openapi: '3.1.0',
      info: { title: info.title, version: info.version },
      servers: [{ url: info.serverUrl }],
    });
  }

  /**
   * Whether the request is for a brake route, which the per-address limit leaves to the router: a brake
   * counts in its wallet's brake bucket, and only a request whose token does not verify in its address's.
   */
  isBrake(ctx: Context): boolean {
    const { pathAndMethod } = this.router.match(ctx.path, ctx.method);
    return pathAndMethod.some((layer) => this.#brakes.has(`${ctx.method} ${layer.path}`));
  }

  async #authorize(ctx: Context, access: Access, brake = false): Promise<TokenClaims | undefined> {
    if (access === 'public') return undefined;
    const presented = bearerValue(ctx);
    if (presented !== undefined && isOperatorToken(presented)) {
      if (!this.#deps.operator.credential.matches(presented))
        throw new ProblemError('unauthorized', 'the operator token is not valid', {
          headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
        });
      if (access === 'wallet')
        throw new ProblemError('forbidden', 'this endpoint acts for a wallet: send the wallet’s token');
      return OPERATOR_CLAIMS;
    }
    if (presented === undefined && access !== 'wallet' && this.#localOperator(ctx, access))
      return OPERATOR_CLAIMS;
    if (access === 'operator') {
      if (presented === undefined)
        throw new ProblemError(
          'unauthorized',
          'this endpoint answers the operator only: send Authorization: Bearer <the operator token> (operator.token in the data directory)',
          { headers: { 'WWW-Authenticate': 'Bearer' } },
        );
      throw new ProblemError('forbidden', 'this endpoint answers the operator only, not a wallet');
    }
    const claims = await this.#deps.tokens.verify(bearerToken(ctx));
    await this.takeWalletRate(claims.sub, claims.agt, brake && claims.agt === undefined);
    return claims;
  }

  /**
   * The single-host opt-in (POOL_PROXY_OPERATOR_LOOPBACK): a loopback caller without a token acts as the
   * operator (on wallet-or-operator routes when it says so with `X-Pool-Operator: true`), when its caller is
   * certainly on this host: a relayed request only through a trusted proxy naming a loopback client in a
   * plain X-Forwarded-For (client-address.ts, certainClientAddress).
   */
  #localOperator(ctx: Context, access: Access): boolean {
    const { loopback, trustedProxies } = this.#deps.operator;
    if (!loopback) return false;
    if (access === 'wallet-or-operator' && ctx.get(OPERATOR_HEADER) !== 'true') return false;
    const client = certainClientAddress(ctx, trustedProxies);
    return client !== undefined && isLoopbackAddress(client);
  }

  /**
   * Counts one request in its caller's bucket (REST and /mcp alike); throws 429 beyond it. The wallet's own
   * token, each of its agents' tokens and the wallet's brakes (`brake`) have a bucket each: an agent flooding
   * the proxy slows itself only, and nothing but the owner's own brakes can hold a brake off.
   */
  async takeWalletRate(wallet: string, agent?: string, brake = false): Promise<void> {
    const key = agent !== undefined ? `agent:${wallet}:${agent}` : brake ? `brake:${wallet}` : wallet;
    const decision = await this.#deps.tokenLimiter.take(key);
    if (!decision.allowed) {
      this.#deps.metrics.rateLimited.inc({ scope: 'token' });
      const whose = agent !== undefined ? 'this agent token' : brake ? 'this wallet’s brakes' : 'this wallet';
      throw new ProblemError('rate_limited', `too many requests for ${whose}; slow down`, {
        headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      });
    }
  }

  /** The per-address limit, for a brake whose token did not verify (app.ts leaves brakes to the router). */
  async #takeAddressRate(ctx: Context): Promise<void> {
    const decision = await this.#deps.ipLimiter.take(clientAddressOf(ctx));
    if (!decision.allowed) {
      this.#deps.metrics.rateLimited.inc({ scope: 'ip' });
      throw new ProblemError('rate_limited', 'too many requests from this address; slow down', {
        headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      });
    }
  }

  #document<B, Q, P, R>(def: RouteDefinition<B, Q, P, R>): void {
    const errorCodes: ProblemCode[] = [...def.errors, 'rate_limited', 'internal_error'];
    if (def.body) errorCodes.push('invalid_request', 'payload_too_large', 'unsupported_media_type');
    if (def.access !== 'public') errorCodes.push('unauthorized');
    if (def.access === 'operator' || def.access === 'wallet') errorCodes.push('forbidden');
    if (def.access === 'wallet' || def.access === 'wallet-or-operator')
      errorCodes.push('forbidden_for_agent_token');
    const byStatus = new Map<number, ProblemCode[]>();
    for (const code of new Set(errorCodes)) {
      const status = PROBLEM_STATUS[code];
      byStatus.set(status, [...(byStatus.get(status) ?? []), code]);
    }
    const ok = (description: string) => ({
      description,
      headers: REQUEST_ID_DOC,
      content: {
        'application/json': { schema: def.response },
        ...(def.text && { [def.text.contentType]: { schema: { type: 'string' } } }),
      },
    });
    const responses: Record<string, unknown> = {
      200: ok('OK'),
      ...(def.status &&
        Object.fromEntries(
          Object.entries(def.statusDocs ?? { 202: 'Accepted: not decided yet' }).map(([code, text]) => [
            code,
            ok(text),
          ]),
        )),
    };
    for (const [status, codes] of [...byStatus].sort((a, b) => a[0] - b[0])) {
      responses[status] = {
        description: codes.map((c) => `\`${c}\`: ${PROBLEM_TITLES[c]}`).join('; '),
        headers: REQUEST_ID_DOC,
        content: { 'application/problem+json': { schema: Problem } },
      };
    }
    this.registry.registerPath({
      method: def.method,
      path: def.path.replace(/:([A-Za-z0-9_]+)/g, '{$1}'),
      summary: def.summary,
      description: def.description,
      tags: [def.tag],
      security: SECURITY[def.access],
      request: {
        ...(def.params ? { params: def.params as never } : {}),
        ...(def.query ? { query: def.query as never } : {}),
        ...(def.body
          ? {
              body: {
                required: def.bodyOptional !== true,
                content: { 'application/json': { schema: def.body } },
              },
            }
          : {}),
      },
      responses: responses as never,
    });
  }
}
