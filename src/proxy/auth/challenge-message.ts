// The human-readable login message a wallet signs (SEP-53). Modelled on Sign-In-With-X (EIP-4361): it
// names the service domain, the account, the network, a single-use nonce and a short validity window, so
// a signature cannot be replayed elsewhere or later. `parseChallenge` reads a message back exactly.

export interface ChallengeFields {
  domain: string;
  uri: string;
  address: string;
  network: string;
  nonce: string;
  issuedAt: Date;
  expiresAt: Date;
}

/** 64 hex characters: 16 random bytes, then a 16-byte MAC that makes the challenge self-verifying. */
export const NONCE_PATTERN = /^[0-9a-f]{64}$/;
const NONCE_LINE = /^Nonce: ([0-9a-f]{64})$/m;

const HEADLINE_SUFFIX = ' wants you to sign in with your Stellar account:';
const STATEMENT =
  'Sign in to the Privacy Pool Proxy. Signing this message proves you hold this key; it authorizes no payment.';

export function formatChallenge(fields: ChallengeFields): string {
  return [
    `${fields.domain}${HEADLINE_SUFFIX}`,
    fields.address,
    '',
    STATEMENT,
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

/**
 * The fields of a message in exactly the form `formatChallenge` writes, or undefined for anything else
 * (other line order, extra lines or spaces, another statement, non-canonical dates).
 */
export function parseChallenge(message: string): ChallengeFields | undefined {
  const lines = message.split('\n');
  if (lines.length !== 11 || !lines[0].endsWith(HEADLINE_SUFFIX)) return undefined;
  const field = (line: string, label: string) =>
    line.startsWith(label) ? line.slice(label.length) : undefined;
  const uri = field(lines[5], 'URI: ');
  const network = field(lines[7], 'Chain ID: ');
  const nonce = field(lines[8], 'Nonce: ');
  const issued = field(lines[9], 'Issued At: ');
  const expires = field(lines[10], 'Expiration Time: ');
  if (
    uri === undefined ||
    network === undefined ||
    nonce === undefined ||
    issued === undefined ||
    expires === undefined ||
    !NONCE_PATTERN.test(nonce)
  ) {
    return undefined;
  }
  const issuedAt = new Date(issued);
  const expiresAt = new Date(expires);
  if (Number.isNaN(issuedAt.getTime()) || Number.isNaN(expiresAt.getTime())) return undefined;
  const fields: ChallengeFields = {
    domain: lines[0].slice(0, -HEADLINE_SUFFIX.length),
    uri,
    address: lines[1],
    network,
    nonce,
    issuedAt,
    expiresAt,
  };
  return formatChallenge(fields) === message ? fields : undefined;
}
