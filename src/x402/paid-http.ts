// x402 v2 on a plain node:http server (there is no official Koa or node:http middleware): each request goes
// through @x402/core's x402HTTPResourceServer (402 with PAYMENT-REQUIRED, or verify the PAYMENT-SIGNATURE
// through the facilitator), then the handler runs, and a successful answer is settled before it is sent with
// PAYMENT-RESPONSE. A handler that fails (status >= 400 or a throw) cancels the verified payment: nothing is
// settled. Used by the demo service and by tests that build independent paid services.

import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { HTTPAdapter, HTTPRequestContext, x402HTTPResourceServer } from '@x402/core/server';

/** Largest request body a paid route reads. */
export const MAX_REQUEST_BODY = 64 * 1024;

export interface PaidRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

export interface PaidReply {
  status: number;
  contentType?: string;
  body: string | Buffer;
}

export type PaidHandler = (req: PaidRequest) => PaidReply | Promise<PaidReply>;

function readBody(req: IncomingMessage): Promise<Buffer | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    req.on('data', (c: Buffer) => {
      size += c.length;
      if (size <= MAX_REQUEST_BODY) chunks.push(c);
    });
    req.on('end', () => resolve(size > MAX_REQUEST_BODY ? undefined : Buffer.concat(chunks)));
    req.on('error', reject);
  });
}

function write(
  res: ServerResponse,
  status: number,
  headers: Record<string, string>,
  body: unknown,
  isHtml = false,
) {
  let payload: string | Buffer;
  if (Buffer.isBuffer(body) || typeof body === 'string') payload = body;
  else {
    payload = JSON.stringify(body ?? {});
    headers = { 'content-type': 'application/json', ...headers };
  }
  if (isHtml) headers = { ...headers, 'content-type': 'text/html; charset=utf-8' };
  res.writeHead(status, { ...headers, 'content-length': String(Buffer.byteLength(payload)) });
  res.end(payload);
}

/** A node:http listener serving `handler` behind x402 payments as `paid` (already initialized) configures. */
export function paidRequestListener(paid: x402HTTPResourceServer, handler: PaidHandler): RequestListener {
  return (req, res) => {
    void (async () => {
      const url = new URL(req.url ?? '/', `http://${req.headers.host ?? 'localhost'}`);
      const body = await readBody(req);
      if (body === undefined) {
        write(res, 413, {}, { error: `request body over ${MAX_REQUEST_BODY} bytes` });
        return;
      }
      const header = (name: string) => {
        const v = req.headers[name.toLowerCase()];
        return Array.isArray(v) ? v.join(', ') : v;
      };
      const adapter: HTTPAdapter = {
        getHeader: header,
        getMethod: () => req.method ?? 'GET',
        getPath: () => url.pathname,
        getUrl: () => url.toString(),
        getAcceptHeader: () => header('accept') ?? '',
        getUserAgent: () => header('user-agent') ?? '',
        getQueryParams: () => Object.fromEntries(url.searchParams),
        getQueryParam: (name) => url.searchParams.get(name) ?? undefined,
      };
      const context: HTTPRequestContext = {
        adapter,
        path: url.pathname,
        method: req.method ?? 'GET',
        paymentHeader: header('payment-signature') ?? header('x-payment'),
      };
      const request: PaidRequest = {
        method: context.method,
        path: url.pathname,
        query: url.searchParams,
        headers: req.headers,
        body,
      };
      const result = await paid.processHTTPRequest(context);
      if (result.type === 'payment-error') {
        const r = result.response;
        write(res, r.status, r.headers, r.body, r.isHtml);
        return;
      }
      let reply: PaidReply;
      try {
        reply = await handler(request);
      } catch (e) {
        if (result.type === 'payment-verified')
          await result.cancellationDispatcher
            .cancel({ reason: 'handler_threw', error: e })
            .catch(() => undefined);
        write(res, 500, {}, { error: 'the service failed' });
        return;
      }
      const headers: Record<string, string> = {
        'content-type': reply.contentType ?? 'application/octet-stream',
      };
      if (result.type === 'no-payment-required') {
        write(res, reply.status, headers, reply.body);
        return;
      }
      if (reply.status >= 400) {
        await result.cancellationDispatcher
          .cancel({ reason: 'handler_failed', responseStatus: reply.status })
          .catch(() => undefined);
        write(res, reply.status, headers, reply.body);
        return;
      }
      const settled = await paid.processSettlement(
        result.paymentPayload,
        result.paymentRequirements,
        result.declaredExtensions,
        { request: context, responseBody: Buffer.from(reply.body) },
      );
      if (!settled.success) {
        const r = settled.response;
        write(res, r.status, { ...r.headers, ...settled.headers }, r.body, r.isHtml);
        return;
      }
      write(res, reply.status, { ...headers, ...settled.headers }, reply.body);
    })().catch((e: unknown) => {
      if (!res.headersSent) write(res, 500, {}, { error: (e as Error).message });
      else res.destroy();
    });
  };
}
