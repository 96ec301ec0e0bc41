// pool_pay: pays an x402 service from the agent's private balance (POST /api/pay) and returns the service's
// answer. The payment joins a batch made by the pool wallet; a retry with the same idempotencyKey pays at
// most once. A payment that failed in its batch is an isError result with its reason; one above the owner's
// approval threshold answers that it waits for approval, with its id, unless the client lets the owner be asked
// at once (approval-prompt.ts). With dryRun it only says what would be paid and whether it would pass, naming
// the rule that would refuse it: nothing is reserved or signed.
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { PoolApiError } from '../../api/client.ts';
import type { PaymentDryRun } from '../../api/types.ts';
import {
  agentIdInput,
  amountInput,
  idempotencyKeyInput,
  outputs,
  payBodyInput,
  payHeadersInput,
  payMethodInput,
} from '../fields.ts';
import { checkServiceUrl, guarded, normaliseAmount, success, type ToolContext } from '../tool-kit.ts';
import { z } from 'zod';
import { askOwner } from './approval-prompt.ts';

export function registerPay({ server, api, mode, agentOf, forWhom }: ToolContext): void {
  server.registerTool(
    'pool_pay',
    {
      title: 'Pay an x402 service from the pool',
      description:
        `Fetches an x402-protected URL and pays its price from the private pool balance of ${forWhom}; returns the ` +
        'service’s response. THIS SPENDS THE AGENT’S MONEY (USDC). The payment joins a batch and is made by the ' +
        'pool wallet, so the answer comes after the batch window (seconds). Set maxAmount to refuse a higher ' +
        'price. To retry a call that failed or timed out, call again with the SAME idempotencyKey: the proxy ' +
        'then pays at most once and returns the first result. Use a new key only for a new, intended payment. ' +
        'Set dryRun to true to learn first, without paying or reserving anything, the quoted price and whether ' +
        'the payment would pass (or which rule of the owner’s policy, budget or balance would refuse it).',
      inputSchema: {
        url: z.string().min(1).max(2048).describe('http(s) URL of the x402 service, query string included'),
        method: payMethodInput,
        body: payBodyInput,
        headers: payHeadersInput,
        maxAmount: amountInput('highest price to accept').optional(),
        idempotencyKey: idempotencyKeyInput,
        dryRun: z
          .boolean()
          .optional()
          .describe(
            'true: only say what would be paid and whether it would pass; nothing is paid or reserved',
          ),
        ...(mode.kind === 'wallet' ? { agentId: agentIdInput } : {}),
      },
      outputSchema: outputs.pay,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (args: PayArgs, extra) =>
      guarded(
        async () => {
          const serviceUrl = checkServiceUrl(args.url);
          const maxAmount =
            args.maxAmount === undefined ? undefined : normaliseAmount(args.maxAmount, 'maxAmount');
          const agentId = agentOf(args);
          const request = {
            agentId,
            serviceUrl,
            method: args.method ?? 'GET',
            ...(args.body !== undefined ? { body: args.body } : {}),
            ...(args.headers !== undefined ? { headers: args.headers } : {}),
            ...(maxAmount !== undefined ? { maxAmount } : {}),
          };
          if (args.dryRun === true) return dryRunAnswer(await api.payDryRun(request));
          const asked = await payOrExplain(() =>
            api.pay({
              ...request,
              ...(args.idempotencyKey !== undefined ? { idempotencyKey: args.idempotencyKey } : {}),
            }),
          );
          // above the owner's approval threshold: the owner may be asked here (elicitation)
          const result =
            asked.paymentStatus === 'awaiting_approval'
              ? ((await askOwner(server, api, mode, asked, serviceUrl)) ?? asked)
              : asked;
          const { reason: _reason, ...answer } = result;
          const structured = { ...answer, paymentStatus: result.paymentStatus };
          if (result.paymentStatus === 'awaiting_approval') {
            return success(
              structured,
              `Payment ${result.paymentId} waits for the owner's approval (its price is above the owner's approval ` +
                `threshold); nothing is paid unless the owner approves it before ${result.expiresAt}. Call pool_pay ` +
                'again with the same idempotencyKey to learn its state (it will not be paid twice).',
            );
          }
          if (result.paymentStatus === 'pending') {
            return success(
              structured,
              `Payment ${result.paymentId} is still being decided; call pool_pay again with the same idempotencyKey ` +
                'to get its result (it will not be paid twice).',
            );
          }
          const paid = result.receipt
            ? `Paid ${result.receipt.amount} USDC to ${result.receipt.payTo} (transaction ${result.receipt.transaction}, batch ${result.batchId}).`
            : `Paid in batch ${result.batchId}.`;
          const details = [result.contentType, result.contentEncoding === 'base64' ? 'body in base64' : '']
            .filter(Boolean)
            .join(', ');
          const service = `Service answered ${result.serviceStatus ?? '?'}${details ? ` (${details})` : ''}`;
          return {
            content: [
              { type: 'text', text: `${paid} ${service}:` },
              { type: 'text', text: result.content ?? '' },
            ],
            structuredContent: structured,
          };
        },
        { extra, message: 'waiting for the payment batch and its settlement' },
      ),
  );
}

interface PayArgs {
  url: string;
  method?: (typeof import('../../api/schemas.ts'))['PAY_METHODS'][number];
  body?: unknown;
  headers?: Record<string, string>;
  maxAmount?: string | number;
  idempotencyKey?: string;
  dryRun?: boolean;
  agentId?: string;
}

/** A dry run's answer, said plainly: the price and payee, and either that it would pass or what refuses it. */
function dryRunAnswer(result: PaymentDryRun): CallToolResult {
  const price =
    result.price === undefined
      ? 'The service was not asked for its price.'
      : `The service asks ${result.price} USDC, to be paid to ${result.payTo} on ${result.network}.`;
  const verdict = result.wouldPay
    ? result.awaitsApproval === true
      ? 'The payment would pass, but would wait for the owner’s approval (above the approval threshold).'
      : 'The payment would pass.'
    : `The payment would be refused: ${result.refusal?.code} (rule ${result.refusal?.rule}): ${result.refusal?.detail}.`;
  return success(result, `Dry run, nothing paid or reserved. ${price} ${verdict}`);
}

/**
 * The REST answer of a payment that did not happen is a `payment_failed` problem whose `reason` is our code
 * for why (`payment_rejected`, …): the tool's error carries that code, as for any refusal.
 */
async function payOrExplain<T>(call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch (error) {
    if (!(error instanceof PoolApiError) || error.code !== 'payment_failed') throw error;
    const { reason, ...extra } = error.extra;
    if (typeof reason !== 'string') throw error;
    throw new PoolApiError(reason, error.title, error.status, error.message, { extra });
  }
}
