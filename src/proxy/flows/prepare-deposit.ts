// Wallet deposit, step 1: prove the deposit and build the unsigned `transact` transaction for the wallet to
// sign. Bounded per wallet (concurrent prepares, new agents per hour); the wallet's proofs queue behind its own
// earlier ones. A new agent's key is registered in the allowlist first. The prepared deposit is an operation
// in the journal (`prepared`, single use, bound to the wallet) with an expiry that never outlives the next
// allowlist flush, so no registration can make it stale while it is valid. Nothing about the agent is recorded
// until the deposit is confirmed.
import { randomUUID } from 'node:crypto';
import { Address } from '@stellar/stellar-sdk';
import { POLICY_CIRCUIT } from '../../circuit/index.ts';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { formatAmount } from '../../api/amount.ts';
import { ProblemError } from '../../api/problem.ts';
import { txHashOf } from '../services/ledger-client.ts';
import type { FlowContext } from './context.ts';
import { pinPoolFootprint } from './pin-footprint.ts';
import { settleFailure } from './settle-failure.ts';
import { usdcBalance } from './usdc-balance.ts';

/** A prepare whose usable window before the next allowlist flush would be shorter than this waits for it. */
const MIN_WINDOW_MS = 30_000;

function minWindowMs(ttlSeconds: number): number {
  return Math.min(MIN_WINDOW_MS, (ttlSeconds * 1000) / 2);
}

export interface PreparedDeposit {
  prepareId: string;
  transactionXDR: string;
  expiresAt: string;
}

export async function prepareDeposit(
  ctx: FlowContext,
  ref: AgentRef,
  amount: bigint,
): Promise<PreparedDeposit> {
  const wallet = ref.owner;
  return ctx.quotas.preparing(wallet, async () => {
    // Checked before proving, so an unfunded wallet learns it at once instead of after a proof.
    const held = await usdcBalance(ctx, wallet);
    if (held < amount) {
      throw new ProblemError(
        'ledger_rejected',
        `the wallet holds ${formatAmount(held)} USDC, less than the ${formatAmount(amount)} USDC to deposit`,
      );
    }
    if (!ctx.registrar.isRegistered(ref)) {
      await ctx.quotas.takeNewAgent(wallet);
      await ctx.registrar.ensure(ref);
    }
    const deadline = ctx.registrar.deadline;
    if (deadline !== undefined && deadline - Date.now() < minWindowMs(ctx.limits.prepareTtlSeconds))
      await ctx.registrar.flushed();
    const expiresAt = Math.min(
      Date.now() + ctx.limits.prepareTtlSeconds * 1000,
      ctx.registrar.deadline ?? Number.POSITIVE_INFINITY,
    );
    const agent = scopedId(ref);
    const prepareId = randomUUID();
    ctx.outstanding.add(prepareId, expiresAt);
    await ctx.journal.begin({
      opId: prepareId,
      kind: 'wallet_deposit',
      agent,
      state: 'proving',
      amount,
      data: { wallet, expiresAt },
    });
    try {
      const proved = await ctx.proofLanes.run(wallet, () =>
        ctx.prover.prove(
          ctx.keyring.crypto(agent),
          [],
          amount,
          amount,
          wallet,
          ctx.keyring.sealRegistration(ref),
        ),
      );
      const simulated = await ctx.ledger.prepareInvocation(
        wallet,
        ctx.deployment.contracts.pool,
        'transact',
        [proved.args.proof, proved.args.extData, new Address(wallet).toScVal()],
      );
      // Other deposits may land first: declare the tree entries they would shift this one's writes to.
      const tx = pinPoolFootprint(
        simulated,
        ctx.deployment.contracts.pool,
        POLICY_CIRCUIT.levels,
        ctx.deployment.networkPassphrase,
      );
      await ctx.journal.update(prepareId, {
        state: 'prepared',
        txHash: txHashOf(tx),
        maxTime: Number(tx.timeBounds?.maxTime ?? 0),
        outputs: proved.outputs,
        data: { proveMs: proved.proveMs },
      });
      return { prepareId, transactionXDR: tx.toXDR(), expiresAt: new Date(expiresAt).toISOString() };
    } catch (error) {
      ctx.outstanding.remove(prepareId);
      await settleFailure(ctx, prepareId, error);
      throw error;
    }
  });
}
