// HTTP front of the sandbox: JSON-RPC 2.0 at POST /rpc, GET /friendbot?addr=G…&usdc=N, GET /sandbox/info;
// served over HTTP and, when a certificate is given, over HTTPS as well (the same routes).
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { RPC_ERRORS } from './rpc.ts';

const MAX_BODY_BYTES = 2 * 1024 * 1024;

export interface HttpHandlers {
  rpc: (request: unknown) => Promise<Record<string, unknown> | undefined>;
  friendbot: (query: URLSearchParams) => Promise<{ status: number; body: unknown }>;
  info: () => unknown;
}

function send(
  res: ServerResponse,
  status: number,
  body: unknown,
  headers: Record<string, string> = {},
): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': Buffer.byteLength(text),
    ...headers,
  });
  res.end(text);
}

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    // an oversized body is drained (not kept) so the client still receives the 413 answer
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY_BYTES) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_BODY_BYTES ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

async function handleRpc(req: IncomingMessage, res: ServerResponse, rpc: HttpHandlers['rpc']): Promise<void> {
  const body = await readBody(req);
  if (!body) {
    send(res, 413, {
      jsonrpc: '2.0',
      id: null,
      error: { code: RPC_ERRORS.invalidRequest, message: 'request body too large' },
    });
    return;
  }
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    send(res, 200, {
      jsonrpc: '2.0',
      id: null,
      error: { code: RPC_ERRORS.parse, message: 'parse error: body is not JSON' },
    });
    return;
  }
  if (Array.isArray(parsed)) {
    if (parsed.length === 0) {
      send(res, 200, {
        jsonrpc: '2.0',
        id: null,
        error: { code: RPC_ERRORS.invalidRequest, message: 'empty batch' },
      });
      return;
    }
    send(
      res,
      200,
      (await Promise.all(parsed.map((r) => rpc(r)))).filter((r) => r !== undefined),
    );
    return;
  }
  send(res, 200, await rpc(parsed));
}

export function createHttpServer(h: HttpHandlers, tls?: { cert: string; key: string }): Server {
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    const url = new URL(req.url ?? '/', 'http://sandbox');
    const route = `${req.method} ${url.pathname.replace(/\/+$/, '') || '/'}`;
    const done = (p: Promise<void>) =>
      p.catch((e) => {
        if (!res.headersSent) send(res, 500, { error: (e as Error).message });
      });
    if (route === 'POST /rpc' || route === 'POST /') done(handleRpc(req, res, h.rpc));
    else if (route === 'GET /friendbot' || route === 'POST /friendbot')
      // Any origin may read friendbot's answer (as with the public testnet friendbot), so a wallet page
      // served by the proxy can fund its wallet.
      done(
        h
          .friendbot(url.searchParams)
          .then(({ status, body }) => send(res, status, body, { 'access-control-allow-origin': '*' })),
      );
    else if (route === 'GET /sandbox/info') send(res, 200, h.info());
    else send(res, 404, { error: `no route ${req.method} ${url.pathname}` });
  };
  const server = tls ? createHttpsServer({ cert: tls.cert, key: tls.key }, listener) : createServer(listener);
  // longer than clients' idle-connection reuse, so a busy moment never races a keep-alive close
  server.keepAliveTimeout = 65_000;
  return server;
}
