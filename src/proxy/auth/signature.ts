// Wallets return SEP-53 signatures as base64 (Freighter) or hex (SEP-43 text); both carry 64 bytes.
import { DomainError } from '../domain/errors.ts';

const HEX = /^[0-9a-fA-F]{128}$/;
const BASE64 = /^[A-Za-z0-9+/]{86}==$/;
const BASE64URL = /^[A-Za-z0-9_-]{86}(==)?$/;

export function decodeSignature(signature: string): Uint8Array {
  let bytes: Buffer | undefined;
  if (HEX.test(signature)) bytes = Buffer.from(signature, 'hex');
  else if (BASE64.test(signature)) bytes = Buffer.from(signature, 'base64');
  else if (BASE64URL.test(signature)) bytes = Buffer.from(signature, 'base64url');
  if (bytes === undefined || bytes.length !== 64) {
    throw new DomainError(
      'invalid_request',
      'signature must be the 64-byte SEP-53 signature as base64 (88 characters) or hex (128 characters)',
      { issues: [{ path: 'signature', message: 'not a 64-byte base64 or hex signature' }] },
    );
  }
  return new Uint8Array(bytes);
}
