// Purpose-bound keys derived from the master key with HKDF-SHA256, so that no two uses share a key.
import { hkdfSync } from 'node:crypto';

const SALT = 'privacy-pool-proxy/v1';

export type KeyPurpose =
  | 'store-encryption'
  | 'store-record-key'
  | 'jwt-signing'
  | 'agent-recovery'
  | 'challenge-mac'
  | 'payment-nonce'
  | 'event-archive-mac';

export function deriveKey(masterKey: Uint8Array, purpose: KeyPurpose, bytes = 32): Uint8Array {
  if (masterKey.length !== 32) throw new Error('master key must be 32 bytes');
  return new Uint8Array(hkdfSync('sha256', masterKey, SALT, `${purpose}/v1`, bytes));
}

/**
 * A key of the store's current session epoch (tokens, login challenges): the first epoch ('') is the original
 * derivation; `store recover` starts a new one, so every token and challenge made before it ends.
 */
export function deriveEpochKey(
  masterKey: Uint8Array,
  purpose: 'jwt-signing' | 'challenge-mac',
  epoch: string,
): Uint8Array {
  if (epoch === '') return deriveKey(masterKey, purpose);
  if (masterKey.length !== 32) throw new Error('master key must be 32 bytes');
  return new Uint8Array(hkdfSync('sha256', masterKey, SALT, `${purpose}/v1/epoch/${epoch}`, 32));
}
