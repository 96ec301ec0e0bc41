// Our resource-server side of `exact` on Stellar for @x402/core's x402ResourceServer: turns a route's price
// into payment requirements in the configured token (an `{amount, asset}` price as is; a money price such
// as "$0.01" or 0.01 in the default token with 7 decimals) and copies the facilitator's
// `areFeesSponsored`. It declares the `authorization` payment flow @x402/core >= 2.22 asks every server
// scheme for: verify before the handler, settle after it.

import type {
  AssetAmount,
  Network,
  PaymentRequirements,
  Price,
  SchemeNetworkServer,
  SupportedKind,
} from '@x402/core/types';

/** Token amount with 7 decimals ("0.01" → "100000"); throws on anything but a non-negative decimal. */
export function toStroops(decimal: string): string {
  const m = /^(\d{1,12})(?:\.(\d{1,7}))?$/.exec(decimal.trim());
  if (!m) throw new Error(`invalid money amount: ${decimal}`);
  const v = BigInt(m[1] as string) * 10_000_000n + BigInt((m[2] ?? '').padEnd(7, '0'));
  return v.toString();
}

export class ExactStellarServerScheme implements SchemeNetworkServer {
  readonly scheme = 'exact';
  readonly defaultAssetTransferMethod = 'default';
  readonly paymentFlows = {
    default: { supported: ['authorization'] as const, default: 'authorization' as const },
  };

  /** @param defaultAsset token contract id used for money prices */
  readonly #defaultAsset: string | undefined;

  constructor(defaultAsset?: string) {
    this.#defaultAsset = defaultAsset;
  }

  async parsePrice(price: Price, network: Network): Promise<AssetAmount> {
    if (typeof price === 'object' && price !== null && 'amount' in price) {
      if (!price.asset) throw new Error(`a price on ${network} needs an asset`);
      return { amount: price.amount, asset: price.asset, extra: price.extra ?? {} };
    }
    if (!this.#defaultAsset) throw new Error(`no default asset for money prices on ${network}`);
    const text = typeof price === 'number' ? price.toFixed(7) : String(price).replace(/^\$/, '');
    return { amount: toStroops(text), asset: this.#defaultAsset, extra: {} };
  }

  /** Stellar tokens (SAC and SEP-41 USDC) have 7 decimals. */
  getAssetDecimals(): number {
    return 7;
  }

  async enhancePaymentRequirements(
    requirements: PaymentRequirements,
    supportedKind: SupportedKind,
  ): Promise<PaymentRequirements> {
    const sponsored = supportedKind.extra?.areFeesSponsored;
    return {
      ...requirements,
      extra: {
        ...requirements.extra,
        ...(typeof sponsored === 'boolean' && { areFeesSponsored: sponsored }),
      },
    };
  }
}
