// A typed client of the proxy's own REST API, used by both MCP transports. It speaks for one caller:
// the local operator (loopback, `X-Pool-Operator: true`, no token) or a wallet (its Bearer JWT), so every
// check of the REST API applies unchanged. problem+json refusals become PoolApiError with the stable `code`.

/** Who the REST calls are made for. */
export type PoolApiCaller = { kind: 'operator' } | { kind: 'wallet'; token: string };

export interface ProblemIssue {
  path: string;
  message: string;
}

/** Codes this client adds for failures that never reached the proxy's API. */
export type ClientErrorCode = 'proxy_unreachable' | 'bad_response' | 'invalid_request';

/** A refusal of the proxy (its problem+json), or a failure to reach it. */
export class PoolApiError extends Error {
  readonly code: string;
  readonly title: string;
  /** HTTP status of the proxy's refusal; 0 when there was none (no answer, or a payment that failed in its batch). */
  readonly status: number;
  readonly issues?: ProblemIssue[];
  /** Extra members of the problem body (e.g. the txHash of a transaction that did not confirm in time). */
  readonly extra: Record<string, unknown>;

  constructor(
    code: string,
    title: string,
    status: number,
    detail: string,
    options: { issues?: ProblemIssue[]; extra?: Record<string, unknown>; cause?: unknown } = {},
  ) {
    super(detail, { cause: options.cause });
    this.name = 'PoolApiError';
    this.code = code;
    this.title = title;
    this.status = status;
    this.issues = options.issues;
    this.extra = options.extra ?? {};
  }
}

export interface ZkProof {
  generated: boolean;
  onChain: boolean;
  timeMs?: number;
}

export interface DepositResult {
  status: 'confirmed';
  txHash: string;
  amount?: string;
  zkProof: ZkProof;
}

export interface PreparedDeposit {
  prepareId: string;
  transactionXDR: string;
  expiresAt?: string;
}

export interface WithdrawResult {
  status: 'confirmed';
  txHash: string;
  amount: string;
  destination: string;
  zkProof: ZkProof;
}

export interface Balance {
  agentId: string;
  balance: string;
  currency: 'USDC';
}

export interface PoolStats {
  activeAgents: number;
  totalTransactions: number;
  servicesUsed: number;
  recentBatches: BatchSummary[];
}

export interface PayRequest {
  agentId: string;
  serviceUrl: string;
  method: string;
  /** a string is sent as is, anything else as JSON */
  body?: unknown;
  headers?: Record<string, string>;
  maxAmount?: string;
  idempotencyKey?: string;
}

export interface PaymentReceipt {
  amount: string;
  asset: string;
  payTo: string;
  network: string;
  transaction: string;
  settledAt: string;
}

export interface PaymentResult {
  paymentId: string;
  paymentStatus: 'confirmed' | 'failed' | 'pending';
  batchId: string;
  receipt?: PaymentReceipt;
  serviceStatus?: number;
  contentType?: string;
  content?: string;
  contentEncoding?: 'utf8' | 'base64';
  reason?: { code: string; detail: string };
}

export interface BatchSummary {
  batchId: string;
  size: number;
  executedAt: string;
  durationMs: number;
  confirmed: number;
  failed: number;
}

export interface PoolApiOptions {
  /** Origin of the proxy, e.g. http://127.0.0.1:8080 */
  baseUrl: string;
  caller: PoolApiCaller;
  /** Longest wait for one answer; a payment waits for its batch window, a deposit for a proof and a ledger. */
  timeoutMs?: number;
}

