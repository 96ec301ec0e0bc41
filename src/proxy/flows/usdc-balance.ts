// USDC held by an account on the ledger (a token `balance` read by simulation; a missing account holds 0).
import { Address, scValToNative } from '@stellar/stellar-sdk';
import type { FlowContext } from './context.ts';

export async function usdcBalance(
  ctx: Pick<FlowContext, 'ledger' | 'deployment'>,
  address: string,
): Promise<bigint> {
  const value = await ctx.ledger.read(
    ctx.deployment.operator.publicKey(),
    ctx.deployment.contracts.token,
    'balance',
    [new Address(address).toScVal()],
  );
  return BigInt(scValToNative(value) as bigint);
}
