// `npm run lint:generated`: the committed generated files equal what their generators print now, so a
// generator changed without regenerating (or a generated file edited by hand) fails the lint.
//  * native/src/mont_mul_adx.inc from native/tools/gen_mont_asm.py (the ADX Montgomery multiply);
//  * circuits/lib/poseidon2_constants.circom from scripts/gen-poseidon2-circom.ts (also a test);
//  * contracts/common/src/constants.rs and test_vectors.rs from scripts/gen-contract-constants.ts (the Rust
//    contracts' Poseidon2 parameters, moduli and zero hashes, and their tests' known answers).
import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  CONTRACT_CONSTANTS_PATH,
  CONTRACT_TEST_VECTORS_PATH,
  contractConstantsRust,
  contractTestVectorsRust,
} from './gen-contract-constants.ts';
import { POSEIDON2_CONSTANTS_PATH, poseidon2ConstantsCircom } from './gen-poseidon2-circom.ts';

const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

const checks: { file: string; generator: string; generate: () => string }[] = [
  {
    file: path.join(ROOT, 'native', 'src', 'mont_mul_adx.inc'),
    generator: 'python3 native/tools/gen_mont_asm.py > native/src/mont_mul_adx.inc',
    generate: () =>
      execFileSync('python3', [path.join(ROOT, 'native', 'tools', 'gen_mont_asm.py')], { encoding: 'utf8' }),
  },
  {
    file: POSEIDON2_CONSTANTS_PATH,
    generator: 'npx tsx scripts/gen-poseidon2-circom.ts',
    generate: poseidon2ConstantsCircom,
  },
  {
    file: CONTRACT_CONSTANTS_PATH,
    generator: 'npx tsx scripts/gen-contract-constants.ts',
    generate: contractConstantsRust,
  },
  {
    file: CONTRACT_TEST_VECTORS_PATH,
    generator: 'npx tsx scripts/gen-contract-constants.ts',
    generate: contractTestVectorsRust,
  },
];

/** The first line where two texts differ (1-based), for the message. */
function firstDifference(a: string, b: string): number {
  const x = a.split('\n');
  const y = b.split('\n');
  for (let i = 0; i < Math.max(x.length, y.length); i++) if (x[i] !== y[i]) return i + 1;
  return 0;
}

let stale = 0;
for (const check of checks) {
  const committed = readFileSync(check.file, 'utf8');
  const generated = check.generate();
  const relative = path.relative(ROOT, check.file);
  if (committed === generated) {
    console.log(`generated file current: ${relative}`);
    continue;
  }
  stale++;
  console.error(
    `stale generated file: ${relative} differs from its generator's output from line ` +
      `${firstDifference(committed, generated)} on; regenerate it with \`${check.generator}\``,
  );
}
if (stale > 0) process.exit(1);
