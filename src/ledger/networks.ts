// Stellar networks by passphrase, and the CAIP-2 id that x402 uses for each (`stellar:testnet`,
// `stellar:pubnet`; our standalone sandbox is `stellar:local`). Shared by the sandbox and the proxy.

import { Networks } from '@stellar/stellar-sdk';

export const STANDALONE_PASSPHRASE: string = Networks.STANDALONE;
export const TESTNET_PASSPHRASE: string = Networks.TESTNET;
export const PUBLIC_PASSPHRASE: string = Networks.PUBLIC;

/** The x402 / CAIP-2 network id for a passphrase: testnet, pubnet, the standalone network, or `stellar:custom`. */
export function x402Network(passphrase: string): string {
  switch (passphrase) {
    case TESTNET_PASSPHRASE:
      return 'stellar:testnet';
    case PUBLIC_PASSPHRASE:
      return 'stellar:pubnet';
    case STANDALONE_PASSPHRASE:
      return 'stellar:local';
    default:
      return 'stellar:custom';
  }
}
