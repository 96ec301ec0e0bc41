// Reusing a token transfer's simulated resources. Every payment from the pool wallet to one service is the
// same call with the same ledger footprint (the token's instance, both balances), except for the payer's
// authorization nonce, a fresh temporary entry that the footprint lists read-write. So one enforcing
// simulation per (asset, payer, payTo, amount) serves the payments that follow it for a short while, and
// those that ask while it runs, with the nonce key swapped for each payment's own. The facilitator simulates every payment again before it
// settles, so a reused answer that no longer fits the ledger is refused there, and the cache is dropped on
// any refusal.
import { Address, rpc, SorobanDataBuilder, xdr } from '#stellar-sdk';

/** How long a simulation is reused (the footprint only changes with archival or a new contract). */
const TTL_MS = 30_000;
const MAX_ENTRIES = 1_000;

type Success = rpc.Api.SimulateTransactionSuccessResponse;

export class TransferResources {
  readonly #cache = new Map<string, { sim: Success; at: number }>();
  /** simulations under way, by transfer */
  readonly #pending = new Map<string, Promise<Success>>();

  static key(asset: string, payer: string, payTo: string, amount: bigint): string {
    return `${asset}|${payer}|${payTo}|${amount}`;
  }

  /** A simulation of the same transfer made recently, fitted to `nonce`; undefined when there is none. */
  get(key: string, payer: string, nonce: bigint): Success | undefined {
    const hit = this.#cache.get(key);
    if (!hit) return undefined;
    if (Date.now() - hit.at > TTL_MS) {
      this.#cache.delete(key);
      return undefined;
    }
    const data = withNonce(hit.sim.transactionData.build(), payer, nonce);
    return data && { ...hit.sim, transactionData: new SorobanDataBuilder(data) };
  }

  /**
   * The transfer's resources fitted to `nonce`: a recent identical transfer's, else from `simulate` (this
   * payment's own simulation). Payments that ask while an identical transfer's simulation is under way wait for
   * it instead of simulating too (a burst starts many identical payments at once); should it fail, each
   * simulates its own.
   */
  async fitted(
    key: string,
    payer: string,
    nonce: bigint,
    simulate: () => Promise<Success>,
  ): Promise<Success> {
    const hit = this.get(key, payer, nonce);
    if (hit) return hit;
    const pending = this.#pending.get(key);
    if (pending === undefined) {
      const own = simulate();
      this.#pending.set(key, own);
      try {
        const sim = await own;
        this.set(key, sim);
        return sim;
      } finally {
        this.#pending.delete(key);
      }
    }
    const shared = await pending.catch(() => undefined);
    const data = shared && withNonce(shared.transactionData.build(), payer, nonce);
    return data ? { ...shared, transactionData: new SorobanDataBuilder(data) } : simulate();
  }

  set(key: string, sim: Success): void {
    if (this.#cache.size >= MAX_ENTRIES) this.#cache.delete(this.#cache.keys().next().value as string);
    this.#cache.set(key, { sim, at: Date.now() });
  }

  clear(): void {
    this.#cache.clear();
  }
}

/** `data` with the payer's one nonce key replaced by `nonce`'s (undefined unless there is exactly one). */
export function withNonce(
  data: xdr.SorobanTransactionData,
  payer: string,
  nonce: bigint,
): xdr.SorobanTransactionData | undefined {
  const { footprint } = data.resources;
  let replaced = 0;
  const readWrite = footprint.readWrite.map((k) => {
    if (k.type !== 'contractData') return k;
    const cd = k.value as xdr.LedgerKeyContractData;
    if (cd.key.type !== 'scvLedgerKeyNonce' || Address.fromScAddress(cd.contract).toString() !== payer)
      return k;
    replaced++;
    return xdr.LedgerKey.contractData(
      new xdr.LedgerKeyContractData({
        contract: cd.contract,
        key: xdr.ScVal.scvLedgerKeyNonce(new xdr.ScNonceKey({ nonce })),
        durability: cd.durability,
      }),
    );
  });
  if (replaced !== 1) return undefined;
  return new xdr.SorobanTransactionData({
    ext: data.ext,
    resources: new xdr.SorobanResources({
      footprint: new xdr.LedgerFootprint({ readOnly: footprint.readOnly, readWrite }),
      instructions: data.resources.instructions,
      diskReadBytes: data.resources.diskReadBytes,
      writeBytes: data.resources.writeBytes,
    }),
    resourceFee: data.resourceFee,
  });
}
