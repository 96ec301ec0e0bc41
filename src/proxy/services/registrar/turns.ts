// Turns after a registration slot landed (../asp-registrar.ts): the wallet deposits that waited for the slot
// are promised their signing window first, and the next slot's insert waits for them — at most until the
// turns' end. One answered `registration_pending` while waiting keeps its turn for its retry, until a little
// after the time it was told to come back.
import type { Estimates } from './estimates.ts';
import { RETRY_SLACK_MS, TURN_MARGIN_MS } from './estimates.ts';
import { latestStanding } from './promises.ts';
import type { Slot } from './slots.ts';

export class Turns {
  /** scoped agent id → until when its turn is kept (ms) */
  readonly #until = new Map<string, number>();
  #end = 0;
  readonly #estimates: Estimates;

  constructor(estimates: Estimates) {
    this.#estimates = estimates;
  }

  /** Until when the turns after the last slot that landed may hold the next insert back (ms). */
  get end(): number {
    return this.#end;
  }

  get size(): number {
    return this.#until.size;
  }

  /** `slot` landed at `landedAt`: the deposits that waited for it get their turns, replacing the last ones. */
  open(slot: Slot, landedAt: number): void {
    const proofMs = this.#estimates.proofMs;
    this.#end = landedAt + this.#estimates.turnWindowMs();
    this.#until.clear();
    for (const scoped of slot.waiting) this.#until.set(scoped, landedAt + 2 * proofMs + TURN_MARGIN_MS);
    for (const [scoped, eta] of slot.told)
      this.#until.set(scoped, Math.min(Math.max(landedAt, eta) + RETRY_SLACK_MS, this.#end));
  }

  /** Takes the agent's turn if it has one at `now` (it is used up either way). */
  take(scoped: string, now: number): boolean {
    if ((this.#until.get(scoped) ?? 0) <= now) return false;
    this.#until.delete(scoped);
    return true;
  }

  /** Forgets the turns ended by `now`; the latest end of those kept (0: none). */
  latest(now: number): number {
    return latestStanding(this.#until, now);
  }
}
