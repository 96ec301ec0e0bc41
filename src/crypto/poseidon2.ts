// Poseidon2 permutation, the fixed-width hash and the Merkle compression used by SPP's circuits and contracts.
import { assertField, FIELD_MODULUS as P } from './field.ts';
import { FULL_ROUNDS, PARTIAL_ROUNDS, poseidon2Params } from './poseidon2-params.ts';

const sbox = (x: bigint): bigint => {
  const x2 = (x * x) % P;
  return (((x2 * x2) % P) * x) % P;
};

/** External linear layer: circ(2, 1, …) for t = 2, 3, and the Poseidon2 paper's M4 for t = 4. */
function externalLayer(s: bigint[]): bigint[] {
  if (s.length === 4) {
    const t0 = s[0] + s[1];
    const t1 = s[2] + s[3];
    const t2 = 2n * s[1] + t1;
    const t3 = 2n * s[3] + t0;
    const t4 = 4n * t1 + t3;
    const t5 = 4n * t0 + t2;
    return [(t3 + t5) % P, t5 % P, (t2 + t4) % P, t4 % P];
  }
  let sum = 0n;
  for (const x of s) sum += x;
  return s.map((x) => (sum + x) % P);
}

function internalLayer(s: bigint[], diag: bigint[]): bigint[] {
  let sum = 0n;
  for (const x of s) sum += x;
  return s.map((x, i) => (sum + x * diag[i]) % P);
}

export function poseidon2Permutation(state: bigint[]): bigint[] {
  if (!Array.isArray(state)) throw new TypeError('Poseidon2 state must be an array of bigints');
  state.forEach((x, i) => assertField(x, `state[${i}]`));
  const { external, internal, internalDiagMinusOne } = poseidon2Params(state.length);
  let s = externalLayer(state);
  const half = FULL_ROUNDS / 2;
  const fullRound = (rc: bigint[]) => {
    s = externalLayer(s.map((x, i) => sbox((x + rc[i]) % P)));
  };
  for (let r = 0; r < half; r++) fullRound(external[r]);
  for (let r = 0; r < PARTIAL_ROUNDS; r++) {
    s[0] = sbox((s[0] + internal[r]) % P);
    s = internalLayer(s, internalDiagMinusOne);
  }
  for (let r = half; r < FULL_ROUNDS; r++) fullRound(external[r]);
  return s;
}

/** SPP's fixed-size hash: permutation of [inputs…, domain] (t = n + 1), first output. */
export function hash(inputs: bigint[], dom: bigint): bigint {
  if (!Array.isArray(inputs) || inputs.length < 1 || inputs.length > 3) {
    throw new RangeError('hash takes 1 to 3 inputs (state width 2 to 4)');
  }
  assertField(dom, 'domain');
  return poseidon2Permutation([...inputs, dom])[0];
}

/** Poseidon2 compression (paper §3.1): P([l, r])[0] + l; every binary Merkle node in the system. */
export function compress(left: bigint, right: bigint): bigint {
  assertField(left, 'left');
  assertField(right, 'right');
  return (poseidon2Permutation([left, right])[0] + left) % P;
}
