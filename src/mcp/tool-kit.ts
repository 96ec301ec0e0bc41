// What every pool tool shares: the context it is registered with (the REST client, the mode, the agent it
// acts for), results (structuredContent plus a short text; refusals as isError results carrying the
// problem), the checks the proxy cannot make for it (URL scheme, an agentId that travels in a path), and
// progress notifications while a call waits for a proof, a ledger or a payment batch.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { AmountError, formatAmount, parseAmount } from '../api/amount.ts';
import { PoolApiError, type PoolApi } from '../api/client.ts';

/**
 * operator: the local stdio server, acting as the proxy's operator for one agent (operator-funded deposits).
 * wallet: the HTTP server, acting for a logged-in wallet and its agents (the wallet signs its own deposits).
 * agent: the HTTP server with an agent-scoped token: one agent, which may pay within its policy and read its
 * balance and policy, nothing else (the proxy refuses the rest whatever a tool asks).
 */
export type PoolMcpMode =
  | { kind: 'operator'; agentId: string }
  | { kind: 'wallet'; wallet: string }
  | { kind: 'agent'; agentId: string };

/** What a tool is registered with. */
export interface ToolContext {
  server: McpServer;
  api: PoolApi;
  mode: PoolMcpMode;
  /** The agent a call acts for: the configured one (operator) or the wallet's choice, default itself. */
  agentOf(args: { agentId?: string }): string;
  /** How the descriptions name that agent. */
  forWhom: string;
}

export function toolContext(server: McpServer, api: PoolApi, mode: PoolMcpMode): ToolContext {
  return {
    server,
    api,
    mode,
    agentOf: (args) => (mode.kind === 'wallet' ? (args.agentId ?? mode.wallet) : mode.agentId),
    forWhom: mode.kind === 'wallet' ? 'the agent (default: your wallet)' : `agent "${mode.agentId}"`,
  };
}

/** Amounts are checked by the proxy against its limits; here they are only parsed and normalised. */
const PARSE_LIMIT = 2n ** 127n;

/** A refusal as a tool result: the problem's code, title, status and detail as JSON text. */
export function problemResult(error: PoolApiError): CallToolResult {
  const problem = {
    code: error.code,
    title: error.title,
    ...(error.status !== 0 ? { status: error.status } : {}),
    detail: error.message,
    ...(error.issues ? { errors: error.issues } : {}),
    ...error.extra,
  };
  return { content: [{ type: 'text', text: JSON.stringify({ error: problem }) }], isError: true };
}

export function success<T extends Record<string, unknown>>(structured: T, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

function invalid(detail: string, path: string): PoolApiError {
  return new PoolApiError('invalid_request', 'Invalid request', 400, detail, {
    issues: [{ path, message: detail }],
  });
}

/** A JSON number as the decimal string it means; refused when it cannot be one exactly (> 7 decimals, huge). */
function decimalOf(value: number): string {
  if (!Number.isFinite(value)) throw new AmountError('amount must be a finite number');
  if (Math.abs(value) > Number.MAX_SAFE_INTEGER)
    throw new AmountError('amount is too large for a JSON number: send it as a decimal string');
  const fixed = value.toFixed(7);
  if (Number(fixed) !== value)
    throw new AmountError(`amount ${value} has more than 7 decimals: send it as a decimal string`);
  return fixed;
}

/** "10" (or 10) → "10.0000000"; refuses what the proxy would refuse as an amount. */
export function normaliseAmount(value: string | number, field: string): string {
  try {
    return formatAmount(parseAmount(typeof value === 'number' ? decimalOf(value) : value, PARSE_LIMIT));
  } catch (error) {
    if (error instanceof AmountError) {
      throw invalid(field === 'amount' ? error.message : `${field}: ${error.message}`, field);
    }
    throw error;
  }
}

export function checkServiceUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(`url "${value.slice(0, 100)}" is not an absolute URL`, 'url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`url must be http or https, got ${url.protocol}`, 'url');
  }
  return url.href;
}

/** Agent ids travel in a URL path, where "." and ".." would be resolved away. */
export function checkPathAgentId(agentId: string): string {
  if (agentId === '.' || agentId === '..') throw invalid('agentId cannot be "." or ".."', 'agentId');
  return agentId;
}

export type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How often a waiting call tells the client it is still at work. */
const PROGRESS_INTERVAL_MS = 10_000;

/**
 * While a call waits (a proof and the ledger, a payment's batch and settlement), progress notifications tell the
 * client it is still at work, so a client that resets its timeout on progress keeps waiting. Only when the client
 * asked for progress (a progressToken); one at once, then every PROGRESS_INTERVAL_MS. Returns the stop function.
 */
function progressWhile(extra: ToolExtra, message: string): () => void {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return () => {};
  let progress = 0;
  const send = () => {
    progress += 1;
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } })
      .catch(() => {});
  };
  send();
  const timer = setInterval(send, PROGRESS_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Runs a tool body; PoolApiError becomes an isError result, anything else propagates. With `waiting`, the client
 * gets progress notifications until the body is done.
 */
export async function guarded(
  body: () => Promise<CallToolResult>,
  waiting?: { extra: ToolExtra; message: string },
): Promise<CallToolResult> {
  const stop = waiting ? progressWhile(waiting.extra, waiting.message) : () => {};
  try {
    return await body();
  } catch (error) {
    if (error instanceof PoolApiError) return problemResult(error);
    throw error;
  } finally {
    stop();
  }
}

/** "1 service", "2 services" ("1 batch", "2 batches" with the plural given). */
export function count(n: number, noun: string, plural = `${noun}s`): string {
  return `${n} ${n === 1 ? noun : plural}`;
}