const DEFAULT_TIMEOUT_MS = 180_000;
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export class PoolApi {
  readonly #base: URL;
  readonly #caller: PoolApiCaller;
  readonly #timeoutMs: number;

  constructor(options: PoolApiOptions) {
    this.#base = new URL(options.baseUrl);
    this.#caller = options.caller;
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  }

  get caller(): PoolApiCaller {
    return this.#caller;
  }

  /** Operator-funded deposit for a local agent (`POST /api/deposit`); the operator caller only. */
  async operatorDeposit(agentId: string, amount: string): Promise<DepositResult> {
    if (this.#caller.kind !== 'operator') {
      // Never reachable with a wallet token: it would spend the operator's USDC for the wallet.
      throw new PoolApiError(
        'forbidden',
        'Forbidden',
        0,
        'operator deposits are for the local operator only',
      );
    }
    return this.#call('POST', '/api/deposit', { agentId, amount });
  }

  /** Wallet deposit, step 1 (`POST /api/deposit/prepare`): proof and the unsigned transaction. */
  prepareDeposit(amount: string, publicKey: string, agentId?: string): Promise<PreparedDeposit> {
    return this.#call('POST', '/api/deposit/prepare', {
      amount,
      publicKey,
      ...(agentId !== undefined ? { agentId } : {}),
    });
  }

  /** Wallet deposit, step 2 (`POST /api/deposit/submit`): the wallet-signed transaction. */
  submitDeposit(prepareId: string, signedTransactionXDR: string): Promise<DepositResult> {
    return this.#call('POST', '/api/deposit/submit', { prepareId, signedTransactionXDR });
  }

  balance(agentId: string): Promise<Balance> {
    return this.#call('GET', `/api/balance/${encodeURIComponent(agentId)}`);
  }

  withdraw(amount: string, destination: string, agentId?: string): Promise<WithdrawResult> {
    return this.#call('POST', '/api/withdraw', {
      amount,
      destination,
      ...(agentId !== undefined ? { agentId } : {}),
    });
  }

  pay(request: PayRequest): Promise<PaymentResult> {
    return this.#call('POST', '/api/pay', request);
  }

  stats(): Promise<PoolStats> {
    return this.#call('GET', '/api/pool/stats');
  }

  async #call<T>(method: 'GET' | 'POST', path: string, body?: unknown): Promise<T> {
    const headers: Record<string, string> = { accept: 'application/json, application/problem+json' };
    if (this.#caller.kind === 'operator') headers['x-pool-operator'] = 'true';
    else headers.authorization = `Bearer ${this.#caller.token}`;
    if (body !== undefined) headers['content-type'] = 'application/json';
    const url = new URL(path, this.#base);
    let response: Response;
    try {
      response = await fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'error',
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const reason = (error as Error).name === 'TimeoutError' ? 'did not answer in time' : 'is not reachable';
      throw new PoolApiError(
        'proxy_unreachable',
        'Proxy unreachable',
        0,
        `the pool proxy at ${this.#base.origin} ${reason} (${method} ${path}); is it running?`,
        { cause: error },
      );
    }
    const text = await readText(response);
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      json = undefined;
    }
    if (response.ok && json !== null && typeof json === 'object') return json as T;
    throw toError(response.status, method, path, json, text);
  }
}

async function readText(response: Response): Promise<string> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    throw new PoolApiError('bad_response', 'Bad response', response.status, 'the proxy answer is too large');
  }
  return response.text();
}

function toError(status: number, method: string, path: string, json: unknown, text: string): PoolApiError {
  const problem = (json ?? {}) as Record<string, unknown>;
  if (typeof problem.code === 'string' && typeof problem.detail === 'string') {
    const {
      code,
      title,
      detail,
      errors,
      type: _type,
      status: _status,
      instance: _instance,
      ...extra
    } = problem;
    return new PoolApiError(code, typeof title === 'string' ? title : code, status, detail, {
      issues: Array.isArray(errors) ? (errors as ProblemIssue[]) : undefined,
      extra,
    });
  }
  return new PoolApiError(
    'bad_response',
    'Bad response',
    status,
    `${method} ${path} answered HTTP ${status} without a problem document: ${text.slice(0, 200)}`,
  );
}
