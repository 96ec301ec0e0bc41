// The demo's client of a running proxy's REST API, acting as a wallet does: SEP-53 login, deposit (prepare →
// sign the returned transaction → submit), withdraw, balance, and x402 payments. Errors from the proxy
// (problem+json) become ProxyProblem with the problem's title and detail.
import { Keypair, TransactionBuilder } from '@stellar/stellar-sdk';

export class ProxyProblem extends Error {
  constructor(
    readonly title: string,
    readonly detail: string,
    readonly status: number,
    readonly code: string,
  ) {
    super(`${title}: ${detail}`);
  }
}

export interface PoolInfo {
  network: string;
  networkPassphrase: string;
  rpcUrl: string;
  contracts: { pool: string; token: string; aspMembership: string; aspNonMembership: string };
  operator: string;
  poolWallet: string;
  friendbotUrl?: string;
  payments?: { enabled: boolean; x402Network: string; demoServiceUrl?: string; facilitatorUrl?: string };
}

export interface PaymentResult {
  paymentStatus: string;
  batchId?: string;
  reason?: { code: string; detail: string };
  receipt?: {
    amount: string;
    asset: string;
    payTo: string;
    network: string;
    transaction: string;
    settledAt: string;
  };
}

export class ProxyClient {
  constructor(readonly baseUrl: string) {}

  async call<T>(method: 'GET' | 'POST', path: string, body?: unknown, token?: string): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json' };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token) headers.authorization = `Bearer ${token}`;
    let response: Response;
    try {
      response = await fetch(new URL(path, this.baseUrl), {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string; message?: string } }).cause;
      throw new ProxyProblem(
        'Proxy unreachable',
        `no answer from ${this.baseUrl} (${cause?.code ?? cause?.message ?? (error as Error).message}); is \`pool-proxy start\` running?`,
        0,
        'unreachable',
      );
    }
    const text = await response.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = undefined;
    }
    if (!response.ok) {
      const p = (parsed ?? {}) as { title?: string; detail?: string; code?: string };
      throw new ProxyProblem(
        p.title ?? `HTTP ${response.status}`,
        p.detail ?? text.slice(0, 200),
        response.status,
        p.code ?? 'http_error',
      );
    }
    return parsed as T;
  }

  info(): Promise<PoolInfo> {
    return this.call('GET', '/api/pool/info');
  }

  async login(wallet: Keypair): Promise<string> {
    const { challenge } = await this.call<{ challenge: string }>(
      'GET',
      `/api/auth/challenge?publicKey=${wallet.publicKey()}`,
    );
    const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
    const { token } = await this.call<{ token: string }>('POST', '/api/auth/verify', {
      publicKey: wallet.publicKey(),
      challenge,
      signature,
    });
    return token;
  }

  async deposit(
    wallet: Keypair,
    token: string,
    agentId: string,
    amount: string,
    networkPassphrase: string,
  ): Promise<{ txHash: string }> {
    const prepared = await this.call<{ prepareId: string; transactionXDR: string }>(
      'POST',
      '/api/deposit/prepare',
      { amount, publicKey: wallet.publicKey(), agentId },
      token,
    );
    const tx = TransactionBuilder.fromXDR(prepared.transactionXDR, networkPassphrase);
    tx.sign(wallet);
    return this.call(
      'POST',
      '/api/deposit/submit',
      { prepareId: prepared.prepareId, signedTransactionXDR: tx.toXDR() },
      token,
    );
  }

  withdraw(token: string, agentId: string, amount: string, destination: string): Promise<{ txHash: string }> {
    return this.call('POST', '/api/withdraw', { agentId, amount, destination }, token);
  }

  async balance(token: string, agentId: string): Promise<string> {
    return (await this.call<{ balance: string }>('GET', `/api/balance/${agentId}`, undefined, token)).balance;
  }

  pay(token: string, agentId: string, serviceUrl: string): Promise<PaymentResult> {
    return this.call('POST', '/api/pay', { agentId, serviceUrl, method: 'GET' }, token);
  }
}

/** Creates (and funds with test USDC) an account through the sandbox friendbot. */
export async function friendbot(friendbotUrl: string, address: string, usdc: number): Promise<void> {
  const url = new URL(friendbotUrl);
  url.searchParams.set('addr', address);
  if (usdc > 0) url.searchParams.set('usdc', String(usdc));
  const response = await fetch(url);
  if (!response.ok) {
    const p = (await response.json().catch(() => ({}))) as { title?: string; detail?: string };
    throw new ProxyProblem(
      p.title ?? 'Friendbot refused',
      p.detail ?? `HTTP ${response.status}`,
      response.status,
      'friendbot',
    );
  }
}
