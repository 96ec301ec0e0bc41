// Wallet deposits prepared (or being proved, or submitted) whose proofs pin the current allowlist root, with
// the time each stops mattering (its expiry, or its confirmation). The ASP registrar waits for them before it
// inserts new leaves, so a wallet's prepared deposit is not made stale by other agents' registrations.
export class OutstandingPrepares {
  readonly #until = new Map<string, number>();
  #onChange: () => void = () => {};

  /** Called whenever the set shrinks (the registrar re-checks whether it may insert). */
  onChange(listener: () => void): void {
    this.#onChange = listener;
  }

  add(opId: string, until: number): void {
    this.#until.set(opId, until);
  }

  remove(opId: string): void {
    if (this.#until.delete(opId)) this.#onChange();
  }

  /** The latest expiry among outstanding deposits (ms), or 0 when none is outstanding. */
  latest(now = Date.now()): number {
    let latest = 0;
    for (const [opId, until] of this.#until) {
      if (until <= now) this.#until.delete(opId);
      else latest = Math.max(latest, until);
    }
    return latest;
  }
}
