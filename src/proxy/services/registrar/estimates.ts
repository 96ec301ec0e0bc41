// How long the ASP registrar's work takes, as measured (../asp-registrar.ts): a wallet deposit's proof and
// simulation, and one `insert_leaf` to confirmation. The promises, turns and advertised bounds are sized by them,
// so an estimate rises at once to a slower observation and comes down slowly.
import type { RegistrationSchedule } from '../../config.ts';

/** First guess of a wallet deposit's proof and simulation, refined by measurement. */
const INITIAL_PROOF_MS = 2000;
/** First guess of one `insert_leaf`'s time to confirmation, refined by measurement. */
const INITIAL_INSERT_MS = 2000;
/** Beyond the signing window and a proof, what a newcomer's promise after its slot landed is given. */
export const TURN_MARGIN_MS = 1000;
/** A client retrying after `registration_pending` asks again within this of its Retry-After (whole seconds). */
export const RETRY_SLACK_MS = 2000;

export class Estimates {
  readonly #s: RegistrationSchedule;
  /** how long proving and simulating a wallet deposit takes (ms), measured */
  #proofMs = INITIAL_PROOF_MS;
  #insertMs = INITIAL_INSERT_MS;

  constructor(schedule: RegistrationSchedule) {
    this.#s = schedule;
  }

  get proofMs(): number {
    return this.#proofMs;
  }

  get insertMs(): number {
    return this.#insertMs;
  }

  /** The time a wallet deposit's proof and simulation took. */
  recordProof(ms: number): void {
    this.#proofMs = boundEstimate(this.#proofMs, ms);
  }

  /** The time one insert took, on average over a slot's inserts. */
  recordInsert(ms: number): void {
    this.#insertMs = boundEstimate(this.#insertMs, ms);
  }

  /** How long after a slot landed its turns may hold the next insert back (ms). */
  turnWindowMs(): number {
    return RETRY_SLACK_MS + this.#proofMs + this.#s.windowMs + 2 * TURN_MARGIN_MS;
  }

  /**
   * The longest a new agent's first prepare may take from its first request, as measured here: a slot
   * interval and the turns after the run before its key's (or the signing window and a proof, when its slot was
   * closed just before), that run's inserts and its own slot's, its own proof, and a retry after
   * `registration_pending`. Holds while no more than `perSlot` new agents arrive per slot.
   */
  waitBoundMs(): number {
    const { slotMs, perSlot } = this.#s;
    const fullSlot = (perSlot + 1) * this.#insertMs;
    // after a run lands, the next one may wait this long for the turns
    return slotMs + this.turnWindowMs() + 2 * fullSlot + this.#proofMs + RETRY_SLACK_MS;
  }
}

/**
 * An estimate that a promised bound is built on: it rises at once to a slower observation (a loaded machine
 * must not break the promise) and comes down slowly, a quarter of the way to each faster one.
 */
function boundEstimate(estimate: number, observed: number): number {
  return Math.round(Math.max(observed, estimate - (estimate - observed) / 4));
}
