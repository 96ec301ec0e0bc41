// The facilitator's channel accounts: an account can have one transaction in flight (its sequence number),
// so each settlement takes a free channel for the time of its submission and confirmation, and waits in
// arrival order when all are busy. Several channels let several settlements land in the same ledger.

import type { Keypair } from '#stellar-sdk';

export class ChannelPool {
  readonly #free: Keypair[];
  readonly #waiting: ((kp: Keypair) => void)[] = [];
  /** the channels' addresses (G…), in order */
  readonly addresses: readonly string[];
  /** the same, for membership checks */
  readonly addressSet: ReadonlySet<string>;

  constructor(readonly channels: readonly Keypair[]) {
    if (channels.length === 0) throw new Error('at least one channel account is required');
    this.addresses = channels.map((c) => c.publicKey());
    this.addressSet = new Set(this.addresses);
    if (this.addressSet.size !== channels.length) throw new Error('channel accounts must be distinct');
    this.#free = [...channels];
  }

  /** Channels not in use right now. */
  get available(): number {
    return this.#free.length;
  }

  /** Runs `fn` with a channel of its own; the channel is released when `fn` settles. */
  async with<T>(fn: (channel: Keypair) => Promise<T>): Promise<T> {
    const channel = await this.#acquire();
    try {
      return await fn(channel);
    } finally {
      this.#release(channel);
    }
  }

  #acquire(): Promise<Keypair> {
    const kp = this.#free.shift();
    if (kp) return Promise.resolve(kp);
    return new Promise((resolve) => this.#waiting.push(resolve));
  }

  #release(kp: Keypair): void {
    const next = this.#waiting.shift();
    if (next) next(kp);
    else this.#free.push(kp);
  }
}
