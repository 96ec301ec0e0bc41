// The pool wallet's USDC float: what it holds on the ledger (read at most once a second), less what queued and
// executing payments will spend. A float too low refuses payments and shows in /health.
import { usdcBalance } from '../flows/usdc-balance.ts';
import type { FlowContext } from '../flows/context.ts';

export class PoolWalletFloat {
  readonly #ctx: Pick<FlowContext, 'chain' | 'deployment' | 'clock'>;
  readonly #address: string;
  #cached: { at: number; value: bigint } | undefined;
  /** Amounts committed to payments not yet settled on the ledger, by payment id. */
  readonly #committed = new Map<string, bigint>();

  constructor(ctx: Pick<FlowContext, 'chain' | 'deployment' | 'clock'>, address: string) {
    this.#ctx = ctx;
    this.#address = address;
  }

  async held(): Promise<bigint> {
    const now = this.#ctx.clock();
    if (this.#cached === undefined || now - this.#cached.at > 1000) {
      this.#cached = { at: now, value: await usdcBalance(this.#ctx, this.#address) };
    }
    return this.#cached.value;
  }

  /** Held minus what queued payments will spend. */
  async available(): Promise<bigint> {
    let committed = 0n;
    for (const v of this.#committed.values()) committed += v;
    return (await this.held()) - committed;
  }

  commit(paymentId: string, amount: bigint): void {
    this.#committed.set(paymentId, amount);
  }

  /** The payment settled (the ledger balance now shows it) or will not. */
  uncommit(paymentId: string): void {
    if (this.#committed.delete(paymentId)) this.#cached = undefined;
  }
}
