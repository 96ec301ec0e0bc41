// The Koa application: request id, metrics and one log line per request, problem+json errors, per-IP
// rate limit, MCP authorization's OAuth endpoints, the wallet page, then the API routes. Route modules register themselves on the ApiRouter;
// this file only wires the pipeline.
import Koa, { type Context, type Middleware, type Next } from 'koa';
import { type ProblemCode, ProblemError } from '../../api/problem.ts';
import { INTERNAL_CALL_HEADER, isInternalCall } from '../../http/internal-call.ts';
import { bindClientAddress, clientAddressOf, type TrustedProxies } from './client-address.ts';
import type { Logger } from '../util/logger.ts';
import type { ApiRouter } from './api-router.ts';
import type { ProxyMetrics } from '../util/metrics.ts';
import { problemMiddleware } from './problem.ts';
import { bindRequest, problemOf } from './request-context.ts';
import type { RequestLimiter } from './rate-limit.ts';

/** Routes polled by monitors: their request lines are debug, not info. */
const QUIET_ROUTES = new Set(['/health', '/health/live', '/metrics']);
/** 5xx answers about someone else's service (a paid service that does not resolve or answer): refusals. */
const NOT_OUR_FAILURE: ReadonlySet<ProblemCode> = new Set(['service_unreachable']);
const MAX_LOGGED_PATH = 200;
const MAX_LOGGED_DETAIL = 500;

export interface AppDeps {
  api: ApiRouter;
  metrics: ProxyMetrics;
  ipLimiter: RequestLimiter;
  logger: Logger;
  /** Serves the wallet page (GET /, /app.js, /app.css); see web.ts. */
  web?: Middleware;
  /** Serves MCP authorization's metadata and OAuth endpoints (routes/oauth-routes.ts). */
  oauth?: Middleware;
  /** The key of this process's own calls (MCP over HTTP's tools), which the per-address limit skips. */
  internalCallKey: string;
  /** Peers whose X-Forwarded-For names the client (client-address.ts). */
  trustedProxies: TrustedProxies;
}

export function createApp(deps: AppDeps): Koa {
  const { api, metrics, ipLimiter, logger, web, oauth, internalCallKey, trustedProxies } = deps;
  // proxy = false: Koa must never derive ctx.ip from X-Forwarded-For; the client's address is worked out once,
  // from trusted proxies only (client-address.ts).
  const app = new Koa({ proxy: false });
  app.silent = true;

  app.use(async (ctx: Context, next: Next) => {
    const started = process.hrtime.bigint();
    bindClientAddress(ctx, trustedProxies);
    const { log } = bindRequest(ctx, logger);
    try {
      await next();
    } finally {
      const route = String((ctx as Context & { _matchedRoute?: string })._matchedRoute ?? 'unmatched');
      const seconds = Number(process.hrtime.bigint() - started) / 1e9;
      metrics.httpRequests.inc({ method: ctx.method, route, status: String(ctx.status) });
      metrics.httpDuration.observe({ method: ctx.method, route }, seconds);
      // One line per request. Refusals (the caller's problem, so info) carry their problem code and detail;
      // failures of the proxy are errors; probes of /health and /metrics are debug (a 503 `starting` too). A request no route
      // matched (a 404) carries its path, which is all there is to know about it.
      const problem = problemOf(ctx);
      const fields = {
        method: ctx.method,
        route,
        ...(route === 'unmatched' && { path: ctx.path.slice(0, MAX_LOGGED_PATH) }),
        status: ctx.status,
        ms: Math.round(seconds * 10_000) / 10,
        ...(problem && { code: problem.code, detail: problem.detail.slice(0, MAX_LOGGED_DETAIL) }),
      };
      if (QUIET_ROUTES.has(route) && problem === undefined) log.log('debug', 'request', fields);
      else if (ctx.status >= 500 && !(problem && NOT_OUR_FAILURE.has(problem.code)))
        log.log('error', 'request failed', fields);
      else if (ctx.status >= 400) log.log('info', 'request refused', fields);
      else log.log('info', 'request', fields);
    }
  });
  app.use(problemMiddleware(logger));
  app.use(async (ctx: Context, next: Next) => {
    // The owner's brakes are limited by the router, per wallet (api-router.ts): an agent sharing the owner's
    // address cannot use up what the owner needs to stop it.
    const internal = isInternalCall(ctx.get(INTERNAL_CALL_HEADER) || undefined, internalCallKey);
    const decision =
      internal || api.isBrake(ctx)
        ? { allowed: true, retryAfterSeconds: 0 }
        : await ipLimiter.take(clientAddressOf(ctx));
    if (!decision.allowed) {
      metrics.rateLimited.inc({ scope: 'ip' });
      throw new ProblemError('rate_limited', 'too many requests from this address; slow down', {
        headers: { 'Retry-After': String(decision.retryAfterSeconds) },
      });
    }
    ctx.set('Cache-Control', 'no-store');
    ctx.set('X-Content-Type-Options', 'nosniff');
    await next();
  });
  if (oauth) app.use(oauth);
  if (web) app.use(web);
  app.use(api.router.routes());
  app.use(api.router.allowedMethods({ throw: true }));
  return app;
}
