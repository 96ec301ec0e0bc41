// The human-readable login message a wallet signs (SEP-53). Modelled on Sign-In-With-X: it names the
// service domain, the account, the network, a single-use nonce and a short validity window, so a
// signature cannot be replayed elsewhere or later.

export interface ChallengeFields {
  domain: string;
  uri: string;
  address: string;
  network: string;
  nonce: string;
  issuedAt: Date;
  expiresAt: Date;
}

export const NONCE_PATTERN = /^[0-9a-f]{48}$/;
const NONCE_LINE = /^Nonce: ([0-9a-f]{48})$/m;

export function formatChallenge(fields: ChallengeFields): string {
  return [
    `${fields.domain} wants you to sign in with your Stellar account:`,
    fields.address,
    '',
    'Sign in to the Privacy Pool Proxy. Signing this message proves you hold this key; it authorizes no payment.',
    '',
    `URI: ${fields.uri}`,
    'Version: 1',
    `Chain ID: ${fields.network}`,
    `Nonce: ${fields.nonce}`,
    `Issued At: ${fields.issuedAt.toISOString()}`,
    `Expiration Time: ${fields.expiresAt.toISOString()}`,
  ].join('\n');
}

/** The nonce of a challenge string, or undefined when the string carries none. */
export function challengeNonce(message: string): string | undefined {
  return NONCE_LINE.exec(message)?.[1];
}
