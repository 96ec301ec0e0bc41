// Poseidon2 parameters for BN254 (x^5, 8 full + 56 partial rounds, t = 2, 3, 4), derived at load time with our
// own implementation of the Horizen Labs reference generator (the Grain LFSR of the Poseidon paper), so the
// constants are reproducible rather than pasted; the known-answer tests pin the result.
import { FIELD_MODULUS } from './field.ts';

export const FULL_ROUNDS = 8;
export const PARTIAL_ROUNDS = 56;
const FIELD_BITS = 254;

export interface Poseidon2Params {
  t: number;
  /** External round constants: FULL_ROUNDS rows of t (first 4 rows before the partial rounds, last 4 after). */
  external: bigint[][];
  /** One constant per partial round, added to state[0] only. */
  internal: bigint[];
  /** diag(M_I) − 1: the internal layer is out_i = Σ state + d_i · state_i. */
  internalDiagMinusOne: bigint[];
}

// The t = 4 internal diagonal is sampled by the reference script outside the Grain stream; it is data,
// fixed by the Horizen Labs instance and checked by the t = 4 known answer.
const DIAG_T4 = [
  0x10dc6e9c006ea38b04b1e03b4bd9490c0d03f98929ca1d7fb56821fd19d3b6e7n,
  0x0c28145b6a44df3e0149b3d0a30b3bb599df9756d4dd9b84a86b38cfb45a740bn,
  0x00544b8338791518b2c7645a50392798b21f75bb60e3596170067d00141cac15n,
  0x222c01175718386f2e2e82eb122789e352e105a3b8fa852613bc534433ee428bn,
];
const DIAGS: Record<number, bigint[]> = { 2: [1n, 2n], 3: [1n, 1n, 2n], 4: DIAG_T4 };

/** The Grain LFSR in self-shrinking mode, seeded with the instance description. */
function* grainBits(t: number): Generator<number> {
  const seed: number[] = [];
  const push = (value: number, width: number) => {
    for (let i = width - 1; i >= 0; i--) seed.push((value >> i) & 1);
  };
  push(1, 2); // prime field
  push(0, 4); // S-box x^alpha
  push(FIELD_BITS, 12);
  push(t, 12);
  push(FULL_ROUNDS, 10);
  push(PARTIAL_ROUNDS, 10);
  for (let i = 0; i < 30; i++) seed.push(1);

  const state = seed;
  const step = (): number => {
    const bit = state[62] ^ state[51] ^ state[38] ^ state[23] ^ state[13] ^ state[0];
    state.shift();
    state.push(bit);
    return bit;
  };
  for (let i = 0; i < 160; i++) step();
  while (true) {
    const keep = step();
    const bit = step();
    if (keep === 1) yield bit;
  }
}

/** Uniform field elements by rejection sampling FIELD_BITS-bit integers from the Grain stream. */
function sampleFieldElements(t: number, count: number): bigint[] {
  const bits = grainBits(t);
  const out: bigint[] = [];
  while (out.length < count) {
    let v = 0n;
    for (let i = 0; i < FIELD_BITS; i++) v = (v << 1n) | BigInt(bits.next().value as number);
    if (v < FIELD_MODULUS) out.push(v);
  }
  return out;
}

const cache = new Map<number, Poseidon2Params>();

export function poseidon2Params(t: number): Poseidon2Params {
  const hit = cache.get(t);
  if (hit) return hit;
  if (t !== 2 && t !== 3 && t !== 4)
    throw new RangeError(`Poseidon2 state width must be 2, 3 or 4, got ${t}`);
  // Poseidon2 draws R_F·t + R_P constants in round order: 4 full rows, 56 partial singles, 4 full rows.
  const stream = sampleFieldElements(t, FULL_ROUNDS * t + PARTIAL_ROUNDS);
  const half = FULL_ROUNDS / 2;
  const external: bigint[][] = [];
  let k = 0;
  const take = (n: number) => {
    const part = stream.slice(k, k + n);
    k += n;
    return part;
  };
  for (let r = 0; r < half; r++) external.push(take(t));
  const internal = take(PARTIAL_ROUNDS);
  for (let r = 0; r < half; r++) external.push(take(t));
  const params = { t, external, internal, internalDiagMinusOne: DIAGS[t] };
  cache.set(t, params);
  return params;
}
