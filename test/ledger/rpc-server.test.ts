// The shared Soroban RPC client's transport (node:http, kept-alive connections) against a real HTTP server
// on loopback: results and JSON-RPC errors reach the SDK's callers as with its own transport, an HTTP error
// status fails with it, a server that closes a kept-alive connection is retried once on a new one, and one
// client serves each URL.
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { rpcServer } from '../../src/ledger/rpc-server.ts';

type Handler = (
  body: { method: string; id: unknown },
  req: IncomingMessage,
) => { status?: number; body: string };
let handler: Handler = () => ({ body: '{}' });
let connections = 0;
let server: Server;
let url: string;

test.before(async () => {
  server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const out = handler(JSON.parse(Buffer.concat(chunks).toString()), req);
      res.writeHead(out.status ?? 200, { 'content-type': 'application/json' });
      res.end(out.body);
    });
  });
  server.on('connection', () => connections++);
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/rpc`;
});
test.after.always(() => {
  server.closeAllConnections();
  server.close();
});

const result = (r: unknown) => () => ({ body: JSON.stringify({ jsonrpc: '2.0', id: 1, result: r }) });

test.serial('results come back parsed by the SDK, and calls share kept-alive connections', async (t) => {
  handler = result({ status: 'healthy', latestLedger: 77, oldestLedger: 1, ledgerRetentionWindow: 100 });
  const before = connections;
  for (let i = 0; i < 5; i++) t.is((await rpcServer(url).getHealth()).latestLedger, 77);
  t.is(connections - before, 1);
  t.is(rpcServer(url), rpcServer(url));
});

test.serial('a JSON-RPC error is thrown as the SDK throws it', async (t) => {
  handler = () => ({
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, error: { code: -32602, message: 'invalid params' } }),
  });
  const e = await rpcServer(url)
    .getHealth()
    .then(
      () => undefined,
      (err: unknown) => err,
    );
  t.deepEqual(e, { code: -32602, message: 'invalid params' });
});

test.serial('an HTTP error status fails the call with the status and body', async (t) => {
  handler = () => ({ status: 503, body: '{"error":"busy"}' });
  const e = (await t.throwsAsync(rpcServer(url).getHealth())) as Error & {
    response?: { status: number; data: unknown };
  };
  t.regex(e.message, /503/);
  t.is(e.response?.status, 503);
  t.deepEqual(e.response?.data, { error: 'busy' });
});

test.serial('a kept-alive connection the server closed is retried once on a new one', async (t) => {
  handler = result({ status: 'healthy', latestLedger: 5, oldestLedger: 1, ledgerRetentionWindow: 100 });
  await rpcServer(url).getHealth();
  // the server drops every idle connection, as a server's keep-alive timeout does
  server.closeIdleConnections();
  await new Promise((r) => setTimeout(r, 50));
  t.is((await rpcServer(url).getHealth()).latestLedger, 5);
});

test.serial('an answer that is not JSON fails the call', async (t) => {
  handler = () => ({ body: 'not json' });
  await t.throwsAsync(rpcServer(url).getHealth());
});
