// What a withdrawal would tell someone who reads the whole ledger, said before it is sent. Deposits are public
// transfers from the depositing wallet into the pool, withdrawals public transfers from the pool to the
// destination, and every amount is public: withdrawing to the wallet that deposited, or exactly what an agent
// holds (its deposits minus its spending), lets anyone link the two by address or by arithmetic. The project's
// docs/PRIVACY.md explains this under "Withdrawing to the wallet that deposited".

const STROOPS_PER_USDC = 10_000_000n;

/** "2.5" → 25000000n; undefined for anything that is not a plain decimal with at most 7 places. */
export function toStroops(text: string): bigint | undefined {
  const m = /^(\d{1,15})(?:\.(\d{1,7}))?$/.exec(text.trim());
  if (!m) return undefined;
  return BigInt(m[1] as string) * STROOPS_PER_USDC + BigInt((m[2] ?? '').padEnd(7, '0'));
}

export interface WithdrawPlan {
  destination: string;
  amount: string;
  /** The connected wallet: it made the deposits. */
  depositor: string | undefined;
  /** The chosen agent's balance as the proxy reported it. */
  agentBalance: string | undefined;
  /** Amounts this page deposited into the chosen agent. */
  deposits: readonly string[];
}

export const SAME_WALLET_WARNING =
  'This is the wallet that deposited. Anyone reading the ledger sees the deposit leave this address and the ' +
  'withdrawal come back to it, so the pool hides nothing about this money. Withdraw to an address that never ' +
  'deposited into the pool.';

export function sameAmountWarning(amount: string): string {
  return (
    `${amount} USDC is exactly what this agent received minus what it spent. Every amount is public, so a ` +
    'withdrawal of exactly this amount can be matched to the deposit by arithmetic. Withdraw a different amount, ' +
    'or in parts at different times.'
  );
}

/** The warnings this withdrawal deserves (empty when there is nothing to say). */
export function withdrawWarnings(plan: WithdrawPlan): string[] {
  const warnings: string[] = [];
  if (plan.depositor !== undefined && plan.destination.trim() === plan.depositor)
    warnings.push(SAME_WALLET_WARNING);
  const amount = toStroops(plan.amount);
  const matches = [plan.agentBalance, ...plan.deposits]
    .map((value) => (value === undefined ? undefined : toStroops(value)))
    .some((value) => value !== undefined && value === amount);
  if (amount !== undefined && amount > 0n && matches) warnings.push(sameAmountWarning(plan.amount.trim()));
  return warnings;
}
