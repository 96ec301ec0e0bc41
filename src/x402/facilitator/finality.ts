// Waiting for settlements to be final, for all of them at once: one getTransactions page walk per poll
// follows the ledger from the oldest ledger anyone waits on, instead of one getTransaction per settlement
// per poll (with a thousand settlements in flight that was most of the facilitator's RPC traffic). The raw
// answer is used (statuses and hashes only; no XDR is decoded). Results seen recently are kept a while, so
// a waiter that registers after its transaction was already scanned still finds it.
import { rpc } from '#stellar-sdk';

type Status = rpc.Api.GetTransactionStatus;
const PAGE = 200;
/** Results kept for late waiters (a few ledgers' worth on a busy network). */
const RECENT_MAX = 20_000;

interface Waiter {
  resolve: (status: Status) => void;
  deadline: number;
  /** the transaction lands after this ledger */
  after: number;
}

export class FinalityWatcher {
  readonly #waiters = new Map<string, Waiter[]>();
  readonly #recent = new Map<string, Status>();
  /** paging position: after the last transaction scanned */
  #cursor: string | undefined;
  #timer: NodeJS.Timeout | undefined;
  #polling = false;

  readonly #server: rpc.Server;
  readonly #pollMs: number;

  constructor(server: rpc.Server, pollMs: number) {
    this.#server = server;
    this.#pollMs = pollMs;
  }

  /**
   * Resolves with the transaction's final status (SUCCESS or FAILED), or NOT_FOUND once `timeoutMs` has
   * passed. `sentAtLedger`: the latest ledger when it was sent (it lands in a later one).
   */
  wait(hash: string, sentAtLedger: number, timeoutMs: number): Promise<Status> {
    const known = this.#recent.get(hash);
    if (known) return Promise.resolve(known);
    return new Promise((resolve) => {
      const list = this.#waiters.get(hash) ?? [];
      list.push({ resolve, deadline: Date.now() + timeoutMs, after: sentAtLedger });
      this.#waiters.set(hash, list);
      this.#schedule();
    });
  }

  close(): void {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    for (const list of this.#waiters.values())
      for (const w of list) w.resolve(rpc.Api.GetTransactionStatus.NOT_FOUND);
    this.#waiters.clear();
  }

  #schedule(): void {
    if (this.#timer || this.#polling || this.#waiters.size === 0) return;
    this.#timer = setTimeout(() => {
      this.#timer = undefined;
      void this.#poll();
    }, this.#pollMs);
  }

  async #poll(): Promise<void> {
    this.#polling = true;
    try {
      for (let pages = 0; pages < 50; pages++) {
        const request: rpc.Api.GetTransactionsRequest =
          this.#cursor === undefined
            ? { startLedger: this.#firstLedger(), pagination: { limit: PAGE } }
            : { pagination: { cursor: this.#cursor, limit: PAGE } };
        const res = await this.#server._getTransactions(request);
        const txs = res.transactions ?? [];
        for (const t of txs) this.#settle(t.txHash, t.status);
        if (res.cursor) this.#cursor = res.cursor;
        if (txs.length < PAGE) break;
      }
    } catch {
      // an RPC hiccup: the next poll tries again from the same place
    } finally {
      this.#polling = false;
    }
    const now = Date.now();
    for (const [hash, list] of this.#waiters) {
      const alive = list.filter((w) => {
        if (w.deadline > now) return true;
        w.resolve(rpc.Api.GetTransactionStatus.NOT_FOUND);
        return false;
      });
      if (alive.length) this.#waiters.set(hash, alive);
      else this.#waiters.delete(hash);
    }
    this.#schedule();
  }

  /** The oldest ledger a waiter's transaction can be in. */
  #firstLedger(): number {
    let first = Number.MAX_SAFE_INTEGER;
    for (const list of this.#waiters.values()) for (const w of list) first = Math.min(first, w.after);
    return Math.max(1, first);
  }

  #settle(hash: string, status: Status): void {
    if (this.#recent.size >= RECENT_MAX) this.#recent.delete(this.#recent.keys().next().value as string);
    this.#recent.set(hash, status);
    const list = this.#waiters.get(hash);
    if (!list) return;
    this.#waiters.delete(hash);
    for (const w of list) w.resolve(status);
  }
}
