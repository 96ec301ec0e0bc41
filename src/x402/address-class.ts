// Which IP addresses a paid request must never reach: the class of every non-public address, from one table
// of prefixes over the address's 16 bytes (IPv4 as its IPv4-mapped form). IPv6 forms that carry or route to
// an IPv4 address are non-public whatever they carry, and report the carried address's own class when that
// one is non-public (so `[::127.0.0.1]` is loopback and `[2002:a9fe:a9fe::]` is metadata):
//   IPv4-mapped ::ffff:0:0/96 (RFC 4291 §2.5.5.2) is the IPv4 address itself (a dual-stack socket connects to it);
//   IPv4-compatible ::/96 (RFC 4291 §2.5.5.1, deprecated), SIIT ::ffff:0:0:0/96 (RFC 6145), NAT64 64:ff9b::/96
//   (RFC 6052) and its local-use 64:ff9b:1::/48 (RFC 8215), 6to4 2002::/16 (RFC 3056) and Teredo 2001::/32
//   (RFC 4380) are refused. So is every IPv6 address outside global unicast (2000::/3).
import { isIP } from 'node:net';

export type AddressClass =
  'loopback' | 'private' | 'link_local' | 'cgnat' | 'unspecified' | 'multicast' | 'reserved' | 'metadata';

/** Where an IPv6 range carries an IPv4 address: its byte offset, and whether it is stored inverted (Teredo). */
interface Embedded {
  offset: number;
  inverted?: boolean;
}

interface Range {
  cls: AddressClass;
  bytes: Uint8Array;
  prefix: number;
  /** the IPv4 address this range carries, judged on its own when it is non-public */
  embeds?: Embedded;
  /** the range is the IPv4 address itself (mapped): public when the carried address is */
  isIpv4?: boolean;
}

const MAPPED_PREFIX = 96;

function range(cls: AddressClass, cidr: string, extra: Partial<Range> = {}): Range {
  const [net, prefix] = cidr.split('/') as [string, string];
  const bytes = addressBytes(net);
  if (bytes === undefined) throw new Error(`bad range ${cidr}`);
  const bits = Number(prefix) + (isIP(net) === 4 ? MAPPED_PREFIX : 0);
  return { cls, bytes, prefix: bits, ...extra };
}

// Most specific first: the first range that matches decides.
const RANGES: Range[] = [
  range('metadata', '169.254.169.254/32'),
  range('metadata', 'fd00:ec2::254/128'),
  range('unspecified', '0.0.0.0/8'),
  range('loopback', '127.0.0.0/8'),
  range('private', '10.0.0.0/8'),
  range('private', '172.16.0.0/12'),
  range('private', '192.168.0.0/16'),
  range('cgnat', '100.64.0.0/10'),
  range('link_local', '169.254.0.0/16'),
  range('reserved', '192.0.0.0/24'),
  range('reserved', '192.0.2.0/24'),
  range('reserved', '192.88.99.0/24'), // 6to4 relay anycast (RFC 7526)
  range('reserved', '198.18.0.0/15'),
  range('reserved', '198.51.100.0/24'),
  range('reserved', '203.0.113.0/24'),
  range('multicast', '224.0.0.0/4'),
  range('reserved', '240.0.0.0/4'),
  range('reserved', '::ffff:0:0/96', { embeds: { offset: 12 }, isIpv4: true }),
  range('unspecified', '::/128'),
  range('loopback', '::1/128'),
  range('reserved', '::/96', { embeds: { offset: 12 } }),
  range('reserved', '::ffff:0:0:0/96', { embeds: { offset: 12 } }),
  range('reserved', '64:ff9b::/96', { embeds: { offset: 12 } }),
  range('reserved', '64:ff9b:1::/48'),
  range('reserved', '2002::/16', { embeds: { offset: 2 } }),
  range('reserved', '2001::/32', { embeds: { offset: 12, inverted: true } }),
  range('reserved', '2001:2::/48'),
  range('reserved', '2001:db8::/32'),
  range('reserved', '3fff::/20'), // documentation (RFC 9637)
  range('reserved', '100::/64'),
  range('private', 'fc00::/7'),
  range('link_local', 'fe80::/10'),
  range('multicast', 'ff00::/8'),
];

const GLOBAL_UNICAST = range('reserved', '2000::/3');

function inRange(bytes: Uint8Array, r: Range): boolean {
  const whole = r.prefix >> 3;
  for (let i = 0; i < whole; i++) if (bytes[i] !== r.bytes[i]) return false;
  const rest = r.prefix & 7;
  if (rest === 0) return true;
  const mask = (0xff << (8 - rest)) & 0xff;
  return ((bytes[whole] as number) & mask) === ((r.bytes[whole] as number) & mask);
}

/** The IPv4-mapped form of an IPv4 address carried at `embeds` in `bytes`. */
function carried(bytes: Uint8Array, embeds: Embedded): Uint8Array {
  const out = new Uint8Array(16);
  out[10] = 0xff;
  out[11] = 0xff;
  for (let i = 0; i < 4; i++) {
    const b = bytes[embeds.offset + i] as number;
    out[12 + i] = embeds.inverted ? b ^ 0xff : b;
  }
  return out;
}

function classify(bytes: Uint8Array, depth: number): AddressClass | undefined {
  for (const r of RANGES) {
    if (!inRange(bytes, r)) continue;
    // the mapped form is the IPv4 address itself: the IPv4 ranges above already judged it
    if (r.isIpv4) return undefined;
    if (r.embeds && depth === 0) return classify(carried(bytes, r.embeds), 1) ?? r.cls;
    return r.cls;
  }
  // outside 2000::/3 (global unicast, RFC 4291 §2.4) no IPv6 address is reachable on the internet
  return inRange(bytes, GLOBAL_UNICAST) ? undefined : 'reserved';
}

/** An address's 16 bytes (IPv4 as ::ffff:a.b.c.d), or undefined when it is not an IP address. */
function addressBytes(address: string): Uint8Array | undefined {
  const family = isIP(address);
  if (family === 4) {
    const out = new Uint8Array(16);
    out[10] = 0xff;
    out[11] = 0xff;
    address.split('.').forEach((part, i) => (out[12 + i] = Number(part)));
    return out;
  }
  if (family !== 6) return undefined;
  let text = address;
  const dotted = /(\d+\.\d+\.\d+\.\d+)$/.exec(text);
  let tail: number[] = [];
  if (dotted) {
    const parts = (dotted[1] as string).split('.').map(Number) as [number, number, number, number];
    tail = [(parts[0] << 8) | parts[1], (parts[2] << 8) | parts[3]];
    text = text.slice(0, -(dotted[1] as string).length) + '0:0';
  }
  const [head, rest] = text.split('::') as [string, string | undefined];
  const groups = (s: string) => (s === '' ? [] : s.split(':').map((h) => parseInt(h, 16)));
  const left = groups(head);
  const right = rest === undefined ? [] : groups(rest);
  const words = [...left, ...new Array<number>(8 - left.length - right.length).fill(0), ...right];
  if (tail.length) words.splice(6, 2, ...tail);
  const out = new Uint8Array(16);
  words.forEach((w, i) => {
    out[2 * i] = w >> 8;
    out[2 * i + 1] = w & 255;
  });
  return out;
}

/** The class of an address that must not be fetched, or undefined for a public address. */
export function addressClass(address: string): AddressClass | undefined {
  const bytes = addressBytes(address.replace(/^\[|\]$/g, '').replace(/%.*$/, ''));
  if (bytes === undefined) return 'reserved';
  return classify(bytes, 0);
}
