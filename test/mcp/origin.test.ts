// /mcp refuses a browser request from a foreign Origin with 403 before it looks at credentials (DNS rebinding, a
// page in the owner's browser), and answers a tools/call that names no tool, an unknown tool or malformed params
// with JSON-RPC -32602 (Invalid params). A real proxy on loopback, raw HTTP so the headers are exactly these.
import type { JSONRPCErrorResponse } from '@modelcontextprotocol/sdk/types.js';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { jsonOf, problemOf, rawRequest, type RawResponse } from '../proxy/helpers/http.ts';
import { startTestProxy, type TestProxy } from '../proxy/helpers/proxy.ts';
import { loginWallet } from './helpers.ts';

const ALLOWED = 'https://console.example.org';
let proxy: TestProxy;
let token: string;

test.before(async () => {
  proxy = await startTestProxy({ POOL_PROXY_MCP_ALLOWED_ORIGINS: ALLOWED });
  token = await loginWallet(proxy.url, Keypair.random());
});
test.after.always(async () => {
  await proxy?.close();
});

function mcpPost(headers: Record<string, string>, message: unknown): Promise<RawResponse> {
  return rawRequest(`${proxy.url}/mcp`, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      ...headers,
    },
    body: JSON.stringify(message),
  });
}

const initialize = {
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 't', version: '1' } },
};

test('a foreign Origin is refused with 403 before authentication, with or without a valid token', async (t) => {
  for (const origin of ['http://evil.example.com', 'null', `${ALLOWED}:444`, 'http://proxy.test:8080.evil']) {
    for (const auth of [{}, { authorization: `Bearer ${token}` }] as Record<string, string>[]) {
      const res = await mcpPost({ host: 'evil.example.com', origin, ...auth }, initialize);
      t.is(res.status, 403, `${origin} ${JSON.stringify(auth).slice(0, 20)}: ${res.text}`);
      t.is(problemOf(res).code, 'forbidden');
      t.regex(problemOf(res).detail, /POOL_PROXY_MCP_ALLOWED_ORIGINS/);
    }
  }
});

test('the proxy’s own origin, a configured origin and no Origin at all pass to authentication', async (t) => {
  for (const headers of [{ origin: 'http://proxy.test:8080' }, { origin: ALLOWED }, {}] as Record<
    string,
    string
  >[]) {
    const res = await mcpPost(headers, initialize);
    t.is(res.status, 401, JSON.stringify(headers));
    const ok = await mcpPost({ ...headers, authorization: `Bearer ${token}` }, initialize);
    t.is(ok.status, 200, ok.text);
  }
});

function toolCall(params: unknown, id = 7): Promise<RawResponse> {
  return mcpPost(
    { authorization: `Bearer ${token}` },
    { jsonrpc: '2.0', id, method: 'tools/call', ...(params !== undefined && { params }) },
  );
}

test('tools/call without a name, with an unknown tool or with malformed arguments answers -32602', async (t) => {
  const cases: [unknown, RegExp][] = [
    [{ arguments: {} }, /invalid tools\/call params \(name: /],
    [undefined, /invalid tools\/call params/],
    [{ name: 42 }, /invalid tools\/call params \(name: /],
    [{ name: 'pool_balance', arguments: 'all' }, /invalid tools\/call params \(arguments: /],
    [{ name: 'pool_steal', arguments: {} }, /no tool named "pool_steal"/],
  ];
  for (const [params, message] of cases) {
    const res = await toolCall(params);
    t.is(res.status, 200, res.text);
    const answer = jsonOf<JSONRPCErrorResponse>(res);
    t.is(answer.id, 7);
    t.is(answer.error.code, -32602, res.text);
    t.regex(answer.error.message, message);
    t.notRegex(answer.error.message, /"code": "invalid_type"/, 'no schema dump');
  }
  // A known tool still runs (a new wallet has no agent yet: the tool answers not_found, as a tool result).
  const res = await toolCall({ name: 'pool_balance', arguments: {} });
  t.regex(
    jsonOf<{ result: { content: { text: string }[] } }>(res).result.content[0]?.text ?? '',
    /not_found/,
  );
});
