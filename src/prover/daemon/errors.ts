// Errors that carry the gRPC status a caller should see. Anything else that escapes a handler is a bug
// on our side and is answered with INTERNAL.
import { status } from '@grpc/grpc-js';

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
