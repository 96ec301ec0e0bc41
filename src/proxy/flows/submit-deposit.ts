// Wallet deposit, step 2: check that the signed envelope is exactly the prepared transaction plus one valid
// signature of the wallet, record the outputs as pending notes, send, and answer once confirmed and credited.
// The answer says what happened on chain: a transaction with the prepared hash that already landed (sent by
// the wallet itself, by an earlier submit, or by anyone) is `confirmed` and credited once, whatever the
// prepared deposit's state. A deposit whose allowlist root was replaced, or that the chain still found stale,
// is answered `409 prepare_stale` ("prepare again"), never a host error.
import { FeeBumpTransaction, Keypair, type Transaction, TransactionBuilder } from '#stellar-sdk';
import { DomainError } from '../domain/errors.ts';
import { parseScopedId } from '../domain/agent-ref.ts';
import type { OperationRecord } from '../journal/journal.ts';
import { txHashOf } from '../services/chain-client.ts';
import { fault } from '../util/faults.ts';
import { awaitCredit, type AwaitCreditDeps } from './await-credit.ts';
import type { FlowContext } from './context.ts';
import { markConfirmed, type MarkConfirmedDeps } from './mark-confirmed.ts';
import {
  refusedByTheLedger,
  releaseOperation,
  settleFailure,
  type SettleFailureDeps,
} from './settle-failure.ts';
import { isStaleRoot } from './stale-root.ts';
import { CANCELLED_REASON } from './cancel-deposit.ts';
import { deadlineOf, ownDeposit, walletDepositData } from './operation-data.ts';
import type { FlowResult } from './withdraw.ts';

/** What this flow uses of the flows' context. */
export type SubmitDepositDeps = Pick<
  FlowContext,
  | 'logger'
  | 'metrics'
  | 'chain'
  | 'registrar'
  | 'notes'
  | 'journal'
  | 'crediting'
  | 'stats'
  | 'clock'
  | 'deployment'
> &
  SettleFailureDeps &
  AwaitCreditDeps &
  MarkConfirmedDeps;

/** A confirmed deposit, naming the agent credited. */
type DepositResult = FlowResult & { agentId: string };

const STALE_DETAIL =
  'the pool moved on since this deposit was prepared (a root it was proved against changed, or deposits landing first moved its writes); prepare the deposit again';

export async function submitDeposit(
  ctx: SubmitDepositDeps,
  wallet: string,
  prepareId: string,
  signedXdr: string,
): Promise<DepositResult> {
  const record = await ctx.journal.get(prepareId);
  // Another wallet's prepareId answers exactly like an unknown one.
  if (record === undefined || ownDeposit(record, wallet) === undefined)
    throw new DomainError('not_found', 'unknown prepareId');
  const tx = parseSigned(ctx, signedXdr);
  checkSigned(tx, record, wallet);
  return submitSigned(ctx, record, tx);
}

/** The signed transaction of `record`, checked: what to do depends on where the prepared deposit stands. */
async function submitSigned(
  ctx: SubmitDepositDeps,
  record: OperationRecord,
  tx: Transaction,
): Promise<DepositResult> {
  const prepareId = record.opId;
  if (record.state === 'confirmed') return resultOf(record);
  // Landed already, whoever sent it: confirmed, and its root no longer holds registrations back.
  const onChain = await ctx.chain.status(record.txHash!);
  if (onChain.status === 'SUCCESS') {
    ctx.registrar.release(prepareId);
    return landed(ctx, record, onChain.ledger ?? 0);
  }
  // Submitted before (by a request that may have died with the process) and not landed: send it again.
  if (record.state === 'submitted') return resend(ctx, record, tx, onChain.status);
  if (record.state !== 'prepared') throw ended(record);
  if (ctx.clock() > deadlineOf(record)) {
    ctx.registrar.release(prepareId);
    await releaseOperation(ctx, prepareId, 'expired');
    throw ended({ ...record, state: 'expired' });
  }
  // Claim the prepared deposit (one submit wins) and register its outputs before sending: whoever sees the
  // confirmation (this request or the indexer after a restart) credits them once.
  const { applied, record: claimed } = await ctx.journal.transition(
    record.opId,
    ['prepared'],
    { state: 'submitted' },
    ctx.crediting.pendingOps(record.agent, record.outputs ?? []),
  );
  // Another submit or a cancel came first: answer as the prepared deposit now stands.
  if (!applied) return submitSigned(ctx, claimed, tx);
  return send(ctx, claimed, tx);
}

/**
 * A submitted deposit that has not landed is sent again (the ledger takes one transaction once: a copy still
 * pending is a duplicate, one that landed meanwhile is found on chain), unless it can no longer land: failed
 * on the ledger, or past its time bound.
 */
async function resend(
  ctx: SubmitDepositDeps,
  record: OperationRecord,
  tx: Transaction,
  onChain: 'FAILED' | 'NOT_FOUND',
): Promise<DepositResult> {
  if (onChain === 'FAILED') {
    const error = new DomainError(
      'ledger_rejected',
      'the deposit’s transaction failed on the ledger; nothing moved',
    );
    await settleFailure(ctx, record.opId, error);
    throw error;
  }
  if (record.maxTime !== undefined && record.maxTime > 0 && ctx.clock() / 1000 > record.maxTime) {
    // Reconciliation releases it once the ledger can no longer take it.
    throw new DomainError(
      'prepare_expired',
      'the deposit was sent but did not land before its time bound; nothing moved; prepare a new one',
    );
  }
  ctx.logger.log('info', 'wallet deposit sent again', { opId: record.opId });
  return send(ctx, record, tx);
}

