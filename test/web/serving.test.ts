// How the proxy serves the wallet page: the three built files with their types and a strict CSP (no inline
// code; connections only to the proxy and, on the sandbox, its friendbot), nothing else under those paths,
// and a clear problem when the page was never built. Real proxy and real HTTP on loopback.
import test from 'ava';
import { once } from 'node:events';
import { mkdtempSync, readFileSync } from 'node:fs';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Koa from 'koa';
import { buildWeb, WEB_BUILD_DIR } from '../../scripts/build-web.ts';
import { problemMiddleware } from '../../src/proxy/http/problem.ts';
import { webMiddleware } from '../../src/proxy/http/web.ts';
import { silentLogger } from '../../src/proxy/util/logger.ts';
import { problemOf, rawRequest } from '../proxy/helpers/http.ts';
import { startTestProxy } from '../proxy/helpers/proxy.ts';

test.before(async () => {
  await buildWeb();
});

test('GET /, /app.js and /app.css serve the built page under a strict CSP', async (t) => {
  const proxy = await startTestProxy({ POOL_PROXY_SANDBOX_INFO_URL: 'http://127.0.0.1:8123/sandbox/info' });
  t.teardown(() => proxy.close());

  const page = await rawRequest(`${proxy.url}/`);
  t.is(page.status, 200);
  t.is(page.headers['content-type'], 'text/html; charset=utf-8');
  t.is(page.text, readFileSync(join(WEB_BUILD_DIR, 'index.html'), 'utf8'));
  const csp = String(page.headers['content-security-policy']);
  t.regex(csp, /default-src 'none'/);
  t.regex(csp, /script-src 'self'(;|$)/);
  t.regex(csp, /style-src 'self'(;|$)/);
  t.regex(csp, /connect-src 'self' http:\/\/127\.0\.0\.1:8123(;|$)/);
  t.regex(csp, /frame-ancestors 'none'/);
  t.notRegex(csp, /unsafe-inline|unsafe-eval/);
  t.is(page.headers['x-content-type-options'], 'nosniff');
  t.is(page.headers['referrer-policy'], 'no-referrer');
  // The page itself has no inline script or style for the CSP to block.
  t.notRegex(page.text, /<script(?![^>]*\bsrc=)[^>]*>|<style|\sstyle=|\son[a-z]+=/i);

  const js = await rawRequest(`${proxy.url}/app.js`);
  t.is(js.status, 200);
  t.is(js.headers['content-type'], 'text/javascript; charset=utf-8');
  t.true(
    js.text.includes('FREIGHTER_EXTERNAL_MSG_REQUEST'),
    'freighter-api is bundled, not fetched from a CDN',
  );
  const css = await rawRequest(`${proxy.url}/app.css`);
  t.is(css.status, 200);
  t.is(css.headers['content-type'], 'text/css; charset=utf-8');

  // A favicon, so a browser's first request for one is not an error.
  t.regex(page.text, /<link rel="icon" href="\/favicon\.svg"/);
  const icon = await rawRequest(`${proxy.url}/favicon.svg`);
  t.is(icon.status, 200);
  t.is(icon.headers['content-type'], 'image/svg+xml');
  t.regex(icon.text, /^<svg /);

  const head = await rawRequest(`${proxy.url}/`, { method: 'HEAD' });
  t.is(head.status, 200);
  t.is(head.text, '');

  // Only those files: other paths and methods are problems, never files from disk.
  for (const path of ['/app.js.map', '/../package.json', '/%2e%2e/package.json', '/web/src/main.ts']) {
    const res = await rawRequest(`${proxy.url}${path}`);
    t.is(res.status, 404, path);
    t.is(problemOf(res).code, 'not_found', path);
  }
  const post = await rawRequest(`${proxy.url}/`, {
    method: 'POST',
    headers: { 'content-type': 'text/plain' },
    body: 'x',
  });
  t.true(post.status === 404 || post.status === 405);
  t.is(post.headers['content-type'], 'application/problem+json');
});

test('without the sandbox, the CSP allows connections only to the proxy', async (t) => {
  const proxy = await startTestProxy({ POOL_PROXY_NETWORK_PASSPHRASE: 'Test SDF Network ; September 2015' });
  t.teardown(() => proxy.close());
  const page = await rawRequest(`${proxy.url}/`);
  t.regex(String(page.headers['content-security-policy']), /connect-src 'self';/);
});

test('a page that was never built answers a clear problem', async (t) => {
  const app = new Koa();
  app.use(problemMiddleware(silentLogger));
  app.use(webMiddleware({ dir: mkdtempSync(join(tmpdir(), 'pp-web-empty-')) }));
  const server = createServer(app.callback()).listen(0, '127.0.0.1');
  await once(server, 'listening');
  t.teardown(() => void server.close());
  const res = await rawRequest(`http://127.0.0.1:${(server.address() as AddressInfo).port}/`);
  t.is(res.status, 503);
  const problem = problemOf(res);
  t.is(problem.code, 'service_unavailable');
  t.regex(problem.detail, /npm run build/);
});
