// The proxy's clock: milliseconds since the epoch, read wherever an expiry is decided (login challenges,
// access tokens, prepared deposits, reconciliation of what outlived its deadline). A test passes its own
// (startProxy's `clock`) and moves time forward instead of sleeping.
export type Clock = () => number;

export const systemClock: Clock = () => Date.now();
