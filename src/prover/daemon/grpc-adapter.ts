// The gRPC side of the daemon: the server with its message limits and credentials, the Prover and
// Health services bound to their handlers, grpc-js's callback style adapted to async handlers, typed
// ProverErrors turned into status codes (with details as metadata), and the per-call metrics
// (proofs, failures by circuit and code).
import * as grpc from '@grpc/grpc-js';
import type { HealthStatus } from './health.ts';
import type { ProverMetrics } from './metrics.ts';
import { ProverError } from './errors.ts';
import {
  HealthService,
  type ListCircuitsResponseMessage,
  type ProveRequestMessage,
  type ProveResponseMessage,
  ProverService,
  type VerifyRequestMessage,
  type VerifyResponseMessage,
} from './proto.ts';

const MiB = 1 << 20;

export interface ProverHandlers {
  prove(call: grpc.ServerUnaryCall<ProveRequestMessage, ProveResponseMessage>): Promise<ProveResponseMessage>;
  verify(
    call: grpc.ServerUnaryCall<VerifyRequestMessage, VerifyResponseMessage>,
  ): Promise<VerifyResponseMessage>;
  listCircuits(): Promise<ListCircuitsResponseMessage>;
}

export interface GrpcServerOptions {
  /** Largest request gRPC accepts. */
  maxMessageBytes: number;
  tls?: { cert: Buffer; key: Buffer };
  metrics: ProverMetrics;
  health: HealthStatus;
  /** Whether a circuit id is served (others are counted as "unknown" in the failure metric). */
  isServed(id: string): boolean;
  log(line: string): void;
}

export function toServiceError(error: unknown): Partial<grpc.ServiceError> {
  if (error instanceof ProverError) {
    const metadata = new grpc.Metadata();
    for (const [key, value] of Object.entries(error.details)) metadata.set(key, value);
    return { code: error.code, details: error.message, metadata };
  }
  return {
    code: grpc.status.INTERNAL,
    details: `internal error: ${error instanceof Error ? error.message : String(error)}`,
  };
}

/** A gRPC server with the Prover and Health services, not yet bound. */
export function createGrpcServer(handlers: ProverHandlers, options: GrpcServerOptions): grpc.Server {
  const { metrics } = options;
  /** Adapts an async handler to grpc-js's callback style, counting failures by circuit and code. */
  function unary<Req, Res>(
    name: string,
    handler: (call: grpc.ServerUnaryCall<Req, Res>) => Promise<Res> | Res,
  ) {
    return (call: grpc.ServerUnaryCall<Req, Res>, callback: grpc.sendUnaryData<Res>) => {
      Promise.resolve()
        .then(() => handler(call))
        .then(
          (response) => callback(null, response),
          (error: unknown) => {
            const serviceError = toServiceError(error);
            if (name === 'Prove') {
              const circuit = (call.request as { circuit?: string }).circuit ?? '';
              metrics.failures.inc({
                circuit: options.isServed(circuit) ? circuit : 'unknown',
                code: grpc.status[serviceError.code ?? 13] ?? 'UNKNOWN',
              });
            }
            if (serviceError.code === grpc.status.INTERNAL)
              options.log(`${name} failed: ${serviceError.details}`);
            callback(serviceError);
          },
        );
    };
  }

  const server = new grpc.Server({
    'grpc.max_receive_message_length': options.maxMessageBytes,
    'grpc.max_send_message_length': 16 * MiB,
  });
  server.addService(ProverService.service, {
    Prove: unary<ProveRequestMessage, ProveResponseMessage>('Prove', async (call) => {
      const response = await handlers.prove(call);
      metrics.proofs.inc({ circuit: call.request.circuit, engine: response.engine });
      return response;
    }),
    Verify: unary('Verify', (call: grpc.ServerUnaryCall<VerifyRequestMessage, VerifyResponseMessage>) =>
      handlers.verify(call),
    ),
    ListCircuits: unary('ListCircuits', () => handlers.listCircuits()),
  });
  server.addService(HealthService.service, options.health.handlers());
  return server;
}

/** Binds the server (TLS when a certificate and key are given); resolves to the bound port. */
export function bindServer(
  server: grpc.Server,
  address: string,
  tls: { cert: Buffer; key: Buffer } | undefined,
): Promise<number> {
  const credentials = tls
    ? grpc.ServerCredentials.createSsl(null, [{ cert_chain: tls.cert, private_key: tls.key }], false)
    : grpc.ServerCredentials.createInsecure();
  return new Promise((resolve, reject) =>
    server.bindAsync(address, credentials, (error, port) => (error ? reject(error) : resolve(port))),
  );
}
