// Arithmetic in the BN254 scalar field Fr, the field every hash, note and public input lives in.

export const FIELD_MODULUS = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** Throws unless `x` is a bigint already in canonical form 0 ≤ x < r. */
export function assertField(x: unknown, name = 'value'): asserts x is bigint {
  if (typeof x !== 'bigint') throw new TypeError(`${name} must be a bigint field element, got ${typeof x}`);
  if (x < 0n || x >= FIELD_MODULUS)
    throw new RangeError(`${name} is not a canonical BN254 field element (0 ≤ x < r)`);
}

export function bigintToBytes32(x: bigint): Uint8Array {
  if (x < 0n || x >= 1n << 256n) throw new RangeError('value does not fit in 32 bytes');
  const out = new Uint8Array(32);
  let v = x;
  for (let i = 31; i >= 0; i--) {
    out[i] = Number(v & 0xffn);
    v >>= 8n;
  }
  return out;
}

export function bytesToBigint(bytes: Uint8Array): bigint {
  let v = 0n;
  for (const b of bytes) v = (v << 8n) | BigInt(b);
  return v;
}
