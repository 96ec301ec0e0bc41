// The operator endpoints (POST /api/deposit) answer local callers only. The decision uses the TCP
// socket's peer address and nothing the client can write (X-Forwarded-For, Host, Forwarded…).
import { isIPv4, isIPv6 } from 'node:net';

export function isLoopbackAddress(address: string | undefined): boolean {
  if (address === undefined) return false;
  if (isIPv4(address)) return address.startsWith('127.');
  if (!isIPv6(address)) return false;
  const lower = address.toLowerCase();
  if (lower === '::1' || lower === '0:0:0:0:0:0:0:1') return true;
  // IPv4-mapped IPv6 (dual-stack sockets report 127.0.0.1 as ::ffff:127.0.0.1).
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/.exec(lower);
  return mapped !== null && isIPv4(mapped[1]) && mapped[1].startsWith('127.');
}
