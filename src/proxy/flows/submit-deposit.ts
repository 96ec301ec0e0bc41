// Wallet deposit, step 2: check that the signed envelope is exactly the prepared transaction plus one valid
// signature of the wallet, record the outputs as pending notes, send, and answer once confirmed and credited.
// A deposit the chain still found stale is answered `409 prepare_stale` ("prepare again"), never a host error.
import { FeeBumpTransaction, Keypair, type Transaction, TransactionBuilder } from '@stellar/stellar-sdk';
import { ProblemError } from '../../api/problem.ts';
import type { OperationRecord } from '../journal/journal.ts';
import { txHashOf } from '../services/ledger-client.ts';
import { fault } from '../util/faults.ts';
import { awaitCredit } from './await-credit.ts';
import type { FlowContext } from './context.ts';
import { releaseOperation, settleFailure } from './settle-failure.ts';
import { isStaleRoot } from './stale-root.ts';
import type { FlowResult } from './withdraw.ts';

export async function submitDeposit(
  ctx: FlowContext,
  wallet: string,
  prepareId: string,
  signedXdr: string,
): Promise<FlowResult> {
  const record = await ctx.journal.get(prepareId);
  // Another wallet's prepareId answers exactly like an unknown one.
  if (record === undefined || record.kind !== 'wallet_deposit' || record.data?.wallet !== wallet)
    throw new ProblemError('not_found', 'unknown prepareId');
  if (record.state !== 'prepared')
    throw new ProblemError('invalid_request', `prepareId was already used (${record.state})`);
  if (Date.now() > Number(record.data?.expiresAt)) {
    ctx.outstanding.remove(prepareId);
    await releaseOperation(ctx, prepareId, 'expired');
    throw new ProblemError('prepare_expired', 'the prepared deposit expired; prepare a new one');
  }
  const tx = parseSigned(ctx, signedXdr);
  if (txHashOf(tx) !== record.txHash) {
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
  // Claim the prepared deposit (one submit wins) and register its outputs before sending: whoever sees the
  // confirmation (this request or the indexer after a restart) credits them once.
  const claimed = await claim(ctx, record);
  ctx.metrics.transactionsInFlight.inc();
  try {
    fault('wallet_deposit', 'before-send');
    const confirmed = await ctx.ledger.submitAndConfirm(tx, {
      sent: () => fault('wallet_deposit', 'after-send'),
    });
    fault('wallet_deposit', 'after-confirm');
    await awaitCredit(ctx, claimed.agent, confirmed.ledger, claimed.outputs ?? []);
    await ctx.journal.update(prepareId, { state: 'confirmed' });
    ctx.outstanding.remove(prepareId);
    ctx.metrics.ledgerOperations.inc({ kind: 'deposit', outcome: 'confirmed' });
    await ctx.stats.recordTransaction();
    ctx.logger.log('info', 'wallet deposit confirmed', { opId: prepareId, txHash: confirmed.hash });
    return { txHash: confirmed.hash, amount: record.amount, proveMs: Number(record.data?.proveMs ?? 0) };
  } catch (error) {
    if (!(error instanceof ProblemError && error.code === 'ledger_rejected')) throw error;
    ctx.outstanding.remove(prepareId);
    await settleFailure(ctx, prepareId, error);
    ctx.metrics.ledgerOperations.inc({ kind: 'deposit', outcome: 'rejected' });
    if (isStaleRoot(error)) {
      throw new ProblemError(
        'prepare_stale',
        'the pool moved on since this deposit was prepared (a root it was proved against changed, or deposits landing first moved its writes); prepare the deposit again',
        { extra: { txHash: claimed.txHash ?? '' } },
      );
    }
    throw error;
  } finally {
    ctx.metrics.transactionsInFlight.dec();
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
