// `npm run build`: compiles the service's TypeScript (src/ → dist/, bin/compile.js, when the sources changed),
// then compiles every circuit under circuits/ whose sources changed, then makes development
// proving keys for circuits that have none (or whose r1cs is newer), compiles the pool's Soroban contracts
// (contracts/, Rust → build/contracts/*.wasm) and the Soroban host addon the sandbox runs them on
// (soroban-host/ → build/soroban-host/), each only when its sources changed, and bundles the wallet page
// (web/ → build/web/). The native prover addon is built by npm install.

import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { circuitArtifacts, DEFAULT_CIRCUITS_DIR } from '../src/circuit/policy-circuit.ts';
import { buildContracts } from './build-contracts.ts';
import { buildSorobanHost } from './build-soroban-host.ts';
import { buildWeb } from './build-web.ts';
import { POSEIDON2_CONSTANTS_PATH, poseidon2ConstantsCircom } from './gen-poseidon2-circom.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const circuitsSrc = join(root, 'circuits');

function circomFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? circomFiles(join(dir, e.name)) : e.name.endsWith('.circom') ? [join(dir, e.name)] : [],
  );
}

function sourceHash(): string {
  const h = createHash('sha256');
  const circomVersion = JSON.parse(
    readFileSync(join(root, 'node_modules/circom2/package.json'), 'utf8'),
  ).version;
  h.update(`circom2@${circomVersion} --O2\n`);
  for (const f of circomFiles(circuitsSrc).sort()) h.update(relative(root, f)).update(readFileSync(f));
  return h.digest('hex');
}

function ensureConstants(): void {
  const want = poseidon2ConstantsCircom();
  if (!existsSync(POSEIDON2_CONSTANTS_PATH) || readFileSync(POSEIDON2_CONSTANTS_PATH, 'utf8') !== want) {
    writeFileSync(POSEIDON2_CONSTANTS_PATH, want);
    console.log('build: regenerated circuits/lib/poseidon2_constants.circom');
  }
}

function compileCircuit(id: string, hash: string): void {
  const art = circuitArtifacts(id, DEFAULT_CIRCUITS_DIR);
  const stamp = join(art.dir, '.source-hash');
  if (
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8') === hash &&
    existsSync(art.r1cs) &&
    existsSync(art.wasm)
  ) {
    console.log(`build: ${id} is up to date`);
    return;
  }
  mkdirSync(art.dir, { recursive: true });
  console.log(`build: compiling ${id} with circom (a few minutes on a small machine)…`);
  const started = Date.now();
  const circom = join(root, 'node_modules/.bin/circom2');
  const out = execFileSync(
    circom,
    [join(circuitsSrc, `${id}.circom`), '--r1cs', '--wasm', '--sym', '--O2', '-o', art.dir],
    {
      cwd: circuitsSrc,
      encoding: 'utf8',
    },
  );
  const constraints = /non-linear constraints: (\d+)/.exec(out)?.[1];
  writeFileSync(stamp, hash);
  console.log(
    `build: compiled ${id} (${constraints} constraints) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

async function ensureKeys(id: string): Promise<void> {
  const art = circuitArtifacts(id, DEFAULT_CIRCUITS_DIR);
  const fresh =
    existsSync(art.zkey) && existsSync(art.vkey) && statSync(art.zkey).mtimeMs >= statSync(art.r1cs).mtimeMs;
  if (fresh) return;
  // Until the native prover exists there is nothing to make keys with; once it does, a failure must surface.
  const proverModule = join(root, 'src/prover/index.ts');
  const prover = existsSync(proverModule) ? await import(proverModule) : undefined;
  if (!prover?.devSetup) {
    console.log(`build: no native prover yet, so no development key for ${id}`);
    return;
  }
  console.log(`build: making a DEVELOPMENT proving key for ${id} (about a minute)…`);
  const started = Date.now();
  await prover.devSetup(art.r1cs, art.zkey, art.vkey);
  console.log(
    `build: DEVELOPMENT key for ${id} (not from a ceremony) in ${((Date.now() - started) / 1000).toFixed(1)} s`,
  );
}

execFileSync(process.execPath, [join(root, 'bin', 'compile.js')], { stdio: 'inherit' });
ensureConstants();
const hash = sourceHash();
const mains = readdirSync(circuitsSrc)
  .filter((f) => f.endsWith('.circom'))
  .map((f) => f.slice(0, -'.circom'.length));
for (const id of mains) compileCircuit(id, hash);
for (const id of mains) await ensureKeys(id);
try {
  buildContracts();
  buildSorobanHost();
} catch (e) {
  console.error((e as Error).message);
  process.exit(1);
}
await buildWeb();
console.log('build: wallet page → build/web/');
// snarkjs (used to export verification keys) leaves worker threads running; the build is done, so leave.
process.exit(0);
