// Builds the payment side once the pool is connected: the pool wallet (its secret must match the deployment's
// pool wallet), the network it pays on, safe fetching with the allow-listed hosts, the batch operator, the
// float, the settlement job and the float refill job. Alone, batches run in this process; beside other replicas
// on a shared store, in the elected batch leader (replicated-batches.ts). Payments are off (POST /api/pay
// answers 503) without a pool wallet secret.
import { Keypair, StrKey } from '#stellar-sdk';
import { ConfigError, type PaymentsConfig } from '../config.ts';
import { TransferResources } from '../../x402/index.ts';
import type { FlowContext } from '../flows/context.ts';
import type { Cluster } from '../cluster/cluster.ts';
import { BatchOperator } from './batch-operator.ts';
import { executePayment } from './execute-payment.ts';
import { ReplicatedBatches } from './replicated-batches.ts';
import type { PaymentContext } from './context.ts';
import type { QueuedPayment } from './batches.ts';
import { PoolWalletFloat } from './float.ts';
import { ServicePacer } from './pacing.ts';
import { PaymentNonces } from './payment-nonce.ts';
import { PaymentRecords } from './records.ts';
import { AgentPolicies } from '../services/agent-policies.ts';
import { FloatRefillJob } from './float-refill.ts';
import { SettlementJob } from './settlement.ts';

export interface Payments {
  pctx: PaymentContext;
  settlement: SettlementJob;
  refill: FloatRefillJob;
}

export interface PaymentsRequest {
  flows: FlowContext;
  config: PaymentsConfig;
  paymentCap: bigint;
  masterKey: Uint8Array;
  /** The replicas sharing the store: payments then queue in the database for the elected batch leader. */
  cluster?: Cluster;
  /**
   * Asked before every settlement round and refill check: false skips them (another replica leads them, or
   * this one lost its leadership). Absent: always (a proxy alone on its store).
   */
  maySettle?: () => Promise<boolean>;
}

export function createPayments({
  flows,
  config,
  paymentCap,
  masterKey,
  cluster,
  maySettle,
}: PaymentsRequest): Payments | undefined {
  if (config.poolWalletSecret === '') return undefined;
  if (!StrKey.isValidEd25519SecretSeed(config.poolWalletSecret))
    throw new ConfigError('POOL_PROXY_POOL_WALLET_SECRET must be a Stellar secret seed (S…)');
  const poolWallet = Keypair.fromSecret(config.poolWalletSecret);
  if (flows.deployment.poolWallet !== '' && flows.deployment.poolWallet !== poolWallet.publicKey())
    throw new ConfigError(
      `POOL_PROXY_POOL_WALLET_SECRET is the key of ${poolWallet.publicKey()}, not of the pool wallet ${flows.deployment.poolWallet}`,
    );
  const base: Omit<PaymentContext, 'batches'> = {
    flows,
    poolWallet,
    payer: {
      rpcUrl: flows.deployment.rpcUrl,
      networkPassphrase: flows.deployment.networkPassphrase,
      asset: flows.deployment.contracts.token,
      ...(config.ledgerSeconds > 0 && { ledgerSeconds: config.ledgerSeconds }),
      resources: new TransferResources(),
    },
    fetchOptions: { allowedHosts: config.allowedHosts },
    config,
    paymentCap,
    records: new PaymentRecords(flows.store),
    policies: new AgentPolicies(flows.store),
    nonces: new PaymentNonces(masterKey),
    pacer: new ServicePacer(config.batchConcurrency),
    float: new PoolWalletFloat(flows, poolWallet.publicKey()),
  };
  const batching = {
    windowMs: config.batchWindowMs,
    batchMax: config.batchMax,
    queueMax: config.queueMax,
    concurrency: config.batchConcurrency,
    logger: flows.logger,
    clock: flows.clock,
    // a batch runs only once the context below exists
    execute: (p: QueuedPayment, batchId: string) => executePayment(pctx, p, batchId),
  };
  const batches =
    cluster === undefined
      ? new BatchOperator(batching)
      : new ReplicatedBatches(
          { flows, records: base.records, uncommit: (paymentId) => base.float.uncommit(paymentId) },
          cluster,
          { ...batching, payDeadlineMs: config.payDeadlineMs },
        );
  const pctx: PaymentContext = { ...base, batches };
  return {
    pctx,
    settlement: new SettlementJob(pctx, maySettle),
    refill: new FloatRefillJob(pctx, maySettle),
  };
}
