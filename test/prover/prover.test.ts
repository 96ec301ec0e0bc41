// End-to-end proofs on small circuits: native proofs verify with snarkjs (ceremony and development
// keys, both directions), tampered public signals fail, concurrent proofs all verify, and every kind
// of bad input is a clear error.
import test from 'ava';
import { readFile } from 'node:fs/promises';
import * as snarkjs from 'snarkjs';
import { WitnessError } from '../../src/circuit/witness-error.ts';
import { proofToBytes } from '../../src/crypto/proof-bytes.ts';
import {
  DEV_KEY_NAME,
  NativeProverError,
  exportVerificationKey,
  loadProver,
  releaseVerifier,
  verify,
  type VerificationKey,
} from '../../src/prover/index.ts';
import {
  ceremonyZkey,
  compileCircuit,
  devZkey,
  readJson,
  useSingleThreadSnarkjsCurve,
  witness,
  type CompiledCircuit,
} from './helpers.ts';

const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
let small: CompiledCircuit;
let tiny: CompiledCircuit;

test.before(async () => {
  // snarkjs's default curve runs worker threads that could keep this process alive after its tests.
  await useSingleThreadSnarkjsCurve();
  small = await compileCircuit('small');
  tiny = await compileCircuit('tiny');
});
test.after.always(async () => {
  await releaseVerifier();
});

const smallInputs = (a: number, b: number, pub: number) => ({ a, b, pub });

function tamper(signals: string[], index: number): string[] {
  const out = [...signals];
  out[index] = ((BigInt(out[index]) + 1n) % R).toString();
  return out;
}

test('native proofs on a snarkjs ceremony zkey verify with snarkjs; a changed public signal does not', async (t) => {
  const zkey = await ceremonyZkey(small);
  const vkey = (await snarkjs.zKey.exportVerificationKey(zkey)) as VerificationKey;
  const prover = await loadProver(zkey);
  t.is(prover.nPublic, 2);
  const wtns = await witness(small, smallInputs(40000, 3, 77));
  const { proof, publicSignals, bytes } = await prover.prove(wtns);
  t.is(publicSignals[1], '77');
  t.true(await snarkjs.groth16.verify(vkey, publicSignals, proof));
  t.true(await verify(vkey, proof, publicSignals));
  t.false(await verify(vkey, proof, tamper(publicSignals, 0)));
  t.false(await verify(vkey, proof, tamper(publicSignals, 1)));
  t.is(bytes.length, 256);
  t.deepEqual(bytes, proofToBytes(proof));
  // The same witness proved by snarkjs yields the same public signals.
  const theirs = await snarkjs.groth16.prove(zkey, wtns);
  t.deepEqual(theirs.publicSignals, publicSignals);
});

test('a devSetup zkey works with the snarkjs prover and with the native prover, and says it is a development key', async (t) => {
  const { zkey, vkey: vkeyPath } = await devZkey(small);
  const vkey = await readJson<VerificationKey>(vkeyPath);
  t.deepEqual(vkey, await exportVerificationKey(zkey));
  t.is(vkey.nPublic, 2);
  const wtns = await witness(small, smallInputs(1234, 5, 9));

  const theirs = await snarkjs.groth16.prove(zkey, wtns);
  t.true(await snarkjs.groth16.verify(vkey, theirs.publicSignals, theirs.proof));
  t.false(await snarkjs.groth16.verify(vkey, tamper(theirs.publicSignals, 1), theirs.proof));

  const prover = await loadProver(zkey);
  const ours = await prover.prove(wtns);
  t.true(await snarkjs.groth16.verify(vkey, ours.publicSignals, ours.proof));
  t.deepEqual(ours.publicSignals, theirs.publicSignals);

  // The contribution section (10) carries the development marker as the contribution's name.
  const bytes = await readFile(zkey);
  t.true(Buffer.from(bytes).includes(Buffer.from(DEV_KEY_NAME)));
  t.regex(DEV_KEY_NAME, /DEVELOPMENT/);
});

test('the smallest circuit (4-row domain) proves and verifies in both directions', async (t) => {
  const wtns = await witness(tiny, { a: 6, b: 7 });
  const { zkey, vkey: vkeyPath } = await devZkey(tiny);
  const vkey = await readJson<VerificationKey>(vkeyPath);
  const prover = await loadProver(zkey);
  t.is(prover.domainSize, 4);
  const ours = await prover.prove(wtns);
  t.deepEqual(ours.publicSignals, ['42', '6']);
  t.true(await verify(vkey, ours.proof, ours.publicSignals));
  t.false(await verify(vkey, ours.proof, ['43', '6']));
  const ceremony = await ceremonyZkey(tiny);
  const prover2 = await loadProver(ceremony);
  const ours2 = await prover2.prove(wtns);
  t.true(await verify(await prover2.verificationKey(), ours2.proof, ours2.publicSignals));
});

