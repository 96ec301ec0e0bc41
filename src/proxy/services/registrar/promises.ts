// What the ASP registrar (../asp-registrar.ts) promised wallet deposits proved against the current allowlist
// root: each one's validity, which no early insert breaks before it ends, and among them those promised on a
// turn after a slot landed, which the next slot's insert waits for.

export class Promises {
  /** deposits proved or being proved against the current root → until when they were promised it (ms) */
  readonly #until = new Map<string, number>();
  /** promises made on a turn (deposit id → until when, ms): the next insert waits for them */
  readonly #onTurn = new Map<string, number>();

  /** Promises deposit `id` the current root until `validUntil`. */
  make(id: string, validUntil: number): void {
    this.#until.set(id, validUntil);
  }

  /** Promises deposit `id` the current root until `validUntil` on its turn: the next insert waits for it. */
  makeOnTurn(id: string, validUntil: number): void {
    this.#onTurn.set(id, validUntil);
    this.#until.set(id, validUntil);
  }

  /** Restores a promise made before a restart, unless it already ended by `now`. */
  restore(id: string, validUntil: number, now: number): void {
    if (validUntil > now) this.#until.set(id, validUntil);
  }

  /** The deposit no longer needs its root; whether it held a promise of validity. */
  release(id: string): boolean {
    this.#onTurn.delete(id);
    return this.#until.delete(id);
  }

  /** Forgets the promises ended by `now`; the latest end of those that stand (0: none). */
  latest(now: number): number {
    return latestStanding(this.#until, now);
  }

  /** Forgets the turn promises ended by `now`; the latest end of those that stand (0: none). */
  latestOnTurn(now: number): number {
    return latestStanding(this.#onTurn, now);
  }

  /** Whether any turn promise is held (ended or not). */
  get anyOnTurn(): boolean {
    return this.#onTurn.size > 0;
  }
}

/** Deletes the entries ended by `now` from `ends`; returns the latest end among the rest (0: none). */
export function latestStanding(ends: Map<string, number>, now: number): number {
  let latest = 0;
  for (const [key, end] of ends) {
    if (end <= now) ends.delete(key);
    else latest = Math.max(latest, end);
  }
  return latest;
}