/** Sends the claimed deposit and answers once it is confirmed and credited. */
async function send(
  ctx: SubmitDepositDeps,
  claimed: OperationRecord,
  tx: Transaction,
): Promise<DepositResult> {
  const prepareId = claimed.opId;
  const proved = walletDepositData(claimed)?.aspRoot;
  const aspRoot = proved === undefined ? undefined : BigInt(proved);
  ctx.metrics.transactionsInFlight.inc();
  try {
    fault('wallet_deposit', 'before-send');
    const submit = () =>
      ctx.chain.submitAndConfirm(tx, { sent: () => fault('wallet_deposit', 'after-send') });
    // The registrar's next insert waits for this send; a root already replaced is refused unsent.
    const confirmed = await (aspRoot === undefined ? submit() : ctx.registrar.hold(aspRoot, submit));
    fault('wallet_deposit', 'after-confirm');
    await awaitCredit(ctx, claimed.agent, confirmed.ledger, claimed.outputs ?? []);
    await markConfirmed(ctx, prepareId);
    ctx.metrics.ledgerOperations.inc({ kind: 'deposit', outcome: 'confirmed' });
    ctx.logger.log('info', 'wallet deposit confirmed', { opId: prepareId, txHash: confirmed.hash });
    return { ...resultOf(claimed), txHash: confirmed.hash };
  } catch (error) {
    if (!refusedByTheLedger(error)) throw error;
    // Refused as sent: maybe because someone else's copy of it landed first (txBadSeq).
    const after = await ctx.chain.status(claimed.txHash!);
    if (after.status === 'SUCCESS') return landed(ctx, claimed, after.ledger ?? 0);
    await settleFailure(ctx, prepareId, error);
    ctx.metrics.ledgerOperations.inc({ kind: 'deposit', outcome: 'rejected' });
    if (error.code === 'prepare_stale' || isStaleRoot(error)) {
      throw new DomainError('prepare_stale', STALE_DETAIL, { extra: { txHash: claimed.txHash ?? '' } });
    }
    throw error;
  } finally {
    ctx.registrar.release(prepareId);
    ctx.metrics.transactionsInFlight.dec();
  }
}

/**
 * Why a prepared deposit that ended can no longer be submitted, the same whichever path noticed it first:
 * expired (by the sweeper, at submit, or sent and never landed before its time bound) → 410
 * `prepare_expired`; cancelled → 409 `prepare_cancelled`; refused as stale → 409 `prepare_stale`.
 */
function ended(record: OperationRecord): DomainError {
  const reason = record.reason?.code;
  if (record.state === 'released' && reason === CANCELLED_REASON.code)
    return new DomainError('prepare_cancelled', 'the prepared deposit was cancelled; prepare a new one');
  if (record.state === 'expired' || reason === 'expired' || reason === 'interrupted')
    return new DomainError('prepare_expired', 'the prepared deposit expired; prepare a new one');
  if (reason === 'prepare_stale') return new DomainError('prepare_stale', STALE_DETAIL);
  if (record.state === 'failed')
    return new DomainError(
      'ledger_rejected',
      `the deposit was refused by the ledger (${record.reason?.detail ?? 'no reason'}); nothing moved; prepare a new one`,
    );
  return new DomainError('conflict', 'the deposit is still being prepared; submit it once it is prepared');
}

/** The prepared transaction is on chain: mark it confirmed (once) and answer after its notes are credited. */
async function landed(
  ctx: SubmitDepositDeps,
  record: OperationRecord,
  ledger: number,
): Promise<DepositResult> {
  const outputs = record.outputs ?? [];
  const uncredited = [];
  for (const o of outputs) if (!(await ctx.notes.hasNote(record.agent, o.commitment))) uncredited.push(o);
  const { applied } = await ctx.journal.transition(
    record.opId,
    ['prepared', 'submitted', 'expired', 'failed'],
    { state: 'confirmed', reason: undefined },
    ctx.crediting.pendingOps(record.agent, uncredited),
  );
  await awaitCredit(ctx, record.agent, ledger, outputs);
  if (applied) {
    ctx.metrics.ledgerOperations.inc({ kind: 'deposit', outcome: 'confirmed' });
    await ctx.stats.recordTransaction();
    ctx.logger.log('info', 'wallet deposit found on chain', { opId: record.opId, txHash: record.txHash });
  }
  return resultOf(record);
}

function resultOf(record: OperationRecord): DepositResult {
  return {
    txHash: record.txHash!,
    agentId: parseScopedId(record.agent).agentId,
    amount: record.amount,
    proveMs: walletDepositData(record)?.proveMs ?? 0,
  };
}

function checkSigned(tx: Transaction, record: OperationRecord, wallet: string): void {
  if (record.txHash === undefined || txHashOf(tx) !== record.txHash) {
    throw new DomainError(
      'prepare_mismatch',
      'the signed transaction differs from the prepared one (operations, amounts, fees or bounds changed)',
    );
  }
  const signatures = tx.signatures;
  if (
    signatures.length !== 1 ||
    !Keypair.fromPublicKey(wallet).verify(tx.hash(), signatures[0].signature.toBytes())
  ) {
    throw new DomainError(
      'prepare_mismatch',
      'the transaction must carry exactly one valid signature of the depositing wallet',
    );
  }
}

function parseSigned(ctx: SubmitDepositDeps, signedXdr: string): Transaction {
  let tx: Transaction | FeeBumpTransaction;
  try {
    tx = TransactionBuilder.fromXDR(signedXdr, ctx.deployment.networkPassphrase);
  } catch {
    throw new DomainError('invalid_request', 'signedTransactionXDR is not a transaction envelope');
  }
  if (tx instanceof FeeBumpTransaction)
    throw new DomainError(
      'prepare_mismatch',
      'fee-bump envelopes are not accepted; sign the prepared transaction',
    );
  return tx;
}
