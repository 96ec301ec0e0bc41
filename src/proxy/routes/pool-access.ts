// What the routes need of the connected pool: the money flows' context, the payments' context (each a 503
// `service_unavailable` until the pool is connected) and the deployment. The composition root
// (src/proxy/pool-runtime.ts) provides it; the routes never see how it is built.
import type { FlowContext } from '../flows/context.ts';
import type { OperatorBooks } from '../payments/books.ts';
import type { PaymentContext } from '../payments/context.ts';
import type { Deployment } from '../services/deployment.ts';
import type { TreeState } from '../services/pool-transaction.ts';

/** The operator's books, in stroops (the operator only: movements over time would show settlements). */
export interface PoolAccess {
  require(): FlowContext;
  books(): Promise<OperatorBooks>;
  requirePayments(): PaymentContext;
  /** the deployment, the circuit, and where the pool's commitment trees stand */
  info(): { deployment: Deployment; circuitId: string; trees: TreeState };
  /** The longest a new agent's first prepare may take, as the registrar measures it (ms). */
  registrationWaitBoundMs(): number;
}
