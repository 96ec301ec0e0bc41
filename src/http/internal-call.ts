// The proxy's own calls to its REST API (the tools of MCP over HTTP call it in process with the caller's
// token) carry a key that only this process knows. The per-address rate limit skips them: the /mcp request
// that made them was counted against its caller's address already, and every one of them is counted
// against the caller's wallet, so one wallet's MCP flood cannot exhaust a bucket that other wallets share.
import { randomBytes, timingSafeEqual } from 'node:crypto';

export const INTERNAL_CALL_HEADER = 'x-pool-internal-call';

/** A fresh key for this process's internal calls (never stored, never logged). */
export function newInternalCallKey(): string {
  return randomBytes(32).toString('base64url');
}

/** Whether a request's header value is this process's internal-call key. */
export function isInternalCall(header: string | undefined, key: string): boolean {
  if (header === undefined || header.length !== key.length) return false;
  return timingSafeEqual(Buffer.from(header), Buffer.from(key));
}
