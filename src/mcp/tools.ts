// The MCP server of the pool: tools pool_deposit, pool_pay, pool_balance, pool_withdraw and pool_stats (and,
// for wallets, pool_deposit_submit), each a thin call of the proxy's REST API through PoolApi. Results carry
// structuredContent plus a short text; refusals are isError results whose text is the problem (code, detail).
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import type { CallToolResult, ServerNotification, ServerRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { VERSION } from '../version.ts';
import { AmountError, formatAmount, parseAmount } from '../api/amount.ts';
import { PoolApiError, type PoolApi } from '../api/client.ts';

/**
 * operator: the local stdio server, acting as the proxy's operator for one agent (operator-funded deposits).
 * wallet: the HTTP server, acting for a logged-in wallet and its agents (the wallet signs its own deposits).
 */
export type PoolMcpMode = { kind: 'operator'; agentId: string } | { kind: 'wallet'; wallet: string };

export interface PoolMcpOptions {
  api: PoolApi;
  mode: PoolMcpMode;
}

/** Amounts are checked by the proxy against its limits; here they are only parsed and normalised. */
const PARSE_LIMIT = 2n ** 127n;
const PAY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

const amountInput = (what: string) =>
  z
    .string()
    .max(40)
    .describe(
      `${what}: USDC as a decimal string, "<int>" or "<int>.<up to 7 digits>", e.g. "10" or "2.5000000"`,
    );

const zkProof = z.object({
  generated: z.boolean(),
  onChain: z.boolean(),
  timeMs: z.number().int().optional(),
});

const outputs = {
  depositConfirmed: {
    status: z.literal('confirmed'),
    agentId: z.string(),
    amount: z.string().describe('USDC credited, <int>.<7 digits>'),
    txHash: z.string().describe('hash of the confirmed pool transaction'),
    zkProof,
  },
  depositPrepared: {
    status: z.literal('prepared'),
    agentId: z.string(),
    amount: z.string(),
    prepareId: z.string(),
    transactionXDR: z
      .string()
      .describe('unsigned transact() transaction (base64 XDR) for the wallet to sign'),
    expiresAt: z.string().optional(),
  },
  depositSubmitted: {
    status: z.literal('confirmed'),
    amount: z.string().optional(),
    txHash: z.string(),
    zkProof,
  },
  balance: {
    agentId: z.string(),
    balance: z.string().describe('available USDC, <int>.<7 digits>'),
    currency: z.literal('USDC'),
  },
  withdraw: {
    status: z.literal('confirmed'),
    agentId: z.string(),
    amount: z.string(),
    destination: z.string(),
    txHash: z.string(),
    zkProof,
  },
  pay: {
    paymentId: z.string(),
    paymentStatus: z
      .enum(['confirmed', 'pending'])
      .describe('pending: still being decided; call again with the same idempotencyKey for the result'),
    batchId: z.string(),
    content: z.string().optional().describe("the paid service's response body"),
    contentEncoding: z.enum(['utf8', 'base64']).optional().describe('base64 for a binary body'),
    serviceStatus: z.number().int().optional(),
    contentType: z.string().optional(),
    receipt: z
      .object({
        amount: z.string(),
        asset: z.string(),
        payTo: z.string(),
        network: z.string(),
        transaction: z.string().describe('hash of the on-chain transfer from the pool wallet'),
        settledAt: z.string(),
      })
      .optional(),
  },
  stats: {
    activeAgents: z.number().int(),
    totalTransactions: z.number().int(),
    servicesUsed: z.number().int(),
    recentBatches: z.array(
      z.object({
        batchId: z.string(),
        size: z.number().int(),
        executedAt: z.string(),
        durationMs: z.number().int(),
        confirmed: z.number().int(),
        failed: z.number().int(),
      }),
    ),
  },
};

/** A refusal as a tool result: the problem's code, title, status and detail as JSON text. */
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

export function problemResult(error: PoolApiError): CallToolResult {
  const problem = {
    code: error.code,
    title: error.title,
    ...(error.status !== 0 ? { status: error.status } : {}),
    detail: error.message,
    ...(error.issues ? { errors: error.issues } : {}),
    ...error.extra,
  };
  return { content: [{ type: 'text', text: JSON.stringify({ error: problem }) }], isError: true };
}

function success<T extends Record<string, unknown>>(structured: T, text: string): CallToolResult {
  return { content: [{ type: 'text', text }], structuredContent: structured };
}

function invalid(detail: string, path: string): PoolApiError {
  return new PoolApiError('invalid_request', 'Invalid request', 400, detail, {
    issues: [{ path, message: detail }],
  });
}

/** "10" → "10.0000000"; refuses what the proxy would refuse as an amount. */
export function normaliseAmount(value: string, field: string): string {
  try {
    return formatAmount(parseAmount(value, PARSE_LIMIT));
  } catch (error) {
    if (error instanceof AmountError) {
      throw invalid(field === 'amount' ? error.message : `${field}: ${error.message}`, field);
    }
    throw error;
  }
}

function checkServiceUrl(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw invalid(`url "${value.slice(0, 100)}" is not an absolute URL`, 'url');
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw invalid(`url must be http or https, got ${url.protocol}`, 'url');
  }
  return url.href;
}

