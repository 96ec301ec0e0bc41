// The main circuit: `npm run build` produces policy_tx_2_2's r1cs, wasm and (through devSetup) its
// development zkey and verification_key.json. Native proofs of a real transfer verify with snarkjs.
import test from 'ava';
import * as snarkjs from 'snarkjs';
import { buildTransactionInputs, circuitArtifacts, loadWitnessCalculator } from '../../src/circuit/index.ts';
import { loadProver, releaseVerifier, verify, type VerificationKey } from '../../src/prover/index.ts';
import { Scenario } from '../circuit/scenario.ts';
import { readJson } from './helpers.ts';

const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const ALICE = 0xa11ce5n;
const BOB = 0xb0b5n;

test.after.always(async () => {
  await releaseVerifier();
});

test('policy_tx_2_2: a native proof of a transfer verifies with snarkjs and fails with any public signal changed', async (t) => {
  const art = circuitArtifacts('policy_tx_2_2');
  const vkey = await readJson<VerificationKey>(art.vkey);
  t.is(vkey.nPublic, 11);
  const s = new Scenario();
  s.allow(ALICE);
  s.allow(BOB);
  const a = s.addNote(ALICE, 30n);
  const b = s.addNote(ALICE, 12n);
  const prepared = buildTransactionInputs(
    s.transaction([a, b], [s.output(40n, BOB), s.output(2n, ALICE)], 0n),
  );
  const calc = await loadWitnessCalculator(art.wasm);
  const wtns = await calc.calculateWtns(prepared.inputs);

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
