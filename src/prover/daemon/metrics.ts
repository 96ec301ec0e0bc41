// Prometheus metrics of one daemon: proofs, failures by gRPC code, time per phase, queue depth.
// Each daemon has its own registry, so several daemons in one process (tests, benches) never collide.
import { createServer, type Server } from 'node:http';
import { Counter, collectDefaultMetrics, Gauge, Histogram, Registry } from 'prom-client';

const PHASE_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2, 4, 8, 16, 32, 64];

export interface QueueGauges {
  inFlight(): number;
  waitingForWitness(): number;
  waitingForLane(): number;
}

export class ProverMetrics {
  readonly registry = new Registry();
  readonly proofs: Counter<'circuit' | 'engine'>;
  readonly failures: Counter<'circuit' | 'code'>;
  readonly dropped: Counter<'reason'>;
  readonly witnessSeconds: Histogram<'circuit'>;
  readonly proveSeconds: Histogram<'circuit' | 'engine'>;
  readonly verifySeconds: Histogram<'circuit' | 'engine'>;

  constructor(queue: QueueGauges, options: { processMetrics?: boolean } = {}) {
    const registers = [this.registry];
    this.proofs = new Counter({
      name: 'prover_proofs_total',
      help: 'Proofs returned to callers',
      labelNames: ['circuit', 'engine'],
      registers,
    });
    this.failures = new Counter({
      name: 'prover_failures_total',
      help: 'Prove calls answered with an error, by gRPC status code',
      labelNames: ['circuit', 'code'],
      registers,
    });
    this.dropped = new Counter({
      name: 'prover_dropped_total',
      help: 'Prove requests abandoned before completion (cancelled, deadline)',
      labelNames: ['reason'],
      registers,
    });
    this.witnessSeconds = new Histogram({
      name: 'prover_witness_seconds',
      help: 'Witness generation time',
      labelNames: ['circuit'],
      buckets: PHASE_BUCKETS,
      registers,
    });
    this.proveSeconds = new Histogram({
      name: 'prover_prove_seconds',
      help: 'Proof generation time',
      labelNames: ['circuit', 'engine'],
      buckets: PHASE_BUCKETS,
      registers,
    });
    this.verifySeconds = new Histogram({
      name: 'prover_verify_seconds',
      help: 'Verify-after-prove time',
      labelNames: ['circuit', 'engine'],
      buckets: PHASE_BUCKETS,
      registers,
    });
    new Gauge({
      name: 'prover_in_flight',
      help: 'Prove requests admitted and not yet answered',
      registers,
      collect() {
        this.set(queue.inFlight());
      },
    });
    new Gauge({
      name: 'prover_queue_depth',
      help: 'Prove requests waiting, by stage',
      labelNames: ['stage'],
      registers,
      collect() {
        this.set({ stage: 'witness' }, queue.waitingForWitness());
        this.set({ stage: 'prove' }, queue.waitingForLane());
      },
    });
    if (options.processMetrics) collectDefaultMetrics({ register: this.registry });
  }

  /** Serves GET /metrics on host:port; resolves with the bound port (pass 0 for a free one). */
  listen(port: number, host = '127.0.0.1'): Promise<{ port: number; close(): Promise<void> }> {
    const server: Server = createServer(async (request, response) => {
      if (request.method !== 'GET' || request.url?.split('?')[0] !== '/metrics') {
        response.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
        return;
      }
      try {
        const body = await this.registry.metrics();
        response.writeHead(200, { 'content-type': this.registry.contentType }).end(body);
      } catch (error) {
        response.writeHead(500, { 'content-type': 'text/plain' }).end(`${(error as Error).message}\n`);
      }
    });
    return new Promise((resolve, reject) => {
      server.once('error', reject);
      server.listen(port, host, () => {
        const address = server.address();
        resolve({
          port: typeof address === 'object' && address ? address.port : port,
          close: () =>
            new Promise<void>((done) => {
              server.close(() => done());
              server.closeAllConnections();
            }),
        });
      });
    });
  }
}
