// pool_pay's question to a human: a payment above the owner's approval threshold waits, and when the MCP
// client can ask its human (elicitation) and the caller is the agent's owner (a wallet's token, or the
// operator's stdio server for its agent — never an agent token, which may not approve), the owner is asked at
// once. Approved, the payment joins the next batch and its outcome is awaited like any payment; declined, it
// is denied (nothing paid); dismissed, it keeps waiting for the REST approval until its deadline.
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { PoolApiError, type PoolApi } from '../../api/client.ts';
import type { PaymentResult } from '../../api/types.ts';
import type { PoolMcpMode } from '../tool-kit.ts';

/** How often, and how many times, an approved payment's outcome is read while its batch runs. */
const POLL_MS = 500;
const POLLS = 360;

/**
 * Asks the owner about a waiting payment when it can be asked; returns the payment's outcome once decided
 * (confirmed, or pending past the wait), or undefined when nobody was asked or it keeps waiting. A failed
 * outcome is thrown as the tool's error, like any payment that did not happen.
 */
export async function askOwner(
  server: McpServer,
  api: PoolApi,
  mode: PoolMcpMode,
  waiting: PaymentResult,
  serviceUrl: string,
): Promise<PaymentResult | undefined> {
  if (mode.kind === 'agent' || server.server.getClientCapabilities()?.elicitation === undefined)
    return undefined;
  const entry = (await api.approvals()).approvals.find((a) => a.paymentId === waiting.paymentId);
  if (entry === undefined) return undefined;
  const answer = await server.server.elicitInput({
    message:
      `Agent "${entry.agentId}" asks to pay ${entry.amount} USDC to ${serviceUrl}, above its approval threshold. ` +
      `Approve it? Unless approved by ${entry.expiresAt}, nothing is paid.`,
    requestedSchema: {
      type: 'object',
      properties: { approve: { type: 'boolean', title: 'Approve this payment' } },
      required: ['approve'],
    },
  });
  if (answer.action === 'cancel') return undefined;
  const approve = answer.action === 'accept' && answer.content?.approve === true;
  await api.decideApproval(waiting.paymentId, approve);
  let outcome = await api.payment(waiting.paymentId);
  for (let i = 0; i < POLLS && outcome.paymentStatus === 'pending'; i++) {
    await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    outcome = await api.payment(waiting.paymentId);
  }
  if (outcome.paymentStatus === 'failed') {
    const reason = outcome.reason ?? { code: 'payment_failed', detail: 'the payment did not go through' };
    throw new PoolApiError(reason.code, 'Payment failed', 0, `${reason.detail}; nothing was paid`, {
      extra: { paymentId: outcome.paymentId, paymentStatus: 'failed', batchId: outcome.batchId },
    });
  }
  return outcome;
}
