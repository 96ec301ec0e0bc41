// The policy_tx_2_2 witness every prover benchmark proves: a 2-in 2-out transfer of a test scenario (two
// allowed keys, notes of 30 and 12 to outputs of 40 and 2), as `.wtns` bytes.
import { buildTransactionInputs, circuitArtifacts, loadWitnessCalculator } from '../../src/circuit/index.ts';
import { Scenario } from '../../test/circuit/scenario.ts';

export async function policyWitness(): Promise<Uint8Array> {
  const s = new Scenario();
  s.allow(11n);
  s.allow(22n);
  const a = s.addNote(11n, 30n);
  const b = s.addNote(11n, 12n);
  const prepared = buildTransactionInputs(s.transaction([a, b], [s.output(40n, 22n), s.output(2n, 11n)], 0n));
  const calc = await loadWitnessCalculator(circuitArtifacts('policy_tx_2_2').wasm);
  return calc.calculateWtns(prepared.inputs);
}
