// Proves a pool transaction for an operation and relays it as the operator, journaling each step: the signed
// transaction's hash and time bound are recorded (with the outputs as pending notes) before it is sent, so a
// crash at any point leaves a record that reconciliation can decide. A proof made stale by a moved root is
// made again (the service signs these itself), a bounded number of times, after any allowlist inserts under
// way have landed.
import { Address } from '#stellar-sdk';
import { DomainError } from '../domain/errors.ts';
import type { Confirmed } from '../services/chain-client.ts';
import type { ProvedTransaction } from '../services/pool-transaction.ts';
import { fault } from '../util/faults.ts';
import { awaitCredit, type AwaitCreditDeps } from './await-credit.ts';
import type { FlowContext } from './context.ts';
import { isStaleRoot } from './stale-root.ts';

/** What this flow uses of the flows' context. */
export type RelayDeps = Pick<
  FlowContext,
  | 'deployment'
  | 'journal'
  | 'registrar'
  | 'proofLanes'
  | 'metrics'
  | 'chain'
  | 'crediting'
  | 'logger'
  | 'indexer'
> &
  AwaitCreditDeps;

const MAX_ATTEMPTS = 5;

export interface RelayOperation {
  opId: string;
  /** flow name, for fault injection and logs */
  flow: string;
  /** scoped agent id */
  agent: string;
  /** owner whose proof lane the proof waits in */
  owner: string;
  /**
   * `transact` relayed by the operator (default), or `disburse` (a withdrawal to the pool's payout wallet)
   * sent by the pool admin, whose authorization it needs.
   */
  method?: 'transact' | 'disburse';
}

export async function proveAndRelay(
  ctx: RelayDeps,
  op: RelayOperation,
  prove: () => Promise<ProvedTransaction>,
): Promise<{ confirmed: Confirmed; proveMs: number }> {
  const method = op.method ?? 'transact';
  const signer = method === 'disburse' ? ctx.deployment.aspAdmin : ctx.deployment.operator;
  for (let attempt = 1; ; attempt++) {
    await ctx.journal.update(op.opId, { state: 'proving' });
    // Allowlist inserts under way would make this proof stale at once: let them land first (keys queued for
    // later slots are not waited for; a later insert means proving again).
    await ctx.registrar.inserting();
    const proved = await ctx.proofLanes.run(op.owner, async () => {
      const proving = prove();
      fault(op.flow, 'during-prove');
      return proving;
    });
    ctx.metrics.transactionsInFlight.inc();
    try {
      const confirmed = await ctx.chain.invokeAndConfirm(
        signer,
        ctx.deployment.contracts.pool,
        method,
        [proved.args.proof, proved.args.extData, new Address(signer.publicKey()).toScVal()],
        {
          signed: async ({ hash, maxTime }) => {
            await ctx.journal.update(
              op.opId,
              { state: 'submitted', txHash: hash, maxTime, outputs: proved.outputs },
              ctx.crediting.pendingOps(op.agent, proved.outputs),
            );
            fault(op.flow, 'before-send');
          },
          sent: () => fault(op.flow, 'after-send'),
        },
      );
      fault(op.flow, 'after-confirm');
      await awaitCredit(ctx, op.agent, confirmed.ledger, proved.outputs);
      return { confirmed, proveMs: proved.proveMs };
    } catch (error) {
      if (error instanceof DomainError && error.code === 'ledger_rejected') {
        // Definitely not applied: forget the outputs; the operation is back to "not sent".
        await ctx.journal.update(
          op.opId,
          { state: 'proving', txHash: undefined, maxTime: undefined, outputs: undefined },
          ctx.crediting.dropPendingOps(proved.outputs),
        );
        if (isStaleRoot(error) && attempt < MAX_ATTEMPTS) {
          ctx.logger.log('info', 'proof went stale (a root moved); proving again', {
            flow: op.flow,
            attempt,
          });
          await ctx.indexer.sync();
          continue;
        }
      }
      throw error;
    } finally {
      ctx.metrics.transactionsInFlight.dec();
    }
  }
}
