// safeFetch against real HTTP(S) servers on loopback: every refused address class (by literal and through
// a resolver), https to a pinned address, a redirect to a private address, redirect limits, redirects not
// followed for a payment (the quote refuses them; the paid request's signature reaches no other URL), the size
// and time caps, the allow-list, and what reaches the service (a recording server sees only the caller's
// explicit headers and body).
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type IncomingMessage, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { TLSSocket } from 'node:tls';
import test from 'ava';
import {
  addressClass,
  isX402Error,
  parseAllowedHosts,
  safeFetch,
  USER_AGENT,
  type AddressClass,
  quote,
  type X402Error,
} from '../../src/x402/index.ts';

interface Seen {
  method: string;
  url: string;
  headers: IncomingMessage['headers'];
  body: string;
}
const seen: Seen[] = [];
let server: Server;
let base: string;
let host: string;

test.before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      seen.push({
        method: req.method!,
        url: req.url!,
        headers: req.headers,
        body: Buffer.concat(chunks).toString(),
      });
      const u = new URL(req.url!, 'http://x');
      if (u.pathname === '/big') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        res.end(Buffer.alloc(2048, 1));
      } else if (u.pathname === '/big-chunked') {
        res.writeHead(200, { 'content-type': 'application/octet-stream' });
        for (let i = 0; i < 4; i++) res.write(Buffer.alloc(1024, 1));
        res.end();
      } else if (u.pathname === '/slow') {
        setTimeout(() => res.end('late'), 3000).unref();
      } else if (u.pathname === '/redirect') {
        res.writeHead(302, { location: u.searchParams.get('to')! });
        res.end();
      } else if (u.pathname === '/loop') {
        res.writeHead(307, { location: '/loop' });
        res.end();
      } else if (u.pathname === '/see-other') {
        res.writeHead(303, { location: '/echo' });
        res.end();
      } else {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ ok: true, path: u.pathname }));
      }
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  host = `127.0.0.1:${(server.address() as AddressInfo).port}`;
  base = `http://${host}`;
});
test.after.always(() => new Promise<void>((r) => server.close(() => r())));

const allowed = () => ({ allowedHosts: [host] });
async function code(p: Promise<unknown>): Promise<string | undefined> {
  try {
    await p;
    return undefined;
  } catch (e) {
    if (!isX402Error(e)) throw e;
    return (e as X402Error).code;
  }
}

