// What the routes need of the connected pool: the money flows' context, the payments' context (each a 503
// `service_unavailable` until the pool is connected) and the deployment. The composition root
// (src/proxy/pool-runtime.ts) provides it; the routes never see how it is built.
import type { FlowContext } from '../flows/context.ts';
import type { PaymentContext } from '../payments/context.ts';
import type { Deployment } from '../services/deployment.ts';

export interface PoolAccess {
  require(): FlowContext;
  requirePayments(): PaymentContext;
  info(): { deployment: Deployment; circuitId: string };
}
