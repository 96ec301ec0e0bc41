// A fetch that hands each request to a Node request handler in this process (the proxy's Koa app) instead of
// a socket: the request runs the whole HTTP stack (middleware, routes, problem answers) as a network request
// would, without a loopback connection or a listening port. The proxy's MCP endpoint gives it to its tools'
// REST client, so "every tool goes through the REST API" stays true at the cost of no second socket.
import type { IncomingMessage, ServerResponse } from 'node:http';
import { inject } from 'light-my-request';

export type NodeHandler = (req: IncomingMessage, res: ServerResponse) => void;

/** The address the handler sees as the caller's (the process itself). */
const IN_PROCESS_ADDRESS = '127.0.0.1';

export function inProcessFetch(handler: NodeHandler): typeof fetch {
  return async (input, init) => {
    const request = new Request(input, init);
    const headers: Record<string, string> = {};
    request.headers.forEach((value, name) => {
      headers[name] = value;
    });
    const url = new URL(request.url);
    const body = request.body === null ? undefined : Buffer.from(await request.arrayBuffer());
    const answer = await inject(handler, {
      method: request.method as 'GET',
      url: `${url.pathname}${url.search}`,
      authority: url.host,
      headers,
      payload: body,
      remoteAddress: IN_PROCESS_ADDRESS,
    });
    const responseHeaders = new Headers();
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined) continue;
      for (const one of Array.isArray(value) ? value : [String(value)]) responseHeaders.append(name, one);
    }
    const empty = answer.statusCode === 204 || answer.statusCode === 304 || request.method === 'HEAD';
    return new Response(empty ? null : new Uint8Array(answer.rawPayload), {
      status: answer.statusCode,
      statusText: answer.statusMessage,
      headers: responseHeaders,
    });
  };
}
