// Small HTTP helpers for tests against a real proxy on loopback, for what the typed client (PoolApi, see
// api.ts) cannot or must not send: malformed or oversized bodies, missing or bad credentials, exact headers.
import { request } from 'node:http';
import type { z } from 'zod';
import { Problem as ProblemSchema } from '../../../src/api/schemas.ts';

export interface RawResponse {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  text: string;
  /** The body parsed as JSON (undefined when it is not JSON), untyped: read it with problemOf or jsonOf. */
  json: unknown;
}

/** Sends exactly the given bytes and headers (fetch would normalise them). */
export function rawRequest(
  url: string,
  options: {
    method?: string;
    headers?: Record<string, string>;
    body?: string | Buffer;
    /** the local address to connect from (any of 127.0.0.0/8 on loopback: another client's address) */
    localAddress?: string;
  } = {},
): Promise<RawResponse> {
  return new Promise((resolve, reject) => {
    const { method = 'GET', headers = {}, localAddress } = options;
    const req = request(url, { method, headers, ...(localAddress && { localAddress }) }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => {
        const text = Buffer.concat(chunks).toString('utf8');
        let json: unknown;
        try {
          json = JSON.parse(text);
        } catch {
          json = undefined;
        }
        resolve({ status: res.statusCode ?? 0, headers: res.headers, text, json });
      });
    });
    req.on('error', reject);
    if (options.body !== undefined) req.write(options.body);
    req.end();
  });
}

export function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
): Promise<RawResponse> {
  return rawRequest(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
}

export function getJson(url: string, headers: Record<string, string> = {}): Promise<RawResponse> {
  return rawRequest(url, { headers });
}

/** A refusal's problem+json body (RFC 9457, with the proxy's `code`), and any extra members it holds. */
export type Problem = z.infer<typeof ProblemSchema> & Record<string, unknown>;

/** The problem+json body of `res`; throws (failing the test) with the answer when it is not one. */
export function problemOf(res: RawResponse): Problem {
  const parsed = ProblemSchema.loose().safeParse(res.json);
  if (!parsed.success)
    throw new Error(`not a problem document (HTTP ${res.status}): ${res.text.slice(0, 500)}`);
  return parsed.data;
}

/**
 * The JSON body of `res` as `T`: the test's claim about what the proxy answered, an answer type of
 * src/api/types.ts (or a local interface where there is none). Not validated, as PoolApi does not validate
 * answers either: the test's assertions check what it reads. Throws (failing the test) when it is not JSON.
 */
export function jsonOf<T>(res: RawResponse): T {
  if (res.json === undefined)
    throw new Error(`not a JSON answer (HTTP ${res.status}): ${res.text.slice(0, 500)}`);
  return res.json as T;
}

/**
 * What the tests read of /openapi.json (OpenAPI 3.1 as the proxy generates it): operations by path and
 * method, their parameters, bodies, responses and security, and the named schemas. Not all of OpenAPI.
 */
export interface OpenApiDocument {
  openapi: string;
  paths: Record<string, Record<string, OpenApiOperation>>;
  components: { schemas: Record<string, OpenApiSchema> };
}

interface OpenApiOperation {
  parameters?: { name: string; in: string }[];
  requestBody?: { content: Record<string, { schema: OpenApiSchema }> };
  responses: Record<string, { description: string; content?: Record<string, { schema: OpenApiSchema }> }>;
  security?: Record<string, string[]>[];
}

interface OpenApiSchema {
  $ref?: string;
  properties?: Record<string, OpenApiSchema>;
  required?: string[];
  additionalProperties?: boolean | OpenApiSchema;
}
