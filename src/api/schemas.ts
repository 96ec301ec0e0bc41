// Request and response schemas of the REST API (field names as README.md documents them). The same schemas
// validate requests at runtime and generate /openapi.json, so the two cannot drift apart.
import { extendZodWithOpenApi } from '@asteasolutions/zod-to-openapi';
import { z } from 'zod';
import { isAccountAddress } from './address.ts';
import { AGENT_ID_PATTERN } from './agent-id.ts';
import { AMOUNT_PATTERN, formatAmount, parseAmount } from './amount.ts';

extendZodWithOpenApi(z);

const AMOUNT_EXAMPLE = '10.0000000';

/**
 * A decimal USDC amount string, > 0, at most 7 decimals and at most `max` stroops, parsed here into stroops
 * (bigint): handlers receive the amount parsed, and a client's request type keeps the string it sends.
 */
export function amountField(max: bigint) {
  return z
    .string()
    .openapi({
      description: `USDC amount, \`<int>.<7 digits>\` (a bare integer is accepted), > 0 and ≤ ${formatAmount(max)}`,
      example: AMOUNT_EXAMPLE,
      pattern: AMOUNT_PATTERN.source,
    })
    .transform((value, ctx) => {
      try {
        return parseAmount(value, max);
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message });
        return z.NEVER;
      }
    });
}

export const accountAddress = (description: string) =>
  z
    .string()
    .refine(isAccountAddress, {
      message: 'not a valid Stellar account address (G…, 56 characters, valid checksum)',
    })
    .openapi({
      description,
      example: 'GBXFXNDLV4LSWA4VB7YIL5GBD7BVNR22SGBTDKMO2SBZZHDXSKZYCP7L',
      pattern: '^G[A-Z2-7]{55}$',
    });

export const agentId = z
  .string()
  .regex(AGENT_ID_PATTERN, 'agentId must be 1–64 characters of A-Z a-z 0-9 . _ : -')
  .openapi({
    description: 'Agent identifier chosen by the caller (1–64 of [A-Za-z0-9._:-])',
    example: 'agent-1',
  });

const uuid = z
  .string()
  .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'prepareId must be a UUID');
const base64Xdr = z
  .string()
  .min(4)
  .max(60_000)
  .regex(/^[A-Za-z0-9+/]+={0,2}$/, 'must be base64 XDR');

// ---- requests ----

export const ChallengeQuery = z.strictObject({
  publicKey: accountAddress('Wallet address that will sign the challenge'),
});

export const VerifyRequest = z
  .strictObject({
    publicKey: accountAddress('Wallet address that signed the challenge'),
    challenge: z.string().min(1).max(2048).openapi({ description: 'The challenge text exactly as issued' }),
    signature: z
      .string()
      .min(1)
      .max(256)
      .openapi({ description: 'SEP-53 signature of the challenge: 64 bytes as base64 (or hex)' }),
  })
  .openapi('AuthVerifyRequest');

export const depositPrepareRequest = (max: bigint) =>
  z
    .strictObject({
      amount: amountField(max),
      publicKey: accountAddress('The wallet that will sign and fund the deposit (must be the token subject)'),
      agentId: agentId.optional().openapi({ description: 'Agent to credit; defaults to the wallet address' }),
    })
    .openapi('DepositPrepareRequest');

export const DepositSubmitRequest = z
  .strictObject({
    prepareId: uuid.openapi({ description: 'The prepareId returned by /api/deposit/prepare' }),
    signedTransactionXDR: base64Xdr.openapi({ description: 'transactionXDR signed by the wallet, base64' }),
  })
  .openapi('DepositSubmitRequest');

export const operatorDepositRequest = (max: bigint) =>
  z.strictObject({ agentId, amount: amountField(max) }).openapi('OperatorDepositRequest');

