// Errors that carry the gRPC status a caller should see. Anything else that escapes a handler is a bug
// on our side and is answered with INTERNAL.
import { status } from '@grpc/grpc-js';
import type { WitnessFailure } from './witness/protocol.ts';

export class ProverError extends Error {
  constructor(
    readonly code: status,
    message: string,
    /** Extra trailing metadata, e.g. the failing template and line of a violated constraint. */
    readonly details: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ProverError';
  }
}

export const invalidArgument = (message: string, details?: Record<string, string>) =>
  new ProverError(status.INVALID_ARGUMENT, message, details);
export const notFound = (message: string) => new ProverError(status.NOT_FOUND, message);
export const resourceExhausted = (message: string) => new ProverError(status.RESOURCE_EXHAUSTED, message);
export const deadlineExceeded = (message: string) => new ProverError(status.DEADLINE_EXCEEDED, message);
export const cancelled = (message: string) => new ProverError(status.CANCELLED, message);
export const unavailable = (message: string) => new ProverError(status.UNAVAILABLE, message);
export const internal = (message: string) => new ProverError(status.INTERNAL, message);

/**
 * Turns a failed witness computation into a status: the inputs were wrong (unknown or missing signals,
 * wrong array sizes, a violated constraint) -> INVALID_ARGUMENT; anything else -> INTERNAL. A violated
 * constraint names its circom template and line, in the message and as trailing metadata
 * (failed-template, failed-line).
 */
export function witnessError(failure: WitnessFailure): ProverError {
  if (failure.kind === 'constraint' && failure.template) {
    return invalidArgument(`constraint violated in template ${failure.template} line ${failure.line}`, {
      'failed-template': failure.template,
      'failed-line': String(failure.line),
    });
  }
  if (failure.kind === 'internal') return internal(`witness generation failed: ${failure.message}`);
  return invalidArgument(`inputs rejected by the circuit: ${failure.message}`);
}
