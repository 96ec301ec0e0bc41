// Ed25519 through node:crypto (OpenSSL) for the hot paths: the sandbox verifies every transaction and
// auth-entry signature, and payments sign an authorization entry and a transaction each. The SDK's pure-JS
// signer and verifier cost milliseconds per call and would dominate a burst of payments.
import { createPrivateKey, createPublicKey, type KeyObject, sign, verify } from 'node:crypto';
import { type Keypair, type Transaction, xdr } from '#stellar-sdk';

// DER headers of an Ed25519 SubjectPublicKeyInfo and PKCS#8 private key; the 32 raw key bytes follow them.
const SPKI_PREFIX = Buffer.from('302a300506032b6570032100', 'hex');
const PKCS8_PREFIX = Buffer.from('302e020100300506032b657004220420', 'hex');
const MAX_CACHED = 10_000;
const publicKeys = new Map<string, KeyObject>();
/** by Keypair object: its address would be re-encoded (base32 and checksum) on every lookup */
const privateKeys = new WeakMap<Keypair, KeyObject>();

function cached(map: Map<string, KeyObject>, id: string, make: () => KeyObject): KeyObject {
  let key = map.get(id);
  if (!key) {
    key = make();
    if (map.size > MAX_CACHED) map.clear();
    map.set(id, key);
  }
  return key;
}

/**
 * Signatures found valid, by key, signature and message: the same signature is checked several times on its
 * way (a payer's simulation, the facilitator's, the ledger's apply), as stellar-core's verification cache
 * also spares. Only successes are kept; bounded like the key caches.
 */
const verified = new Set<string>();

export function verifyEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  if (publicKey.length !== 32 || signature.length !== 64) return false;
  const id = Buffer.concat([publicKey, signature, message]).toString('base64');
  if (verified.has(id)) return true;
  if (!checkEd25519(publicKey, message, signature)) return false;
  if (verified.size > MAX_CACHED) verified.clear();
  verified.add(id);
  return true;
}

function checkEd25519(publicKey: Uint8Array, message: Uint8Array, signature: Uint8Array): boolean {
  const key = cached(publicKeys, Buffer.from(publicKey).toString('hex'), () =>
    createPublicKey({ key: Buffer.concat([SPKI_PREFIX, publicKey]), format: 'der', type: 'spki' }),
  );
  try {
    return verify(null, message, key, signature);
  } catch {
    return false;
  }
}

/** The 64-byte signature of `message` by `signer` (same bytes as `signer.sign(message)`). */
export function signEd25519(signer: Keypair, message: Uint8Array): Buffer {
  let key = privateKeys.get(signer);
  if (!key) {
    key = createPrivateKey({
      key: Buffer.concat([PKCS8_PREFIX, signer.rawSecretKey()]),
      format: 'der',
      type: 'pkcs8',
    });
    privateKeys.set(signer, key);
  }
  return sign(null, message, key);
}

/** Adds `signer`'s signature to `tx` (as `tx.sign(signer)` does). */
export function signTransaction(tx: Transaction, signer: Keypair): void {
  const signature = signEd25519(signer, tx.hash());
  tx.signatures.push(new xdr.DecoratedSignature({ hint: signer.signatureHint(), signature }));
}