/** A wallet's SEP-53 signature of a confirmation message (POST /api/agents/{agentId}/wallet-confirmation). */
const walletConfirmation = z
  .strictObject({
    nonce: z
      .string()
      .regex(/^[0-9a-f]{48}$/, 'nonce must be the 48 hex characters of the confirmation message')
      .openapi({ description: 'the confirmation message’s nonce (single use)' }),
    signature: z.string().min(1).max(200).openapi({ description: 'SEP-53 signature, base64 or hex' }),
  })
  .openapi('WalletConfirmation', {
    description: 'required when the agent’s policy asks for a fresh wallet signature (docs/POLICY.md)',
  });

export const withdrawRequest = (max: bigint) =>
  z
    .strictObject({
      amount: amountField(max),
      destination: accountAddress('Recipient of the USDC'),
      agentId: agentId.optional().openapi({ description: 'Agent to debit; defaults to the wallet address' }),
      confirmation: walletConfirmation.optional(),
    })
    .openapi('WithdrawRequest');

export const walletConfirmationRequest = (maxWithdraw: bigint, maxPolicyAmount: bigint) =>
  z
    .strictObject({
      withdraw: z
        .strictObject({ amount: amountField(maxWithdraw), destination: accountAddress('Recipient') })
        .optional(),
      policy: z.strictObject(policyFields(maxPolicyAmount)).optional().openapi({
        description: 'a policy change, exactly as it will be sent to PUT /api/agents/{agentId}/policy',
      }),
      unfreeze: z.literal(true).optional().openapi({ description: 'unfreezing the agent' }),
    })
    .refine((b) => [b.withdraw, b.policy, b.unfreeze].filter((a) => a !== undefined).length === 1, {
      message: 'name exactly one action: withdraw, policy or unfreeze',
    })
    .openapi('WalletConfirmationRequest');

/** An unfreeze's optional body: the wallet's confirmation when the owner requires one. */
export const UnfreezeRequest = z
  .strictObject({ confirmation: walletConfirmation.optional() })
  .openapi('UnfreezeRequest');
export const WalletConfirmationMessage = z
  .object({
    message: z.string().openapi({ description: 'the text for the wallet to sign (SEP-53 signMessage)' }),
    nonce: z.string(),
    expiresAt: z.string(),
  })
  .openapi('WalletConfirmationMessage');

export const BalanceParams = z.strictObject({ agentId });

/** The HTTP methods a payment may use on the service. */
export const PAY_METHODS = ['GET', 'POST', 'PUT', 'PATCH', 'DELETE'] as const;

export const payRequest = (cap: bigint) =>
  z
    .strictObject({
      agentId: agentId.optional().openapi({
        description: 'Agent that pays; defaults to the wallet address (required for operator calls)',
      }),
      serviceUrl: z
        .string()
        .min(1)
        .max(2048)
        .openapi({ description: 'http(s) URL of an x402 service (may carry a query string)' }),
      method: z
        .enum(PAY_METHODS)
        .default('GET')
        .openapi({ description: 'HTTP method to use on the service' }),
      body: z.unknown().optional().openapi({ description: 'JSON body to forward (POST, PUT, PATCH)' }),
      headers: z
        .record(z.string().max(64), z.string().max(1024))
        .refine((h) => Object.keys(h).length <= 20, 'at most 20 headers')
        .optional()
        .openapi({ description: 'Extra headers to forward (identity and credential headers are refused)' }),
      maxAmount: amountField(cap).optional().openapi({ description: 'Refuse if the price is higher' }),
      idempotencyKey: z
        .string()
        .regex(/^[A-Za-z0-9_.:-]{8,128}$/, 'idempotencyKey must be 8–128 characters of A-Z a-z 0-9 _ . : -')
        .optional()
        .openapi({ description: 'Same key, same answer: a retry never pays twice' }),
      dryRun: z
        .boolean()
        .optional()
        .openapi({
          description:
            'true: run every check a payment passes, with the service’s quoted price and the budgets as they are now, ' +
            'and answer a PaymentDryRun (whether it would pay, or the rule that would refuse it); nothing is reserved, ' +
            'journaled or signed, and an idempotencyKey is neither looked up nor bound',
        }),
    })
    .openapi('PayRequest');

/** A service an owner's policy names: an http(s) origin, optionally with a path prefix. */
const servicePattern = z.string().min(1).max(512).openapi({
  description: 'an http(s) origin, optionally with a path prefix (no query, no fragment)',
  example: 'https://api.example.com/weather',
});

