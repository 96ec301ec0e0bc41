// USDC held by an account on the ledger (a token `balance` read by simulation). A G account without a USDC
// trustline holds none (the Stellar Asset Contract refuses to read it: TrustlineMissingError).
import { Address, scValToNative } from '#stellar-sdk';
import { LedgerRejected } from '../services/chain-client.ts';
import type { FlowContext } from './context.ts';

/** What this flow uses of the flows' context. */
export type UsdcBalanceDeps = Pick<FlowContext, 'chain' | 'deployment'>;

export async function usdcBalance(ctx: UsdcBalanceDeps, address: string): Promise<bigint> {
  let value;
  try {
    value = await ctx.chain.read(
      ctx.deployment.operator.publicKey(),
      ctx.deployment.contracts.token,
      'balance',
      [new Address(address).toScVal()],
    );
  } catch (error) {
    if (error instanceof LedgerRejected && error.contractError?.is('token', 'TrustlineMissingError'))
      return 0n;
    throw error;
  }
  return BigInt(scValToNative(value) as bigint);
}
