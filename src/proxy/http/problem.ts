// Renders every error as RFC 9457 application/problem+json with its stable `code` (src/api/problem.ts): the
// one place a domain error (domain/errors.ts) becomes an HTTP status and headers. Unknown exceptions become a
// 500 without internals; the log gets the details.
import { inspect } from 'node:util';
import type { Context, Next } from 'koa';
import { PROBLEM_STATUS, PROBLEM_TITLES, type ProblemCode, ProblemError } from '../../api/problem.ts';
import { DomainError, messageOf } from '../domain/errors.ts';
import type { Logger } from '../util/logger.ts';
import { noteProblem } from './request-context.ts';

export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

export function problemBody(error: ProblemError, instance: string): Record<string, unknown> {
  return {
    type: `urn:privacy-pool-proxy:problem:${error.code}`,
    title: PROBLEM_TITLES[error.code],
    status: error.status,
    detail: error.message,
    code: error.code,
    instance,
    ...(error.issues ? { errors: error.issues } : {}),
    ...(error.extra ?? {}),
  };
}

/** A domain error as the answer says it: the code's status, and the headers the code and its wait call for. */
function fromDomain(error: DomainError): ProblemError {
  const headers: Record<string, string> = {};
  if (error.retryAfterSeconds !== undefined) headers['Retry-After'] = String(error.retryAfterSeconds);
  // A domain `unauthorized` is about the token presented (expired, revoked, forged, of another epoch).
  if (error.code === 'unauthorized') headers['WWW-Authenticate'] = 'Bearer error="invalid_token"';
  return new ProblemError(error.code, error.message, {
    issues: error.issues,
    extra: error.extra,
    headers: Object.keys(headers).length > 0 ? headers : undefined,
    cause: error,
  });
}

function asProblem(error: unknown): ProblemError | undefined {
  if (error instanceof ProblemError) return error;
  if (error instanceof DomainError) return fromDomain(error);
  // Errors raised by Koa/router themselves carry an HTTP status (e.g. 405 from allowedMethods).
  const status = (error as { status?: number } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const code =
      (Object.keys(PROBLEM_STATUS) as ProblemCode[]).find((c) => PROBLEM_STATUS[c] === status) ??
      'invalid_request';
    return new ProblemError(code, messageOf(error));
  }
  return undefined;
}

export function problemMiddleware(logger: Logger) {
  return async (ctx: Context, next: Next): Promise<void> => {
    try {
      await next();
      if (ctx.status === 404 && ctx.body === undefined) {
        throw new ProblemError('not_found', `no endpoint ${ctx.method} ${ctx.path}`);
      }
    } catch (error) {
      let problem = asProblem(error);
      if (problem === undefined) {
        (ctx.state.log ?? logger).log('error', 'unhandled error', {
          method: ctx.method,
          path: ctx.path,
          error: inspect(error, { depth: 4 }),
        });
        problem = new ProblemError(
          'internal_error',
          'the request failed inside the service; see the service log',
        );
      }
      noteProblem(ctx, { code: problem.code, detail: problem.message });
      ctx.status = problem.status;
      for (const [name, value] of Object.entries(problem.headers ?? {})) ctx.set(name, value);
      ctx.type = PROBLEM_CONTENT_TYPE;
      ctx.body = JSON.stringify(problemBody(problem, ctx.path));
    }
  };
}
