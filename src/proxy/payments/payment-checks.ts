// The checks a payment passes before its price is reserved, in the order docs/POLICY.md gives: one sequence,
// run by a real payment (request-payment.ts, the last part under the agent's budget lock) and by a dry run
// (dry-run.ts, read-only), so what a dry run answers cannot drift from what is enforced. Each refusal is a
// domain error with its problem code and, in `rule`, the rule that refused.
import { formatAmount } from '../../api/amount.ts';
import { isX402Error, type Quote, quote, type SafeRequest, X402Error } from '../../x402/index.ts';
import type { AgentPolicy } from '../domain/agent-policy.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { scopedId } from '../domain/agent-ref.ts';
import { DomainError } from '../domain/errors.ts';
import type { FlowContext } from '../flows/context.ts';
import { ownAddresses } from '../services/deployment.ts';
import type { PaymentContext } from './context.ts';
import {
  checkBeforeQuote,
  checkBeforeReserve,
  checkQuotedPrice,
  type PolicyCheckDeps,
} from './policy-check.ts';

/** What this module uses of the payment context. */
export type PaymentChecksDeps = Pick<
  PaymentContext,
  'batches' | 'float' | 'payer' | 'fetchOptions' | 'poolWallet' | 'paymentCap'
> & {
  flows: Pick<FlowContext, 'notes' | 'deployment'>;
} & PolicyCheckDeps;

export interface PayRequest {
  agentId: string;
  serviceUrl: string;
  method: string;
  body?: unknown;
  headers?: Record<string, string>;
  maxAmount?: bigint;
  idempotencyKey?: string;
}

/** What the checks up to the quote found: the owner's policy, the service's price and the request to pay. */
export interface Quoted {
  policy: AgentPolicy | undefined;
  quote: Quote;
  request: SafeRequest;
}

/**
 * The checks that need no lock: the queue's capacity, the owner's policy (frozen, services: a refused service
 * is not even asked for its price), the service's quote and payee, `maxAmount`, the operator's and the owner's
 * per-payment caps. `onQuote` hears the price as soon as the service gave it.
 */
export async function checkUpToQuote(
  pctx: PaymentChecksDeps,
  ref: AgentRef,
  req: PayRequest,
  onQuote?: (q: Quote) => void,
): Promise<Quoted> {
  await pctx.batches.checkCapacity();
  const policy = await checkBeforeQuote(pctx, ref, req.serviceUrl);
  const request: SafeRequest = {
    url: req.serviceUrl,
    method: req.method,
    headers: req.headers,
    body: req.body,
  };
  const q = await quoteService(pctx, request);
  onQuote?.(q);
  checkPayee(pctx, q);
  checkPrice(pctx, q, req);
  checkQuotedPrice(policy, q.amount);
  return { policy, quote: q, request };
}

/**
 * Right before reserving (a real payment holds the agent's budget lock): frozen again, the operator's and the
 * owner's budgets against what the agent spent, the pool wallet's float, the agent's available balance.
 * Reads only.
 */
export async function checkReservable(pctx: PaymentChecksDeps, ref: AgentRef, price: bigint): Promise<void> {
  await checkBeforeReserve(pctx, ref, price);
  const float = await pctx.float.available();
  if (float < price) {
    throw new DomainError(
      'service_unavailable',
      // (not how much is free: that would tell what the current window's payments hold, before its batch runs)
      `the pool wallet's float cannot pay ${formatAmount(price)} USDC now; retry after settlement`,
      { retryAfterSeconds: 30, extra: { rule: 'float' } },
    );
  }
  const available = await pctx.flows.notes.available(scopedId(ref));
  if (available < price) {
    throw new DomainError(
      'insufficient_balance',
      `available balance ${formatAmount(available)} USDC is less than the price ${formatAmount(price)} USDC`,
      { extra: { rule: 'balance' } },
    );
  }
}

async function quoteService(pctx: PaymentChecksDeps, request: SafeRequest): Promise<Quote> {
  try {
    return await quote(request, pctx.payer, pctx.fetchOptions);
  } catch (error) {
    if (!(error instanceof X402Error)) throw error;
    throw problemOf(error);
  }
}

/** x402 errors at quoting time, as the caller's problem. */
function problemOf(error: X402Error): DomainError {
  const detail = error.message;
  const extra = { reason: error.code };
  if (isX402Error(error, 'bad_url', 'forbidden_header', 'private_address'))
    return new DomainError('invalid_request', detail, { extra });
  if (
    isX402Error(
      error,
      'not_x402',
      'redirect_refused',
      'bad_payment_required',
      'no_matching_offer',
      'requirements_not_ours',
    )
  )
    return new DomainError('service_not_payable', detail, { extra });
  return new DomainError('service_unreachable', detail, { extra });
}

/** A payee that is one of our own accounts or contracts is refused: USDC paid there leaves the books. */
function checkPayee(pctx: PaymentChecksDeps, q: Quote): void {
  const own = ownAddresses(pctx.flows.deployment);
  const what = own.get(q.payTo) ?? (q.payTo === pctx.poolWallet.publicKey() ? 'the pool wallet' : undefined);
  if (what === undefined) return;
  throw new DomainError(
    'service_not_payable',
    `the service asks to be paid to ${q.payTo}, which is ${what}: the proxy never pays its own accounts or contracts`,
    { extra: { reason: 'own_account' } },
  );
}

function checkPrice(pctx: PaymentChecksDeps, q: Quote, req: PayRequest): void {
  if (req.maxAmount !== undefined && q.amount > req.maxAmount) {
    throw new DomainError(
      'price_too_high',
      `the service asks ${formatAmount(q.amount)} USDC, more than maxAmount ${formatAmount(req.maxAmount)} USDC`,
      { extra: { rule: 'maxAmount' } },
    );
  }
  if (q.amount > pctx.paymentCap) {
    throw new DomainError(
      'price_too_high',
      `the service asks ${formatAmount(q.amount)} USDC, more than the per-payment cap ${formatAmount(pctx.paymentCap)} USDC`,
      { extra: { rule: 'paymentCap' } },
    );
  }
}
