// grpc.health.v1.Health for the daemon. "" (the whole server) and the Prover service report SERVING only
// once every proving key and witness generator is loaded, and NOT_SERVING again while draining.
import { EventEmitter } from 'node:events';
import * as grpc from '@grpc/grpc-js';
import type { ServingStatus } from './proto.ts';

export class HealthStatus {
  readonly #statuses = new Map<string, ServingStatus>();
  readonly #changes = new EventEmitter();
  readonly #watchers = new Set<grpc.ServerWritableStream<{ service: string }, unknown>>();

  constructor(services: string[]) {
    for (const service of ['', ...services]) this.#statuses.set(service, 'NOT_SERVING');
    this.#changes.setMaxListeners(0);
  }

  setAll(status: ServingStatus): void {
    for (const service of this.#statuses.keys()) this.#set(service, status);
  }

  #set(service: string, status: ServingStatus): void {
    if (this.#statuses.get(service) === status) return;
    this.#statuses.set(service, status);
    this.#changes.emit(service, status);
  }

  get(service: string): ServingStatus | undefined {
    return this.#statuses.get(service);
  }

  /** Handlers for the Health service definition. */
  handlers(): grpc.UntypedServiceImplementation {
    return {
      Check: (
        call: grpc.ServerUnaryCall<{ service: string }, unknown>,
        callback: grpc.sendUnaryData<unknown>,
      ) => {
        const status = this.#statuses.get(call.request.service);
        if (!status)
          callback({ code: grpc.status.NOT_FOUND, details: `unknown service "${call.request.service}"` });
        else callback(null, { status });
      },
      Watch: (call: grpc.ServerWritableStream<{ service: string }, unknown>) => {
        const service = call.request.service;
        call.write({ status: this.#statuses.get(service) ?? 'SERVICE_UNKNOWN' });
        const onChange = (status: ServingStatus) => call.write({ status });
        this.#changes.on(service, onChange);
        this.#watchers.add(call);
        const stop = () => {
          this.#changes.off(service, onChange);
          this.#watchers.delete(call);
        };
        call.on('cancelled', stop);
        call.on('close', stop);
      },
    };
  }

  /** Reports NOT_SERVING to open Watch streams and ends them, so a graceful shutdown is not held open by them. */
  close(): void {
    this.setAll('NOT_SERVING');
    this.#changes.removeAllListeners();
    for (const call of this.#watchers) call.end();
    this.#watchers.clear();
  }
}
