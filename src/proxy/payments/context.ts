// What the payment flows need besides the money flows' context: the pool wallet (the G account whose USDC
// float pays services), the network it pays on, how agent-named URLs are fetched, the payment settings, the
// payment records, the agents' policies, the batch operator, the per-service pacing of sends and the float.
// Built once by `runtime.ts`. Each payments module declares the part it uses as a `Pick` of this context, its
// `flows` narrowed to a `Pick` of the flows' context (with the parts of the modules and flows it calls).
import type { Keypair } from '#stellar-sdk';
import type { PayerNetwork, SafeFetchOptions } from '../../x402/index.ts';
import type { PaymentsConfig } from '../config.ts';
import type { FlowContext } from '../flows/context.ts';
import type { PaymentBatches } from './batches.ts';
import type { PoolWalletFloat } from './float.ts';
import type { PaymentNonces } from './payment-nonce.ts';
import type { ServicePacer } from './pacing.ts';
import type { PaymentRecords } from './records.ts';
import type { AgentPolicies } from '../services/agent-policies.ts';

export interface PaymentContext {
  flows: FlowContext;
  poolWallet: Keypair;
  payer: PayerNetwork;
  fetchOptions: SafeFetchOptions;
  config: PaymentsConfig;
  /** Largest price one payment may have (stroops). */
  paymentCap: bigint;
  records: PaymentRecords;
  /** Each agent's policy, set by its owner (checked before a payment is reserved and before it is signed). */
  policies: AgentPolicies;
  /** Derives each payment attempt's authorization nonce (and opens nonces found on chain). */
  nonces: PaymentNonces;
  batches: PaymentBatches;
  /** How many payments to one service are sent at once (adapts to what its facilitator settles). */
  pacer: ServicePacer;
  float: PoolWalletFloat;
}
