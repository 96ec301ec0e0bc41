// Compiles a test-only circom file into build/test-circuits/<name>/ once per source change.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));

export function compileTestCircuit(name: string): { wasm: string; r1cs: string } {
  const source = join(root, 'test/circuit/circuits', `${name}.circom`);
  const out = join(root, 'build/test-circuits', name);
  const hash = createHash('sha256')
    .update(readFileSync(source))
    .update(readFileSync(join(root, 'circuits/lib/poseidon2.circom')))
    .update(readFileSync(join(root, 'circuits/lib/poseidon2_constants.circom')))
    .digest('hex');
  const stamp = join(out, '.source-hash');
  const wasm = join(out, `${name}_js`, `${name}.wasm`);
  if (!existsSync(stamp) || readFileSync(stamp, 'utf8') !== hash || !existsSync(wasm)) {
    mkdirSync(out, { recursive: true });
    execFileSync(join(root, 'node_modules/.bin/circom2'), [source, '--r1cs', '--wasm', '--O2', '-o', out], {
      stdio: 'pipe',
    });
    writeFileSync(stamp, hash);
  }
  return { wasm, r1cs: join(out, `${name}.r1cs`) };
}
