// Fetching a URL an agent named, without letting it reach the proxy's own network: http(s) only; the host is
// resolved once and every address it resolves to is checked (loopback, private, link-local, CGNAT,
// unspecified, multicast, reserved and cloud-metadata addresses are refused unless `host[:port]` is
// allow-listed; address-class.ts classifies them), and the connection goes to the address that was checked, so a second DNS answer cannot
// swap it (no rebinding gap). Redirects are followed by hand (at most 3) and each hop is checked again, or,
// with `followRedirects: false` (every request of a payment, pay.ts), not followed at all; the response size and the total time are capped. Only the caller's explicit body and a small set of headers
// are sent: never credentials, cookies, forwarding headers or anything that identifies who asked.

import { lookup as dnsLookup } from 'node:dns/promises';
import http from 'node:http';
import https from 'node:https';
import { isIP, type LookupFunction } from 'node:net';
import { addressClass } from './address-class.ts';
import { X402Error } from './errors.ts';

export const DEFAULT_MAX_RESPONSE_BYTES = 1024 * 1024;
export const DEFAULT_TIMEOUT_MS = 10_000;
export const MAX_REDIRECTS = 3;
const MAX_REQUEST_HEADERS = 20;
const MAX_HEADER_VALUE = 4096;
/** The User-Agent every request carries: the same for every agent. */
export const USER_AGENT = 'privacy-pool-proxy';

export interface SafeFetchOptions {
  /** `host` or `host:port` entries ([v6]:port for IPv6) allowed even when they resolve to a refused address */
  allowedHosts?: readonly string[];
  maxResponseBytes?: number;
  timeoutMs?: number;
  /** certificate authorities trusted for https (default: Node's bundled roots) */
  ca?: string | Buffer;
  /** headers set by this layer itself (the payment signature); sent to the first origin only */
  systemHeaders?: Record<string, string>;
  /** false: a redirect is the answer (status and Location), never followed (default true) */
  followRedirects?: boolean;
  /** resolver (default: the system's); returns every address of the host */
  resolve?: (host: string) => Promise<{ address: string; family: number }[]>;
}

export interface SafeRequest {
  url: string;
  method?: string;
  /** headers the caller chose to forward; identity, credential and hop-by-hop headers are refused */
  headers?: Record<string, string>;
  /** the body to send (POST/PUT/PATCH); a string is sent as is, anything else as JSON */
  body?: unknown;
}

export interface SafeResponse {
  status: number;
  /** the final URL after redirects */
  url: string;
  headers: Record<string, string>;
  contentType: string;
  body: Buffer;
  header(name: string): string | undefined;
}

const METHODS = new Set(['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE']);

/** Header names a caller may never set: credentials, cookies, forwarding/identity, hop-by-hop, payment. */
function forbiddenHeader(name: string): boolean {
  return (
    /^(authorization|proxy-authorization|cookie|cookie2|set-cookie|forwarded|via|x-real-ip|true-client-ip|client-ip|cf-connecting-ip|from|referer|origin|host|connection|keep-alive|te|trailer|transfer-encoding|upgrade|content-length|expect|proxy-connection|user-agent|payment-signature|payment-required|payment-response|x-payment|x-payment-response)$/.test(
      name,
    ) ||
    name.startsWith('x-forwarded-') ||
    name.startsWith('x-pool-') ||
    name.startsWith('x-client-') ||
    name.startsWith('proxy-') ||
    name.startsWith('sec-')
  );
}

