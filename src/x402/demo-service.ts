// A demo paid service for the embedded sandbox: an x402 v2 resource server built with @x402/core's
// x402ResourceServer + x402HTTPResourceServer, verifying and settling through a facilitator over HTTP (or,
// beside our own facilitator in one process, through its in-process client).
// `GET /demo/quote` answers a short quote of the day and `POST /demo/echo` echoes its JSON body (to exercise
// method and body forwarding); both cost `price` (default 0.01 USDC = 100000 stroops) paid to `payTo`.
// `GET /health` is free.

import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import {
  type FacilitatorClient,
  HTTPFacilitatorClient,
  x402HTTPResourceServer,
  x402ResourceServer,
} from '@x402/core/server';
import { ExactStellarServerScheme } from './exact-server.ts';
import { paidRequestListener, type PaidReply, type PaidRequest } from './paid-http.ts';

export const DEMO_PRICE_STROOPS = '100000';

export interface DemoServiceOptions {
  host?: string;
  /** 0 = a free port */
  port?: number;
  /** the facilitator's URL, or its client when it runs in this process */
  facilitator: string | FacilitatorClient;
  /** x402 network id (stellar:local, stellar:testnet…) */
  network: string;
  /** token contract id */
  asset: string;
  payTo: string;
  /** price in stroops (default 100000 = 0.01 USDC) */
  price?: string;
  /** how long a payment authorization for it may live, in seconds (default 60) */
  maxTimeoutSeconds?: number;
}

export interface DemoServiceHandle {
  url: string;
  /** the priced GET URL */
  quoteUrl: string;
  /** the priced POST URL */
  echoUrl: string;
  close(): Promise<void>;
}

const QUOTES = [
  'Privacy is not secrecy.',
  'Pay for what you use, and nothing that says who you are.',
  'A ledger remembers everything; say less to it.',
];

function json(status: number, body: unknown): PaidReply {
  return { status, contentType: 'application/json', body: JSON.stringify(body) };
}

function handle(req: PaidRequest): PaidReply {
  if (req.method === 'GET' && req.path === '/health') return json(200, { status: 'ok' });
  if (req.method === 'GET' && req.path === '/demo/quote') {
    const i = Math.floor(Math.random() * QUOTES.length);
    return json(200, { quote: QUOTES[i], servedAt: new Date().toISOString() });
  }
  if (req.method === 'POST' && req.path === '/demo/echo') {
    let body: unknown;
    try {
      body = JSON.parse(req.body.toString('utf8'));
    } catch {
      return json(400, { error: 'the body must be JSON' });
    }
    return json(200, { echo: body, contentType: req.headers['content-type'] ?? null });
  }
  return json(404, { error: `no route ${req.method} ${req.path}` });
}

export async function startDemoService(opts: DemoServiceOptions): Promise<DemoServiceHandle> {
  const network = opts.network as `${string}:${string}`;
  const accepts = {
    scheme: 'exact',
    price: { amount: opts.price ?? DEMO_PRICE_STROOPS, asset: opts.asset },
    network,
    payTo: opts.payTo,
    maxTimeoutSeconds: opts.maxTimeoutSeconds ?? 60,
  };
  const resourceServer = new x402ResourceServer(
    typeof opts.facilitator === 'string'
      ? new HTTPFacilitatorClient({ url: opts.facilitator })
      : opts.facilitator,
  ).register(network, new ExactStellarServerScheme(opts.asset));
  const paid = new x402HTTPResourceServer(resourceServer, {
    'GET /demo/quote': { accepts, description: 'A quote of the day', mimeType: 'application/json' },
    'POST /demo/echo': { accepts, description: 'Echoes the JSON body', mimeType: 'application/json' },
  });
  await paid.initialize();
  const server: Server = createServer(paidRequestListener(paid, handle));
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8403, opts.host ?? '127.0.0.1', () => resolve());
  });
  const a = server.address() as AddressInfo;
  const url = `http://${a.family === 'IPv6' ? `[${a.address}]` : a.address}:${a.port}`;
  return {
    url,
    quoteUrl: `${url}/demo/quote`,
    echoUrl: `${url}/demo/echo`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
