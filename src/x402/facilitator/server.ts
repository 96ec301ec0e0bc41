// The facilitator over HTTP, as @x402/core's HTTPFacilitatorClient calls it: `POST /verify` and
// `POST /settle` with `{x402Version, paymentPayload, paymentRequirements}` (answered 200 with the
// VerifyResponse / SettleResponse, valid or not), `GET /supported`, plus `GET /health`. A malformed request
// is a 400 with `{error}`. Our ExactStellarFacilitatorScheme sits inside @x402/core's x402Facilitator.

import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Keypair } from '#stellar-sdk';
import { x402Facilitator } from '@x402/core/facilitator';
import type { FacilitatorClient } from '@x402/core/server';
import type {
  PaymentPayload,
  PaymentRequirements,
  SettleResponse,
  SupportedResponse,
  VerifyResponse,
} from '@x402/core/types';
import { rpcServer } from '../../ledger/rpc-server.ts';
import { ExactStellarFacilitatorScheme, type FacilitatorSchemeOptions } from './scheme.ts';

const MAX_BODY = 256 * 1024;

export interface FacilitatorOptions extends FacilitatorSchemeOptions {
  host?: string;
  /** 0 = a free port */
  port?: number;
}

export interface FacilitatorHandle {
  url: string;
  network: string;
  scheme: ExactStellarFacilitatorScheme;
  facilitator: x402Facilitator;
  /** the same facilitator for a resource server in this process (no HTTP in between) */
  client: FacilitatorClient;
  close(): Promise<void>;
}

function reply(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, {
    'content-type': 'application/json',
    'content-length': String(Buffer.byteLength(text)),
  });
  res.end(text);
}

function readJson(req: IncomingMessage): Promise<unknown> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_BODY) chunks.push(c);
    });
    req.on('end', () => {
      if (size > MAX_BODY) return reject(new Error(`request body over ${MAX_BODY} bytes`));
      try {
        resolve(JSON.parse(Buffer.concat(chunks).toString('utf8')));
      } catch {
        reject(new Error('the body is not JSON'));
      }
    });
    req.on('error', reject);
  });
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

/** `{paymentPayload, paymentRequirements}` with the fields every scheme reads, or a reason it is not. */
function parseRequest(
  body: unknown,
): { payload: PaymentPayload; requirements: PaymentRequirements } | string {
  if (!isObject(body)) return 'the body must be a JSON object';
  const { paymentPayload: p, paymentRequirements: r } = body;
  if (!isObject(p) || !isObject(p.payload) || !isObject(p.accepted) || typeof p.x402Version !== 'number')
    return 'paymentPayload must be an object with x402Version, accepted and payload';
  if (!isObject(r)) return 'paymentRequirements must be an object';
  for (const f of ['scheme', 'network', 'asset', 'amount', 'payTo'] as const)
    if (typeof r[f] !== 'string') return `paymentRequirements.${f} must be a string`;
  if (r.maxTimeoutSeconds !== undefined && !Number.isInteger(r.maxTimeoutSeconds))
    return 'paymentRequirements.maxTimeoutSeconds must be an integer';
  return {
    payload: p as unknown as PaymentPayload,
    requirements: { extra: {}, ...r } as unknown as PaymentRequirements,
  };
}

/**
 * Accounts created through a friendbot at the same time (each creation waits for a ledger to close): kind
 * to a public friendbot by default; our own sandbox's friendbot takes hundreds in one ledger.
 */
const FRIENDBOT_CONCURRENCY = 16;

/** Creates any channel account that does not exist yet through the network's friendbot (sandboxes, testnet). */
export async function ensureChannelAccounts(
  rpcUrl: string,
  channels: Keypair[],
  concurrency = FRIENDBOT_CONCURRENCY,
): Promise<void> {
  const server = rpcServer(rpcUrl);
  let friendbotUrl: string | undefined;
  const ensure = async (kp: Keypair) => {
    const exists = await server.getAccount(kp.publicKey()).then(
      () => true,
      () => false,
    );
    if (exists) return;
    friendbotUrl ??= (await server.getNetwork()).friendbotUrl;
    if (!friendbotUrl)
      throw new Error(`channel account ${kp.publicKey()} does not exist and the network has no friendbot`);
    const res = await fetch(`${friendbotUrl}?addr=${encodeURIComponent(kp.publicKey())}`);
    if (!res.ok)
      throw new Error(`friendbot could not create ${kp.publicKey()}: ${res.status} ${await res.text()}`);
  };
  for (let i = 0; i < channels.length; i += concurrency)
    await Promise.all(channels.slice(i, i + concurrency).map(ensure));
}

