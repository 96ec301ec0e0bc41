// Service endpoints: readiness (/health: 503 `starting` until the pool is connected, so a balancer sends no
// traffic the pool routes would refuse), liveness (/health/live) and the OpenAPI document (public), and
// Prometheus metrics (the operator's only: request counts by route and status and ledger operations by kind
// and outcome say what the chain does not).
import { VERSION } from '../../version.ts';
import type { ApiRouter } from '../http/api-router.ts';
import type { ProxyMetrics } from '../util/metrics.ts';
import { Health, Liveness } from '../../api/schemas.ts';

/** Extra health details: the pool wallet's float and warnings (e.g. a float too low to pay). */
export type HealthDetails = () => Promise<{ poolWalletFloat?: string; warnings?: string[] }>;

export interface ServiceRouteDeps {
  metrics: ProxyMetrics;
  publicUrl: string;
  /** Why the pool is not connected yet; undefined once it is (PoolRuntime.starting). */
  starting: () => string | undefined;
  details?: HealthDetails;
}

export function registerServiceRoutes(api: ApiRouter, deps: ServiceRouteDeps): void {
  const { metrics, publicUrl, starting, details = async () => ({}) } = deps;
  api.add({
    method: 'get',
    path: '/health',
    summary: 'Readiness: `healthy` (200) once the pool is connected, `starting` (503) until then',
    description:
      'Send traffic to this proxy once it answers 200: until the pool is connected its pool routes answer 503. ' +
      'GET /health/live answers whether the process serves HTTP at all.',
    tag: 'service',
    access: 'public',
    response: Health,
    errors: [],
    status: (health) => (health.status === 'healthy' ? 200 : 503),
    statusDocs: { 503: 'Starting: the pool is not connected yet (`status: starting`, `detail`)' },
    handler: async () => {
      const waiting = starting();
      if (waiting !== undefined)
        return {
          status: 'starting' as const,
          version: VERSION,
          detail: `the pool is not connected yet (${waiting})`,
        };
      return { status: 'healthy' as const, version: VERSION, ...(await details()) };
    },
  });

  api.add({
    method: 'get',
    path: '/health/live',
    summary: 'Liveness: the process serves HTTP (200), whether the pool is connected or not',
    tag: 'service',
    access: 'public',
    response: Liveness,
    errors: [],
    handler: async () => ({ status: 'alive' as const, version: VERSION }),
  });

  let document: unknown;
  api.addRaw('get', '/openapi.json', 'This OpenAPI 3.1 document', 'application/json', async (ctx) => {
    document ??= api.document({ title: 'Privacy Pool Proxy', version: VERSION, serverUrl: publicUrl });
    ctx.body = document;
  });

  api.addRaw(
    'get',
    '/metrics',
    'Prometheus metrics (the operator only)',
    'text/plain',
    async (ctx) => {
      ctx.type = metrics.registry.contentType;
      ctx.body = await metrics.registry.metrics();
    },
    'operator',
  );
}
