// The proxy's clock: milliseconds since the epoch, read wherever the proxy decides by the time (expiries of
// login challenges, tokens and prepared deposits, registration slots and promises, budgets, quotas, rate
// limits, journal stamps, revocation sweeps, reconciliation, payment deadlines). It is passed at
// construction; a test passes its own (startProxy's `clock`) and moves time forward instead of sleeping.
// The lint (.oxlintrc.json) refuses `Date.now` anywhere else in src/proxy. Waits on the network (a
// transaction's confirmation, the indexer reaching a ledger) are timers, measured with `performance.now()`.
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
