// The page's calls of the proxy's REST API (same origin), through the shared typed client
// (src/api/client.ts). The login token lives in this module's memory only: never in localStorage,
// sessionStorage or a cookie, so closing or reloading the page logs out. Refusals become a Problem.
import { friendbot as askFriendbot, PoolApi, PoolApiError } from '../../src/api/client.ts';
import type {
  AgentPolicyRequest,
  ApprovalList,
  AgentPolicyView,
  AgentTokenList,
  Balance,
  PaymentListEntry,
  WalletConfirmationRequest,
} from '../../src/api/types.ts';
import { Problem } from './problem.ts';

export type { PoolInfo } from '../../src/api/types.ts';
export type AgentPolicy = AgentPolicyView;
export type PolicyChange = AgentPolicyRequest;
export type AgentToken = AgentTokenList['tokens'][number];
export type AgentBalance = Balance;
export type Payment = PaymentListEntry;
export type Approval = ApprovalList['approvals'][number];
/** A wallet's signature of a confirmation message, sent with the withdrawal or policy change it names. */
export interface Confirmation {
  nonce: string;
  signature: string;
}
/** What the wallet confirms: a withdrawal, a policy change (as it will be sent) or an unfreeze. */
export type Confirmable = WalletConfirmationRequest;

const publicApi = new PoolApi({ baseUrl: location.origin });
let walletApi: PoolApi | undefined;

export function loggedIn(): boolean {
  return walletApi !== undefined;
}

/** Forgets the token in this page (`api.logout` also ends it on the server). */
export function forgetToken(): void {
  walletApi = undefined;
}

function toPageProblem(error: PoolApiError): Problem {
  if (error.code === 'proxy_unreachable')
    return new Problem(
      'Network error',
      'The server could not be reached. Check that it is running.',
      'network',
    );
  const problem = new Problem(
    error.title,
    error.detail,
    error.code,
    error.status,
    (error.issues ?? []).slice(0, 10),
  );
  // `registration_pending` names when the new agent's registration slot comes.
  if (typeof error.extra.registrationAt === 'string') problem.retryAt = error.extra.registrationAt;
  return problem;
}

async function call<T>(run: (api: PoolApi) => Promise<T>, auth = false): Promise<T> {
  let api = publicApi;
  if (auth) {
    if (walletApi === undefined)
      throw new Problem('Not logged in', 'Log in with your wallet first.', 'login');
    api = walletApi;
  }
  try {
    return await run(api);
  } catch (error) {
    if (!(error instanceof PoolApiError)) throw error;
    // An expired or revoked token: forget it, so the page asks for a new login.
    if (error.status === 401 && auth) walletApi = undefined;
    throw toPageProblem(error);
  }
}

export const api = {
  poolInfo: () => call((a) => a.info()),
  poolStats: () => call((a) => a.stats()),
  challenge: (publicKey: string) => call((a) => a.challenge(publicKey)),
  async verify(publicKey: string, challenge: string, signature: string): Promise<void> {
    const { token } = await call((a) => a.verify({ publicKey, challenge, signature }));
    walletApi = publicApi.as({ kind: 'wallet', token });
  },
  prepareDeposit: (publicKey: string, amount: string, agentId?: string) =>
    call((a) => a.prepareDeposit(agentId ? { publicKey, amount, agentId } : { publicKey, amount }), true),
  cancelDeposit: (prepareId: string) => call((a) => a.cancelDeposit(prepareId), true),
  /** Ends the token on the server (it answers 401 from now on), then forgets it here. */
  async logout(): Promise<void> {
    try {
      if (walletApi !== undefined) await call((a) => a.logout(), true);
    } finally {
      walletApi = undefined;
    }
  },
  submitDeposit: (prepareId: string, signedTransactionXDR: string) =>
    call((a) => a.submitDeposit({ prepareId, signedTransactionXDR }), true),
  withdraw: (amount: string, destination: string, agentId: string, confirmation: Confirmation) =>
    call((a) => a.withdraw({ amount, destination, agentId, confirmation }), true),
  walletConfirmation: (agentId: string, action: Confirmable) =>
    call((a) => a.walletConfirmation(agentId, action), true),
  approvals: () => call((a) => a.approvals(), true),
  decideApproval: (paymentId: string, approve: boolean) =>
    call((a) => a.decideApproval(paymentId, approve), true),
  agents: () => call((a) => a.agents(), true),
  payments: (limit: number) => call((a) => a.payments(limit), true),
  policy: (agentId: string) => call((a) => a.policy(agentId), true),
  setPolicy: (agentId: string, change: AgentPolicyRequest) => call((a) => a.setPolicy(agentId, change), true),
  setFrozen: (agentId: string, frozen: boolean, confirmation?: Confirmation) =>
    call((a) => a.setFrozen(agentId, frozen, confirmation), true),
  issueAgentToken: (agentId: string, expiresInSeconds: number) =>
    call((a) => a.issueAgentToken(agentId, { expiresInSeconds }), true),
  agentTokens: (agentId: string) => call((a) => a.agentTokens(agentId), true),
  revokeAgentToken: (agentId: string, tokenId: string) =>
    call((a) => a.revokeAgentToken(agentId, tokenId), true),
  oauthRequest: (requestId: string) => call((a) => a.oauthRequest(requestId), true),
  approveOAuth: (requestId: string, agentId: string) =>
    call((a) => a.approveOAuthRequest(requestId, { agentId }), true),
  refuseOAuth: (requestId: string) => call((a) => a.refuseOAuthRequest(requestId), true),
  exportPayments: (agentId: string, format: 'csv' | 'json', period: { from?: string; to?: string }) =>
    call(
      (a) =>
        format === 'csv'
          ? a.exportPaymentsCsv(agentId, period)
          : a.exportPayments(agentId, period).then((record) => JSON.stringify(record, null, 2)),
      true,
    ),
};

/** The sandbox friendbot: creates the account (test XLM) and mints test USDC to it. */
export function friendbot(friendbotUrl: string, address: string, usdc: number): Promise<void> {
  return call(() => askFriendbot(friendbotUrl, address, usdc));
}
