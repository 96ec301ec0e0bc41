// An owner's service rules (allowedServices, deniedServices: an http(s) origin with an optional path prefix)
// and the one question they answer: may this URL be paid? Rules and URLs are compared in a normalised form,
// not as text: the WHATWG parse (tabs and newlines dropped, `\` read as `/`, dot-segments removed, the host
// lower-cased, default ports dropped), then trailing dots of the host dropped, every loopback name or address
// read as one host, and percent-escapes of unreserved characters decoded. A deny rule also covers what a
// lenient server may route to the same place (any case, repeated `/`, `;params`); an allow rule covers only
// the canonical spelling. A path holding an encoded `/`, `\`, `;` or `%` is refused outright under a path
// rule: servers disagree on what it means. docs/POLICY.md says what is and is not covered.
import { DomainError } from './errors.ts';

/** What the rules compare of a URL or a rule. */
interface ServiceKey {
  scheme: string;
  /** the host, normalised; every loopback name or address is LOOPBACK */
  host: string;
  /** the port, the scheme's default when none is written */
  port: string;
  /** the path, canonical (unreserved escapes decoded, other escapes in upper case); '' for a rule on an origin */
  path: string;
}

const LOOPBACK = '(loopback)';
const UNRESERVED = /^[A-Za-z0-9\-._~]$/;
/**
 * Escapes whose meaning servers disagree on inside a path: `/`, `\`, `;`, and `%` itself (a server that
 * decodes twice reads `%2561` as `a`).
 */
const AMBIGUOUS_ESCAPE = /%(2f|5c|3b|25)/i;

/** `localhost`, `*.localhost`, 127.0.0.0/8, 0.0.0.0, `[::1]`, `[::]`, IPv4-mapped 127/8: all reach this host. */
function isLoopback(host: string): boolean {
  return (
    host === 'localhost' ||
    host.endsWith('.localhost') ||
    /^127\.\d+\.\d+\.\d+$/.test(host) ||
    host === '0.0.0.0' ||
    host === '[::1]' ||
    host === '[::]' ||
    /^\[::ffff:7f[0-9a-f]{2}:[0-9a-f]{1,4}\]$/.test(host)
  );
}

function normalHost(hostname: string): string {
  const host = hostname.replace(/\.+$/, '');
  return isLoopback(host) ? LOOPBACK : host;
}

/** Decodes percent-escapes of unreserved characters; other escapes get upper-case hex. */
export function canonicalPath(pathname: string): string {
  return pathname.replace(/%([0-9a-fA-F]{2})/g, (_m, hex: string) => {
    const c = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(c) ? c : `%${hex.toUpperCase()}`;
  });
}

/**
 * The path as a lenient server may read it: any case, `;params` cut from each segment, empty segments
 * (repeated `/`) dropped, and the dot-segments that reveals resolved.
 */
function lenientPath(path: string): string {
  const out: string[] = [];
  for (const raw of path.toLowerCase().split('/')) {
    const segment = raw.replace(/;.*$/, '');
    if (segment === '' || segment === '.') continue;
    if (segment === '..') out.pop();
    else out.push(segment);
  }
  return out.map((s) => `/${s}`).join('');
}

function keyOf(url: URL, path: string): ServiceKey {
  return {
    scheme: url.protocol,
    host: normalHost(url.hostname),
    port: url.port || (url.protocol === 'https:' ? '443' : '80'),
    path,
  };
}

function sameOrigin(a: ServiceKey, b: ServiceKey): boolean {
  return a.scheme === b.scheme && a.host === b.host && a.port === b.port;
}

/** `path` is `prefix` or below it ('' covers every path). */
function under(path: string, prefix: string): boolean {
  return prefix === '' || path === prefix || path.startsWith(`${prefix}/`);
}

/** A service rule as stored: `origin` plus its canonical path prefix without trailing `/`; or what is wrong. */
export function parseServicePattern(value: string): string | { error: string } {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return { error: `"${value.slice(0, 80)}" is not an absolute URL` };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return { error: 'must be http or https' };
  if (url.username !== '' || url.password !== '') return { error: 'must not carry credentials' };
  if (url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#'))
    return { error: 'an origin, optionally with a path prefix: no query or fragment' };
  const path = canonicalPath(url.pathname).replace(/\/+$/, '');
  if (AMBIGUOUS_ESCAPE.test(path) || path.includes(';'))
    return { error: "a path prefix must not hold ';' or an encoded '/', '\\', ';' or '%'" };
  if (path.includes('//')) return { error: "a path prefix must not hold an empty segment ('//')" };
  const host = url.hostname.replace(/\.+$/, '');
  return `${url.protocol}//${host}${url.port === '' ? '' : `:${url.port}`}${path}`;
}

function ruleKey(pattern: string): ServiceKey {
  const url = new URL(pattern);
  return keyOf(url, canonicalPath(url.pathname).replace(/\/+$/, ''));
}

/** Whether deny rule `pattern` covers `url`: any spelling a lenient server may route under its prefix. */
export function denies(pattern: string, url: URL): boolean {
  const rule = ruleKey(pattern);
  const key = keyOf(url, canonicalPath(url.pathname));
  return sameOrigin(rule, key) && under(lenientPath(key.path), lenientPath(rule.path));
}

/** Whether allow rule `pattern` covers `url`: its canonical spelling under the prefix, and read leniently too. */
export function allows(pattern: string, url: URL): boolean {
  const rule = ruleKey(pattern);
  const key = keyOf(url, canonicalPath(url.pathname));
  if (!sameOrigin(rule, key)) return false;
  return under(key.path, rule.path) && under(lenientPath(key.path), lenientPath(rule.path));
}

/** The service rules of a policy. */
export interface ServiceRules {
  allowedServices: readonly string[];
  deniedServices: readonly string[];
}

/**
 * The service rules against the URL a payment is for: an encoded `/`, `\`, `;` or `%` in its path under a path
 * rule of its origin, then the denied services, then the allowed ones. Throws the DomainError that names the
 * rule; a URL that does not parse is left to the quote, which refuses it.
 */
export function checkService(rules: ServiceRules, serviceUrl: string): void {
  let url: URL;
  try {
    url = new URL(serviceUrl);
  } catch {
    return;
  }
  const key = keyOf(url, canonicalPath(url.pathname));
  const pathRule = [...rules.deniedServices, ...rules.allowedServices].find((p) => {
    const rule = ruleKey(p);
    return rule.path !== '' && sameOrigin(rule, key);
  });
  if (pathRule !== undefined && AMBIGUOUS_ESCAPE.test(key.path))
    throw new DomainError(
      'policy_service_denied',
      `the path holds an encoded '/', '\\', ';' or '%', which servers read differently; the owner's policy has a path rule for this origin (${pathRule}), so the payment is refused`,
      { extra: { rule: 'encodedPath', service: pathRule } },
    );
  const denied = rules.deniedServices.find((p) => denies(p, url));
  if (denied !== undefined)
    throw new DomainError('policy_service_denied', `the owner's policy denies payments to ${denied}`, {
      extra: { rule: 'deniedServices', service: denied },
    });
  if (rules.allowedServices.length > 0 && !rules.allowedServices.some((p) => allows(p, url)))
    throw new DomainError(
      'policy_service_not_allowed',
      `the owner's policy allows payments only to ${rules.allowedServices.join(', ')}`,
      { extra: { rule: 'allowedServices' } },
    );
}
