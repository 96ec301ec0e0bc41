// Approvals: the payments of the caller's agents that wait for its approval (above their policy's approval
// threshold), and the owner's decision on one. The wallet that owns the agent decides, the operator for its own
// agents; an agent token lists its own agent's waiting payments and can never decide. payments/approvals.ts
// does the work; docs/POLICY.md describes it for owners.
import { ApprovalDecision, ApprovalList, ApprovalParams } from '../../api/schemas.ts';
import type { ApiRouter } from '../http/api-router.ts';
import { approvalView, approvePayment, denyPayment, pendingApprovals } from '../payments/approvals.ts';
import type { PoolAccess } from './pool-access.ts';

export function registerApprovalRoutes(api: ApiRouter, runtime: PoolAccess): void {
  api.add({
    method: 'get',
    path: '/api/approvals',
    summary: 'Payments of the caller’s agents waiting for its approval, oldest first',
    description:
      'Each with its agent, service, price (reserved while it waits) and deadline. An agent token sees its own ' +
      'agent’s only. A payment whose deadline passed is released (nothing paid) and no longer listed.',
    tag: 'policy',
    access: 'wallet-or-operator',
    agentToken: 'own-agent',
    response: ApprovalList,
    errors: ['service_unavailable'],
    handler: async ({ auth }) => {
      const pending = await pendingApprovals(runtime.requirePayments(), auth.sub, auth.agt);
      return { approvals: pending.map(approvalView) };
    },
  });

  for (const decision of ['approve', 'deny'] as const) {
    api.add({
      method: 'post',
      path: `/api/approvals/:paymentId/${decision}`,
      summary:
        decision === 'approve'
          ? 'Approve a waiting payment: it joins the next batch and is paid once (the agent’s owner only)'
          : 'Deny a waiting payment: nothing is paid, its reservation is given back (the agent’s owner only)',
      description:
        decision === 'approve'
          ? 'Refused with `agent_frozen` while the agent is frozen (it keeps waiting). Poll ' +
            '`GET /api/payments/{paymentId}` for its outcome.'
          : undefined,
      tag: 'policy',
      access: 'wallet-or-operator',
      params: ApprovalParams,
      response: ApprovalDecision,
      errors: [
        'invalid_request',
        'not_found',
        'approval_not_pending',
        ...(decision === 'approve' ? (['agent_frozen', 'queue_full'] as const) : []),
        'service_unavailable',
      ],
      handler: async ({ params, auth }) => {
        const pctx = runtime.requirePayments();
        if (decision === 'approve') await approvePayment(pctx, auth.sub, params.paymentId);
        else await denyPayment(pctx, auth.sub, params.paymentId);
        return {
          paymentId: params.paymentId,
          decision: decision === 'approve' ? ('approved' as const) : ('denied' as const),
          paymentStatus: decision === 'approve' ? ('pending' as const) : ('failed' as const),
        };
      },
    });
  }
}
