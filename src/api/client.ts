// The one typed client of the proxy's REST API, used by the MCP servers, `pool-proxy demo` and the wallet
// page (bundled for the browser: it uses only fetch and imports types only). It speaks for one caller: the
// public (no credentials), the operator (its token, or without one `X-Pool-Operator: true`, which a proxy takes
// from loopback only under its single-host opt-in) or a wallet (its Bearer JWT), so every check of the REST API
// applies unchanged. problem+json refusals become PoolApiError with the
// stable `code`; request and answer types are the API's own (types.ts, inferred from its schemas).
import type {
  AgentList,
  AgentPolicyRequest,
  AgentPolicyView,
  AgentTokenIssued,
  AgentTokenList,
  AgentTokenRequest,
  AgentTokenRevoked,
  ApprovalDecision,
  ApprovalList,
  AuthChallenge,
  AuthToken,
  AuthVerifyRequest,
  Balance,
  CancelledDeposit,
  DepositPrepareRequest,
  DepositResult,
  DepositSubmitRequest,
  Health,
  Liveness,
  LogoutResult,
  OAuthApproval,
  OAuthDecision,
  OAuthRequestView,
  OperatorBooks,
  OperatorDepositRequest,
  PayRequest,
  PaymentDryRun,
  PaymentExport,
  PaymentList,
  PaymentResult,
  PoolInfo,
  PoolStats,
  PreparedDeposit,
  UnfreezeRequest,
  WalletConfirmationMessage,
  WalletConfirmationRequest,
  WithdrawRequest,
  WithdrawResult,
} from './types.ts';

/** Who the REST calls are made for. */
export type PoolApiCaller =
  { kind: 'public' } | { kind: 'operator'; token?: string } | { kind: 'wallet'; token: string };

export interface ProblemIssue {
  path: string;
  message: string;
}

/** A refusal of the proxy (its problem+json), or a failure to reach it (`proxy_unreachable`, `bad_response`). */
export class PoolApiError extends Error {
  readonly code: string;
  readonly title: string;
  /**
   * HTTP status of the proxy's refusal; 0 when the proxy gave none (it did not answer, or this client refused to
   * send the call). A payment that failed in its batch is 502 `payment_failed`, its reason in `extra`.
   */
  readonly status: number;
  readonly issues?: ProblemIssue[];
  /** Extra members of the problem body (e.g. the txHash of a transaction that did not confirm in time). */
  readonly extra: Record<string, unknown>;
  /**
   * Seconds the proxy asked to wait before trying again (its Retry-After header), when it named a time: a
   * `registration_pending`, a rate limit or a busy prover.
   */
  readonly retryAfterSeconds?: number;

  constructor(
    code: string,
    title: string,
    status: number,
    detail: string,
    options: {
      issues?: ProblemIssue[];
      extra?: Record<string, unknown>;
      retryAfterSeconds?: number;
      cause?: unknown;
    } = {},
  ) {
    super(detail, { cause: options.cause });
    this.name = 'PoolApiError';
    this.code = code;
    this.title = title;
    this.status = status;
    this.issues = options.issues;
    this.extra = options.extra ?? {};
    this.retryAfterSeconds = options.retryAfterSeconds;
  }

  /** The problem's detail (the error's message). */
  get detail(): string {
    return this.message;
  }
}

export interface PoolApiOptions {
  /** Origin of the proxy, e.g. http://127.0.0.1:8080 (the page's own origin in a browser). */
  baseUrl: string;
  /** Default: the public caller, which can reach only the public endpoints. */
  caller?: PoolApiCaller;
  /** Longest wait for one answer; a payment waits for its batch window, a deposit for a proof and a ledger. */
  timeoutMs?: number;
  /** Extra headers on every call (the proxy's own MCP endpoint marks its calls with them). */
  headers?: Record<string, string>;
  /** How requests are sent (default: the global fetch; the proxy's MCP endpoint passes its app in process). */
  fetch?: typeof fetch;
}

const DEFAULT_TIMEOUT_MS = 180_000;
const MAX_ANSWER_BYTES = 8 * 1024 * 1024;

export class PoolApi {
  readonly #base: URL;
  readonly #caller: PoolApiCaller;
  readonly #timeoutMs: number;
  readonly #headers: Record<string, string>;
  readonly #fetch: typeof fetch;

  constructor(options: PoolApiOptions) {
    this.#base = new URL(options.baseUrl);
    this.#caller = options.caller ?? { kind: 'public' };
    this.#timeoutMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    this.#headers = options.headers ?? {};
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
  }

  get caller(): PoolApiCaller {
    return this.#caller;
  }

