// The proxy's typed client (PoolApi) against a real HTTP server on loopback that answers what a proxy, or
// something in front of it, may answer: a refusal's Retry-After reaches the caller in whole seconds (both of
// RFC 9110's forms), answers that are not problem documents or are too large become typed errors, and a
// client for another caller keeps the transport it was given.
import test from 'ava';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { PoolApi, PoolApiError } from '../../src/api/client.ts';

type Handler = (req: IncomingMessage, res: ServerResponse) => void;
let server: Server;
let baseUrl: string;
let handler: Handler = (_req, res) => res.end();

test.before(async () => {
  server = createServer((req, res) => handler(req, res));
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
test.after.always(() => new Promise<void>((resolve) => server.close(() => resolve())));

function problem(status: number, headers: Record<string, string>, body: object): Handler {
  return (_req, res) => {
    res.writeHead(status, { 'content-type': 'application/problem+json', ...headers });
    res.end(JSON.stringify(body));
  };
}

const pending = {
  type: 'about:blank',
  title: 'Registration pending',
  status: 503,
  code: 'registration_pending',
  detail: 'the new agent is registered in the next slot',
  registrationAt: '2026-11-27T12:00:05.000Z',
};

// One at a time: each test sets what the server answers.
test.serial(
  'Retry-After in seconds is the refusal’s retryAfterSeconds, beside its code and extra',
  async (t) => {
    handler = problem(503, { 'retry-after': '7' }, pending);
    const refusal = await t.throwsAsync(new PoolApi({ baseUrl }).info(), { instanceOf: PoolApiError });
    t.is(refusal.code, 'registration_pending');
    t.is(refusal.status, 503);
    t.is(refusal.retryAfterSeconds, 7);
    t.is(refusal.extra.registrationAt, pending.registrationAt);
  },
);

test.serial('Retry-After as an HTTP-date is counted from now, never negative', async (t) => {
  handler = problem(
    429,
    { 'retry-after': new Date(Date.now() + 30_000).toUTCString() },
    {
      ...pending,
      status: 429,
      code: 'rate_limited',
    },
  );
  const later = await t.throwsAsync(new PoolApi({ baseUrl }).info(), { instanceOf: PoolApiError });
  t.true(later.retryAfterSeconds! >= 28 && later.retryAfterSeconds! <= 31, String(later.retryAfterSeconds));
  handler = problem(
    429,
    { 'retry-after': 'Thu, 01 Jan 2015 00:00:00 GMT' },
    { ...pending, code: 'rate_limited' },
  );
  const past = await t.throwsAsync(new PoolApi({ baseUrl }).info(), { instanceOf: PoolApiError });
  t.is(past.retryAfterSeconds, 0);
});

test.serial('no Retry-After, or one that is neither form, leaves retryAfterSeconds undefined', async (t) => {
  const answers: Array<Record<string, string>> = [
    {},
    { 'retry-after': 'soon' },
    { 'retry-after': '-3' },
    { 'retry-after': '1.5' },
    { 'retry-after': '2026-11-27' },
  ];
  for (const headers of answers) {
    handler = problem(503, headers, pending);
    const refusal = await t.throwsAsync(new PoolApi({ baseUrl }).info(), { instanceOf: PoolApiError });
    t.is(refusal.code, 'registration_pending');
    t.is(refusal.retryAfterSeconds, undefined, JSON.stringify(headers));
  }
});

test.serial(
  'an answer that is no problem document is bad_response, still with its Retry-After',
  async (t) => {
    handler = (_req, res) => {
      res.writeHead(503, { 'content-type': 'text/plain', 'retry-after': '2' });
      res.end('upstream busy');
    };
    const refusal = await t.throwsAsync(new PoolApi({ baseUrl }).info(), { instanceOf: PoolApiError });
    t.is(refusal.code, 'bad_response');
    t.is(refusal.status, 503);
    t.is(refusal.retryAfterSeconds, 2);
    t.regex(refusal.detail, /upstream busy/);
  },
);

test.serial('an answer declaring more than 8 MiB is refused unread', async (t) => {
  let open: ServerResponse | undefined;
  handler = (_req, res) => {
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': String(9 * 1024 * 1024) });
    res.write('{');
    open = res;
  };
  const refusal = await t.throwsAsync(new PoolApi({ baseUrl }).info(), { instanceOf: PoolApiError });
  open?.destroy();
  t.is(refusal.code, 'bad_response');
  t.regex(refusal.detail, /too large/);
});

test.serial(
  'a client for another caller sends through the same injected fetch, with the new token',
  async (t) => {
    const seen: string[] = [];
    handler = (req, res) => {
      seen.push(`${req.url} ${req.headers.authorization ?? '-'}`);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ agents: [] }));
    };
    let viaInjected = 0;
    const publicApi = new PoolApi({
      baseUrl,
      fetch: (input, init) => {
        viaInjected++;
        return fetch(input, init);
      },
    });
    await publicApi.as({ kind: 'wallet', token: 'tok-1' }).agents();
    t.is(viaInjected, 1);
    t.deepEqual(seen, ['/api/agents Bearer tok-1']);
  },
);
