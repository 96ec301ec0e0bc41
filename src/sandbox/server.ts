// HTTP front of the sandbox: JSON-RPC 2.0 at POST /rpc, GET /friendbot?addr=G…&usdc=N, GET /sandbox/info;
// served over HTTP and, when a certificate is given, over HTTPS as well (the same routes). Until the genesis
// deployment is done, every route answers 503 with Retry-After (except the deployment's own requests), and
// no request, whatever it holds or whenever it comes, can throw out of the handler.
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import { RPC_ERRORS } from './rpc.ts';

const MAX_BODY_BYTES = 2 * 1024 * 1024;
const ROUTES = new Set([
  'POST /rpc',
  'POST /',
  'GET /friendbot',
  'POST /friendbot',
  'GET /sandbox/info',
  'POST /sandbox/advance',
]);

export interface HttpHandlers {
  rpc: (request: unknown) => Promise<Record<string, unknown> | undefined>;
  friendbot: (query: URLSearchParams) => Promise<{ status: number; body: unknown }>;
  info: () => unknown;
  /** Sandbox-only `POST /sandbox/advance?ledgers=N` (absent: the route does not exist). */
  advance?: (ledgers: number) => Promise<{ sequence: number }>;
  /** Whether this request must wait for the genesis deployment (true answers 503 with Retry-After). */
  starting: (req: IncomingMessage) => boolean;
}

/** Seconds a client is asked to wait while the genesis deployment runs (it takes about a second). */
export const GENESIS_RETRY_AFTER_SECONDS = 1;
const STARTING_DETAIL = 'the sandbox is still deploying its genesis contracts: retry shortly';

/** The 503 of a request that came during genesis, in the route's own shape (JSON-RPC error or problem). */
function sendStarting(res: ServerResponse, route: string): void {
  const headers = { 'retry-after': String(GENESIS_RETRY_AFTER_SECONDS) };
  if (route.endsWith(' /rpc') || route.endsWith(' /')) {
    send(
      res,
      503,
      { jsonrpc: '2.0', id: null, error: { code: RPC_ERRORS.internal, message: STARTING_DETAIL } },
      headers,
    );
    return;
  }
  send(
    res,
    503,
    { type: 'sandbox_starting', title: 'Service Unavailable', status: 503, detail: STARTING_DETAIL },
    headers,
  );
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

/** `POST /sandbox/advance?ledgers=N`: the next ledger closes N after the latest (sandbox only). */
async function advance(res: ServerResponse, url: URL, run: NonNullable<HttpHandlers['advance']>) {
  const raw = url.searchParams.get('ledgers') ?? '';
  const ledgers = /^\d{1,9}$/.test(raw) ? Number(raw) : Number.NaN;
  try {
    send(res, 200, await run(ledgers));
  } catch (e) {
    if (!(e instanceof RangeError)) throw e;
    send(res, 400, { type: 'bad_request', title: 'Bad Request', status: 400, detail: e.message });
  }
}

export function createHttpServer(h: HttpHandlers, tls?: { cert: string; key: string }): Server {
  const route = (req: IncomingMessage, res: ServerResponse, url: URL, name: string): void => {
    const done = (p: Promise<void>) =>
      p.catch((e) => {
        if (!res.headersSent) send(res, 500, { error: (e as Error).message });
      });
    if (name === 'POST /rpc' || name === 'POST /') done(handleRpc(req, res, h.rpc));
    else if (name === 'GET /friendbot' || name === 'POST /friendbot')
      // Any origin may read friendbot's answer (as with the public testnet friendbot), so a wallet page
      // served by the proxy can fund its wallet.
      done(
        h
          .friendbot(url.searchParams)
          .then(({ status, body }) => send(res, status, body, { 'access-control-allow-origin': '*' })),
      );
    else if (name === 'GET /sandbox/info') send(res, 200, h.info());
    else if (name === 'POST /sandbox/advance' && h.advance) done(advance(res, url, h.advance));
    else send(res, 404, { error: `no route ${req.method} ${url.pathname}` });
  };
  const listener = (req: IncomingMessage, res: ServerResponse) => {
    try {
      const url = new URL(req.url ?? '/', 'http://sandbox');
      const name = `${req.method} ${url.pathname.replace(/\/+$/, '') || '/'}`;
      const known = ROUTES.has(name);
      if (known && h.starting(req)) {
        // the request body is left unread: Node discards it once the answer is sent
        sendStarting(res, name);
        return;
      }
      route(req, res, url, name);
    } catch (e) {
      // a handler's synchronous failure answers this request only; it never reaches the process
      if (!res.headersSent) send(res, 500, { error: (e as Error).message });
    }
  };
  const server = tls ? createHttpsServer({ cert: tls.cert, key: tls.key }, listener) : createServer(listener);
  // longer than clients' idle-connection reuse, so a busy moment never races a keep-alive close
  server.keepAliveTimeout = 65_000;
  return server;
}