/** Agent ids travel in a URL path, where "." and ".." would be resolved away. */
function checkPathAgentId(agentId: string): string {
  if (agentId === '.' || agentId === '..') throw invalid('agentId cannot be "." or ".."', 'agentId');
  return agentId;
}

type ToolExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

/** How often a waiting call tells the client it is still at work. */
const PROGRESS_INTERVAL_MS = 10_000;

/**
 * While a call waits (a proof and the ledger, a payment's batch and settlement), progress notifications tell the
 * client it is still at work, so a client that resets its timeout on progress keeps waiting. Only when the client
 * asked for progress (a progressToken); one at once, then every PROGRESS_INTERVAL_MS. Returns the stop function.
 */
function progressWhile(extra: ToolExtra, message: string): () => void {
  const progressToken = extra._meta?.progressToken;
  if (progressToken === undefined) return () => {};
  let progress = 0;
  const send = () => {
    progress += 1;
    extra
      .sendNotification({ method: 'notifications/progress', params: { progressToken, progress, message } })
      .catch(() => {});
  };
  send();
  const timer = setInterval(send, PROGRESS_INTERVAL_MS);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * Runs a tool body; PoolApiError becomes an isError result, anything else propagates. With `waiting`, the client
 * gets progress notifications until the body is done.
 */
async function guarded(
  body: () => Promise<CallToolResult>,
  waiting?: { extra: ToolExtra; message: string },
): Promise<CallToolResult> {
  const stop = waiting ? progressWhile(waiting.extra, waiting.message) : () => {};
  try {
    return await body();
  } catch (error) {
    if (error instanceof PoolApiError) return problemResult(error);
    throw error;
  } finally {
    stop();
  }
}

export function createPoolMcpServer({ api, mode }: PoolMcpOptions): McpServer {
  const server = new McpServer(
    { name: 'privacy-pool-proxy', version: VERSION },
    {
      instructions:
        'Tools of a shielded USDC pool on Stellar. pool_pay pays x402 services from the agent’s private balance ' +
        'through a batch, so on chain nobody can tell which agent paid. Amounts are USDC decimal strings.',
    },
  );
  const wallet = mode.kind === 'wallet' ? mode.wallet : undefined;
  // Wallets name one of their agents; the stdio server has exactly one. (Typed as always present so the tools'
  // argument types stay one shape; in operator mode the field is absent and agentId is never sent.)
  const agentInput = (
    mode.kind === 'wallet'
      ? {
          agentId: z
            .string()
            .max(64)
            .optional()
            .describe(
              'agent of your wallet to act for (1–64 of A-Z a-z 0-9 . _ : -); default: the wallet address',
            ),
        }
      : {}
  ) as { agentId: z.ZodOptional<z.ZodString> };
  /** The agent a call acts for: the configured one (operator) or the wallet's choice, default itself. */
  const agentOf = (args: { agentId?: string }): string =>
    mode.kind === 'operator' ? mode.agentId : (args.agentId ?? mode.wallet);
  const forWhom = mode.kind === 'operator' ? `agent "${mode.agentId}"` : 'the agent (default: your wallet)';

  if (mode.kind === 'operator') {
    server.registerTool(
      'pool_deposit',
      {
        title: 'Deposit into the pool (operator-funded)',
        description:
          `Deposits USDC into the private pool balance of ${forWhom}. The proxy's operator account pays and signs ` +
          'the on-chain transaction (a zero-knowledge proof is generated first); returns after confirmation. ' +
          'Spends the operator’s USDC.',
        inputSchema: { amount: amountInput('amount to deposit') },
        outputSchema: outputs.depositConfirmed,
        annotations: {
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: false,
          openWorldHint: true,
        },
      },
      async ({ amount }, extra) =>
        guarded(
          async () => {
            const normalised = normaliseAmount(amount, 'amount');
            const agentId = mode.agentId;
            const result = await api.operatorDeposit(agentId, normalised);
            return success(
              {
                status: result.status,
                agentId,
                amount: normalised,
                txHash: result.txHash,
                zkProof: result.zkProof,
              },
              `Deposited ${normalised} USDC for ${agentId}; transaction ${result.txHash} confirmed.`,
            );
          },
          { extra, message: 'proving the deposit and waiting for the ledger' },
        ),
    );
  } else {
    // A wallet's MCP call must never reach the operator-funded deposit: the wallet signs its own deposit.
    server.registerTool(
      'pool_deposit',
      {
        title: 'Prepare a deposit for the wallet to sign',
        description:
          'Prepares a deposit of USDC from your wallet into the private pool balance of an agent of your wallet: ' +
          'generates the zero-knowledge proof and returns the unsigned transaction (transactionXDR) with a ' +
          'prepareId. Nothing moves until your wallet signs transactionXDR and pool_deposit_submit sends it.',
        inputSchema: { amount: amountInput('amount to deposit'), ...agentInput },
        outputSchema: outputs.depositPrepared,
        annotations: {
          readOnlyHint: false,
          destructiveHint: false,
          idempotentHint: false,
          openWorldHint: true,
        },
      },
      async (args, extra) =>
        guarded(
          async () => {
            const normalised = normaliseAmount(args.amount, 'amount');
            const agentId = agentOf(args);
            const prepared = await api.prepareDeposit(normalised, wallet!, agentId);
            return success(
              {
                status: 'prepared' as const,
                agentId,
                amount: normalised,
                prepareId: prepared.prepareId,
                transactionXDR: prepared.transactionXDR,
                ...(prepared.expiresAt ? { expiresAt: prepared.expiresAt } : {}),
              },
              `Deposit of ${normalised} USDC for ${agentId} prepared (prepareId ${prepared.prepareId}). ` +
                'Sign transactionXDR with the wallet, then call pool_deposit_submit.',
            );
          },
          { extra, message: 'proving the deposit' },
        ),
    );
    server.registerTool(
      'pool_deposit_submit',
      {
        title: 'Submit a wallet-signed deposit',
        description:
          'Sends the deposit prepared by pool_deposit, signed by your wallet, and waits for on-chain confirmation. ' +
          'Moves USDC from your wallet into the pool. A prepareId works once.',
        inputSchema: {
          prepareId: z.string().max(64).describe('prepareId returned by pool_deposit'),
          signedTransactionXDR: z
            .string()
            .max(60_000)
            .describe('transactionXDR from pool_deposit, signed by the wallet (base64 XDR)'),
        },
        outputSchema: outputs.depositSubmitted,
        annotations: {
          readOnlyHint: false,
          destructiveHint: true,
          idempotentHint: false,
          openWorldHint: true,
        },
      },
      async ({ prepareId, signedTransactionXDR }, extra) =>
        guarded(
          async () => {
            const result = await api.submitDeposit(prepareId, signedTransactionXDR);
            return success(
              {
                status: result.status,
                ...(result.amount ? { amount: result.amount } : {}),
                txHash: result.txHash,
                zkProof: result.zkProof,
              },
              `Deposit${result.amount ? ` of ${result.amount} USDC` : ''} confirmed in transaction ${result.txHash}.`,
            );
          },
          { extra, message: 'waiting for the ledger to confirm the deposit' },
        ),
    );
  }

  server.registerTool(
    'pool_pay',
    {
      title: 'Pay an x402 service from the pool',
      description:
        `Fetches an x402-protected URL and pays its price from the private pool balance of ${forWhom}; returns the ` +
        'service’s response. THIS SPENDS THE AGENT’S MONEY (USDC). The payment joins a batch and is made by the ' +
        'pool wallet, so the answer comes after the batch window (seconds). Set maxAmount to refuse a higher ' +
        'price. To retry a call that failed or timed out, call again with the SAME idempotencyKey: the proxy ' +
        'then pays at most once and returns the first result. Use a new key only for a new, intended payment.',
      inputSchema: {
        url: z.string().max(2048).describe('http(s) URL of the x402 service, query string included'),
        method: z.enum(PAY_METHODS).optional().describe('HTTP method to use on the service (default GET)'),
        body: z
          .union([z.string().max(32_768), z.record(z.string(), z.unknown()), z.array(z.unknown())])
          .optional()
          .describe(
            'body for the service (POST, PUT, PATCH): a string is sent as is, an object or array as JSON',
          ),
        headers: z
          .record(z.string(), z.string())
          .optional()
          .describe('extra request headers for the service (identity and credential headers are refused)'),
        maxAmount: amountInput('highest price to accept').optional(),
        idempotencyKey: z
          .string()
          .max(128)
          .optional()
          .describe(
            'your key for this payment (8–128 of A-Z a-z 0-9 _ . : -); reuse it unchanged when retrying the same payment',
          ),
        ...agentInput,
      },
      outputSchema: outputs.pay,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) =>
      guarded(
        async () => {
          const serviceUrl = checkServiceUrl(args.url);
          const maxAmount =
            args.maxAmount === undefined ? undefined : normaliseAmount(args.maxAmount, 'maxAmount');
          const agentId = agentOf(args);
          const result = await payOrExplain(() =>
            api.pay({
              agentId,
              serviceUrl,
              method: args.method ?? 'GET',
              ...(args.body !== undefined ? { body: args.body } : {}),
              ...(args.headers !== undefined ? { headers: args.headers } : {}),
              ...(maxAmount !== undefined ? { maxAmount } : {}),
              ...(args.idempotencyKey !== undefined ? { idempotencyKey: args.idempotencyKey } : {}),
            }),
          );
          const { reason: _reason, ...answer } = result;
          const structured = { ...answer, paymentStatus: result.paymentStatus };
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

  server.registerTool(
    'pool_balance',
    {
      title: 'Private pool balance',
      description: `Reads the available private USDC balance of ${forWhom} (confirmed notes minus amounts in flight).`,
      inputSchema: { ...agentInput },
      outputSchema: outputs.balance,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async (args) =>
      guarded(async () => {
        const result = await api.balance(checkPathAgentId(agentOf(args)));
        return success(
          { agentId: result.agentId, balance: result.balance, currency: result.currency },
          `Balance of ${result.agentId}: ${result.balance} USDC.`,
        );
      }),
  );

  server.registerTool(
    'pool_withdraw',
    {
      title: 'Withdraw from the pool',
      description:
        `Withdraws USDC from the private pool balance of ${forWhom} to a Stellar account (G…). A zero-knowledge ` +
        'proof is generated and the operator relays the transaction; returns after confirmation. Spends the ' +
        'agent’s balance.',
      inputSchema: {
        amount: amountInput('amount to withdraw'),
        destination: z
          .string()
          .max(56)
          .describe('Stellar account address (G…, 56 characters) to receive the USDC'),
        ...agentInput,
      },
      outputSchema: outputs.withdraw,
      annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: true },
    },
    async (args, extra) =>
      guarded(
        async () => {
          const normalised = normaliseAmount(args.amount, 'amount');
          const agentId = agentOf(args);
          const result = await api.withdraw(normalised, args.destination, agentId);
          return success(
            {
              status: result.status,
              agentId,
              amount: result.amount,
              destination: result.destination,
              txHash: result.txHash,
              zkProof: result.zkProof,
            },
            `Withdrew ${result.amount} USDC from ${agentId} to ${result.destination}; transaction ${result.txHash} confirmed.`,
          );
        },
        { extra, message: 'proving the withdrawal and waiting for the ledger' },
      ),
  );

  server.registerTool(
    'pool_stats',
    {
      title: 'Pool statistics',
      description:
        'Aggregate statistics of the pool (no per-agent data): active agents, transactions, services, recent batches.',
      inputSchema: {},
      outputSchema: outputs.stats,
      annotations: { readOnlyHint: true, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    },
    async () =>
      guarded(async () => {
        const stats = await api.stats();
        return success(
          {
            activeAgents: stats.activeAgents,
            totalTransactions: stats.totalTransactions,
            servicesUsed: stats.servicesUsed,
            recentBatches: stats.recentBatches,
          },
          `Pool: ${stats.activeAgents} active agents, ${stats.totalTransactions} transactions, ` +
            `${stats.servicesUsed} services used, ${stats.recentBatches.length} recent batches.`,
        );
      }),
  );

  return server;
}
