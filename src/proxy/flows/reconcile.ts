// Reconciliation: decides every unfinished operation against the chain, on start and periodically.
//   never sent (reserved, proving)            → release what it holds
//   prepared wallet deposit                    → open until its deadline or until its allowlist root is
//                                                replaced, then expired (confirmed if the wallet sent it)
//   submitted (hash known)                     → SUCCESS: the indexer applies it (exactly once, keyed by
//                                                commitment and nullifier), then confirmed;
//                                                FAILED, or not found after its time bound: release
// Payments and settlements reconcile through their own modules (`reconcilers`), with the same rules.
import type { OperationRecord } from '../journal/journal.ts';
import type { FlowContext } from './context.ts';
import { markConfirmed, type MarkConfirmedDeps } from './mark-confirmed.ts';
import { releaseOperation, type SettleFailureDeps } from './settle-failure.ts';
import { deadlineOf, walletDepositData } from './operation-data.ts';

/** What this flow uses of the flows' context. */
export type ReconcileDeps = Pick<
  FlowContext,
  'journal' | 'logger' | 'registrar' | 'chain' | 'indexer' | 'notes'
> &
  SettleFailureDeps &
  MarkConfirmedDeps;

/** Seconds past a transaction's time bound before "not found" counts as "will never land". */
const TIME_BOUND_GRACE_S = 10;

export type Reconciler = (record: OperationRecord, now: number) => Promise<boolean>;

/** Decides what can be decided now; returns how many operations were closed. */
export async function reconcile(
  ctx: ReconcileDeps,
  now: number,
  reconcilers: Partial<Record<OperationRecord['kind'], Reconciler>> = {},
): Promise<number> {
  let closed = 0;
  for (const record of await ctx.journal.open()) {
    const own = reconcilers[record.kind];
    if (own !== undefined) {
      if (await own(record, now)) closed++;
      continue;
    }
    if (await reconcileOne(ctx, record, now)) closed++;
  }
  return closed;
}

async function reconcileOne(ctx: ReconcileDeps, record: OperationRecord, now: number): Promise<boolean> {
  const { opId } = record;
  switch (record.state) {
    case 'reserved':
    case 'proving':
      // Only the request that began it moves such an operation on; one begun by an earlier run of the
      // process (which crashed) never reached the ledger.
      if (await ctx.journal.runIsLive(record.runId)) return false;
      await releaseOperation(ctx, opId, 'released', {
        code: 'interrupted',
        detail: 'interrupted before sending',
      });
      ctx.logger.log('info', 'operation released (never sent)', { opId, kind: record.kind });
      return true;
    case 'prepared': {
      const data = walletDepositData(record);
      const rootMoved = data?.aspRoot !== undefined && BigInt(data.aspRoot) !== ctx.registrar.root;
      if (now <= deadlineOf(record) && !rootMoved) {
        // After a restart: its promised validity still holds back early inserts.
        ctx.registrar.restore(opId, data?.expiresAt ?? 0);
        return false;
      }
      ctx.registrar.release(opId);
      // The wallet may have sent it itself.
      if (record.txHash !== undefined && (await ctx.chain.status(record.txHash)).status === 'SUCCESS')
        return reconcileSubmitted(ctx, record, now);
      await releaseOperation(ctx, opId, 'expired');
      return true;
    }
    case 'submitted':
      return reconcileSubmitted(ctx, record, now);
    default:
      return false;
  }
}

async function reconcileSubmitted(
  ctx: ReconcileDeps,
  record: OperationRecord,
  now: number,
): Promise<boolean> {
  const { opId } = record;
  if (record.txHash === undefined) {
    await releaseOperation(ctx, opId, 'released', { code: 'interrupted', detail: 'no transaction recorded' });
    return true;
  }
  const { status } = await ctx.chain.status(record.txHash);
  if (status === 'SUCCESS') {
    await ctx.indexer.sync();
    // The spend consumed its locked notes and reservation; drop whatever a partial apply left behind.
    await ctx.notes.release(record.agent, opId);
    await markConfirmed(ctx, opId, {}, ['submitted', 'prepared']);
    ctx.logger.log('info', 'operation confirmed on reconciliation', { opId, kind: record.kind });
    return true;
  }
  const pastBound =
    record.maxTime !== undefined && record.maxTime > 0 && now / 1000 > record.maxTime + TIME_BOUND_GRACE_S;
  if (status === 'FAILED' || pastBound) {
    await releaseOperation(
      ctx,
      opId,
      'failed',
      status === 'FAILED'
        ? { code: 'ledger_rejected', detail: 'the transaction failed on the ledger' }
        : { code: 'expired', detail: 'the transaction never landed before its time bound' },
    );
    ctx.logger.log('info', 'operation released on reconciliation', { opId, kind: record.kind, status });
    return true;
  }
  return false;
}
