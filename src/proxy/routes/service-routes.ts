// Service endpoints: health and the OpenAPI document (public), and Prometheus metrics (the operator's only:
// request counts by route and status and ledger operations by kind and outcome say what the chain does not).
import { VERSION } from '../../version.ts';
import type { ApiRouter } from '../http/api-router.ts';
import type { ProxyMetrics } from '../util/metrics.ts';
import { Health } from '../../api/schemas.ts';

/** Extra health details: the pool wallet's float and warnings (e.g. a float too low to pay). */
export type HealthDetails = () => Promise<{ poolWalletFloat?: string; warnings?: string[] }>;

export function registerServiceRoutes(
  api: ApiRouter,
  metrics: ProxyMetrics,
  publicUrl: string,
  details: HealthDetails = async () => ({}),
): void {
  api.add({
    method: 'get',
    path: '/health',
    summary: 'Service health and version',
    tag: 'service',
    access: 'public',
    response: Health,
    errors: [],
    handler: async () => ({ status: 'healthy' as const, version: VERSION, ...(await details()) }),
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