test.serial('address classes', (t) => {
  const cases: [string, AddressClass | undefined][] = [
    ['127.0.0.1', 'loopback'],
    ['127.9.9.9', 'loopback'],
    ['::1', 'loopback'],
    ['10.1.2.3', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.255', 'private'],
    ['192.168.1.1', 'private'],
    ['fd12:3456::1', 'private'],
    ['169.254.1.1', 'link_local'],
    ['fe80::1', 'link_local'],
    ['100.64.0.1', 'cgnat'],
    ['0.0.0.0', 'unspecified'],
    ['::', 'unspecified'],
    ['224.0.0.1', 'multicast'],
    ['ff02::1', 'multicast'],
    ['169.254.169.254', 'metadata'],
    ['fd00:ec2::254', 'metadata'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['::ffff:7f00:1', 'loopback'],
    ['::ffff:169.254.169.254', 'metadata'],
    ['0:0:0:0:0:ffff:127.0.0.1', 'loopback'],
    ['::ffff:8.8.8.8', undefined], // IPv4-mapped: the IPv4 address itself
    ['255.255.255.255', 'reserved'],
    ['192.88.99.1', 'reserved'],
    ['8.8.8.8', undefined],
    ['172.32.0.1', undefined],
    ['2606:4700::1111', undefined],
    ['2001:4860:4860::8888', undefined],
    ['not-an-address', 'reserved'],
  ];
  for (const [addr, cls] of cases) t.is(addressClass(addr), cls, addr);
});

// Every special-use IPv6 range that carries or routes to an IPv4 address is non-public, whatever it carries;
// a carried non-public IPv4 address keeps its own class.
test.serial('IPv6 forms that embed or route to IPv4 are never public', (t) => {
  const cases: [string, string, AddressClass][] = [
    ['IPv4-compatible (RFC 4291 §2.5.5.1)', '::127.0.0.1', 'loopback'],
    ['IPv4-compatible, hex', '::7f00:1', 'loopback'],
    ['IPv4-compatible, metadata', '::169.254.169.254', 'metadata'],
    ['IPv4-compatible, private', '::a00:1', 'private'],
    ['IPv4-compatible, public', '::8.8.8.8', 'reserved'],
    ['IPv4-compatible, bracketed', '[::127.0.0.1]', 'loopback'],
    ['SIIT IPv4-translated (RFC 6145)', '::ffff:0:127.0.0.1', 'loopback'],
    ['SIIT, hex', '::ffff:0:a9fe:a9fe', 'metadata'],
    ['SIIT, public', '::ffff:0:808:808', 'reserved'],
    ['NAT64 well-known (RFC 6052)', '64:ff9b::127.0.0.1', 'loopback'],
    ['NAT64 well-known, hex', '64:ff9b::a9fe:a9fe', 'metadata'],
    ['NAT64 well-known, public', '64:ff9b::808:808', 'reserved'],
    ['NAT64 local-use (RFC 8215)', '64:ff9b:1::7f00:1', 'reserved'],
    ['NAT64 local-use, /48 edge', '64:ff9b:1:ffff:ffff:ffff:ffff:ffff', 'reserved'],
    ['6to4 (RFC 3056)', '2002:7f00:1::', 'loopback'],
    ['6to4, metadata', '2002:a9fe:a9fe::1', 'metadata'],
    ['6to4, private', '2002:c0a8:101::1', 'private'],
    ['6to4, public', '2002:808:808::1', 'reserved'],
    ['Teredo (RFC 4380), client 127.0.0.1 (inverted)', '2001:0:4136:e378:8000:63bf:80ff:fffe', 'loopback'],
    ['Teredo, public client', '2001:0:4136:e378:8000:63bf:f7f7:f7f7', 'reserved'],
    ['Teredo, /32 edge', '2001:0:ffff:ffff:ffff:ffff:f7f7:f7f7', 'reserved'],
  ];
  for (const [form, address, cls] of cases) t.is(addressClass(address), cls, `${form}: ${address}`);
  // next to each range in global unicast, the first address outside it is public
  for (const outside of ['2001:1::1', '2003::1', '2001:db9::1', '2001:3::1'])
    t.is(addressClass(outside), undefined, outside);
  // and nothing outside global unicast (2000::/3) is, whatever it looks like
  for (const other of ['64:ff9b:2::1', '64:ff9b:0:0:1::1', '::1:0:0:1', '::fffe:0:0:1', '4000::1', 'e000::1'])
    t.is(addressClass(other), 'reserved', other);
});

test.serial('each refused class is refused by literal URL, before any connection', async (t) => {
  for (const h of [
    '127.0.0.1',
    '[::1]',
    '10.0.0.1',
    '192.168.0.10',
    '169.254.169.254',
    '[fd00:ec2::254]',
    '100.64.1.1',
    '0.0.0.0',
    '224.0.0.1',
    '[fe80::1]',
    '[::127.0.0.1]',
    '[::7f00:1]',
    '[::169.254.169.254]',
    '[::ffff:0:7f00:1]',
    '[2002:7f00:1::]',
    '[2001:0:4136:e378:8000:63bf:80ff:fffe]',
    '[64:ff9b:1::7f00:1]',
  ]) {
    const err = await safeFetch({ url: `http://${h}:9/x` }, { timeoutMs: 2000 }).catch((e) => e);
    t.true(isX402Error(err, 'private_address'), h);
    t.truthy((err as X402Error).details.addressClass);
  }
});

test.serial('a host name resolving to a private address is refused (any of its addresses)', async (t) => {
  const resolve = async (h: string) =>
    h === 'mixed.example'
      ? [
          { address: '93.184.216.34', family: 4 },
          { address: '10.0.0.7', family: 4 },
        ]
      : [{ address: '169.254.169.254', family: 4 }];
  t.is(await code(safeFetch({ url: 'http://metadata.example/latest' }, { resolve })), 'private_address');
  t.is(await code(safeFetch({ url: 'http://mixed.example/' }, { resolve })), 'private_address');
});

test.serial(
  'the checked address is the one connected to (a name resolving to an allow-listed loopback)',
  async (t) => {
    const port = new URL(base).port;
    let calls = 0;
    const resolve = async () => {
      calls++;
      return [{ address: '127.0.0.1', family: 4 }];
    };
    const res = await safeFetch(
      { url: `http://svc.test:${port}/pinned` },
      { resolve, allowedHosts: [`svc.test:${port}`] },
    );
    t.is(res.status, 200);
    t.is(calls, 1);
    t.is(seen.at(-1)?.headers.host, `svc.test:${port}`);
    // allow-listed on another port only: refused
    t.is(
      await code(safeFetch({ url: `http://svc.test:${port}/x` }, { resolve, allowedHosts: ['svc.test:1'] })),
      'private_address',
    );
  },
);

test.serial('bad URLs and methods', async (t) => {
  for (const url of [
    'ftp://example.com/',
    'file:///etc/passwd',
    'not a url',
    'http://user:pw@example.com/',
    `http://x.com/${'a'.repeat(2100)}`,
  ])
    t.is(await code(safeFetch({ url })), 'bad_url', url);
  t.is(await code(safeFetch({ url: `${base}/`, method: 'CONNECT' }, allowed())), 'bad_url');
  t.is(await code(safeFetch({ url: `${base}/`, method: 'GET', body: 'x' }, allowed())), 'bad_url');
});

test.serial('an allow-listed host is fetched; a redirect to a private address is refused', async (t) => {
  const ok = await safeFetch({ url: `${base}/hello` }, allowed());
  t.is(ok.status, 200);
  t.deepEqual(JSON.parse(ok.body.toString()), { ok: true, path: '/hello' });
  t.is(ok.contentType, 'application/json');
  const to = encodeURIComponent('http://169.254.169.254/latest/meta-data');
  t.is(await code(safeFetch({ url: `${base}/redirect?to=${to}` }, allowed())), 'private_address');
  const toFile = encodeURIComponent('file:///etc/passwd');
  t.is(await code(safeFetch({ url: `${base}/redirect?to=${toFile}` }, allowed())), 'bad_url');
  t.is(await code(safeFetch({ url: `${base}/loop` }, allowed())), 'too_many_redirects');
  // an allowed same-host redirect is followed; 303 turns a POST into a GET without body
  const followed = await safeFetch({ url: `${base}/see-other`, method: 'POST', body: { a: 1 } }, allowed());
  t.is(followed.status, 200);
  t.is(new URL(followed.url).pathname, '/echo');
  t.is(seen.at(-1)?.method, 'GET');
  t.is(seen.at(-1)?.body, '');
});

test.serial(
  'with followRedirects: false a redirect is the answer, and the system headers go nowhere else',
  async (t) => {
    const before = seen.length;
    const res = await safeFetch(
      { url: `${base}/redirect?to=${encodeURIComponent('/admin')}` },
      { ...allowed(), followRedirects: false, systemHeaders: { 'payment-signature': 'signed-for-this-url' } },
    );
    t.is(res.status, 302);
    t.is(res.header('location'), '/admin');
    t.is(new URL(res.url).pathname, '/redirect');
    t.is(seen.length, before + 1, 'one request, to the URL asked for');
    t.is(seen.at(-1)?.headers['payment-signature'], 'signed-for-this-url');
    t.false(
      seen.slice(before).some((s) => s.url.startsWith('/admin')),
      'the redirect target was never asked',
    );
  },
);

test.serial('a quote answered with a redirect is refused, the target never asked', async (t) => {
  const before = seen.length;
  const payer = {
    rpcUrl: 'http://127.0.0.1:1',
    networkPassphrase: 'Test SDF Network ; September 2015',
    asset: 'C',
  };
  for (const status of ['/redirect', '/see-other', '/loop']) {
    const to = `${base}${status}?to=${encodeURIComponent('/admin')}`;
    const error = await t.throwsAsync(quote({ url: to }, payer, allowed()));
    t.is((error as X402Error).code, 'redirect_refused', status);
    t.truthy((error as X402Error).details.location, status);
  }
  t.deepEqual(
    seen.slice(before).map((s) => new URL(s.url, 'http://x').pathname),
    ['/redirect', '/see-other', '/loop'],
    'only the URLs asked for were fetched',
  );
});

test.serial('size and time caps', async (t) => {
  t.is(await code(safeFetch({ url: `${base}/big` }, { ...allowed(), maxResponseBytes: 1024 })), 'too_large');
  t.is(
    await code(safeFetch({ url: `${base}/big-chunked` }, { ...allowed(), maxResponseBytes: 2000 })),
    'too_large',
  );
  t.is((await safeFetch({ url: `${base}/big` }, { ...allowed(), maxResponseBytes: 4096 })).body.length, 2048);
  t.is(await code(safeFetch({ url: `${base}/slow` }, { ...allowed(), timeoutMs: 300 })), 'timeout');
  const hang = async () => new Promise<never>(() => undefined);
  t.is(await code(safeFetch({ url: 'http://dns.hangs/' }, { resolve: hang, timeoutMs: 300 })), 'timeout');
});

test.serial(
  'only the explicit body and allowed headers reach the service; identity headers are refused',
  async (t) => {
    await safeFetch(
      {
        url: `${base}/echo`,
        method: 'POST',
        headers: { 'Content-Type': 'application/json', 'X-Trace': 't1' },
        body: '{"q":1}',
      },
      allowed(),
    );
    const got = seen.at(-1)!;
    t.is(got.method, 'POST');
    t.is(got.body, '{"q":1}');
    t.is(got.headers['x-trace'], 't1');
    t.is(got.headers['user-agent'], USER_AGENT);
    const names = Object.keys(got.headers).sort();
    t.deepEqual(names, [
      'accept',
      'connection',
      'content-length',
      'content-type',
      'host',
      'user-agent',
      'x-trace',
    ]);
    for (const h of [
      'Authorization',
      'Cookie',
      'X-Forwarded-For',
      'X-Pool-Operator',
      'Forwarded',
      'X-Real-IP',
      'Proxy-Authorization',
      'Payment-Signature',
      'Host',
      'User-Agent',
    ]) {
      t.is(
        await code(safeFetch({ url: `${base}/echo`, headers: { [h]: 'v' } }, allowed())),
        'forbidden_header',
        h,
      );
    }
    t.is(
      await code(safeFetch({ url: `${base}/echo`, headers: { 'x-ok': 'a\r\nb' } }, allowed())),
      'forbidden_header',
    );
    // a JSON body is serialised with its content type
    await safeFetch({ url: `${base}/echo`, method: 'POST', body: { a: [1, 2] } }, allowed());
    t.is(seen.at(-1)?.body, '{"a":[1,2]}');
    t.is(seen.at(-1)?.headers['content-type'], 'application/json');
  },
);

test.serial('a connection refused is a typed error', async (t) => {
  t.is(
    await code(safeFetch({ url: 'http://127.0.0.1:9/' }, { allowedHosts: ['127.0.0.1'] })),
    'connection_failed',
  );
});

test.serial('allow-lists parse from configuration text', (t) => {
  t.deepEqual(parseAllowedHosts(' Demo.Local:8403, api.example.com ,[::1]:80,,'), [
    'demo.local:8403',
    'api.example.com',
    '[::1]:80',
  ]);
  t.deepEqual(parseAllowedHosts(undefined), []);
  for (const bad of ['http://x.com', 'x.com:99999', 'a b', 'x.com:', '-x.com', 'x.com/path'])
    t.throws(() => parseAllowedHosts(bad), { instanceOf: RangeError }, bad);
});

test.serial(
  'https goes to the checked address and still verifies the certificate for the host name',
  async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'safe-fetch-tls-'));
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    execFileSync(
      'openssl',
      [
        'req',
        '-x509',
        '-newkey',
        'ec',
        '-pkeyopt',
        'ec_paramgen_curve:prime256v1',
        '-nodes',
        '-days',
        '1',
        '-subj',
        '/CN=svc.test',
        '-addext',
        'subjectAltName=DNS:svc.test',
        '-keyout',
        join(dir, 'key.pem'),
        '-out',
        join(dir, 'cert.pem'),
      ],
      { stdio: 'ignore' },
    );
    const cert = readFileSync(join(dir, 'cert.pem'));
    let servername: string | undefined;
    const tls = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert }, (req, res) => {
      servername = (req.socket as TLSSocket).servername || undefined;
      res.end('secure');
    });
    await new Promise<void>((r) => tls.listen(0, '127.0.0.1', r));
    t.teardown(() => new Promise<void>((r) => tls.close(() => r())));
    const port = (tls.address() as AddressInfo).port;
    const opts = {
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
      allowedHosts: [`svc.test:${port}`],
    };
    const res = await safeFetch({ url: `https://svc.test:${port}/` }, { ...opts, ca: cert });
    t.is(res.body.toString(), 'secure');
    t.is(servername, 'svc.test');
    // the certificate is checked against the host name, not the pinned address
    t.is(await code(safeFetch({ url: `https://svc.test:${port}/` }, opts)), 'connection_failed');
  },
);
