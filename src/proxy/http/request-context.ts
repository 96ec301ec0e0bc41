// Per-request state shared by the middleware and the routes: the request id (an incoming sane
// X-Request-Id, or a fresh UUID), the logger bound to it, and the problem (code and detail) of a refusal.
import { randomUUID } from 'node:crypto';
import type { Context } from 'koa';
import type { ProblemCode } from '../../api/problem.ts';
import { type Logger, silentLogger } from '../util/logger.ts';

export const REQUEST_ID_HEADER = 'X-Request-Id';
/** Accepted incoming ids: 1–128 characters of letters, digits and . _ : - (a UUID, a trace id…). */
const SANE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

interface RequestState {
  requestId?: string;
  log?: Logger;
  problem?: NotedProblem;
}

export interface NotedProblem {
  code: ProblemCode;
  detail: string;
}

function state(ctx: Context): RequestState {
  return ctx.state as RequestState;
}

/** Gives the request its id (echoed in the response) and a logger bound to it. */
export function bindRequest(ctx: Context, logger: Logger): { requestId: string; log: Logger } {
  const incoming = ctx.get(REQUEST_ID_HEADER);
  const requestId = SANE_REQUEST_ID.test(incoming) ? incoming : randomUUID();
  const log = logger.child({ requestId });
  Object.assign(state(ctx), { requestId, log });
  ctx.set(REQUEST_ID_HEADER, requestId);
  return { requestId, log };
}

/** The logger of this request (its lines carry the request id). */
export function requestLog(ctx: Context): Logger {
  return state(ctx).log ?? silentLogger;
}

export function noteProblem(ctx: Context, problem: NotedProblem): void {
  state(ctx).problem = problem;
}

export function problemOf(ctx: Context): NotedProblem | undefined {
  return state(ctx).problem;
}
