// A tools/call that names no tool, a tool this server does not offer, or malformed params is answered with the
// JSON-RPC error -32602 (Invalid params), as the MCP specification's Tools page says, before the SDK sees it:
// the SDK's McpServer would answer an unknown tool with an isError result and a call without a name with
// -32603 and a schema dump. Every other message passes unchanged.
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { CallToolRequestSchema, ErrorCode, isJSONRPCRequest } from '@modelcontextprotocol/sdk/types.js';

/** Installs the check on `transport`, which the server must already be connected to. */
export function guardToolCalls(transport: Transport, offers: (name: string) => boolean): void {
  const deliver = transport.onmessage;
  if (deliver === undefined) throw new Error('guardToolCalls: connect the server to the transport first');
  transport.onmessage = (message, extra) => {
    if (isJSONRPCRequest(message) && message.method === 'tools/call') {
      const refusal = refusalOf(message, offers);
      if (refusal !== undefined) {
        void transport.send({
          jsonrpc: '2.0',
          id: message.id,
          error: { code: ErrorCode.InvalidParams, message: refusal },
        });
        return;
      }
    }
    deliver(message, extra);
  };
}

function refusalOf(message: unknown, offers: (name: string) => boolean): string | undefined {
  const parsed = CallToolRequestSchema.safeParse(message);
  if (!parsed.success) {
    const issues = parsed.error.issues
      .slice(0, 3)
      .map(
        (issue) =>
          `${issue.path.slice(issue.path[0] === 'params' ? 1 : 0).join('.') || 'params'}: ${issue.message}`,
      );
    return `invalid tools/call params (${issues.join('; ')}); send {"name": <tool>, "arguments": {...}}`;
  }
  const { name } = parsed.data.params;
  if (!offers(name)) return `no tool named ${JSON.stringify(name.slice(0, 100))}; tools/list names the tools`;
  return undefined;
}
