// Prometheus metrics, one registry per proxy instance (so several proxies can run in one process).
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

export interface ProxyMetrics {
  registry: Registry;
  httpRequests: Counter<'method' | 'route' | 'status'>;
  httpDuration: Histogram<'method' | 'route'>;
  /** Confirmed ledger operations by kind (deposit, operator_deposit, withdraw, consolidate). */
  ledgerOperations: Counter<'kind' | 'outcome'>;
  proofDuration: Histogram;
  rateLimited: Counter<'scope'>;
  /** Transactions sent to the ledger and not yet decided (confirmed or rejected). */
  transactionsInFlight: Gauge;
  /** The pool's commitment trees: the current tree's number, its leaves used, and leaves per tree. */
  poolTree: Gauge<'measure'>;
}

export function createMetrics(): ProxyMetrics {
  const registry = new Registry();
  collectDefaultMetrics({ register: registry, prefix: 'pool_proxy_' });
  return {
    registry,
    httpRequests: new Counter({
      name: 'pool_proxy_http_requests_total',
      help: 'HTTP requests by method, route and status',
      labelNames: ['method', 'route', 'status'],
      registers: [registry],
    }),
    httpDuration: new Histogram({
      name: 'pool_proxy_http_request_duration_seconds',
      help: 'HTTP request duration in seconds',
      labelNames: ['method', 'route'],
      buckets: [0.001, 0.005, 0.01, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30],
      registers: [registry],
    }),
    ledgerOperations: new Counter({
      name: 'pool_proxy_ledger_operations_total',
      help: 'Pool transactions submitted by the proxy, by kind and outcome',
      labelNames: ['kind', 'outcome'],
      registers: [registry],
    }),
    proofDuration: new Histogram({
      name: 'pool_proxy_proof_duration_seconds',
      help: 'Time to obtain a Groth16 proof from the prover daemon',
      buckets: [0.1, 0.25, 0.5, 1, 2, 5, 10, 30, 60],
      registers: [registry],
    }),
    rateLimited: new Counter({
      name: 'pool_proxy_rate_limited_total',
      help: 'Requests refused by a rate limit',
      labelNames: ['scope'],
      registers: [registry],
    }),
    transactionsInFlight: new Gauge({
      name: 'pool_proxy_transactions_in_flight',
      help: 'Transactions sent to the ledger and awaiting its decision',
      registers: [registry],
    }),
    poolTree: new Gauge({
      name: 'pool_proxy_pool_tree',
      help:
        "The pool's commitment trees as the indexer has read them: measure=current (the current tree's number; " +
        'trees before it are full), leaves_used and leaves_free (in the current tree), capacity (leaves per tree)',
      labelNames: ['measure'],
      registers: [registry],
    }),
  };
}
