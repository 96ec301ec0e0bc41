// ed25519 signature checks through node:crypto (OpenSSL): the sandbox verifies every transaction and
// auth-entry signature, and the SDK's pure-JS verifier would dominate a ledger close.
import { createPublicKey, type KeyObject, verify } from 'node:crypto';

// DER SubjectPublicKeyInfo header of an Ed25519 key; the 32 raw key bytes follow it.
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const keys = new Map<string, KeyObject>();

export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const id = Buffer.from(publicKey).toString('hex');
  let key = keys.get(id);
  if (!key) {
    key = createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' });
    if (keys.size > 10_000) keys.clear();
    keys.set(id, key);
  }
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}
