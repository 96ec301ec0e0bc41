// The operator's books (the operator only: per-account movements must not be public): what the pool wallet
// holds, the float account's notes, all agents' confirmed notes and their unsettled debts, and whether a
// settlement round or a float refill is under way. GET /api/operator/books answers them.
import { scopedId } from '../domain/agent-ref.ts';
import { FLOAT_ACCOUNT_ID } from '../domain/float-account.ts';
import type { FlowContext } from '../flows/context.ts';
import { usdcBalance } from '../flows/usdc-balance.ts';
import type { Payments } from './runtime.ts';

export interface OperatorBooks {
  /** stroops held by the pool wallet (undefined when payments are off) */
  poolWallet: bigint | undefined;
  floatAccount: bigint;
  agentNotes: bigint;
  unsettled: bigint;
  settling: boolean;
}

/** The books over the flows' context and, when payments are on, the pool wallet and its jobs. */
export async function operatorBooks(
  flows: Pick<FlowContext, 'agents' | 'notes' | 'chain' | 'deployment'>,
  payments: Payments | undefined,
): Promise<OperatorBooks> {
  let agentNotes = 0n;
  let unsettled = 0n;
  for (const a of await flows.agents.all()) {
    const account = await flows.notes.account(scopedId(a));
    agentNotes += account.notes;
    unsettled += account.unsettled;
  }
  return {
    poolWallet:
      payments === undefined ? undefined : await usdcBalance(flows, payments.pctx.poolWallet.publicKey()),
    floatAccount: (await flows.notes.account(FLOAT_ACCOUNT_ID)).notes,
    agentNotes,
    unsettled,
    settling: (payments?.settlement.running ?? false) || (payments?.refill.running ?? false),
  };
}
