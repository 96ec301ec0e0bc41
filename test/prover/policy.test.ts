// The main circuit: `npm run build` produces policy_tx_2_2's r1cs, wasm and (through devSetup) its
// development zkey and verification_key.json. Native proofs of a real transfer verify with snarkjs.
import test from 'ava';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as snarkjs from 'snarkjs';
import { buildTransactionInputs, circuitArtifacts, loadWitnessCalculator } from '../../src/circuit/index.ts';
import { loadProver, releaseVerifier, verify, type VerificationKey } from '../../src/prover/index.ts';
import { Scenario } from '../circuit/scenario.ts';
import { readJson, useSingleThreadSnarkjsCurve } from './helpers.ts';

const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const ALICE = 0xa11ce5n;
const BOB = 0xb0b5n;

test.before(async () => {
  await useSingleThreadSnarkjsCurve();
});
test.after.always(async () => {
  await releaseVerifier();
});

async function transferWitness(): Promise<Uint8Array> {
  const art = circuitArtifacts('policy_tx_2_2');
  const s = new Scenario();
  s.allow(ALICE);
  s.allow(BOB);
  const a = s.addNote(ALICE, 30n);
  const b = s.addNote(ALICE, 12n);
  const prepared = buildTransactionInputs(
    s.transaction([a, b], [s.output(40n, BOB), s.output(2n, ALICE)], 0n),
  );
  const calc = await loadWitnessCalculator(art.wasm);
  return calc.calculateWtns(prepared.inputs);
}

test('policy_tx_2_2: a native proof of a transfer verifies with snarkjs and fails with any public signal changed', async (t) => {
  const art = circuitArtifacts('policy_tx_2_2');
  const vkey = await readJson<VerificationKey>(art.vkey);
  t.is(vkey.nPublic, 11);
  const wtns = await transferWitness();

  const prover = await loadProver(art.zkey);
  t.is(prover.domainSize, 32768);
  const [first, second] = await Promise.all([prover.prove(wtns), prover.prove(wtns)]);
  for (const { proof, publicSignals } of [first, second]) {
    t.is(publicSignals.length, 11);
    t.true(await snarkjs.groth16.verify(vkey, publicSignals, proof));
  }
  for (let i = 0; i < 11; i++) {
    const changed = [...first.publicSignals];
    changed[i] = ((BigInt(changed[i]) + 1n) % R).toString();
    t.false(await verify(vkey, first.proof, changed), `public signal ${i} changed`);
  }
});

// CI machines have AVX-512 IFMA, so the test above runs the vector MSM path; this one runs the scalar
// path every other CPU takes, in a child process started with ZKPROVER_NO_AVX512=1.
test('policy_tx_2_2: the scalar MSM path (no AVX-512) proves the same transfer validly', async (t) => {
  const art = circuitArtifacts('policy_tx_2_2');
  const vkey = await readJson<VerificationKey>(art.vkey);
  const dir = await mkdtemp(path.join(os.tmpdir(), 'policy-scalar-'));
  const wtnsPath = path.join(dir, 'transfer.wtns');
  await writeFile(wtnsPath, await transferWitness());
  const script = path.join(dir, 'prove.mts');
  await writeFile(
    script,
    `import { readFile } from 'node:fs/promises';
    import { addon } from ${JSON.stringify(new URL('../../src/prover/native-addon.ts', import.meta.url).href)};
    import { loadProver } from ${JSON.stringify(new URL('../../src/prover/index.ts', import.meta.url).href)};
    const prover = await loadProver(process.argv[2]);
    const out = await prover.prove(await readFile(process.argv[3]));
    console.log(JSON.stringify({ avx512: addon.testOps.avx512, proof: out.proof, publicSignals: out.publicSignals }));
    process.exit(0);`,
  );
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import=tsx', script, art.zkey, wtnsPath],
    {
      env: { ...process.env, ZKPROVER_NO_AVX512: '1' },
    },
  );
  await rm(dir, { recursive: true, force: true });
  const child = JSON.parse(stdout.trim().split('\n').pop() as string);
  t.false(child.avx512, 'the child ran the scalar path');
  t.is(child.publicSignals.length, 11);
  t.true(await snarkjs.groth16.verify(vkey, child.publicSignals, child.proof));
});
