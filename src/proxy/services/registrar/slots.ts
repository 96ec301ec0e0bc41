// The ASP registrar's registration slots (../asp-registrar.ts): one per multiple of `slotMs` on the clock, each
// holding the keys queued for it (up to `perSlot`), the deposits waiting for it to land, and whether it was
// closed (a deposit was promised validity past it while it was empty) or holds a failed slot's keys.

export interface Slot {
  index: number;
  /** scoped id → leaf, in the order they were queued */
  leaves: Map<string, bigint>;
  /** a deposit was promised validity past this slot while it was empty: it takes no keys */
  closed: boolean;
  /** holds keys whose insert failed: inserted at the slot's time, never early (no retry loop) */
  retry: boolean;
  /** settles once the slot's keys are inserted and indexed (rejects when the insert failed) */
  landed: Promise<void>;
  /** wallet deposits (scoped agent ids) waiting for this slot before they are proved: each gets a turn */
  waiting: Set<string>;
  /** those of them answered `registration_pending` while waiting → the landing time they were told */
  told: Map<string, number>;
  settle: (error?: unknown) => void;
}

/** The slots not inserted yet, by index (slot `i` is at `i * slotMs` on the clock). */
export class Slots {
  readonly #byIndex = new Map<number, Slot>();
  readonly #slotMs: number;
  readonly #perSlot: number;

  constructor(slotMs: number, perSlot: number) {
    this.#slotMs = slotMs;
    this.#perSlot = perSlot;
  }

  /** The slot's time (ms since the epoch). */
  at(index: number): number {
    return index * this.#slotMs;
  }

  /** The first slot strictly after `now`. */
  nextIndex(now: number): number {
    return Math.floor(now / this.#slotMs) + 1;
  }

  get(index: number): Slot | undefined {
    return this.#byIndex.get(index);
  }

  /** The slot at `index`, made (empty) if there is none yet. */
  getOrNew(index: number): Slot {
    return this.#byIndex.get(index) ?? this.#newSlot(index);
  }

  delete(index: number): void {
    this.#byIndex.delete(index);
  }

  /** The first slot from `index` on that still takes keys. */
  openFrom(index: number): Slot {
    for (let i = index; ; i++) {
      const slot = this.getOrNew(i);
      if (!slot.closed && slot.leaves.size < this.#perSlot) return slot;
    }
  }

  /** A slot whose time has come and whose keys are not inserted yet (it may wait for the one before). */
  due(now: number): Slot | undefined {
    for (const slot of this.#byIndex.values())
      if (this.at(slot.index) <= now && slot.leaves.size > 0) return slot;
    return undefined;
  }

  /** The slot the agent's key is queued for (not counting one being inserted). */
  queuedIn(scoped: string): Slot | undefined {
    for (const slot of this.#byIndex.values()) if (slot.leaves.has(scoped)) return slot;
    return undefined;
  }

  /** The earliest slot with keys that may be inserted before its time (not a failed slot's keys). */
  earliestEarly(): Slot | undefined {
    let first: Slot | undefined;
    for (const slot of this.#byIndex.values())
      if (slot.leaves.size > 0 && !slot.retry && (first === undefined || slot.index < first.index))
        first = slot;
    return first;
  }

  /** Forgets the slots that passed without keys (their waiters are told they landed). */
  forgetPassedEmpty(now: number): void {
    for (const [i, passed] of this.#byIndex)
      if (this.at(i) <= now && passed.leaves.size === 0) {
        this.#byIndex.delete(i);
        passed.settle();
      }
  }

  /** Settles every slot with an error of `stopped` and forgets them all (the registrar stops). */
  abandon(stopped: () => unknown): void {
    for (const slot of this.#byIndex.values()) slot.settle(stopped());
    this.#byIndex.clear();
  }

  /**
   * Queues keys whose insert failed to the next open slots from `index` on, as retries (inserted at their
   * slot's time, never early); returns the last slot they went to.
   */
  requeue(keys: Array<[string, bigint]>, index: number): Slot {
    let next = this.openFrom(index);
    for (const [scoped, leaf] of keys) {
      if (next.leaves.size >= this.#perSlot) next = this.openFrom(next.index + 1);
      next.leaves.set(scoped, leaf);
      next.retry = true;
    }
    return next;
  }

  #newSlot(index: number): Slot {
    let settle!: (error?: unknown) => void;
    const landed = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    landed.catch(() => {});
    const slot: Slot = {
      index,
      leaves: new Map(),
      closed: false,
      retry: false,
      landed,
      settle,
      waiting: new Set(),
      told: new Map(),
    };
    this.#byIndex.set(index, slot);
    return slot;
  }
}
