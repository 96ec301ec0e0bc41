// Stellar networks by passphrase, and the CAIP-2 id that x402 uses for each (`stellar:testnet`,
// `stellar:pubnet`; our standalone sandbox is `stellar:local`). Shared by the sandbox and the proxy. The
// passphrases are the networks' published constants (the SDK's `Networks`; test/sandbox checks they agree),
// written out so that a command that only parses its flags need not load the SDK.

export const STANDALONE_PASSPHRASE = 'Standalone Network ; February 2017';
export const TESTNET_PASSPHRASE = 'Test SDF Network ; September 2015';
export const PUBLIC_PASSPHRASE = 'Public Global Stellar Network ; September 2015';

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
