// Who a request comes from, for the per-address rate limit and the single-host loopback opt-in: the socket's
// peer, or, when that peer is one of the trusted proxies (POOL_PROXY_TRUSTED_PROXIES: addresses or CIDR
// ranges), the first address in X-Forwarded-For read from the right that is not a trusted proxy itself.
// Anyone else's X-Forwarded-For is ignored: a client cannot choose its own address.
import { BlockList, isIP } from 'node:net';
import type { Context } from 'koa';

/** An IPv4-mapped IPv6 address (a dual-stack socket's form) as the IPv4 address it is. */
function plain(address: string): string {
  const mapped = /^::ffff:(\d+\.\d+\.\d+\.\d+)$/i.exec(address);
  return mapped ? (mapped[1] as string) : address;
}

export class TrustedProxies {
  readonly #list = new BlockList();
  readonly #empty: boolean;

  /** `entries` were checked by the configuration (addresses or CIDR ranges, config.ts). */
  constructor(entries: readonly string[]) {
    this.#empty = entries.length === 0;
    for (const entry of entries) {
      const [address, prefix] = entry.split('/') as [string, string | undefined];
      const type = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      const bits = prefix === undefined ? (type === 'ipv4' ? 32 : 128) : Number(prefix);
      this.#list.addSubnet(address, bits, type);
    }
  }

  has(address: string | undefined): boolean {
    if (this.#empty || address === undefined) return false;
    const bare = plain(address);
    const family = isIP(bare);
    return family !== 0 && this.#list.check(bare, family === 4 ? 'ipv4' : 'ipv6');
  }

  /** The client's address for a request from `peer` that carries `forwardedFor`. */
  clientAddress(peer: string | undefined, forwardedFor: string): string {
    const own = plain(peer ?? 'unknown');
    if (!this.has(peer) || forwardedFor === '') return own;
    const hops = forwardedFor.split(',').map((hop) => plain(hop.trim()));
    for (let i = hops.length - 1; i >= 0; i--) {
      const hop = hops[i] as string;
      if (isIP(hop) === 0) return own; // not an address: nothing in the header can be relied on
      if (!this.has(hop)) return hop;
    }
    return hops[0] as string;
  }
}

const STATE_KEY = 'clientAddress';

/** Works the request's client address out once (app.ts, before anything else looks at it). */
export function bindClientAddress(ctx: Context, trusted: TrustedProxies): void {
  ctx.state[STATE_KEY] = trusted.clientAddress(ctx.req.socket.remoteAddress, ctx.get('x-forwarded-for'));
}

/** The request's client address (see bindClientAddress). */
export function clientAddressOf(ctx: Context): string {
  return String(ctx.state[STATE_KEY] ?? ctx.req.socket.remoteAddress ?? 'unknown');
}

/** Headers by which a relay (a reverse proxy, a tunnel) names, or admits, a client behind it. */
const RELAY_HEADERS = ['forwarded', 'x-real-ip', 'via'] as const;

/**
 * For the loopback opt-in: the caller's address when it is known for certain, else undefined. A request that
 * names no client behind its sender comes from the socket's peer. One that does is known only when a trusted
 * proxy sent it with X-Forwarded-For alone, every hop of it one bare address; `Forwarded`, `X-Real-IP`, `Via`,
 * or a hop with a port, brackets, `unknown` or nothing at all mean a client whose address is not known.
 */
export function certainClientAddress(ctx: Context, trusted: TrustedProxies): string | undefined {
  const peer = ctx.req.socket.remoteAddress;
  const forwardedFor = ctx.get('x-forwarded-for');
  if (RELAY_HEADERS.some((name) => ctx.get(name) !== '')) return undefined;
  if (forwardedFor === '') return peer === undefined ? undefined : plain(peer);
  if (!trusted.has(peer)) return undefined;
  if (forwardedFor.split(',').some((hop) => isIP(plain(hop.trim())) === 0)) return undefined;
  return trusted.clientAddress(peer, forwardedFor);
}