test('zero witness values everywhere except the constant still give a valid proof', async (t) => {
  const { zkey } = await devZkey(tiny);
  const prover = await loadProver(zkey);
  const { proof, publicSignals } = await prover.prove(await witness(tiny, { a: 0, b: 0 }));
  t.deepEqual(publicSignals, ['0', '0']);
  t.true(await verify(await prover.verificationKey(), proof, publicSignals));
});

test('concurrent proofs in one process all verify with their own public signals', async (t) => {
  const { zkey } = await devZkey(small);
  const prover = await loadProver(zkey);
  const ceremony = await loadProver(await ceremonyZkey(small));
  const jobs = [1, 2, 3, 4, 5, 6].map(async (i) => {
    const p = i % 2 === 0 ? prover : ceremony;
    const wtns = await witness(small, smallInputs(1000 * i, i + 1, i));
    const result = await p.prove(wtns);
    return { i, p, result };
  });
  const results = await Promise.all(jobs);
  for (const { i, p, result } of results) {
    t.is(result.publicSignals[1], String(i));
    t.true(await verify(await p.verificationKey(), result.proof, result.publicSignals));
  }
  // Proofs are randomised: two proofs of the same witness differ.
  const w = await witness(small, smallInputs(5, 5, 5));
  const [p1, p2] = await Promise.all([prover.prove(w), prover.prove(w)]);
  t.notDeepEqual(p1.proof.pi_a, p2.proof.pi_a);
});

test('proving does not block the event loop', async (t) => {
  const { zkey } = await devZkey(small);
  const prover = await loadProver(zkey);
  const wtns = await witness(small, smallInputs(77, 2, 3));
  let ticks = 0;
  const timer = setInterval(() => ticks++, 1);
  await Promise.all([prover.prove(wtns), prover.prove(wtns), prover.prove(wtns)]);
  clearInterval(timer);
  t.true(ticks > 0);
});

// --- bad input -------------------------------------------------------------------------------------

function wtnsWithValue(wtns: Uint8Array, index: number, value: bigint): Uint8Array {
  const out = new Uint8Array(wtns);
  // Header: magic(4) version(4) nSections(4), section 1: id(4) size(8) n8(4) prime(32) nWitness(4) = 64, section 2 header 12.
  const offset = 76 + index * 32;
  for (let i = 0; i < 32; i++) out[offset + i] = Number((value >> BigInt(8 * i)) & 0xffn);
  return out;
}

test('a witness that does not satisfy the circuit is an error, never a proof', async (t) => {
  const { zkey } = await devZkey(small);
  const prover = await loadProver(zkey);
  const wtns = await witness(small, smallInputs(321, 4, 6));
  // Wire 1 is the public output: claiming a different output must not produce a proof.
  const unsatisfied = await t.throwsAsync(prover.prove(wtnsWithValue(wtns, 1, 12345n)), {
    instanceOf: WitnessError,
  });
  t.is(unsatisfied.code, 'witness_unsatisfied');
  // An internal wire changed.
  await t.throwsAsync(prover.prove(wtnsWithValue(wtns, 10, 2n)), { instanceOf: WitnessError });
  // The constant wire must be 1.
  const constant = await t.throwsAsync(prover.prove(wtnsWithValue(wtns, 0, 2n)), {
    instanceOf: NativeProverError,
    message: /constant 1/,
  });
  t.like(constant, { code: 'witness_mismatch', section: 'values', index: 0 });
  // Values must be canonical field elements: the error names the value.
  const modulus = await t.throwsAsync(prover.prove(wtnsWithValue(wtns, 3, R)), {
    instanceOf: NativeProverError,
    message: /not below the field modulus/,
  });
  t.like(modulus, { code: 'wtns_invalid', section: 'values', index: 3 });
});

test('a witness of another circuit is rejected with a clear error', async (t) => {
  const { zkey } = await devZkey(small);
  const prover = await loadProver(zkey);
  const other = await witness(tiny, { a: 2, b: 3 });
  const error = await t.throwsAsync(prover.prove(other), {
    instanceOf: NativeProverError,
    message: /witness has 4 values but the circuit key expects \d+/,
  });
  t.is(error.code, 'witness_mismatch');
});