/** A budget or cap of a policy: an amount, or null for none of the owner's own (the operator's applies). */
const policyAmount = (max: bigint, description: string) =>
  amountField(max).nullable().optional().openapi({ description });

/** How long a payment waits for approval when its owner set no deadline, and the bounds of one it sets. */
export const APPROVAL_TIMEOUT_DEFAULT_S = 900;
const APPROVAL_TIMEOUT_MIN_S = 30;
const APPROVAL_TIMEOUT_MAX_S = 86_400;

/** The fields of a policy change, shared by the change itself and its wallet confirmation. */
const policyFields = (max: bigint) => ({
  perPaymentCap: policyAmount(max, 'largest price one payment may have; null/absent: the operator’s cap'),
  budgetPerHour: policyAmount(
    max,
    'most the agent may spend in any rolling hour; null/absent: no own budget',
  ),
  budgetPerDay: policyAmount(max, 'most the agent may spend in any rolling 24 hours'),
  budgetPer30Days: policyAmount(max, 'most the agent may spend in any rolling 30 days'),
  allowedServices: z
    .array(servicePattern)
    .max(50)
    .optional()
    .openapi({ description: 'the agent may pay only these services; empty/absent: any service' }),
  deniedServices: z
    .array(servicePattern)
    .max(50)
    .optional()
    .openapi({ description: 'the agent may never pay these services (a denial wins over an allowance)' }),
  frozen: z
    .boolean()
    .optional()
    .openapi({ description: 'freeze (true) or unfreeze (false) the agent; absent: unchanged' }),
  approvalThreshold: policyAmount(
    max,
    'a payment whose quoted price is above this waits for the owner’s approval; null/absent: none waits',
  ),
  approvalTimeoutSeconds: z
    .number()
    .int()
    .min(APPROVAL_TIMEOUT_MIN_S)
    .max(APPROVAL_TIMEOUT_MAX_S)
    .nullable()
    .optional()
    .openapi({
      description: `how long a payment waits for approval before it expires unpaid (seconds, ${APPROVAL_TIMEOUT_MIN_S}–${APPROVAL_TIMEOUT_MAX_S}); null/absent: ${APPROVAL_TIMEOUT_DEFAULT_S}`,
    }),
  requireWithdrawalSignature: z.boolean().optional().openapi({
    description:
      'each withdrawal needs a fresh wallet signature (a wallet’s agents only); absent: unchanged. Turning it off needs one too',
  }),
  withdrawalDestinations: z.array(accountAddress('an allowed destination')).max(20).optional().openapi({
    description:
      'the only accounts withdrawals may go to; empty: any; absent: unchanged. Adding one while signatures are required needs one',
  }),
});

export const policyRequest = (max: bigint) =>
  z
    .strictObject({
      ...policyFields(max),
      confirmation: walletConfirmation.optional().openapi({
        description:
          'while the owner requires wallet signatures, a change that loosens anything needs one (docs/POLICY.md)',
      }),
    })
    .openapi('AgentPolicyRequest');

/** The longest an agent token may live: 90 days. */
export const AGENT_TOKEN_MAX_SECONDS = 90 * 86_400;

export const AgentTokenRequest = z
  .strictObject({
    expiresInSeconds: z
      .number()
      .int()
      .min(60)
      .max(AGENT_TOKEN_MAX_SECONDS)
      .optional()
      .openapi({ description: 'how long the token lives, 60 s to 90 days (default 30 days)' }),
  })
  .openapi('AgentTokenRequest');

export const AgentTokenParams = z.strictObject({
  agentId,
  tokenId: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'tokenId must be a UUID'),
});

const instant = (what: string) =>
  z
    .string()
    .max(40)
    .refine(
      (v) => /^\d{4}-\d{2}-\d{2}(T[\d:.]+(Z|[+-]\d{2}:\d{2}))?$/.test(v) && !Number.isNaN(Date.parse(v)),
      {
        message: `${what} must be an ISO 8601 date or date-time (e.g. 2026-11-01 or 2026-11-01T00:00:00Z)`,
      },
    )
    .optional()
    .openapi({
      description: `${what} (ISO 8601, UTC unless an offset is given)`,
      example: '2026-11-01T00:00:00Z',
    });

