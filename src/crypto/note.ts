// SPP notes: key pair, commitment, the position-bound "signature" and the nullifier.
import { assertField } from './field.ts';
import { hash } from './poseidon2.ts';

export const MAX_NOTE_AMOUNT = (1n << 248n) - 1n;

const DOMAIN = { commitment: 1n, nullifier: 2n, publicKey: 3n, signature: 4n } as const;

export function notePublicKey(secretKey: bigint): bigint {
  assertField(secretKey, 'secret key');
  return hash([secretKey, 0n], DOMAIN.publicKey);
}

export function assertNoteAmount(amount: unknown): asserts amount is bigint {
  if (typeof amount !== 'bigint') throw new TypeError('note amount must be a bigint');
  if (amount < 0n) throw new RangeError('note amount must not be negative');
  if (amount > MAX_NOTE_AMOUNT) throw new RangeError('note amount must be below 2^248');
}

export function commitment(amount: bigint, publicKey: bigint, blinding: bigint): bigint {
  assertNoteAmount(amount);
  assertField(publicKey, 'public key');
  assertField(blinding, 'blinding');
  return hash([amount, publicKey, blinding], DOMAIN.commitment);
}

/** Binds the spend to the owner's key and the leaf position (not a real signature scheme; SPP's design). */
export function noteSignature(secretKey: bigint, noteCommitment: bigint, pathIndex: bigint): bigint {
  assertField(secretKey, 'secret key');
  assertField(noteCommitment, 'commitment');
  assertField(pathIndex, 'path index');
  return hash([secretKey, noteCommitment, pathIndex], DOMAIN.signature);
}

export function nullifier(noteCommitment: bigint, pathIndex: bigint, secretKey: bigint): bigint {
  const signature = noteSignature(secretKey, noteCommitment, pathIndex);
  return hash([noteCommitment, pathIndex, signature], DOMAIN.nullifier);
}

/** ASP allowlist leaf for a note key. */
export function membershipLeaf(publicKey: bigint, membershipBlinding: bigint): bigint {
  assertField(publicKey, 'public key');
  assertField(membershipBlinding, 'membership blinding');
  return hash([publicKey, membershipBlinding], 1n);
}
