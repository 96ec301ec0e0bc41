// Wallet deposits being proved or sent against the current allowlist root (../asp-registrar.ts): while any is
// under way no key is inserted early, and a slot's insert first lets them settle (each is bounded by its proof
// or the ledger's confirmation timeout).

export class Holds {
  readonly #pending = new Set<Promise<unknown>>();

  get size(): number {
    return this.#pending.size;
  }

  /** Holds until `work` settles (either way), then calls `released`. */
  track(work: Promise<unknown>, released: () => void): void {
    const tracked = work.then(
      () => {},
      () => {},
    );
    this.#pending.add(tracked);
    void tracked.finally(() => {
      this.#pending.delete(tracked);
      released();
    });
  }

  /** Resolves once every hold taken so far has settled. */
  async settled(): Promise<void> {
    await Promise.all([...this.#pending]);
  }
}
