// One HTTP request as the benchmarks send them: node:http on a caller's Agent (its connection policy is
// the benchmark's choice), a JSON body when given, the answer's status, text and parsed JSON (undefined when
// it is not JSON).
import { type Agent, request } from 'node:http';

export interface CallOptions {
  method?: string;
  body?: unknown;
  headers?: Record<string, string>;
  agent: Agent;
  /** Socket idle timeout (ms); none by default. */
  timeoutMs?: number;
}

export function callJson(
  url: string,
  opts: CallOptions,
): Promise<{ status: number; json: any; text: string }> {
  return new Promise((resolve, reject) => {
    const payload = opts.body === undefined ? undefined : JSON.stringify(opts.body);
    const req = request(
      url,
      {
        method: opts.method ?? (payload ? 'POST' : 'GET'),
        agent: opts.agent,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...opts.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString();
          let json: unknown;
          try {
            json = JSON.parse(text);
          } catch {
            json = undefined;
          }
          resolve({ status: res.statusCode ?? 0, json, text });
        });
      },
    );
    if (opts.timeoutMs !== undefined) req.setTimeout(opts.timeoutMs);
    req.on('error', reject);
    if (payload) req.write(payload);
    req.end();
  });
}
