// The Soroban RPC client every part of the service uses: the SDK's rpc.Server, one per URL, with its JSON
// POSTs sent over node:http(s) on kept-alive connections. The SDK's own transport (a fetch adapter on
// WHATWG streams, a new connection per request) cost more CPU than the sandbox took to answer a
// simulation; a burst of payments makes several RPC calls per payment. Everything else of rpc.Server
// (request shapes, response parsing, errors) is the SDK's.
import { Agent as HttpAgent, request as httpRequest, type IncomingMessage } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { rpc } from '#stellar-sdk';

/** Connections kept per RPC host: enough for a burst, bounded so a slow RPC is not flooded. */
const MAX_SOCKETS = 128;
/** An RPC call that has not answered in this long fails (the SDK's transport had no limit at all). */
const TIMEOUT_MS = 120_000;
const MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

const agents = {
  http: new HttpAgent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
  https: new HttpsAgent({ keepAlive: true, maxSockets: MAX_SOCKETS }),
};

interface Response {
  data: unknown;
  status: number;
  statusText: string;
  headers: Record<string, unknown>;
  config: Record<string, unknown>;
}

/** An axios-like HTTP error, as the SDK's callers expect (message, response.status, response.data). */
class HttpError extends Error {
  constructor(
    message: string,
    readonly response?: { status: number; data: unknown },
  ) {
    super(message);
  }
}

function postOnce(url: URL, body: string, headers: Record<string, string>): Promise<Response> {
  const secure = url.protocol === 'https:';
  return new Promise((resolve, reject) => {
    const req = (secure ? httpsRequest : httpRequest)(
      url,
      {
        method: 'POST',
        agent: secure ? agents.https : agents.http,
        headers: {
          ...headers,
          'content-type': 'application/json',
          'content-length': Buffer.byteLength(body),
        },
        timeout: TIMEOUT_MS,
      },
      (res: IncomingMessage) => {
        const chunks: Buffer[] = [];
        let size = 0;
        res.on('data', (c: Buffer) => {
          size += c.length;
          if (size > MAX_RESPONSE_BYTES) req.destroy(new HttpError('the RPC answer is too large'));
          else chunks.push(c);
        });
        res.on('error', reject);
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          let data: unknown = text;
          let json = true;
          try {
            data = JSON.parse(text);
          } catch {
            json = false;
          }
          const status = res.statusCode ?? 0;
          if (status < 200 || status >= 300)
            return reject(new HttpError(`Request failed with status code ${status}`, { status, data }));
          if (!json)
            return reject(
              new HttpError(`${url.host} answered ${status} with a body that is not JSON`, { status, data }),
            );
          resolve({ data, status, statusText: res.statusMessage ?? '', headers: res.headers, config: {} });
        });
      },
    );
    req.on('timeout', () => req.destroy(new HttpError(`no answer from ${url.host} in ${TIMEOUT_MS} ms`)));
    req.on('error', (e: NodeJS.ErrnoException) => {
      // a kept-alive connection the server closed just as it was reused: say so, so the caller retries once
      if (req.reusedSocket && (e.code === 'ECONNRESET' || e.code === 'EPIPE'))
        (e as { retry?: boolean }).retry = true;
      reject(e);
    });
    req.end(body);
  });
}

async function post(url: string, data: unknown, headers: Record<string, string>): Promise<Response> {
  const target = new URL(url);
  const body = JSON.stringify(data);
  try {
    return await postOnce(target, body, headers);
  } catch (e) {
    if ((e as { retry?: boolean }).retry) return postOnce(target, body, headers);
    throw e;
  }
}

const servers = new Map<string, rpc.Server>();

/** The rpc.Server for `url` (plain http allowed: sandboxes and local RPC nodes), shared by its callers. */
export function rpcServer(url: string): rpc.Server {
  let server = servers.get(url);
  if (!server) {
    server = new rpc.Server(url, { allowHttp: url.startsWith('http:') });
    const sdkClient = server.httpClient;
    const headers = { ...((sdkClient.defaults?.headers as Record<string, string> | undefined) ?? {}) };
    // the SDK marks httpClient read-only in its types but documents changing it (interceptors, headers)
    (server as { httpClient: unknown }).httpClient = {
      ...sdkClient,
      post: (u: string, d: unknown) => post(u, d, headers),
    };
    servers.set(url, server);
  }
  return server;
}
