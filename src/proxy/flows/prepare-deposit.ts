// Wallet deposit, step 1: prove the deposit and build the unsigned `transact` transaction for the wallet to
// sign. Bounded per wallet (concurrent prepares, new agents per hour); the wallet's proofs queue behind its own
// earlier ones. A new agent's key is queued for the next registration slot first (waiting for it at most the
// hold limit, else `503 registration_pending` with Retry-After). The prepared deposit is an operation in the
// journal (`prepared`, single use, bound to the wallet) with the allowlist root it was proved against and the
// time until which the registrar promises that root stays current (`expiresAt`, never less than the signing
// window). Nothing about the agent is recorded until the deposit is confirmed.
import { randomUUID } from 'node:crypto';
import { Address, type Transaction } from '#stellar-sdk';
import { POLICY_CIRCUIT } from '../../circuit/index.ts';
import { type AgentRef, scopedId } from '../domain/agent-ref.ts';
import { formatAmount } from '../../api/amount.ts';
import { DomainError } from '../domain/errors.ts';
import { txHashOf } from '../services/chain-client.ts';
import type { ProvedTransaction } from '../services/pool-transaction.ts';
import type { FlowContext } from './context.ts';
import { pinPoolFootprint } from './pin-footprint.ts';
import { settleFailure, type SettleFailureDeps } from './settle-failure.ts';
import { usdcBalance, type UsdcBalanceDeps } from './usdc-balance.ts';
import type { WalletDepositData } from './operation-data.ts';

/** What this flow uses of the flows' context. */
export type PrepareDepositDeps = Pick<
  FlowContext,
  | 'proofLanes'
  | 'clock'
  | 'prover'
  | 'keyring'
  | 'chain'
  | 'deployment'
  | 'quotas'
  | 'registrar'
  | 'journal'
  | 'limits'
> &
  UsdcBalanceDeps &
  SettleFailureDeps;

/** A deposit handed out with less than this left of its promise is proved again after the slot. */
const MIN_LEFT_MS = 1000;
const MAX_ATTEMPTS = 3;

export interface PreparedDeposit {
  prepareId: string;
  transactionXDR: string;
  expiresAt: string;
}

export async function prepareDeposit(
  ctx: PrepareDepositDeps,
  ref: AgentRef,
  amount: bigint,
): Promise<PreparedDeposit> {
  const wallet = ref.owner;
  return ctx.quotas.preparing(wallet, async () => {
    // Checked before proving, so an unfunded wallet learns it at once instead of after a proof.
    const held = await usdcBalance(ctx, wallet);
    if (held < amount) {
      throw new DomainError(
        'ledger_rejected',
        `the wallet holds ${formatAmount(held)} USDC, less than the ${formatAmount(amount)} USDC to deposit`,
      );
    }
    // One hold limit for the whole request, however many waits it has.
    const holdUntil = ctx.registrar.holdUntil();
    // A new agent's key lands first; having waited for it, the prepare's proof window comes before the next
    // slot's insert (its turn, also kept for a retry after `registration_pending`).
    if (!ctx.registrar.isRegistered(ref)) {
      // A retry after `registration_pending` finds the key still queued: it is not a new agent again.
      if (!ctx.registrar.isQueued(ref)) await ctx.quotas.takeNewAgent(wallet);
      await ctx.registrar.register(ref, holdUntil, true);
    }
    const prepareId = randomUUID();
    const agent = scopedId(ref);
    await ctx.journal.begin({
      opId: prepareId,
      kind: 'wallet_deposit',
      agent,
      state: 'proving',
      amount,
      data: { wallet } satisfies WalletDepositData,
    });
    try {
      for (let attempt = 1; ; attempt++) {
        const window = await ctx.registrar.proofWindow(prepareId, holdUntil, ref);
        // The next insert waits for this proof and simulation, so the root cannot move under them.
        const { tx, proved, ms } = await ctx.registrar.hold(window.aspRoot, () =>
          proveDeposit(ctx, ref, amount),
        );
        ctx.registrar.recordProof(ms);
        const now = ctx.clock();
        // A proof slower than foreseen may outlast its promise: prove again after the slot (rarely).
        if (now >= window.validUntil - MIN_LEFT_MS && attempt < MAX_ATTEMPTS) continue;
        // The transaction's own time bound caps both times. expiresAt: promised not stale before;
        // deadline: refused after (the prepare TTL); aspRoot: the allowlist root proved against (until it
        // moves, the deposit may still be sent after expiresAt).
        const maxTime = Number(tx.timeBounds?.maxTime ?? 0);
        const bound = maxTime > 0 ? maxTime * 1000 : Number.POSITIVE_INFINITY;
        const deadline = Math.min(now + ctx.limits.prepareTtlSeconds * 1000, bound);
        const expiresAt = Math.min(deadline, window.validUntil);
        await ctx.journal.update(prepareId, {
          state: 'prepared',
          txHash: txHashOf(tx),
          maxTime,
          outputs: proved.outputs,
          data: {
            proveMs: proved.proveMs,
            expiresAt,
            deadline,
            aspRoot: window.aspRoot.toString(),
          } satisfies Partial<WalletDepositData>,
        });
        return { prepareId, transactionXDR: tx.toXDR(), expiresAt: new Date(expiresAt).toISOString() };
      }
    } catch (error) {
      ctx.registrar.release(prepareId);
      await settleFailure(ctx, prepareId, error);
      throw error;
    }
  });
}

/**
 * Proves the deposit and builds the simulated transaction for the wallet to sign; `ms`: how long the proof and
 * the simulation took (not the wait for the wallet's earlier proofs), which the registrar's windows are sized by.
 */
async function proveDeposit(
  ctx: PrepareDepositDeps,
  ref: AgentRef,
  amount: bigint,
): Promise<{ tx: Transaction; proved: ProvedTransaction; ms: number }> {
  const wallet = ref.owner;
  const agent = scopedId(ref);
  let started = 0;
  const proved = await ctx.proofLanes.run(wallet, () => {
    started = ctx.clock();
    return ctx.prover.prove({
      agent: ctx.keyring.crypto(agent),
      inputs: [],
      change: amount,
      extAmount: amount,
      recipient: wallet,
      registration: ctx.keyring.sealRegistration(ref),
    });
  });
  const simulated = await ctx.chain.prepareInvocation(wallet, ctx.deployment.contracts.pool, 'transact', [
    proved.args.proof,
    proved.args.extData,
    new Address(wallet).toScVal(),
  ]);
  // Other deposits may land first: declare the tree entries they would shift this one's writes to.
  const tx = pinPoolFootprint({
    tx: simulated,
    poolId: ctx.deployment.contracts.pool,
    levels: POLICY_CIRCUIT.levels,
    passphrase: ctx.deployment.networkPassphrase,
    trees: ctx.prover.treeState(),
  });
  return { tx, proved, ms: ctx.clock() - started };
}
