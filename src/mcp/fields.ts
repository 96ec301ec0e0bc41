// The tools' input and output fields, built from the REST API's own schemas and formats (src/api), so an
// agent reads in the tool list the rules the proxy applies: an amount's pattern, an agentId's alphabet, a
// Stellar address, an idempotency key. What the schema cannot say (an amount above the proxy's limit, an
// address checksum) the proxy still refuses with its problem code.
import { z } from 'zod';
import { AMOUNT_PATTERN } from '../api/amount.ts';
import { AGENT_ID_PATTERN } from '../api/agent-id.ts';
import * as S from '../api/schemas.ts';

const AMOUNT_TEXT =
  'USDC as a decimal string, "<int>" or "<int>.<up to 7 digits>", e.g. "10" or "2.5000000", or as a JSON number with at most 7 decimals (e.g. 3 or 0.25)';

/** An amount: a decimal string, or a JSON number (clients such as the MCP Inspector send `amount=3` as one). */
export const amountInput = (what: string) =>
  z
    .union([
      z.string().min(1).max(40).regex(AMOUNT_PATTERN, `${what} must be ${AMOUNT_TEXT}`),
      z.number().positive().finite(),
    ])
    .describe(`${what}: ${AMOUNT_TEXT}`);

/** The wallet's choice of agent (absent in operator mode, where the server has exactly one). */
export const agentIdInput = z
  .string()
  .regex(AGENT_ID_PATTERN, 'agentId must be 1–64 characters of A-Z a-z 0-9 . _ : -')
  .optional()
  .describe('agent of your wallet to act for (1–64 of A-Z a-z 0-9 . _ : -); default: the wallet address');

export const destinationInput = z
  .string()
  .length(56)
  .regex(/^G[A-Z2-7]{55}$/, 'destination must be a Stellar account address (G…, 56 characters)')
  .describe('Stellar account address (G…, 56 characters) to receive the USDC');

const payFields = S.payRequest(1n).shape;

/** A wallet's signed confirmation of one withdrawal, as POST /api/withdraw takes it. */
export const walletConfirmationInput = S.withdrawRequest(1n).shape.confirmation.describe(
  'the owner’s wallet confirmation of exactly this withdrawal, when the owner’s policy requires one: the nonce ' +
    'from POST /api/agents/{agentId}/wallet-confirmation and the wallet’s SEP-53 signature of its message',
);

export const idempotencyKeyInput = payFields.idempotencyKey.describe(
  'your key for this payment (8–128 of A-Z a-z 0-9 _ . : -); reuse it unchanged when retrying the same payment',
);

export const payMethodInput = z
  .enum(S.PAY_METHODS)
  .optional()
  .describe('HTTP method to use on the service (default GET)');

export const payBodyInput = z
  .union([z.string().max(32_768), z.record(z.string(), z.json()), z.array(z.json())])
  .optional()
  .describe('body for the service (POST, PUT, PATCH): a string is sent as is, an object or array as JSON');

export const payHeadersInput = payFields.headers.describe(
  'extra request headers for the service, at most 20 (identity and credential headers are refused)',
);

export const prepareIdInput = S.DepositSubmitRequest.shape.prepareId.describe(
  'prepareId returned by pool_deposit',
);
export const signedXdrInput = S.DepositSubmitRequest.shape.signedTransactionXDR.describe(
  'transactionXDR from pool_deposit, signed by the wallet (base64 XDR)',
);

// ---- outputs: the REST answers' fields, with what an agent needs to read them ----

/** A string or null, as `anyOf` branches of one type each (portable to single-`type` schema dialects). */
const orNone = (what: string) =>
  z.union([z.string(), z.null().describe('none set')]).describe(`${what}; null: none of its own`);

const txHash = z.string().describe('hash of the confirmed pool transaction');
const agentId = z.string().describe('the agent the call acted for');

export const outputs = {
  depositConfirmed: {
    status: z.literal('confirmed'),
    agentId,
    amount: z.string().describe('USDC credited, <int>.<7 digits>'),
    txHash,
    zkProof: S.ZkProofInfo,
  },
  depositPrepared: {
    status: z.literal('prepared'),
    agentId,
    amount: z.string(),
    prepareId: z.string(),
    transactionXDR: z
      .string()
      .describe('unsigned transact() transaction (base64 XDR) for the wallet to sign'),
    expiresAt: z.string().describe('sign and submit before this time (ISO 8601); prepare again after it'),
  },
  depositSubmitted: {
    status: z.literal('confirmed'),
    agentId,
    amount: z.string().optional(),
    txHash,
    zkProof: S.ZkProofInfo,
  },
  balance: {
    ...S.Balance.shape,
    balance: z.string().describe('available USDC, <int>.<7 digits>'),
  },
  withdraw: { ...S.WithdrawResult.shape, agentId, txHash },
  pay: {
    paymentId: z.string().optional().describe('absent in a dry run'),
    paymentStatus: z
      .enum(['confirmed', 'pending', 'awaiting_approval'])
      .describe(
        'pending: still being decided; call again with the same idempotencyKey for the result. awaiting_approval: ' +
          'the price is above the owner’s approval threshold; nothing is paid unless the owner approves it by expiresAt',
      )
      .optional(),
    batchId: z.string().optional(),
    expiresAt: z.string().optional().describe('while awaiting_approval: when it expires unpaid'),
    content: z.string().optional().describe("the paid service's response body"),
    contentEncoding: z.enum(['utf8', 'base64']).optional().describe('base64 for a binary body'),
    serviceStatus: z.number().int().optional(),
    contentType: z.string().optional(),
    receipt: S.PaymentReceipt.optional().describe(
      'the on-chain transfer from the pool wallet (transaction: its hash)',
    ),
    // a dry run's answer (dryRun: true): nothing was reserved or signed
    ...S.PaymentDryRun.partial().shape,
  },
  stats: S.PoolStats.shape,
  policy: {
    ...S.AgentPolicyView.shape,
    perPaymentCap: orNone('the owner’s per-payment cap (USDC)'),
    budgetPerHour: orNone('the owner’s budget over any rolling hour'),
    budgetPerDay: orNone('the owner’s budget over any rolling 24 hours'),
    budgetPer30Days: orNone('the owner’s budget over any rolling 30 days'),
    approvalThreshold: orNone('a payment above this price (USDC) waits for the owner’s approval'),
    updatedAt: orNone('when the owner last changed the policy'),
  },
};
