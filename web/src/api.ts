// Typed calls to the proxy's REST API (same origin). The login token lives in this module's memory only:
// never in localStorage, sessionStorage or a cookie, so closing or reloading the page logs out.
import { Problem, problemFromResponse } from './problem.ts';

export interface PoolInfo {
  network: string;
  networkPassphrase: string;
  rpcUrl: string;
  contracts: { pool: string; token: string };
  poolWallet: string;
  maxDeposit: string;
  maxWithdraw: string;
  /** The longest a new agent's first deposit waits for its allowlist registration. */
  registrationWaitMaxSeconds?: number;
  /** Present only on the embedded sandbox: GET {friendbotUrl}?addr=G…&usdc=N funds an account. */
  friendbotUrl?: string;
  payments?: { enabled: boolean; x402Network: string; demoServiceUrl?: string };
}

export interface PoolStats {
  activeAgents: number;
  totalTransactions: number;
  servicesUsed: number;
  recentBatches: { batchId: string; executedAt: string; size?: number; payments?: number }[];
}

export interface AgentBalance {
  agentId: string;
  balance: string;
  currency: string;
}

export interface Receipt {
  amount: string;
  asset: string;
  payTo: string;
  network: string;
  transaction: string;
  settledAt: string;
}

export interface Payment {
  paymentId: string;
  agentId: string;
  serviceUrl: string;
  amount: string;
  paymentStatus: string;
  batchId?: string | null;
  receipt?: Receipt | null;
  createdAt: string;
}

export interface ConfirmedTx {
  status: 'confirmed';
  txHash: string;
  amount?: string;
  zkProof?: { timeMs?: number };
}

let token: string | undefined;

export function loggedIn(): boolean {
  return token !== undefined;
}

/** Forgets the token in this page (`api.logout` also ends it on the server). */
export function forgetToken(): void {
  token = undefined;
}

async function call<T>(
  method: 'GET' | 'POST' | 'DELETE',
  path: string,
  body?: unknown,
  auth = false,
): Promise<T> {
  const headers: Record<string, string> = { accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (auth) {
    if (token === undefined) throw new Problem('Not logged in', 'Log in with your wallet first.', 'login');
    headers.authorization = `Bearer ${token}`;
  }
  const response = await fetch(path, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
    credentials: 'omit',
    cache: 'no-store',
  });
  let parsed: unknown;
  try {
    parsed = await response.json();
  } catch {
    parsed = undefined;
  }
  if (!response.ok) {
    // An expired or revoked token: forget it, so the page asks for a new login.
    if (response.status === 401 && auth) token = undefined;
    throw problemFromResponse(response.status, response.statusText, parsed);
  }
  return parsed as T;
}

export const api = {
  poolInfo: () => call<PoolInfo>('GET', '/api/pool/info'),
  poolStats: () => call<PoolStats>('GET', '/api/pool/stats'),
  challenge: (publicKey: string) =>
    call<{ challenge: string }>('GET', `/api/auth/challenge?publicKey=${encodeURIComponent(publicKey)}`),
  async verify(publicKey: string, challenge: string, signature: string): Promise<void> {
    const result = await call<{ token: string }>('POST', '/api/auth/verify', {
      publicKey,
      challenge,
      signature,
    });
    token = result.token;
  },
  prepareDeposit: (publicKey: string, amount: string, agentId?: string) =>
    call<{ prepareId: string; transactionXDR: string }>(
      'POST',
      '/api/deposit/prepare',
      agentId ? { publicKey, amount, agentId } : { publicKey, amount },
      true,
    ),
  cancelDeposit: (prepareId: string) =>
    call<{ prepareId: string; status: string }>(
      'DELETE',
      `/api/deposit/prepare/${encodeURIComponent(prepareId)}`,
      undefined,
      true,
    ),
  /** Ends the token on the server (it answers 401 from now on), then forgets it here. */
  async logout(): Promise<void> {
    try {
      if (token !== undefined) await call<unknown>('POST', '/api/auth/logout', undefined, true);
    } finally {
      token = undefined;
    }
  },
  submitDeposit: (prepareId: string, signedTransactionXDR: string) =>
    call<ConfirmedTx>('POST', '/api/deposit/submit', { prepareId, signedTransactionXDR }, true),
  withdraw: (amount: string, destination: string, agentId?: string) =>
    call<ConfirmedTx & { destination: string }>(
      'POST',
      '/api/withdraw',
      agentId ? { amount, destination, agentId } : { amount, destination },
      true,
    ),
  agents: () => call<{ agents: AgentBalance[] }>('GET', '/api/agents', undefined, true),
  payments: (limit: number) =>
    call<{ payments: Payment[] }>('GET', `/api/payments?limit=${limit}`, undefined, true),
};

/** The sandbox friendbot: creates the account (test XLM) and mints test USDC to it. */
export async function friendbot(friendbotUrl: string, address: string, usdc: number): Promise<void> {
  const url = new URL(friendbotUrl);
  url.searchParams.set('addr', address);
  url.searchParams.set('usdc', String(usdc));
  const response = await fetch(url, { credentials: 'omit', cache: 'no-store' });
  if (!response.ok) {
    let body: unknown;
    try {
      body = await response.json();
    } catch {
      body = undefined;
    }
    throw problemFromResponse(response.status, response.statusText, body);
  }
}
