// SPP's encrypted outputs, so a note can be recovered from chain events alone: X25519 with an ephemeral key,
// the raw shared secret as the XSalsa20-Poly1305 key, eph_pub(32) ‖ nonce(24) ‖ ciphertext+tag(64) = 120 bytes.

import { randomBytes } from 'node:crypto';
import { xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import { x25519 } from '@noble/curves/ed25519.js';
import { assertField } from './field.ts';
import { assertNoteAmount } from './note.ts';

export const ENCRYPTED_NOTE_BYTES = 120;
const AMOUNT_BYTES = 16;
const PLAINTEXT_BYTES = AMOUNT_BYTES + 32;

export interface NotePlaintext {
  amount: bigint;
  blinding: bigint;
}

function toLittleEndian(value: bigint, length: number): Uint8Array {
  const out = new Uint8Array(length);
  let v = value;
  for (let i = 0; i < length; i++) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  if (v !== 0n) throw new RangeError(`value does not fit in ${length} bytes`);
  return out;
}

function fromLittleEndian(bytes: Uint8Array): bigint {
  let v = 0n;
  for (let i = bytes.length - 1; i >= 0; i--) v = (v << 8n) | BigInt(bytes[i]);
  return v;
}

function assertKey(key: unknown, name: string): asserts key is Uint8Array {
  if (!(key instanceof Uint8Array) || key.length !== 32) throw new TypeError(`${name} must be 32 bytes`);
}

export function encryptNote(note: NotePlaintext, recipientPublicKey: Uint8Array): Uint8Array {
  assertNoteAmount(note?.amount);
  if (note.amount >= 1n << 128n) throw new RangeError('an encrypted note amount must fit in u128');
  assertField(note.blinding, 'blinding');
  assertKey(recipientPublicKey, 'recipient encryption public key');
  const ephemeralSecret = x25519.utils.randomSecretKey();
  const shared = x25519.getSharedSecret(ephemeralSecret, recipientPublicKey);
  const nonce = randomBytes(24);
  const plaintext = new Uint8Array(PLAINTEXT_BYTES);
  plaintext.set(toLittleEndian(note.amount, AMOUNT_BYTES), 0);
  plaintext.set(toLittleEndian(note.blinding, 32), AMOUNT_BYTES);
  const sealed = xsalsa20poly1305(shared, nonce).encrypt(plaintext);
  const out = new Uint8Array(ENCRYPTED_NOTE_BYTES);
  out.set(x25519.getPublicKey(ephemeralSecret), 0);
  out.set(nonce, 32);
  out.set(sealed, 56);
  return out;
}

/** Returns the note, or null when it was not encrypted to this key (authentication fails). */
export function decryptNote(data: Uint8Array, secretKey: Uint8Array): NotePlaintext | null {
  if (!(data instanceof Uint8Array) || data.length !== ENCRYPTED_NOTE_BYTES) {
    throw new RangeError(`an encrypted note is exactly ${ENCRYPTED_NOTE_BYTES} bytes`);
  }
  assertKey(secretKey, 'encryption secret key');
  let plaintext: Uint8Array;
  try {
    const shared = x25519.getSharedSecret(secretKey, data.subarray(0, 32));
    plaintext = xsalsa20poly1305(shared, data.subarray(32, 56)).decrypt(data.subarray(56));
  } catch {
    return null;
  }
  const blinding = fromLittleEndian(plaintext.subarray(AMOUNT_BYTES));
  return { amount: fromLittleEndian(plaintext.subarray(0, AMOUNT_BYTES)), blinding };
}