/** Parses POOL_PROXY_FACILITATOR_SECRETS-style text: comma-separated secret seeds (S…). */
export function parseChannelSecrets(text: string): Keypair[] {
  const parts = text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);
  if (parts.length === 0) throw new Error('no channel secrets given');
  return parts.map((s, i) => {
    try {
      return Keypair.fromSecret(s);
    } catch {
      throw new Error(`channel secret ${i + 1} is not a Stellar secret seed (S…)`);
    }
  });
}

/**
 * The facilitator as @x402/core's FacilitatorClient without HTTP in between, for a resource server in the
 * same process; the HTTP routes answer through it too. A payment kind nobody registered is a refusal, and so
 * is everything once `isOpen` says the facilitator was closed (as one that stopped answering HTTP would).
 */
export function inProcessClient(
  facilitator: x402Facilitator,
  isOpen: () => boolean = () => true,
): FacilitatorClient {
  const refusal = (reason: string, message?: string) => ({
    verify: <VerifyResponse>{
      isValid: false,
      invalidReason: reason,
      ...(message && { invalidMessage: message }),
    },
    settle: (network: SettleResponse['network']): SettleResponse => ({
      success: false,
      errorReason: reason,
      ...(message && { errorMessage: message }),
      transaction: '',
      network,
    }),
  });
  const closed = refusal('facilitator_closed');
  return {
    verify: async (payload, requirements) => {
      if (!isOpen()) return closed.verify;
      return facilitator
        .verify(payload, requirements)
        .catch((e: Error) => refusal('unsupported_payment_kind', e.message).verify);
    },
    settle: async (payload, requirements) => {
      if (!isOpen()) return closed.settle(requirements.network);
      return facilitator
        .settle(payload, requirements)
        .catch((e: Error) => refusal('unsupported_payment_kind', e.message).settle(requirements.network));
    },
    getSupported: async () => facilitator.getSupported() as SupportedResponse,
  };
}

export async function startFacilitator(opts: FacilitatorOptions): Promise<FacilitatorHandle> {
  const scheme = new ExactStellarFacilitatorScheme(opts);
  const facilitator = new x402Facilitator().register(scheme.network as `${string}:${string}`, scheme);
  let closed = false;
  const client = inProcessClient(facilitator, () => !closed);
  const server: Server = createServer((req, res) => {
    void (async () => {
      const path = new URL(req.url ?? '/', 'http://x').pathname.replace(/\/+$/, '');
      if (req.method === 'GET' && path === '/supported') return reply(res, 200, facilitator.getSupported());
      if (req.method === 'GET' && path === '/health')
        return reply(res, 200, {
          status: 'ok',
          network: scheme.network,
          channels: scheme.pool.addresses.length,
          available: scheme.pool.available,
        });
      if (path !== '/verify' && path !== '/settle')
        return reply(res, 404, { error: `no route ${req.method} ${path}` });
      if (req.method !== 'POST') return reply(res, 405, { error: `${path} takes POST` });
      let body: unknown;
      try {
        body = await readJson(req);
      } catch (e) {
        return reply(res, 400, { error: (e as Error).message });
      }
      const parsed = parseRequest(body);
      if (typeof parsed === 'string') return reply(res, 400, { error: parsed });
      const { payload, requirements } = parsed;
      if (path === '/verify') return reply(res, 200, await client.verify(payload, requirements));
      return reply(res, 200, await client.settle(payload, requirements));
    })().catch((e: unknown) => {
      if (!res.headersSent) reply(res, 500, { error: (e as Error).message });
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(opts.port ?? 8402, opts.host ?? '127.0.0.1', () => resolve());
  });
  const a = server.address() as AddressInfo;
  const host = a.family === 'IPv6' ? `[${a.address}]` : a.address;
  return {
    url: `http://${host}:${a.port}`,
    network: scheme.network,
    scheme,
    facilitator,
    client,
    close: () =>
      new Promise<void>((resolve) => {
        closed = true;
        scheme.close();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