test('truncated, corrupt or foreign wtns bytes are rejected with clear errors', async (t) => {
  const { zkey } = await devZkey(small);
  const prover = await loadProver(zkey);
  const wtns = await witness(small, smallInputs(11, 2, 3));
  await t.throwsAsync(prover.prove(wtns.subarray(0, wtns.length - 1)), { message: /wtns/ });
  await t.throwsAsync(prover.prove(wtns.subarray(0, 10)), { message: /wtns/ });
  await t.throwsAsync(prover.prove(new Uint8Array(0)), { message: /wtns/ });
  const badMagic = new Uint8Array(wtns);
  badMagic[0] = 0x78;
  t.like(await t.throwsAsync(prover.prove(badMagic), { message: /bad magic/ }), {
    code: 'wtns_invalid',
    section: 'magic',
  });
  const badPrime = new Uint8Array(wtns);
  badPrime[30] ^= 1; // inside the prime of the header
  await t.throwsAsync(prover.prove(badPrime), { message: /prime/ });
  await t.throwsAsync(prover.prove('not bytes' as unknown as Uint8Array), { instanceOf: TypeError });
  // The prover still works afterwards.
  const ok = await prover.prove(wtns);
  t.true(await verify(await prover.verificationKey(), ok.proof, ok.publicSignals));
});

test('truncated, corrupt or foreign zkey bytes are rejected with clear errors', async (t) => {
  const { zkey } = await devZkey(small);
  const bytes = new Uint8Array(await readFile(zkey));
  await t.throwsAsync(loadProver(bytes.subarray(0, bytes.length - 100)), {
    message: /zkey.*truncated|truncated/,
  });
  await t.throwsAsync(loadProver(bytes.subarray(0, 8)), { message: /zkey/ });
  const corrupt = new Uint8Array(bytes);
  // Flip a byte inside the last point of the file's B2 section (the file ends with section 10).
  const view = new DataView(corrupt.buffer);
  let pos = 12;
  let b2 = -1;
  while (pos < corrupt.length) {
    const id = view.getUint32(pos, true);
    const size = Number(view.getBigUint64(pos + 4, true));
    if (id === 7) b2 = pos + 12 + size - 128;
    pos += 12 + size;
  }
  corrupt[b2 + 5] ^= 0x40;
  const bad = await t.throwsAsync(loadProver(corrupt), {
    instanceOf: NativeProverError,
    message: /not on the curve|out of range/,
  });
  // The error names the section and the point: the last one of B2.
  const { nVars } = await loadProver(bytes);
  t.like(bad, { code: 'zkey_invalid', section: 'B2', index: nVars - 1 });
  const wtns = await witness(small, smallInputs(1, 1, 1));
  t.like(await t.throwsAsync(loadProver(wtns), { message: /bad magic/ }), { code: 'zkey_invalid' });
  t.like(await t.throwsAsync(loadProver('/nonexistent/key.zkey'), { message: /cannot read zkey/ }), {
    code: 'file_unreadable',
  });
});

test('verify answers false, never throws, for malformed proofs, signals and keys', async (t) => {
  const { zkey } = await devZkey(tiny);
  const prover = await loadProver(zkey);
  const { proof, publicSignals } = await prover.prove(await witness(tiny, { a: 3, b: 4 }));
  const vk = await prover.verificationKey();
  t.true(await verify(vk, proof, publicSignals));
  t.false(await verify(vk, proof, ['12'])); // wrong count
  t.false(await verify(vk, proof, ['12', R.toString()])); // not below r
  t.false(await verify(vk, proof, ['12', '-3']));
  t.false(await verify(vk, proof, [12, 3] as unknown as string[]));
  t.false(await verify(vk, { ...proof, pi_a: ['1', '2', '1'] }, publicSignals)); // on the curve, wrong point
  t.false(await verify(vk, { ...proof, pi_a: ['1', '3', '1'] }, publicSignals)); // not on the curve
  t.false(await verify(vk, { ...proof, pi_c: [proof.pi_c[0]] }, publicSignals));
  t.false(
    await verify(
      vk,
      {
        ...proof,
        pi_b: [
          ['x', '1'],
          ['1', '1'],
        ],
      },
      publicSignals,
    ),
  );
  t.false(await verify({ ...vk, IC: vk.IC.slice(1) }, proof, publicSignals));
  t.false(
    await verify(
      {
        ...vk,
        vk_gamma_2: [
          ['1', '2'],
          ['3', '4'],
          ['1', '0'],
        ],
      },
      proof,
      publicSignals,
    ),
  );
  t.false(await verify(null as unknown as VerificationKey, proof, publicSignals));
  t.true(await verify(vk, proof, publicSignals), 'still works afterwards');
});