export const PaymentExportQuery = z
  .strictObject({
    format: z
      .enum(['csv', 'json'])
      .default('json')
      .openapi({ description: 'csv (a download) or json (default)' }),
    from: instant('first instant included (default: the beginning)'),
    to: instant('first instant no longer included (default: now)'),
  })
  .refine((q) => q.from === undefined || q.to === undefined || Date.parse(q.from) <= Date.parse(q.to), {
    message: 'from must not be after to',
    path: ['from'],
  });

export const PaymentsQuery = z.strictObject({
  limit: z
    .string()
    .regex(/^[1-9][0-9]{0,2}$/, 'limit must be 1–999')
    .optional(),
});

// ---- responses ----

export const Health = z
  .object({
    status: z.enum(['healthy', 'starting']).openapi({
      description:
        '`healthy` (200) once the pool is connected; `starting` (503) until then, with `detail` saying why',
    }),
    version: z.string(),
    detail: z
      .string()
      .optional()
      .openapi({ description: 'while starting: what the pool connection waits for' }),
    poolWalletFloat: z
      .string()
      .optional()
      .openapi({ description: 'USDC the pool wallet holds to pay services' }),
    warnings: z.array(z.string()).optional(),
  })
  .openapi('Health');
export const Liveness = z
  .object({ status: z.literal('alive'), version: z.string() })
  .openapi('Liveness', { description: 'the process answers HTTP (whether the pool is connected or not)' });
export const AuthChallenge = z.object({ challenge: z.string() }).openapi('AuthChallenge');
export const AuthToken = z.object({ token: z.string(), expiresIn: z.number().int() }).openapi('AuthToken');
export const LogoutResult = z
  .object({
    loggedOut: z.literal(true),
    tokenExpiresAt: z.string().openapi({
      description: 'When the ended token would have expired (its revocation is kept until then)',
    }),
  })
  .openapi('LogoutResult');
export const PreparedDeposit = z
  .object({
    prepareId: z.string(),
    transactionXDR: z.string(),
    expiresAt: z.string().openapi({
      description: 'Until when the proof is promised to stay valid (ISO 8601): sign and submit before then',
    }),
  })
  .openapi('PreparedDeposit');
export const ZkProofInfo = z
  .object({ generated: z.boolean(), onChain: z.boolean(), timeMs: z.number().int().optional() })
  .openapi('ZkProofInfo');
export const PrepareIdParams = z
  .strictObject({
    prepareId: uuid.openapi({ description: 'The prepareId returned by /api/deposit/prepare' }),
  })
  .openapi('PrepareIdParams');
export const CancelledDeposit = z
  .object({
    prepareId: z.string(),
    status: z.enum(['cancelled', 'expired', 'failed']).openapi({
      description:
        '`cancelled`: cancelled now or by an earlier call; `expired` or `failed`: it had already ended. In every case nothing moved and the prepareId can no longer be submitted.',
    }),
  })
  .openapi('CancelledDeposit');
export const DepositResult = z
  .object({
    status: z.literal('confirmed'),
    agentId: z.string().openapi({ description: 'The agent credited' }),
    txHash: z.string(),
    amount: z.string().optional(),
    zkProof: ZkProofInfo,
  })
  .openapi('DepositResult');
export const WithdrawResult = z
  .object({
    status: z.literal('confirmed'),
    txHash: z.string(),
    amount: z.string(),
    destination: z.string(),
    zkProof: ZkProofInfo,
  })
  .openapi('WithdrawResult');
export const Balance = z
  .object({ agentId: z.string(), balance: z.string(), currency: z.literal('USDC') })
  .openapi('Balance');
export const PaymentReceipt = z
  .object({
    amount: z.string(),
    asset: z.string(),
    payTo: z.string(),
    network: z.string(),
    transaction: z.string(),
    settledAt: z.string(),
  })
  .openapi('PaymentReceipt');