/** Validates and normalises the caller's headers (lower-case names); throws forbidden_header. */
export function sanitizeHeaders(headers: Record<string, string> | undefined): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  if (typeof headers !== 'object' || headers === null || Array.isArray(headers))
    throw new X402Error('forbidden_header', 'headers must be an object of name → string value');
  const entries = Object.entries(headers);
  if (entries.length > MAX_REQUEST_HEADERS)
    throw new X402Error('forbidden_header', `at most ${MAX_REQUEST_HEADERS} headers may be forwarded`);
  for (const [rawName, value] of entries) {
    const name = rawName.toLowerCase();
    if (!/^[!#$%&'*+.^_`|~0-9a-z-]{1,64}$/.test(name))
      throw new X402Error('forbidden_header', `invalid header name ${JSON.stringify(rawName)}`);
    if (forbiddenHeader(name))
      throw new X402Error('forbidden_header', `header ${name} is never forwarded to a service`, {
        header: name,
      });
    if (typeof value !== 'string' || value.length > MAX_HEADER_VALUE || /[\r\n\0]/.test(value))
      throw new X402Error('forbidden_header', `invalid value for header ${name}`, { header: name });
    out[name] = value;
  }
  return out;
}

/** Parses and checks a service URL: http(s), a host, no credentials in it. */
export function parseServiceUrl(text: string): URL {
  let url: URL;
  try {
    url = new URL(text);
  } catch {
    throw new X402Error('bad_url', `not a URL: ${String(text).slice(0, 200)}`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:')
    throw new X402Error('bad_url', `only http and https URLs can be fetched, not ${url.protocol}`);
  if (url.username || url.password) throw new X402Error('bad_url', 'the URL must not carry credentials');
  if (!url.hostname) throw new X402Error('bad_url', 'the URL has no host');
  if (text.length > 2048) throw new X402Error('bad_url', 'the URL is longer than 2048 characters');
  return url;
}

function defaultPort(url: URL): string {
  return url.port || (url.protocol === 'https:' ? '443' : '80');
}

/**
 * An allow-list as configured (POOL_PROXY_PAY_ALLOWED_HOSTS): comma-separated `host` or `host:port`
 * (`[v6]:port` for IPv6), lower-cased; throws RangeError naming a malformed entry.
 */
export function parseAllowedHosts(text: string | undefined): string[] {
  const out: string[] = [];
  for (const raw of (text ?? '').split(',')) {
    const entry = raw.trim().toLowerCase();
    if (!entry) continue;
    const m = /^(\[[0-9a-f:.]+\]|[a-z0-9]([a-z0-9.-]*[a-z0-9])?)(?::(\d{1,5}))?$/.exec(entry);
    if (!m || (m[3] !== undefined && Number(m[3]) > 65535))
      throw new RangeError(`allowed host ${JSON.stringify(raw.trim())} is not host or host:port`);
    out.push(entry);
  }
  return out;
}

/** True when `url`'s host (any port) or host:port is in the allow-list. */
export function isAllowedHost(url: URL, allowed: readonly string[]): boolean {
  const host = url.hostname.toLowerCase();
  const port = defaultPort(url);
  return allowed.some((entry) => {
    const e = entry.trim().toLowerCase();
    const m = /^(\[[^\]]+\]|[^:]+)(?::(\d{1,5}))?$/.exec(e);
    if (!m) return false;
    return m[1] === host && (m[2] === undefined || m[2] === port);
  });
}

/** Resolves the URL's host and checks every address; returns the address to connect to. */
async function checkedAddress(
  url: URL,
  opts: SafeFetchOptions,
): Promise<{ address: string; family: number }> {
  const host = url.hostname.replace(/^\[|\]$/g, '');
  let addrs: { address: string; family: number }[];
  if (isIP(host)) addrs = [{ address: host, family: isIP(host) }];
  else {
    try {
      addrs = await (opts.resolve ?? ((h) => dnsLookup(h, { all: true, verbatim: true })))(host);
    } catch (e) {
      throw new X402Error(
        'dns_failed',
        `cannot resolve ${host}: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}`,
      );
    }
    if (addrs.length === 0) throw new X402Error('dns_failed', `${host} has no address`);
  }
  if (!isAllowedHost(url, opts.allowedHosts ?? [])) {
    for (const a of addrs) {
      const cls = addressClass(a.address);
      if (cls)
        throw new X402Error(
          'private_address',
          `${host} resolves to a ${cls.replace('_', '-')} address (${a.address})`,
          {
            host,
            address: a.address,
            addressClass: cls,
          },
        );
    }
  }
  return addrs[0] as { address: string; family: number };
}

function encodeBody(body: unknown, headers: Record<string, string>): Buffer | undefined {
  if (body === undefined || body === null) return undefined;
  if (typeof body === 'string') return Buffer.from(body);
  if (body instanceof Uint8Array) return Buffer.from(body);
  headers['content-type'] ??= 'application/json';
  return Buffer.from(JSON.stringify(body));
}

/** One request to the checked address; the body is read up to the size cap. */
function requestOnce(
  url: URL,
  target: { address: string; family: number },
  method: string,
  headers: Record<string, string>,
  body: Buffer | undefined,
  maxBytes: number,
  signal: AbortSignal,
  ca: string | Buffer | undefined,
): Promise<{ status: number; headers: http.IncomingHttpHeaders; body: Buffer }> {
  // every lookup of this request answers with the address that was checked
  const pinned: LookupFunction = (_host, options, cb) => {
    if ((options as { all?: boolean }).all) (cb as unknown as (e: null, a: object[]) => void)(null, [target]);
    else cb(null, target.address, target.family);
  };
  const mod = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = mod.request(
      url,
      {
        method,
        headers: { ...headers, ...(body && { 'content-length': String(body.length) }) },
        lookup: pinned,
        signal,
        agent: false,
        ...(ca !== undefined && { ca }),
      },
      (res) => {
        const declared = Number(res.headers['content-length']);
        if (Number.isFinite(declared) && declared > maxBytes) {
          res.destroy();
          reject(
            new X402Error('too_large', `the response is larger than ${maxBytes} bytes`, { limit: maxBytes }),
          );
          return;
        }
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (chunk: Buffer) => {
          size += chunk.length;
          if (size > maxBytes) {
            res.destroy();
            reject(
              new X402Error('too_large', `the response is larger than ${maxBytes} bytes`, {
                limit: maxBytes,
              }),
            );
            return;
          }
          chunks.push(chunk);
        });
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
        );
        res.on('error', reject);
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

function flatten(headers: http.IncomingHttpHeaders): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [k, v] of Object.entries(headers))
    if (v !== undefined) out[k] = Array.isArray(v) ? v.join(', ') : v;
  return out;
}

/** Fetches `request` under the rules above. Throws X402Error (bad_url, private_address, too_large, timeout…). */
export async function safeFetch(request: SafeRequest, opts: SafeFetchOptions = {}): Promise<SafeResponse> {
  let url = parseServiceUrl(request.url);
  let method = (request.method ?? 'GET').toUpperCase();
  if (!METHODS.has(method)) throw new X402Error('bad_url', `method ${method} is not allowed`);
  const callerHeaders = sanitizeHeaders(request.headers);
  let headers: Record<string, string> = {
    accept: 'application/json, */*;q=0.5',
    ...callerHeaders,
    ...opts.systemHeaders,
    'user-agent': USER_AGENT,
  };
  let body = encodeBody(request.body, headers);
  if (body && (method === 'GET' || method === 'HEAD'))
    throw new X402Error('bad_url', `a ${method} request cannot carry a body`);
  const maxBytes = opts.maxResponseBytes ?? DEFAULT_MAX_RESPONSE_BYTES;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const signal = AbortSignal.timeout(timeoutMs);
  const timedOut = () => new X402Error('timeout', `no complete answer within ${timeoutMs} ms`, { timeoutMs });

  for (let hop = 0; ; hop++) {
    let res: { status: number; headers: http.IncomingHttpHeaders; body: Buffer };
    try {
      const target = await Promise.race([
        checkedAddress(url, opts),
        new Promise<never>((_, reject) => {
          if (signal.aborted) reject(timedOut());
          signal.addEventListener('abort', () => reject(timedOut()), { once: true });
        }),
      ]);
      if (signal.aborted) throw timedOut();
      res = await requestOnce(url, target, method, headers, body, maxBytes, signal, opts.ca);
    } catch (e) {
      if (e instanceof X402Error) throw e;
      if (signal.aborted) throw timedOut();
      throw new X402Error('connection_failed', `cannot reach ${url.host}: ${(e as Error).message}`);
    }
    const location = res.headers.location;
    if (
      opts.followRedirects !== false &&
      res.status >= 300 &&
      res.status < 400 &&
      location &&
      res.status !== 304
    ) {
      if (hop >= MAX_REDIRECTS)
        throw new X402Error('too_many_redirects', `more than ${MAX_REDIRECTS} redirects`, {
          limit: MAX_REDIRECTS,
        });
      let next: URL;
      try {
        next = parseServiceUrl(new URL(location, url).toString());
      } catch (e) {
        throw new X402Error('bad_url', `redirect to an invalid location: ${(e as Error).message}`);
      }
      if (res.status === 303 || ((res.status === 301 || res.status === 302) && method === 'POST')) {
        method = method === 'HEAD' ? 'HEAD' : 'GET';
        body = undefined;
        const { 'content-type': _dropped, ...rest } = headers;
        headers = rest;
      }
      if (next.origin !== url.origin) {
        // another origin gets none of the caller's headers
        headers = {
          accept: headers.accept as string,
          'user-agent': USER_AGENT,
          ...(body && headers['content-type'] && { 'content-type': headers['content-type'] }),
        };
      }
      url = next;
      continue;
    }
    const flat = flatten(res.headers);
    return {
      status: res.status,
      url: url.toString(),
      headers: flat,
      contentType: flat['content-type'] ?? '',
      body: res.body,
      header: (name: string) => flat[name.toLowerCase()],
    };
  }
}
