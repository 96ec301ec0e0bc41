// The proxy's own typed client (PoolApi) for tests: a client for a wallet's token or the operator's, and the
// assertion that a call is refused with the proxy's problem (PoolApiError: its `code`, `status`, `issues`).
import type { ExecutionContext } from 'ava';
import { PoolApi, PoolApiError } from '../../../src/api/client.ts';

export { PoolApi, PoolApiError };

/** PoolApi for the wallet whose access token is `token`, on the proxy at `baseUrl`. */
export function walletApi(baseUrl: string, token: string): PoolApi {
  return new PoolApi({ baseUrl, caller: { kind: 'wallet', token } });
}

/** PoolApi for the operator, from its Authorization header (`Bearer <token>`, as helpers/proxy.ts gives it). */
export function operatorApi(baseUrl: string, operator: Record<string, string>): PoolApi {
  const token = /^Bearer (.+)$/.exec(operator.authorization ?? '')?.[1];
  if (!token) throw new Error('no operator token in the given headers');
  return new PoolApi({ baseUrl, caller: { kind: 'operator', token } });
}

/** Asserts that `call` is refused by the proxy and returns its refusal (check `.code`, `.status`, `.issues`). */
export function refused(
  t: ExecutionContext,
  call: Promise<unknown>,
  message?: string,
): Promise<PoolApiError> {
  return t.throwsAsync(call, { instanceOf: PoolApiError }, message);
}

/** The wait a refusal asks for: its Retry-After (a `registration_pending` always names one). */
function retryAfterMs(refusal: PoolApiError): number {
  if (refusal.retryAfterSeconds === undefined)
    throw new Error(`${refusal.code} without Retry-After`, { cause: refusal });
  return Math.max(1, refusal.retryAfterSeconds) * 1000;
}

/**
 * Makes a call that may meet a new agent's allowlist registration (a prepare, an operator deposit), retrying
 * after `503 registration_pending` at the time it names, as a client does; at most `attempts` times.
 */
export async function retryingRegistration<T>(call: () => Promise<T>, attempts = 10): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await call();
    } catch (error) {
      if (!(error instanceof PoolApiError) || error.code !== 'registration_pending' || attempt >= attempts)
        throw error;
      await new Promise((r) => setTimeout(r, retryAfterMs(error)));
    }
  }
}

/** The refusal of a settled call, if the proxy refused it. */
export function refusalOf(r: PromiseSettledResult<unknown>): PoolApiError | undefined {
  return r.status === 'rejected' && r.reason instanceof PoolApiError ? r.reason : undefined;
}

/** How a settled call ended, for messages: its payment status, or its refusal's status and code. */
export function outcomeOf(r: PromiseSettledResult<unknown>): string {
  if (r.status === 'fulfilled') return String((r.value as { paymentStatus?: string }).paymentStatus ?? 'ok');
  return `${refusalOf(r)?.status} ${refusalOf(r)?.code ?? String(r.reason)}`;
}
