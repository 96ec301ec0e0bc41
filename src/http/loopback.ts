// Whether an address is this host's loopback (127.0.0.0/8, ::1, and their IPv4-mapped forms): for the proxy's
// single-host opt-in (POOL_PROXY_OPERATOR_LOOPBACK) and `pool-proxy mcp`'s warning; operator rights otherwise
// come from the operator's token only (src/proxy/auth/operator-token.ts).
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
