// How many payments to one service are sent at once. A service's facilitator may settle concurrently (one
// channel account per settlement) or not at all (one signer: concurrent settlements take the same sequence
// number and all but one are refused). Nothing says which, so each service (its origin) gets a limit that
// adapts as TCP's congestion window does: a settlement refused for contention halves it (at least 1), and
// 2 × limit + 2 settlements in a row that succeed raise it by one (a probe: a single signer refuses the
// second of two concurrent settlements, which halves the limit back). Facilitators with channel
// accounts keep a high limit and settle a burst at once; a single signer is paced to one at a time.

interface Lane {
  limit: number;
  inFlight: number;
  /** successes since the limit last changed */
  streak: number;
  waiting: Array<() => void>;
}

/** Ends one send: `contended` when the facilitator refused it in a way that more concurrency causes. */
export type PaceRelease = (outcome: 'ok' | 'contended' | 'other') => void;

export class ServicePacer {
  readonly #lanes = new Map<string, Lane>();
  readonly #initial: number;

  /** `initial`: the limit a service starts with (the batch's concurrency). */
  constructor(initial: number) {
    this.#initial = Math.max(1, initial);
  }

  /** The current limit of `service` (for logs and tests). */
  limitOf(service: string): number {
    return this.#lanes.get(service)?.limit ?? this.#initial;
  }

  /** Waits for a place in `service`'s lane; call the release exactly once when the send is over. */
  async acquire(service: string): Promise<PaceRelease> {
    let lane = this.#lanes.get(service);
    if (lane === undefined) {
      lane = { limit: this.#initial, inFlight: 0, streak: 0, waiting: [] };
      this.#lanes.set(service, lane);
    }
    const l = lane;
    // a place is either free now or handed over by a release (which counts it for the waiter)
    if (l.inFlight < l.limit) l.inFlight++;
    else await new Promise<void>((resolve) => l.waiting.push(resolve));
    let released = false;
    return (outcome) => {
      if (released) return;
      released = true;
      l.inFlight--;
      if (outcome === 'contended') {
        l.limit = Math.max(1, Math.floor(l.limit / 2));
        l.streak = 0;
      } else if (outcome === 'ok' && ++l.streak >= 2 * l.limit + 2) {
        l.limit = Math.min(this.#initial, l.limit + 1);
        l.streak = 0;
      }
      while (l.inFlight < l.limit && l.waiting.length > 0) {
        l.inFlight++;
        (l.waiting.shift() as () => void)();
      }
      // an idle lane back at the initial limit has nothing to remember
      if (l.inFlight === 0 && l.limit === this.#initial) this.#lanes.delete(service);
    };
  }
}