/** A payment's status: `awaiting_approval` while it waits for its owner (nothing signed, its price reserved). */
const paymentStatus = z.enum(['confirmed', 'failed', 'pending', 'awaiting_approval']);
export const PaymentResult = z
  .object({
    paymentId: z.string(),
    paymentStatus,
    batchId: z.string(),
    expiresAt: z.string().optional().openapi({
      description:
        'while `awaiting_approval`: when it expires unpaid unless its owner approves it (POST /api/approvals/{paymentId}/approve)',
    }),
    receipt: PaymentReceipt.optional(),
    serviceStatus: z.number().int().optional(),
    contentType: z.string().optional(),
    content: z.string().optional(),
    contentEncoding: z.enum(['utf8', 'base64']).optional(),
    reason: z
      .object({
        code: z.string(),
        detail: z.string(),
        /** what the service or its facilitator gave as the reason, when it gave one */
        serviceReason: z.string().optional(),
      })
      .optional(),
  })
  .openapi('PaymentResult');
/** The answer to a dry run of a payment: what would be paid and whether it would pass. */
export const PaymentDryRun = z
  .object({
    dryRun: z.literal(true),
    wouldPay: z.boolean().openapi({ description: 'whether the payment would pass every check now' }),
    price: z.string().optional().openapi({
      description:
        'the service’s quoted price (USDC); absent when a rule refused before the service was asked',
    }),
    asset: z.string().optional(),
    payTo: z.string().optional().openapi({ description: 'whom the pool wallet would pay' }),
    network: z.string().optional(),
    awaitsApproval: z.boolean().optional().openapi({
      description:
        'true when the price is above the owner’s approval threshold: the payment would wait for approval',
    }),
    refusal: z
      .object({
        code: z.string().openapi({ description: 'the problem code the payment would be refused with' }),
        detail: z.string(),
        rule: z.string().openapi({
          description:
            'the rule that refuses: frozen, deniedServices, allowedServices, encodedPath, maxAmount, paymentCap, ' +
            'perPaymentCap, operatorBudget:hour|day, budget:hour|day|days30, float, balance, or the code itself',
        }),
      })
      .optional()
      .openapi({ description: 'when wouldPay is false: why' }),
  })
  .openapi('PaymentDryRun');
/** What POST /api/pay answers: a payment's result, or with `dryRun: true` a dry run's. */
export const PayAnswer = z.union([PaymentResult, PaymentDryRun]);
export const PaymentList = z
  .object({
    payments: z.array(
      z.object({
        paymentId: z.string(),
        agentId: z.string(),
        serviceUrl: z.string(),
        amount: z.string(),
        paymentStatus,
        batchId: z.string(),
        receipt: PaymentReceipt.optional(),
        createdAt: z.string(),
      }),
    ),
  })
  .openapi('PaymentList');
export const OperatorBooks = z
  .object({
    poolWallet: z.string().optional().openapi({ description: 'USDC the pool wallet holds (payments on)' }),
    floatAccount: z.string().openapi({ description: 'USDC in the float account’s shielded notes' }),
    agentNotes: z.string().openapi({ description: 'USDC in all agents’ confirmed notes' }),
    unsettled: z.string().openapi({ description: 'payments made for agents, not yet settled' }),
    settling: z.boolean().openapi({ description: 'a settlement round or a float refill is under way' }),
  })
  .openapi('OperatorBooks');
const budgetState = z
  .object({
    budget: z
      .string()
      .openapi({ description: 'the budget that applies: the tighter of the owner’s and the operator’s' }),
    spent: z.string().openapi({
      description: 'what the agent’s payments that paid or may still pay add up to in the window',
    }),
    remaining: z.string().openapi({ description: 'budget − spent (never below 0)' }),
  })
  .openapi('BudgetState');
