// The pool's lifetime as arithmetic: for a traffic profile (agents, payments per minute, daily deposits and
// withdrawals) and the settlement settings (round size, interval), how many pool transactions a day the proxy
// makes, how many tree leaves they take (two each), how many days one tree lasts, what the ledger charges a
// day in XLM (from the per-operation fees measured on the real host, bench/ops/run.ts), and the settlement
// backlog (how long a debt waits for its round, and how much the pool wallet's float carries meanwhile).
// run.ts prints it for the profiles the operations guide sizes, and checks it against a real run.

/** Fees charged per operation on the real host under testnet's settings (bench/RESULTS.md, bench/ops). */
export const FEES_XLM = {
  deposit: 0.0918,
  withdrawal: 0.0919,
  settlementTransfer: 0.0909,
  /** a float refill is a withdrawal to the pool wallet (`disburse`) */
  refill: 0.0919,
  aspInsert: 0.0078,
  /** an x402 payment: a USDC transfer, paid by the service's facilitator, not the proxy */
  x402Payment: 0.0023,
} as const;

export interface TrafficProfile {
  name: string;
  agents: number;
  /** x402 payments a minute, all agents together */
  paymentsPerMinute: number;
  /** deposits a day per agent */
  depositsPerAgentPerDay: number;
  /** withdrawals a day per agent */
  withdrawalsPerAgentPerDay: number;
  /** the price of one payment, USDC */
  priceUsdc: number;
}

export interface SettlementSettings {
  /** POOL_PROXY_SETTLE_ROUND_SIZE: shielded transfers per round (padding included) */
  roundSize: number;
  /** POOL_PROXY_SETTLE_INTERVAL_MS / 1000: mean seconds between rounds */
  intervalSeconds: number;
  /** POOL_PROXY_FLOAT_TARGET − POOL_PROXY_FLOAT_LOW, whole units: USDC one refill brings back at most */
  refillUsdc: number;
}

export const DEFAULT_SETTLEMENT: SettlementSettings = { roundSize: 8, intervalSeconds: 60, refillUsdc: 50 };

export interface Lifetime {
  transactionsPerDay: {
    deposits: number;
    withdrawals: number;
    settlement: number;
    refills: number;
    total: number;
  };
  leavesPerDay: number;
  daysPerTree: number;
  /** what the proxy's transactions cost a day (the facilitator's x402 fees apart) */
  xlmPerDay: number;
  /** what the services' facilitators pay a day for the x402 transfers */
  facilitatorXlmPerDay: number;
  /** one-off: every agent's allowlist insert */
  aspInsertsXlm: number;
  /** how long an indebted agent waits for its settlement slot, seconds */
  settlementWaitSeconds: number;
  /** USDC the pool wallet's float carries for debts not yet settled (a cycle's payments) */
  unsettledUsdc: number;
}

/**
 * The model. Assumptions: payments arrive evenly, so every round has debts and makes exactly `roundSize`
 * transfers (one agent's whole debt per slot, padding for the rest); every paying agent owes again by its next
 * slot, so an agent waits ceil(agents / roundSize) rounds; a deposit and a withdrawal are one transaction each
 * (consolidations, needed only when two notes do not cover an amount, are not counted); refills bring back
 * `refillUsdc` each.
 */
export function lifetime(
  profile: TrafficProfile,
  settlement: SettlementSettings = DEFAULT_SETTLEMENT,
  treeCapacity = 2 ** 20,
): Lifetime {
  const paymentsPerDay = profile.paymentsPerMinute * 1440;
  const deposits = profile.agents * profile.depositsPerAgentPerDay;
  const withdrawals = profile.agents * profile.withdrawalsPerAgentPerDay;
  const rounds = paymentsPerDay > 0 ? 86_400 / settlement.intervalSeconds : 0;
  const settlementTx = rounds * settlement.roundSize;
  const refills = Math.ceil((paymentsPerDay * profile.priceUsdc) / settlement.refillUsdc);
  const total = deposits + withdrawals + settlementTx + refills;
  const leavesPerDay = 2 * total;
  const cycleRounds = Math.ceil(Math.min(profile.agents, paymentsPerDay) / settlement.roundSize);
  const settlementWaitSeconds = paymentsPerDay > 0 ? cycleRounds * settlement.intervalSeconds : 0;
  return {
    transactionsPerDay: { deposits, withdrawals, settlement: settlementTx, refills, total },
    leavesPerDay,
    daysPerTree: treeCapacity / leavesPerDay,
    xlmPerDay:
      deposits * FEES_XLM.deposit +
      withdrawals * FEES_XLM.withdrawal +
      settlementTx * FEES_XLM.settlementTransfer +
      refills * FEES_XLM.refill,
    facilitatorXlmPerDay: paymentsPerDay * FEES_XLM.x402Payment,
    aspInsertsXlm: profile.agents * FEES_XLM.aspInsert,
    settlementWaitSeconds,
    unsettledUsdc: (paymentsPerDay / 86_400) * settlementWaitSeconds * profile.priceUsdc,
  };
}

/** The profiles docs/OPERATIONS.md sizes a deployment by. */
export const PROFILES: TrafficProfile[] = [
  {
    name: '10 agents, 10 payments/min',
    agents: 10,
    paymentsPerMinute: 10,
    depositsPerAgentPerDay: 1,
    withdrawalsPerAgentPerDay: 1,
    priceUsdc: 0.01,
  },
  {
    name: '100 agents, 1,000 payments/min',
    agents: 100,
    paymentsPerMinute: 1000,
    depositsPerAgentPerDay: 1,
    withdrawalsPerAgentPerDay: 1,
    priceUsdc: 0.01,
  },
  {
    name: '10,000 agents, 10,000 payments/min',
    agents: 10_000,
    paymentsPerMinute: 10_000,
    depositsPerAgentPerDay: 1,
    withdrawalsPerAgentPerDay: 1,
    priceUsdc: 0.01,
  },
];
