// Payments: pay an x402 service from an agent's pool balance (answered after the batch ran, or at once when it
// waits for its owner's approval) or dry-run such a payment (dry-run.ts), the recent payments of the caller's agents with their receipts, and one
// payment's status.
import { formatAmount } from '../../api/amount.ts';
import { ProblemError } from '../../api/problem.ts';
import type { ApiRouter } from '../http/api-router.ts';
import { outcomeOf } from '../payments/payment-state.ts';
import { ownedPayment } from '../payments/approvals.ts';
import { paymentEntry } from '../payments/payment-export.ts';
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import {
  ApprovalParams,
  OperatorBooks,
  PaymentList,
  PayAnswer,
  PaymentResult,
  PaymentsQuery,
  payRequest,
} from '../../api/schemas.ts';
import { requestPayment } from '../payments/request-payment.ts';
import { dryRunPayment } from '../payments/dry-run.ts';
import { OPERATOR_OWNER } from '../services/agents.ts';
import type { PoolAccess } from './pool-access.ts';
import { ownedPaymentData } from '../payments/payment-data.ts';

export function registerPaymentRoutes(api: ApiRouter, runtime: PoolAccess, paymentCap: bigint): void {
  api.add({
    method: 'post',
    path: '/api/pay',
    summary: 'Pay an x402 service from the agent’s pool balance, through the batch operator',
    description:
      'The agent’s owner’s policy is checked first (frozen, denied and allowed services), then the service’s price is read ' +
      '(its 402), checked against maxAmount, the per-payment caps, the operator’s and the owner’s budgets (each rule refuses ' +
      'with its own code, in the order docs/POLICY.md gives) and the available balance, and reserved; the payment joins the current batch and the answer comes once the batch ran: the ' +
      'service’s content, `paymentStatus` and a receipt. The pool wallet pays the service, never the agent. A payment that ' +
      'did not happen (nothing was paid) is a `payment_failed` problem (502) with `reason` (our code), `serviceReason` (the ' +
      'service’s or its facilitator’s), `paymentId`, `batchId` and what the service answered; one not decided by its ' +
      'deadline answers 202 with `paymentStatus: "pending"`. A price above the owner’s approval threshold is reserved and ' +
      'answered at once, 202 with `paymentStatus: "awaiting_approval"` and `expiresAt`: nothing is paid unless the owner ' +
      'approves it (`/api/approvals`); poll `GET /api/payments/{paymentId}`. A retry with the same idempotencyKey returns the same answer ' +
      'and never pays twice. With `dryRun: true` the same checks run (the service is asked for its price; budgets, float ' +
      'and balance are read as they are now) and the answer is a `PaymentDryRun`, 200: `wouldPay`, the quoted `price`, ' +
      '`payTo`, `network`, `awaitsApproval`, and for a refusal `refusal: {code, detail, rule}` with the code the payment ' +
      'would be refused with. Nothing is reserved, journaled or signed; the idempotencyKey is ignored. A request that is ' +
      'itself wrong (unknown agent, bad URL) is still a problem.',
    tag: 'pay',
    access: 'wallet-or-operator',
    agentToken: 'own-agent',
    body: payRequest(paymentCap),
    response: PayAnswer,
    errors: [
      'invalid_request',
      'not_found',
      'conflict',
      'insufficient_balance',
      'price_too_high',
      'budget_exceeded',
      'agent_frozen',
      'policy_service_denied',
      'policy_service_not_allowed',
      'policy_per_payment_cap',
      'policy_budget_hour',
      'policy_budget_day',
      'policy_budget_30d',
      'service_not_payable',
      'service_unreachable',
      'queue_full',
      'service_unavailable',
      'payment_failed',
    ],
    status: (result) => ('dryRun' in result || result.paymentStatus === 'confirmed' ? 200 : 202),
    handler: async ({ body, auth }) => {
      const owner = auth.sub;
      // an agent token pays for its own agent (api-router.ts refuses another agentId)
      const agentId = body.agentId ?? auth.agt;
      if (owner === OPERATOR_OWNER && agentId === undefined) {
        throw new ProblemError('invalid_request', 'operator payments must name the agentId', {
          issues: [{ path: 'agentId', message: 'required without a wallet token' }],
        });
      }
      const request = {
        agentId: agentId ?? owner,
        serviceUrl: body.serviceUrl,
        method: body.method,
        body: body.body,
        headers: body.headers,
        maxAmount: body.maxAmount,
        idempotencyKey: body.idempotencyKey,
      };
      if (body.dryRun === true) return dryRunPayment(runtime.requirePayments(), owner, request);
      const outcome = await requestPayment(runtime.requirePayments(), owner, request);
      if (outcome.paymentStatus === 'failed') throw paymentProblem(outcome);
      return outcome;
    },
  });

  api.add({
    method: 'get',
    path: '/api/payments',
    summary: 'Recent payments of the caller’s agents, newest first, with their receipts',
    tag: 'pay',
    access: 'wallet-or-operator',
    agentToken: 'own-agent',
    query: PaymentsQuery,
    response: PaymentList,
    errors: ['invalid_request', 'service_unavailable'],
    handler: async ({ query, auth }) => {
      const pctx = runtime.requirePayments();
      const limit = Number(query.limit ?? 50);
      const records = [];
      for (const id of await pctx.records.paymentsOf(auth.sub)) {
        const record = await pctx.flows.journal.get(id);
        // an agent token reads its own agent's payments only
        if (record === undefined || ownedPaymentData(record, auth.sub, auth.agt) === undefined) continue;
        records.push(record);
      }
      records.sort((a, b) => b.createdAt - a.createdAt);
      return {
        payments: records.slice(0, limit).map(paymentEntry),
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/payments/:paymentId',
    summary: 'One payment of the caller’s agents: its status now, and its answer once decided',
    description:
      '`awaiting_approval` (with `expiresAt`) while its owner has not decided, `pending` while it may still pay, ' +
      '`confirmed` with its receipt, or `failed` with `reason` (nothing was paid; e.g. `approval_denied`, ' +
      '`approval_expired`). An agent token reads its own agent’s payments only.',
    tag: 'pay',
    access: 'wallet-or-operator',
    agentToken: 'own-agent',
    params: ApprovalParams,
    response: PaymentResult,
    errors: ['invalid_request', 'not_found', 'service_unavailable'],
    handler: async ({ params, auth }) => {
      const pctx = runtime.requirePayments();
      await ownedPayment(pctx, auth.sub, params.paymentId, auth.agt);
      return outcomeOf(pctx, params.paymentId);
    },
  });

  api.add({
    method: 'get',
    path: '/api/operator/books',
    summary:
      'The operator’s books: pool wallet float, float account, agents’ notes and debts (the operator only)',
    description:
      'For the operator and its checks: pool contract USDC = agentNotes + floatAccount, and pool wallet + float ' +
      'account + unsettled stays what the float was. Per-account movements over time would show settlements, so ' +
      'only the operator (its token) gets an answer.',
    tag: 'pool',
    access: 'operator',
    response: OperatorBooks,
    errors: ['forbidden', 'service_unavailable'],
    handler: async () => {
      const b = await runtime.books();
      return {
        ...(b.poolWallet !== undefined && { poolWallet: formatAmount(b.poolWallet) }),
        floatAccount: formatAmount(b.floatAccount),
        agentNotes: formatAmount(b.agentNotes),
        unsettled: formatAmount(b.unsettled),
        settling: b.settling,
      };
    },
  });
}

/** A payment that did not happen, as the problem the caller gets (and gets again on a replay). */
function paymentProblem(outcome: PaymentOutcome): ProblemError {
  const reason = outcome.reason ?? { code: 'payment_failed', detail: 'the payment did not go through' };
  const answered = {
    ...(outcome.serviceStatus !== undefined && { serviceStatus: outcome.serviceStatus }),
    ...(outcome.contentType !== undefined && { contentType: outcome.contentType }),
    ...(outcome.content !== undefined && { content: outcome.content }),
    ...(outcome.contentEncoding !== undefined && { contentEncoding: outcome.contentEncoding }),
  };
  return new ProblemError('payment_failed', `${reason.detail}; nothing was paid`, {
    extra: {
      paymentStatus: 'failed',
      paymentId: outcome.paymentId,
      batchId: outcome.batchId,
      reason: reason.code,
      ...(reason.serviceReason !== undefined && { serviceReason: reason.serviceReason }),
      ...answered,
    },
  });
}