export const AgentPolicyView = z
  .object({
    agentId: z.string(),
    perPaymentCap: z.string().nullable().openapi({ description: 'the owner’s cap; null: none of its own' }),
    budgetPerHour: z.string().nullable(),
    budgetPerDay: z.string().nullable(),
    budgetPer30Days: z.string().nullable(),
    allowedServices: z.array(z.string()),
    deniedServices: z.array(z.string()),
    frozen: z.boolean(),
    approvalThreshold: z.string().nullable().openapi({
      description: 'a payment above this waits for the owner’s approval; null: none waits',
    }),
    approvalTimeoutSeconds: z
      .number()
      .int()
      .openapi({ description: 'how long a payment waits for approval before it expires unpaid' }),
    requireWithdrawalSignature: z
      .boolean()
      .openapi({ description: 'each withdrawal needs a fresh wallet signature' }),
    withdrawalDestinations: z
      .array(z.string())
      .openapi({ description: 'the only accounts withdrawals may go to; empty: any' }),
    effective: z
      .object({
        perPaymentCap: z
          .string()
          .openapi({ description: 'the cap that applies (owner’s or operator’s, the lower)' }),
        budgets: z.object({
          hour: budgetState.nullable(),
          day: budgetState.nullable(),
          days30: budgetState.nullable(),
        }),
      })
      .openapi({
        description: 'what applies to the next payment, with what is left of each budget (null: no budget)',
      }),
    updatedAt: z.string().nullable().openapi({ description: 'when the owner last changed it; null: never' }),
  })
  .openapi('AgentPolicy');
const agentTokenInfo = {
  tokenId: z.string().openapi({ description: 'the token’s id (its jti): what revokes it' }),
  agentId: z.string(),
  issuedAt: z.string(),
  expiresAt: z.string(),
};
export const AgentTokenIssued = z
  .object({
    ...agentTokenInfo,
    token: z.string().openapi({
      description:
        'the Bearer token for the agent (shown once, never kept by the proxy): it pays within the agent’s policy and reads its balance, policy and payments, nothing else',
    }),
  })
  .openapi('AgentTokenIssued');
export const AgentTokenList = z
  .object({
    tokens: z.array(
      z.object({
        ...agentTokenInfo,
        client: z
          .object({ clientId: z.string(), name: z.string() })
          .optional()
          .openapi({ description: 'the MCP client the owner connected through OAuth, when it was one' }),
      }),
    ),
  })
  .openapi('AgentTokenList');
export const OAuthRequestParams = z.strictObject({
  requestId: z
    .string()
    .regex(/^ppa_[A-Za-z0-9_-]{43}$/, 'requestId must be the id the authorization endpoint gave (ppa_…)'),
});
export const OAuthRequestView = z
  .object({
    requestId: z.string(),
    clientId: z.string(),
    clientName: z.string().openapi({ description: 'the name the client gave itself (not verified)' }),
    redirectHost: z.string().openapi({ description: 'where the client receives the authorization' }),
    verified: z.boolean().openapi({
      description:
        'false: the client registered itself (dynamic registration), so its name is only its own claim',
    }),
    resource: z.string().openapi({ description: 'the MCP endpoint the token will be valid for' }),
    expiresAt: z.string(),
  })
  .openapi('OAuthRequestView');
export const OAuthApproval = z.strictObject({ agentId }).openapi('OAuthApproval');
export const OAuthDecision = z
  .object({
    redirectTo: z.string().openapi({
      description: 'the client’s redirect URI with the authorization code (or the refusal) and its state',
    }),
  })
  .openapi('OAuthDecision');
export const AgentTokenRevoked = z
  .object({ tokenId: z.string(), revoked: z.literal(true) })
  .openapi('AgentTokenRevoked');
export const PaymentExport = z
  .object({
    agentId: z.string(),
    from: z.string().nullable(),
    to: z.string(),
    payments: z.array(
      z.object({
        time: z.string().openapi({ description: 'when the payment was asked for (ISO 8601, UTC)' }),
        service: z.string().openapi({ description: 'the URL paid' }),
        amount: z.string(),
        status: paymentStatus,
        batch: z.string().openapi({ description: 'the batch it ran in ("" before one)' }),
        transaction: z
          .string()
          .openapi({ description: 'the receipt’s transaction hash ("" without a receipt)' }),
        paymentId: z.string(),
      }),
    ),
  })
  .openapi('PaymentExport');
