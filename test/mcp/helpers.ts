// Helpers shared by the MCP tests: reading tool results, the proxy's REST answers and on-chain balances.
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { CallToolResult, Progress } from '@modelcontextprotocol/sdk/types.js';
import type { ExecutionContext } from 'ava';
import type { Keypair } from '#stellar-sdk';
import { PoolApi } from '../../src/api/client.ts';

export interface ToolProblem {
  code: string;
  title: string;
  status?: number;
  detail: string;
  errors?: { path: string; message: string }[];
  [extra: string]: unknown;
}

export async function callTool(
  client: Client,
  name: string,
  args: Record<string, unknown> = {},
  onprogress?: (progress: Progress) => void,
): Promise<CallToolResult> {
  return (await client.callTool({ name, arguments: args }, undefined, {
    timeout: 180_000,
    ...(onprogress ? { onprogress, resetTimeoutOnProgress: true } : {}),
  })) as CallToolResult;
}

/** The structured result of a successful call (fails the test with the tool's text otherwise). */
export function structured(t: ExecutionContext, result: CallToolResult): Record<string, unknown> {
  const text = result.content.map((c) => (c.type === 'text' ? c.text : `[${c.type}]`)).join('\n');
  t.falsy(result.isError, text);
  t.truthy(result.structuredContent, 'structuredContent present');
  t.true(text.length > 0, 'a human text accompanies the structured result');
  return (result.structuredContent ?? {}) as Record<string, unknown>;
}

/** The problem carried by a refusal (an isError result whose text is {"error": problem}). */
export function problem(t: ExecutionContext, result: CallToolResult): ToolProblem {
  t.true(result.isError, `expected a refusal, got ${JSON.stringify(result).slice(0, 300)}`);
  const first = result.content[0];
  if (first?.type !== 'text') throw new Error('a refusal carries a text block');
  return (JSON.parse(first.text) as { error: ToolProblem }).error;
}

/** The SDK's own input-validation refusal (wrong JSON types), which carries no problem code. */
export function sdkValidationError(t: ExecutionContext, result: CallToolResult): void {
  t.true(result.isError);
  const first = result.content[0];
  t.regex(first?.type === 'text' ? first.text : '', /Input validation error/);
}

/** Logs `wallet` in at the proxy at `url` (SEP-53 challenge signed by the wallet) and returns its token. */
export async function loginWallet(url: string, wallet: Keypair): Promise<string> {
  const api = new PoolApi({ baseUrl: url });
  const { challenge } = await api.challenge(wallet.publicKey());
  const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
  return (await api.verify({ publicKey: wallet.publicKey(), challenge, signature })).token;
}