  /** The same proxy, for another caller (e.g. a wallet once it has logged in). */
  as(caller: PoolApiCaller): PoolApi {
    return new PoolApi({
      baseUrl: this.#base.href,
      caller,
      timeoutMs: this.#timeoutMs,
      headers: this.#headers,
      fetch: this.#fetch,
    });
  }

  /** Readiness: `healthy` once the proxy's pool is connected (refused with status 503 while it is starting). */
  health(): Promise<Health> {
    return this.#call('GET', '/health');
  }

  /** Liveness: the proxy serves HTTP, whether its pool is connected or not. */
  liveness(): Promise<Liveness> {
    return this.#call('GET', '/health/live');
  }

  info(): Promise<PoolInfo> {
    return this.#call('GET', '/api/pool/info');
  }

  stats(): Promise<PoolStats> {
    return this.#call('GET', '/api/pool/stats');
  }

  /** The operator's books: pool wallet float, float account, agents' notes and debts (the operator only). */
  books(): Promise<OperatorBooks> {
    return this.#call('GET', '/api/operator/books');
  }

  /** SEP-53 login, step 1: the text the wallet signs. */
  challenge(publicKey: string): Promise<AuthChallenge> {
    return this.#call('GET', `/api/auth/challenge?publicKey=${encodeURIComponent(publicKey)}`);
  }

  /** SEP-53 login, step 2: the signed challenge for a token (use it with `as({ kind: 'wallet', token })`). */
  verify(request: AuthVerifyRequest): Promise<AuthToken> {
    return this.#call('POST', '/api/auth/verify', request);
  }

  /** Ends the wallet's token on the server (it answers 401 from then on). */
  logout(): Promise<LogoutResult> {
    return this.#call('POST', '/api/auth/logout');
  }

  /** Operator-funded deposit for a local agent (`POST /api/deposit`); the operator caller only. */
  async operatorDeposit(request: OperatorDepositRequest): Promise<DepositResult> {
    if (this.#caller.kind !== 'operator') {
      // Never reachable with a wallet token: it would spend the operator's USDC for the wallet.
      throw new PoolApiError(
        'forbidden',
        'Forbidden',
        0,
        'operator deposits are for the local operator only',
      );
    }
    return this.#call('POST', '/api/deposit', request);
  }

  /** Wallet deposit, step 1 (`POST /api/deposit/prepare`): proof and the unsigned transaction. */
  prepareDeposit(request: DepositPrepareRequest): Promise<PreparedDeposit> {
    return this.#call('POST', '/api/deposit/prepare', request);
  }

  /** Cancels a prepared deposit that will not be signed (`DELETE /api/deposit/prepare/:prepareId`). */
  cancelDeposit(prepareId: string): Promise<CancelledDeposit> {
    return this.#call('DELETE', `/api/deposit/prepare/${encodeURIComponent(prepareId)}`);
  }

  /** Wallet deposit, step 2 (`POST /api/deposit/submit`): the wallet-signed transaction. */
  submitDeposit(request: DepositSubmitRequest): Promise<DepositResult> {
    return this.#call('POST', '/api/deposit/submit', request);
  }

  balance(agentId: string): Promise<Balance> {
    return this.#call('GET', `/api/balance/${encodeURIComponent(agentId)}`);
  }

  /** The wallet's agents and their balances. */
  agents(): Promise<AgentList> {
    return this.#call('GET', '/api/agents');
  }

  /** The caller's latest payments, newest first. */
  payments(limit: number): Promise<PaymentList> {
    return this.#call('GET', `/api/payments?limit=${encodeURIComponent(String(limit))}`);
  }

  withdraw(request: WithdrawRequest): Promise<WithdrawResult> {
    return this.#call('POST', '/api/withdraw', request);
  }

  /** A message for the wallet to sign (SEP-53), confirming one withdrawal or one loosening of the withdrawal
   * settings of an agent; its nonce and the signature go as `confirmation` with that request. */
  walletConfirmation(
    agentId: string,
    request: WalletConfirmationRequest,
  ): Promise<WalletConfirmationMessage> {
    return this.#call('POST', `/api/agents/${encodeURIComponent(agentId)}/wallet-confirmation`, request);
  }

  pay(request: Omit<PayRequest, 'dryRun'>): Promise<PaymentResult> {
    return this.#call('POST', '/api/pay', request);
  }

  /** What paying would do now: the quoted price and whether it would pass (or the rule that refuses it);
   * nothing is reserved or signed. */
  payDryRun(request: Omit<PayRequest, 'dryRun' | 'idempotencyKey'>): Promise<PaymentDryRun> {
    return this.#call('POST', '/api/pay', { ...request, dryRun: true });
  }