export const ApprovalParams = z.strictObject({
  paymentId: z
    .string()
    .regex(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'paymentId must be a UUID'),
});
const pendingApproval = z.object({
  paymentId: z.string().openapi({ description: 'the payment (and approval) id' }),
  agentId: z.string(),
  serviceUrl: z.string(),
  method: z.string(),
  amount: z.string().openapi({ description: 'the price the service quoted (USDC), reserved while it waits' }),
  createdAt: z.string(),
  expiresAt: z.string(),
});
export const ApprovalList = z.object({ approvals: z.array(pendingApproval) }).openapi('ApprovalList');
export const ApprovalDecision = z
  .object({
    paymentId: z.string(),
    decision: z.enum(['approved', 'denied']),
    paymentStatus: paymentStatus.openapi({
      description: 'approved: `pending` (it joined the next batch); denied: `failed` (nothing was paid)',
    }),
  })
  .openapi('ApprovalDecision');
export const AgentList = z.object({ agents: z.array(Balance) }).openapi('AgentList');
export const BatchSummary = z
  .object({
    batchId: z.string(),
    executedAt: z.string().openapi({ description: 'when the ledger that holds its first payment closed' }),
    payments: z.number().int().openapi({ description: 'its confirmed payments (each a public transfer)' }),
  })
  .openapi('BatchSummary');
export const PoolStats = z
  .object({
    activeAgents: z
      .number()
      .int()
      .openapi({ description: 'agents the pool registered (each insert is public)' }),
    totalTransactions: z
      .number()
      .int()
      .openapi({ description: 'confirmed pool transactions and payments (each a public transaction)' }),
    servicesUsed: z.number().int().openapi({ description: 'distinct payees paid' }),
    recentBatches: z.array(BatchSummary),
  })
  .openapi('PoolStats');
export const PoolInfo = z
  .object({
    network: z.string(),
    networkPassphrase: z.string(),
    rpcUrl: z.string(),
    contracts: z.object({
      pool: z.string(),
      token: z.string(),
      aspMembership: z.string(),
      aspNonMembership: z.string(),
    }),
    operator: z.string(),
    poolWallet: z.string(),
    circuitId: z.string(),
    maxDeposit: z.string(),
    maxWithdraw: z.string(),
    registrationWaitMaxSeconds: z.number().int().openapi({
      description:
        "The longest a new agent's first prepare takes, from its first request to the prepared transaction, as this proxy measures it: the slot interval, the signing window and a proof (its key's registration slot), inserting a full slot's keys, its own proof, and one retry after `503 registration_pending` (a request held past the hold limit answers that, with Retry-After). Holds while no more keys than a slot takes arrive per slot",
    }),
    trees: z
      .object({
        current: z
          .number()
          .int()
          .openapi({ description: 'The current tree (numbered from 0); those before it are full' }),
        count: z.number().int().openapi({ description: 'Trees opened so far' }),
        leavesUsed: z.number().int().openapi({ description: 'Leaves used in the current tree' }),
        leavesFree: z
          .number()
          .int()
          .openapi({ description: 'Leaves left in the current tree (a transaction takes two)' }),
        capacity: z.number().int().openapi({ description: 'Leaves one tree takes' }),
      })
      .openapi({
        description:
          "The pool's commitment trees, as this proxy has read the ledger. A full tree freezes nothing: the transaction that needs room opens the next tree, and notes in every tree stay spendable",
      }),
    friendbotUrl: z.string().optional().openapi({
      description: 'Only on the embedded sandbox: `GET {friendbotUrl}?addr=G…&usdc=N` funds an account',
    }),
    payments: z.object({
      enabled: z.boolean(),
      x402Network: z.string(),
      paymentCap: z.string(),
      batchWindowMs: z.number().int(),
      facilitatorUrl: z.string().optional(),
      demoServiceUrl: z.string().optional(),
    }),
  })
  .openapi('PoolInfo');
export const Problem = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
    instance: z.string(),
    errors: z.array(z.object({ path: z.string(), message: z.string() })).optional(),
  })
  .openapi('Problem');
