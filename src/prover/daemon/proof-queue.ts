// Admission and ordering of Prove requests. A request holds one of `capacity` slots from admission until it
// is answered, which bounds memory and tells callers to go elsewhere (RESOURCE_EXHAUSTED) when the daemon is
// full. Proofs then pass through a single lane in FIFO order: one proof at a time, because one proof
// already uses every core. A request whose AbortSignal fires (cancelled, deadline passed) leaves the lane's
// queue at once; a proof already running finishes but its result is dropped.
import { resourceExhausted } from './errors.ts';

interface Waiter {
  start(): void;
  signal?: AbortSignal;
  onAbort?: () => void;
}

export class ProofQueue {
  #admitted = 0;
  #proving = false;
  readonly #waiting: Waiter[] = [];

  constructor(readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1)
      throw new Error(`queue capacity must be a positive integer, got ${capacity}`);
  }

  /** Requests admitted and not yet answered. */
  get inFlight(): number {
    return this.#admitted;
  }

  /** Requests with a witness, waiting for the proving lane. */
  get waitingForLane(): number {
    return this.#waiting.length;
  }

  get busy(): boolean {
    return this.#proving;
  }

  /** Takes a slot or throws RESOURCE_EXHAUSTED; the returned function gives it back (idempotent). */
  admit(): () => void {
    if (this.#admitted >= this.capacity) {
      throw resourceExhausted(
        `prover queue is full (${this.capacity} requests in flight); retry later or use another daemon`,
      );
    }
    this.#admitted += 1;
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.#admitted -= 1;
    };
  }

  /** Runs `work` alone in the proving lane, after every request that entered the lane before it. */
  async runExclusive<T>(work: () => Promise<T>, signal?: AbortSignal): Promise<T> {
    signal?.throwIfAborted();
    if (this.#proving || this.#waiting.length > 0) await this.#waitTurn(signal);
    else this.#proving = true;
    // From here this request owns the lane until `work` settles, even if its caller gives up.
    const running = work();
    running.then(
      () => this.#next(),
      () => this.#next(),
    );
    if (!signal) return running;
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(signal.reason);
      if (signal.aborted) return onAbort();
      signal.addEventListener('abort', onAbort, { once: true });
      running.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
    });
  }

  #waitTurn(signal?: AbortSignal): Promise<void> {
    return new Promise((resolve, reject) => {
      const waiter: Waiter = { start: resolve, signal };
      if (signal) {
        waiter.onAbort = () => {
          const at = this.#waiting.indexOf(waiter);
          if (at >= 0) this.#waiting.splice(at, 1);
          reject(signal.reason);
        };
        signal.addEventListener('abort', waiter.onAbort, { once: true });
      }
      this.#waiting.push(waiter);
    });
  }

  #next(): void {
    const waiter = this.#waiting.shift();
    if (!waiter) {
      this.#proving = false;
      return;
    }
    if (waiter.onAbort) waiter.signal?.removeEventListener('abort', waiter.onAbort);
    waiter.start();
  }
}
