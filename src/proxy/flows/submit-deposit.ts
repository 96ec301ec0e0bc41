// Wallet deposit, step 2: check that the signed envelope is exactly the prepared transaction plus one valid
// signature of the wallet, record the outputs as pending notes, send, and answer once confirmed and credited.
// The answer says what happened on chain: a transaction with the prepared hash that already landed (sent by
// the wallet itself, by an earlier submit, or by anyone) is `confirmed` and credited once, whatever the
// prepared deposit's state. A deposit whose allowlist root was replaced, or that the chain still found stale,
// is answered `409 prepare_stale` ("prepare again"), never a host error.
import { FeeBumpTransaction, Keypair, type Transaction, TransactionBuilder } from '@stellar/stellar-sdk';
import { ProblemError } from '../../api/problem.ts';
import { parseScopedId } from '../domain/agent-ref.ts';
import type { OperationRecord } from '../journal/journal.ts';
import { txHashOf } from '../services/chain-client.ts';
import { fault } from '../util/faults.ts';
import { awaitCredit } from './await-credit.ts';
import type { FlowContext } from './context.ts';
import { markConfirmed } from './mark-confirmed.ts';
import { releaseOperation, settleFailure } from './settle-failure.ts';
import { isStaleRoot } from './stale-root.ts';
import type { FlowResult } from './withdraw.ts';

/** A confirmed deposit, naming the agent credited. */
type DepositResult = FlowResult & { agentId: string };

const STALE_DETAIL =
  'the pool moved on since this deposit was prepared (a root it was proved against changed, or deposits landing first moved its writes); prepare the deposit again';

export async function submitDeposit(
  ctx: FlowContext,
  wallet: string,
  prepareId: string,
  signedXdr: string,
): Promise<DepositResult> {
  const record = await ctx.journal.get(prepareId);
  // Another wallet's prepareId answers exactly like an unknown one.
  if (record === undefined || record.kind !== 'wallet_deposit' || record.data?.wallet !== wallet)
    throw new ProblemError('not_found', 'unknown prepareId');
  const tx = parseSigned(ctx, signedXdr);
  checkSigned(tx, record, wallet);
  if (record.state === 'confirmed') return resultOf(record);
  // Landed already, whoever sent it: confirmed, and its root no longer holds registrations back.
  const onChain = await ctx.ledger.status(record.txHash!);
  if (onChain.status === 'SUCCESS') {
    ctx.registrar.release(prepareId);
    return landed(ctx, record, onChain.ledger ?? 0);
  }
  if (record.state !== 'prepared')
    throw new ProblemError(
      'invalid_request',
      record.reason?.code === 'cancelled'
        ? 'prepareId was cancelled; prepare a new deposit'
        : `prepareId was already used (${record.state})`,
    );
  if (ctx.clock() > deadlineOf(record)) {
    ctx.registrar.release(prepareId);
    await releaseOperation(ctx, prepareId, 'expired');
    throw new ProblemError('prepare_expired', 'the prepared deposit expired; prepare a new one');
  }
  const aspRoot = record.data?.aspRoot === undefined ? undefined : BigInt(String(record.data.aspRoot));
  // Claim the prepared deposit (one submit wins) and register its outputs before sending: whoever sees the
  // confirmation (this request or the indexer after a restart) credits them once.
  const claimed = await claim(ctx, record);
  ctx.metrics.transactionsInFlight.inc();
  try {
    fault('wallet_deposit', 'before-send');
    const send = () => ctx.ledger.submitAndConfirm(tx, { sent: () => fault('wallet_deposit', 'after-send') });
    // The registrar's next insert waits for this send; a root already replaced is refused unsent.
    const confirmed = await (aspRoot === undefined ? send() : ctx.registrar.hold(aspRoot, send));
    fault('wallet_deposit', 'after-confirm');
    await awaitCredit(ctx, claimed.agent, confirmed.ledger, claimed.outputs ?? []);
    await markConfirmed(ctx, prepareId);
    ctx.metrics.ledgerOperations.inc({ kind: 'deposit', outcome: 'confirmed' });
    ctx.logger.log('info', 'wallet deposit confirmed', { opId: prepareId, txHash: confirmed.hash });
    return { ...resultOf(record), txHash: confirmed.hash };
  } catch (error) {
    const definite =
      error instanceof ProblemError && (error.code === 'ledger_rejected' || error.code === 'prepare_stale');
    if (!definite) throw error;
    // Refused as sent: maybe because someone else's copy of it landed first (txBadSeq).
    const after = await ctx.ledger.status(claimed.txHash!);
    if (after.status === 'SUCCESS') return landed(ctx, claimed, after.ledger ?? 0);
    await settleFailure(ctx, prepareId, error);
    ctx.metrics.ledgerOperations.inc({ kind: 'deposit', outcome: 'rejected' });
    if (error.code === 'prepare_stale' || isStaleRoot(error)) {
      throw new ProblemError('prepare_stale', STALE_DETAIL, { extra: { txHash: claimed.txHash ?? '' } });
    }
    throw error;
  } finally {
    ctx.registrar.release(prepareId);
    ctx.metrics.transactionsInFlight.dec();
  }
}

/** The last moment the prepared deposit may be submitted (ms). */
export function deadlineOf(record: OperationRecord): number {
  return Number(record.data?.deadline ?? record.data?.expiresAt ?? 0);
}

/** The prepared transaction is on chain: mark it confirmed (once) and answer after its notes are credited. */
async function landed(ctx: FlowContext, record: OperationRecord, ledger: number): Promise<DepositResult> {
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
    proveMs: Number(record.data?.proveMs ?? 0),
  };
}

function checkSigned(tx: Transaction, record: OperationRecord, wallet: string): void {
  if (record.txHash === undefined || txHashOf(tx) !== record.txHash) {
    throw new ProblemError(
      'prepare_mismatch',
      'the signed transaction differs from the prepared one (operations, amounts, fees or bounds changed)',
    );
  }
  const signatures = tx.signatures;
  if (
    signatures.length !== 1 ||
    !Keypair.fromPublicKey(wallet).verify(tx.hash(), signatures[0].signature.toBytes())
  ) {
    throw new ProblemError(
      'prepare_mismatch',
      'the transaction must carry exactly one valid signature of the depositing wallet',
    );
  }
}

async function claim(ctx: FlowContext, record: OperationRecord): Promise<OperationRecord> {
  const { applied, record: updated } = await ctx.journal.transition(
    record.opId,
    ['prepared'],
    { state: 'submitted' },
    ctx.crediting.pendingOps(record.agent, record.outputs ?? []),
  );
  if (!applied) throw new ProblemError('invalid_request', `prepareId was already used (${updated.state})`);
  return updated;
}

function parseSigned(ctx: FlowContext, signedXdr: string): Transaction {
  let tx: Transaction | FeeBumpTransaction;
  try {
    tx = TransactionBuilder.fromXDR(signedXdr, ctx.deployment.networkPassphrase);
  } catch {
    throw new ProblemError('invalid_request', 'signedTransactionXDR is not a transaction envelope');
  }
  if (tx instanceof FeeBumpTransaction)
    throw new ProblemError(
      'prepare_mismatch',
      'fee-bump envelopes are not accepted; sign the prepared transaction',
    );
  return tx;
}
