// Money-moving endpoints: wallet deposit (prepare/submit), operator deposit (the operator only), withdrawal,
// and the public deployment info wallets need to discover the pool.
import { formatAmount } from '../../api/amount.ts';
import { ProblemError } from '../../api/problem.ts';
import type { ApiRouter } from '../http/api-router.ts';
import {
  CancelledDeposit,
  DepositResult,
  DepositSubmitRequest,
  depositPrepareRequest,
  operatorDepositRequest,
  PoolInfo,
  PreparedDeposit,
  PrepareIdParams,
  WithdrawResult,
  withdrawRequest,
} from '../../api/schemas.ts';
import { x402Network } from '../../ledger/networks.ts';
import type { PaymentsConfig, RegistrationSchedule } from '../config.ts';
import { cancelDeposit } from '../flows/cancel-deposit.ts';
import { operatorDeposit } from '../flows/operator-deposit.ts';
import { prepareDeposit } from '../flows/prepare-deposit.ts';
import { submitDeposit } from '../flows/submit-deposit.ts';
import { withdraw } from '../flows/withdraw.ts';
import { checkWithdrawal } from '../flows/withdrawal-policy.ts';
import { requireAgent } from '../flows/require-agent.ts';
import type { WalletConfirmations } from '../auth/wallet-confirmation.ts';
import type { AgentPolicies } from '../services/agent-policies.ts';
import { OPERATOR_OWNER } from '../services/agents.ts';
import type { PoolAccess } from './pool-access.ts';

export interface FlowLimits {
  maxDeposit: bigint;
  maxWithdraw: bigint;
  paymentCap: bigint;
  payments: PaymentsConfig;
  /** The allowlist's registration slots, which bound a new agent's wait for its registration. */
  registration: RegistrationSchedule;
  /** The owners' policies (a withdrawal's address book and wallet signature) and the signatures' nonces. */
  withdrawals: { policies: AgentPolicies; confirmations: WalletConfirmations };
}

