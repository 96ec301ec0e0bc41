// The Bearer token of a request's Authorization header, or the 401 problem that says what is wrong with it.
// Shared by the REST API's router and the MCP endpoint, which accept the same wallet tokens. The scheme name
// is case-insensitive and followed by one or more spaces (RFC 9110 §11.1, §11.4; RFC 6750 §2.1).
import type { Context } from 'koa';
import { ProblemError } from '../api/problem.ts';

/** The value of a Bearer Authorization header, or undefined without one; a malformed header is a 401. */
export function bearerValue(ctx: Context): string | undefined {
  const header = ctx.get('authorization');
  if (header === '') return undefined;
  const match = /^bearer +([A-Za-z0-9._~+/-]+=*)$/i.exec(header);
  if (!match) {
    throw new ProblemError('unauthorized', 'Authorization header must be "Bearer <token>"', {
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    });
  }
  return match[1];
}

/** A wallet's token (a JWT) from the Authorization header, or the 401 that says what is wrong. */
export function bearerToken(ctx: Context): string {
  const header = ctx.get('authorization');
  if (header === '') {
    throw new ProblemError(
      'unauthorized',
      'missing Authorization: Bearer <token>; log in with /api/auth/challenge',
      {
        headers: { 'WWW-Authenticate': 'Bearer' },
      },
    );
  }
  const match = /^bearer +([A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+)$/i.exec(header);
  if (!match) {
    throw new ProblemError('unauthorized', 'Authorization header must be "Bearer <jwt>"', {
      headers: { 'WWW-Authenticate': 'Bearer error="invalid_token"' },
    });
  }
  return match[1];
}
