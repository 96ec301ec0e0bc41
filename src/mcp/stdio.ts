// The stdio MCP server (`pool-proxy mcp`): one local agent, acting through the running proxy as its operator
// (with the operator's token). stdout carries the protocol only; everything else goes to stderr.
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { PoolApi } from '../api/client.ts';
import { connectPoolMcpServer, createPoolMcpServer } from './server.ts';

export interface StdioOptions {
  /** Origin of the proxy, e.g. http://127.0.0.1:8080 */
  proxyUrl: string;
  agentId: string;
  /** The operator's token (none: the proxy must take loopback callers as the operator, its opt-in). */
  operatorToken?: string;
  /** Where diagnostics go (default stderr). */
  log?: (line: string) => void;
}

/** Serves MCP on stdin/stdout until stdin closes; resolves once connected. */
export async function runStdioServer(options: StdioOptions): Promise<{ closed: Promise<void> }> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const api = new PoolApi({
    baseUrl: options.proxyUrl,
    caller: { kind: 'operator', token: options.operatorToken },
  });
  const server = createPoolMcpServer({ api, mode: { kind: 'operator', agentId: options.agentId } });
  const transport = new StdioServerTransport();
  const closed = new Promise<void>((resolve) => {
    transport.onclose = () => resolve();
    process.stdin.once('end', () => resolve());
  });
  await connectPoolMcpServer(server, transport);
  log(`pool-proxy mcp: serving agent "${options.agentId}" through ${options.proxyUrl} (stdio)`);
  return { closed };
}
