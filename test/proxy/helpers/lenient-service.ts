// A paid x402 service of our own on loopback, as lenient as some real servers: it routes a request by its
// path decoded twice, `\` read as `/`, in lower case, `;params` cut, repeated `/` merged and dot-segments
// resolved, so `/%61dmin`, `/ADMIN`, `/admin;v=1`, `//admin`, `/x/..%2fadmin` and `/admin%2fx` all reach
// `/admin`. Routes: `/admin` (0.05 USDC to the admin's account), `/weather` (0.01 to the weather's), and three
// that redirect: `/weather/go` (free) → 302 to `/admin`, `/weather/away` (free) → 302 to `awayTo` (another
// origin), `/weather/sneaky` (priced like `/admin`) → a paid request is answered 307 to `/admin`. It records
// every path asked for and every PAYMENT-SIGNATURE received with the path it came to.
import { createServer, type RequestListener, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { type FacilitatorClient, x402HTTPResourceServer, x402ResourceServer } from '@x402/core/server';
import { ExactStellarServerScheme } from '../../../src/x402/exact-server.ts';
import { paidRequestListener } from '../../../src/x402/paid-http.ts';

export const ADMIN_PRICE = 500_000n;
export const WEATHER_PRICE = 100_000n;

export interface LenientOptions {
  facilitator: FacilitatorClient;
  network: string;
  asset: string;
  adminPayTo: string;
  weatherPayTo: string;
  /** where `/weather/away` redirects (absolute URL) */
  awayTo: string;
}

export interface LenientService {
  url: string;
  port: number;
  /** every path asked for, as sent */
  asked: string[];
  /** the raw path of every request that carried a PAYMENT-SIGNATURE */
  signed: string[];
  /** starts answering (until then every request is a 503) */
  serve(opts: LenientOptions): Promise<void>;
  close(): Promise<void>;
}

/** The path a lenient server routes `raw` to. */
export function lenientRoute(raw: string): string {
  let path = raw.split('?')[0] ?? '/';
  for (let i = 0; i < 2; i++) {
    try {
      path = decodeURIComponent(path);
    } catch {
      break;
    }
  }
  const out: string[] = [];
  for (const segment of path.replace(/\\/g, '/').toLowerCase().split('/')) {
    const s = segment.replace(/;.*$/, '');
    if (s === '' || s === '.') continue;
    if (s === '..') out.pop();
    else out.push(s);
  }
  // everything under /admin is the admin
  if (out[0] === 'admin') return '/admin';
  return `/${out.join('/')}`;
}

/** Listens on 127.0.0.1 (a free port) at once, so its URL can be allow-listed before it serves. */
export async function listenLenient(): Promise<LenientService> {
  const asked: string[] = [];
  const signed: string[] = [];
  let listener: RequestListener | undefined;
  const server: Server = createServer((req, res) => {
    const raw = req.url ?? '/';
    asked.push(raw);
    if (req.headers['payment-signature'] !== undefined) signed.push(raw);
    if (listener === undefined) {
      res.writeHead(503).end();
      return;
    }
    listener(req, res);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const port = (server.address() as AddressInfo).port;
  return {
    url: `http://127.0.0.1:${port}`,
    port,
    asked,
    signed,
    async serve(opts) {
      const network = opts.network as `${string}:${string}`;
      const route = (amount: bigint, payTo: string, description: string) => ({
        accepts: {
          scheme: 'exact',
          price: { amount: amount.toString(), asset: opts.asset },
          network,
          payTo,
          maxTimeoutSeconds: 60,
        },
        description,
        mimeType: 'application/json',
      });
      const admin = route(ADMIN_PRICE, opts.adminPayTo, 'admin');
      const paid = new x402HTTPResourceServer(
        new x402ResourceServer(opts.facilitator).register(network, new ExactStellarServerScheme(opts.asset)),
        {
          'GET /admin': admin,
          'GET /weather': route(WEATHER_PRICE, opts.weatherPayTo, 'weather'),
          'GET /weather/sneaky': admin,
        },
      );
      await paid.initialize();
      const x402 = paidRequestListener(paid, (req) => ({
        status: 200,
        contentType: 'application/json',
        body: JSON.stringify({ served: req.path }),
      }));
      listener = (req, res) => {
        const path = lenientRoute(req.url ?? '/');
        const redirect = (status: number, location: string) => res.writeHead(status, { location }).end();
        if (path === '/weather/go') return redirect(302, '/admin');
        if (path === '/weather/away') return redirect(302, opts.awayTo);
        if (path === '/weather/sneaky' && req.headers['payment-signature'] !== undefined)
          return redirect(307, '/admin');
        req.url = path;
        x402(req, res);
      };
    },
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