export function registerFlowRoutes(api: ApiRouter, runtime: PoolAccess, limits: FlowLimits): void {
  api.add({
    method: 'post',
    path: '/api/deposit/prepare',
    summary: 'Prove a deposit and build the unsigned transact() transaction for the wallet to sign',
    description:
      'The proof is generated and the transaction simulated before the answer. `publicKey` must be the token subject; ' +
      '`agentId` defaults to it. The prepareId is single-use, bound to the wallet, and expires.',
    tag: 'deposit',
    access: 'wallet',
    body: depositPrepareRequest(limits.maxDeposit),
    response: PreparedDeposit,
    errors: ['forbidden', 'proof_failed', 'ledger_rejected', 'service_unavailable'],
    handler: async ({ body, auth }) => {
      if (body.publicKey !== auth.sub)
        throw new ProblemError('forbidden', 'publicKey must be the wallet you logged in with');
      return prepareDeposit(
        runtime.require(),
        { owner: auth.sub, agentId: body.agentId ?? auth.sub },
        body.amount,
      );
    },
  });

  api.add({
    method: 'delete',
    path: '/api/deposit/prepare/:prepareId',
    summary: 'Cancel a prepared deposit the wallet will not sign',
    description:
      'Nothing moved at prepare, so nothing moves now: the prepareId can no longer be submitted, and the allowlist ' +
      'registrations queued behind its promised validity may proceed. Cancelling again answers the same. A deposit already submitted ' +
      'answers 409; another wallet’s prepareId answers 404 like an unknown one.',
    tag: 'deposit',
    access: 'wallet',
    params: PrepareIdParams,
    response: CancelledDeposit,
    errors: ['not_found', 'conflict', 'service_unavailable'],
    handler: async ({ params, auth }) => cancelDeposit(runtime.require(), auth.sub, params.prepareId),
  });

  api.add({
    method: 'post',
    path: '/api/deposit/submit',
    summary: 'Submit the wallet-signed deposit and wait for on-chain confirmation',
    description:
      'The signed envelope must be exactly the prepared transaction plus one valid signature of the wallet. ' +
      'Submitting it again is safe: once landed it answers `confirmed`; sent but not landed (e.g. the proxy ' +
      'stopped meanwhile) it is sent again and answered the same way. A prepared deposit that can no longer be ' +
      'sent answers `prepare_expired` (410: it expired, or its transaction never landed in time), ' +
      '`prepare_cancelled` (409) or `prepare_stale` (409), whichever noticed it first.',
    tag: 'deposit',
    access: 'wallet',
    body: DepositSubmitRequest,
    response: DepositResult,
    errors: [
      'forbidden',
      'not_found',
      'conflict',
      'prepare_expired',
      'prepare_cancelled',
      'prepare_mismatch',
      'prepare_stale',
      'ledger_rejected',
      'service_unavailable',
    ],
    handler: async ({ body, auth }) => {
      const result = await submitDeposit(
        runtime.require(),
        auth.sub,
        body.prepareId,
        body.signedTransactionXDR,
      );
      return {
        status: 'confirmed' as const,
        agentId: result.agentId,
        txHash: result.txHash,
        amount: formatAmount(result.amount),
        zkProof: { generated: true, onChain: true, timeMs: result.proveMs },
      };
    },
  });

  api.add({
    method: 'post',
    path: '/api/deposit',
    summary:
      'Operator-funded deposit for one of the operator’s agents (the operator’s token only, e.g. the MCP server)',
    tag: 'deposit',
    access: 'operator',
    body: operatorDepositRequest(limits.maxDeposit),
    response: DepositResult,
    errors: ['forbidden', 'proof_failed', 'ledger_rejected', 'service_unavailable'],
    handler: async ({ body }) => {
      const result = await operatorDeposit(
        runtime.require(),
        { owner: OPERATOR_OWNER, agentId: body.agentId },
        body.amount,
      );
      return {
        status: 'confirmed' as const,
        agentId: body.agentId,
        txHash: result.txHash,
        amount: formatAmount(result.amount),
        zkProof: { generated: true, onChain: true, timeMs: result.proveMs },
      };
    },
  });

  api.add({
    method: 'post',
    path: '/api/withdraw',
    summary: 'Withdraw USDC from the pool to a Stellar account',
    description:
      'Selects the agent’s unspent notes (consolidating first when more than two are needed), proves, and the operator relays ' +
      'transact() with a negative external amount. The balance falls only after confirmation. When the owner’s policy ' +
      'has an address book, the destination must be in it; when it asks for a wallet signature, `confirmation` must ' +
      'carry a fresh one for exactly this withdrawal (POST /api/agents/{agentId}/wallet-confirmation), used once.',
    tag: 'withdraw',
    access: 'wallet-or-operator',
    body: withdrawRequest(limits.maxWithdraw),
    response: WithdrawResult,
    errors: [
      'not_found',
      'insufficient_balance',
      'policy_destination_not_allowed',
      'wallet_signature_required',
      'wallet_signature_invalid',
      'proof_failed',
      'ledger_rejected',
      'service_unavailable',
    ],
    handler: async ({ body, auth }) => {
      const amount = body.amount;
      if (auth.sub === OPERATOR_OWNER && body.agentId === undefined) {
        throw new ProblemError('invalid_request', 'operator withdrawals must name the agentId', {
          issues: [{ path: 'agentId', message: 'required without a wallet token' }],
        });
      }
      const ref = { owner: auth.sub, agentId: body.agentId ?? auth.sub };
      const flows = runtime.require();
      await requireAgent(flows, ref);
      const { policies, confirmations } = limits.withdrawals;
      const policy = await policies.find(ref);
      await checkWithdrawal(policy, confirmations, ref, amount, body.destination, body.confirmation);
      const result = await withdraw(flows, ref, amount, body.destination);
      return {
        status: 'confirmed' as const,
        txHash: result.txHash,
        amount: formatAmount(amount),
        destination: body.destination,
        zkProof: { generated: true, onChain: true, timeMs: result.proveMs },
      };
    },
  });

  api.add({
    method: 'get',
    path: '/api/pool/info',
    summary: 'Deployment: network, RPC, contract ids, operator and pool wallet, circuit',
    tag: 'pool',
    access: 'public',
    response: PoolInfo,
    errors: ['service_unavailable'],
    handler: async () => {
      const { deployment, circuitId, trees } = runtime.info();
      return {
        network: deployment.network,
        networkPassphrase: deployment.networkPassphrase,
        rpcUrl: deployment.rpcUrl,
        contracts: deployment.contracts,
        operator: deployment.operator.publicKey(),
        poolWallet: deployment.poolWallet,
        circuitId,
        maxDeposit: formatAmount(limits.maxDeposit),
        maxWithdraw: formatAmount(limits.maxWithdraw),
        // A new agent's first prepare, with its key's slot, that slot's inserts and its proof, as measured.
        registrationWaitMaxSeconds: Math.ceil(runtime.registrationWaitBoundMs() / 1000),
        trees: {
          current: trees.tree,
          count: trees.tree + 1,
          leavesUsed: trees.leaves,
          leavesFree: trees.capacity - trees.leaves,
          capacity: trees.capacity,
        },
        ...(deployment.friendbotUrl ? { friendbotUrl: deployment.friendbotUrl } : {}),
        payments: {
          enabled: limits.payments.poolWalletSecret !== '',
          x402Network: x402Network(deployment.networkPassphrase),
          paymentCap: formatAmount(limits.paymentCap),
          batchWindowMs: limits.payments.batchWindowMs,
          ...(limits.payments.facilitatorUrl && { facilitatorUrl: limits.payments.facilitatorUrl }),
          ...(limits.payments.demoServiceUrl && { demoServiceUrl: limits.payments.demoServiceUrl }),
        },
      };
    },
  });
}