  /** One payment's state now (its answer once decided). */
  payment(paymentId: string): Promise<PaymentResult> {
    return this.#call('GET', `/api/payments/${encodeURIComponent(paymentId)}`);
  }

  /** The caller's payments waiting for its approval. */
  approvals(): Promise<ApprovalList> {
    return this.#call('GET', '/api/approvals');
  }

  /** Approves (`true`) or denies (`false`) a payment waiting for the owner's approval. */
  decideApproval(paymentId: string, approve: boolean): Promise<ApprovalDecision> {
    return this.#call(
      'POST',
      `/api/approvals/${encodeURIComponent(paymentId)}/${approve ? 'approve' : 'deny'}`,
    );
  }

  /** An agent's policy, with what is left of each budget. */
  policy(agentId: string): Promise<AgentPolicyView> {
    return this.#call('GET', `/api/agents/${encodeURIComponent(agentId)}/policy`);
  }

  /** Replaces an agent's policy (its owner only). */
  setPolicy(agentId: string, request: AgentPolicyRequest): Promise<AgentPolicyView> {
    return this.#call('PUT', `/api/agents/${encodeURIComponent(agentId)}/policy`, request);
  }

  /**
   * Freezes (`true`) or unfreezes (`false`) an agent (its owner only); unfreezing an agent whose owner requires
   * wallet signatures carries one (`confirmation`, for the action `{ unfreeze: true }`).
   */
  setFrozen(
    agentId: string,
    frozen: boolean,
    confirmation?: UnfreezeRequest['confirmation'],
  ): Promise<AgentPolicyView> {
    const path = `/api/agents/${encodeURIComponent(agentId)}/${frozen ? 'freeze' : 'unfreeze'}`;
    return confirmation === undefined
      ? this.#call('POST', path)
      : this.#call('POST', path, { confirmation } satisfies UnfreezeRequest);
  }

  /** Issues a token for one agent (its owner only); the answer holds the token, shown this once. */
  issueAgentToken(agentId: string, request: AgentTokenRequest = {}): Promise<AgentTokenIssued> {
    return this.#call('POST', `/api/agents/${encodeURIComponent(agentId)}/tokens`, request);
  }

  /** An agent's live tokens (their ids and lifetimes, never the tokens). */
  agentTokens(agentId: string): Promise<AgentTokenList> {
    return this.#call('GET', `/api/agents/${encodeURIComponent(agentId)}/tokens`);
  }

  revokeAgentToken(agentId: string, tokenId: string): Promise<AgentTokenRevoked> {
    return this.#call(
      'DELETE',
      `/api/agents/${encodeURIComponent(agentId)}/tokens/${encodeURIComponent(tokenId)}`,
    );
  }

  /** An MCP client's authorization request waiting for this wallet's consent (the wallet page's consent view). */
  oauthRequest(requestId: string): Promise<OAuthRequestView> {
    return this.#call('GET', `/api/oauth/requests/${encodeURIComponent(requestId)}`);
  }

  /** Approves the request for one of the wallet's agents; the answer is where to send the browser. */
  approveOAuthRequest(requestId: string, approval: OAuthApproval): Promise<OAuthDecision> {
    return this.#call('POST', `/api/oauth/requests/${encodeURIComponent(requestId)}/approve`, approval);
  }

  refuseOAuthRequest(requestId: string): Promise<OAuthDecision> {
    return this.#call('POST', `/api/oauth/requests/${encodeURIComponent(requestId)}/refuse`);
  }

  /** An agent's payments asked for in [from, to) (ISO 8601; absent: from the beginning, until now), as JSON. */
  exportPayments(agentId: string, period: ExportPeriod = {}): Promise<PaymentExport> {
    return this.#call('GET', exportPath(agentId, 'json', period));
  }

  /** The same record as CSV text (a cell a spreadsheet would read as a formula starts with an apostrophe). */
  exportPaymentsCsv(agentId: string, period: ExportPeriod = {}): Promise<string> {
    return this.#call('GET', exportPath(agentId, 'csv', period), undefined, 'text');
  }

  async #call<T>(
    method: 'GET' | 'POST' | 'PUT' | 'DELETE',
    path: string,
    body?: unknown,
    answer: 'json' | 'text' = 'json',
  ): Promise<T> {
    const headers: Record<string, string> = {
      ...this.#headers,
      accept: answer === 'json' ? 'application/json, application/problem+json' : '*/*',
    };
    if (this.#caller.kind === 'wallet' || (this.#caller.kind === 'operator' && this.#caller.token))
      headers.authorization = `Bearer ${this.#caller.token}`;
    else if (this.#caller.kind === 'operator') headers['x-pool-operator'] = 'true';
    if (body !== undefined) headers['content-type'] = 'application/json';
    const url = new URL(path, this.#base);
    let response: Response;
    try {
      response = await this.#fetch(url, {
        method,
        headers,
        body: body === undefined ? undefined : JSON.stringify(body),
        redirect: 'error',
        credentials: 'omit',
        cache: 'no-store',
        signal: AbortSignal.timeout(this.#timeoutMs),
      });
    } catch (error) {
      const cause = (error as { cause?: { code?: string } }).cause?.code;
      const reason =
        (error as Error).name === 'TimeoutError'
          ? 'did not answer in time'
          : `is not reachable${cause ? ` (${cause})` : ''}`;
      throw new PoolApiError(
        'proxy_unreachable',
        'Proxy unreachable',
        0,
        `the pool proxy at ${this.#base.origin} ${reason} on ${method} ${path}; is it running?`,
        { cause: error },
      );
    }
    const json = await readJson(response);
    if (answer === 'text' && response.ok && typeof json === 'string') return json as T;
    if (response.ok && json !== null && typeof json === 'object') return json as T;
    throw problemOf(response, json, `${method} ${path}`);
  }
}

/** The period of a payment export: ISO 8601 instants, `from` included, `to` not. */
export interface ExportPeriod {
  from?: string;
  to?: string;
}

function exportPath(agentId: string, format: 'csv' | 'json', period: ExportPeriod): string {
  const query = new URLSearchParams({ format });
  if (period.from) query.set('from', period.from);
  if (period.to) query.set('to', period.to);
  return `/api/agents/${encodeURIComponent(agentId)}/payments/export?${query}`;
}

/**
 * The sandbox friendbot named in `PoolInfo.friendbotUrl`: creates the account (test XLM) and, with `usdc` > 0,
 * mints that much test USDC to it. Refusals (problem+json) become PoolApiError.
 */
export async function friendbot(friendbotUrl: string, address: string, usdc: number): Promise<void> {
  const url = new URL(friendbotUrl);
  url.searchParams.set('addr', address);
  if (usdc > 0) url.searchParams.set('usdc', String(usdc));
  let response: Response;
  try {
    response = await fetch(url, { credentials: 'omit', cache: 'no-store' });
  } catch (error) {
    throw new PoolApiError('proxy_unreachable', 'Friendbot unreachable', 0, `no answer from ${url.origin}`, {
      cause: error,
    });
  }
  if (!response.ok) throw problemOf(response, await readJson(response), 'friendbot');
}

/** The answer's JSON, or undefined when it is not JSON; refuses answers larger than MAX_ANSWER_BYTES. */
async function readJson(response: Response): Promise<unknown> {
  const declared = Number(response.headers.get('content-length') ?? '0');
  if (declared > MAX_ANSWER_BYTES) {
    await response.body?.cancel();
    throw new PoolApiError('bad_response', 'Bad response', response.status, 'the answer is too large');
  }
  const text = await response.text();
  try {
    return JSON.parse(text);
  } catch {
    return text === '' ? undefined : text;
  }
}

/** The answer's Retry-After (RFC 9110: delay-seconds or an HTTP-date) in whole seconds from now, if any. */
function retryAfterOf(response: Response): number | undefined {
  const value = response.headers.get('retry-after')?.trim();
  if (!value) return undefined;
  if (/^\d+$/.test(value)) return Number(value);
  // An HTTP-date begins with the day's name; Date.parse alone would read "-3" as a year.
  if (!/^[A-Za-z]{3}/.test(value)) return undefined;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, Math.ceil((at - Date.now()) / 1000));
}

/** A problem+json body (RFC 9457) → PoolApiError; anything else is summarised by its status. */
function problemOf(response: Response, json: unknown, what: string): PoolApiError {
  const problem = json !== null && typeof json === 'object' ? (json as Record<string, unknown>) : {};
  if (
    typeof problem.detail === 'string' &&
    (typeof problem.code === 'string' || typeof problem.title === 'string')
  ) {
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
    const name = typeof code === 'string' ? code : 'error';
    return new PoolApiError(name, typeof title === 'string' ? title : name, response.status, detail, {
      issues: Array.isArray(errors) ? (errors as ProblemIssue[]) : undefined,
      extra,
      retryAfterSeconds: retryAfterOf(response),
    });
  }
  const text = typeof json === 'string' ? json : '';
  return new PoolApiError(
    'bad_response',
    `Request failed (${response.status}${response.statusText ? ` ${response.statusText}` : ''})`,
    response.status,
    `${what} answered HTTP ${response.status} without a problem document${text ? `: ${text.slice(0, 200)}` : ''}`,
    { retryAfterSeconds: retryAfterOf(response) },
  );
}
