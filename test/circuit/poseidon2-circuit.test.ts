import { randomBytes } from 'node:crypto';
import test from 'ava';
import { loadWitnessCalculator } from '../../src/circuit/index.ts';
import {
  bytesToBigint,
  compress,
  FIELD_MODULUS,
  hash,
  poseidon2Permutation,
} from '../../src/crypto/index.ts';
import { compileTestCircuit } from './compile-test-circuit.ts';

const random = () => bytesToBigint(randomBytes(40)) % FIELD_MODULUS;

test("the circuit's Poseidon2 equals the TypeScript one (t = 2, 3, 4, compress, hash)", async (t) => {
  const calculator = await loadWitnessCalculator(compileTestCircuit('poseidon2_check').wasm);
  const cases = [
    { in2: [0n, 1n], in3: [0n, 1n, 2n], in4: [0n, 1n, 2n, 3n] },
    {
      in2: [FIELD_MODULUS - 1n, 0n],
      in3: [FIELD_MODULUS - 1n, FIELD_MODULUS - 1n, 0n],
      in4: [1n, 1n, 1n, FIELD_MODULUS - 1n],
    },
    {
      in2: [random(), random()],
      in3: [random(), random(), random()],
      in4: [random(), random(), random(), random()],
    },
  ];
  for (const c of cases) {
    const w = await calculator.calculateWitness(c);
    // Outputs follow wire 0 in declaration order: out2, out3, out4, compressed, hashed.
    t.deepEqual(w.slice(1, 3), poseidon2Permutation(c.in2));
    t.deepEqual(w.slice(3, 6), poseidon2Permutation(c.in3));
    t.deepEqual(w.slice(6, 10), poseidon2Permutation(c.in4));
    t.is(w[10], compress(c.in2[0], c.in2[1]));
    t.is(w[11], hash(c.in3, 7n));
  }
});
