// Test helpers: compile the test circuits with circom2, compute witnesses with the circom wasm, and
// produce keys (snarkjs ceremony or our devSetup). Outputs are cached under build/test-circuits/ and
// written through a temporary name + rename, so concurrently running test files never see half files.
import { execFile } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { link, mkdir, rename, rm, readFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as snarkjs from 'snarkjs';
import { buildBn128, getCurveFromName } from 'ffjavascript';
import { loadWitnessCalculator, type CircuitInputs } from '../../src/circuit/witness-calculator.ts';
import { devSetup } from '../../src/prover/index.ts';

const run = promisify(execFile);
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
export const OUT = path.join(ROOT, 'build', 'test-circuits');

export interface CompiledCircuit {
  name: string;
  dir: string;
  r1cs: string;
  wasm: string;
}

function fresh(target: string, source: string): boolean {
  return existsSync(target) && statSync(target).mtimeMs >= statSync(source).mtimeMs;
}

const tmpName = (p: string) => `${p}.tmp-${process.pid}-${Math.random().toString(36).slice(2)}`;

export async function compileCircuit(name: string): Promise<CompiledCircuit> {
  const source = path.join(ROOT, 'test', 'prover', 'circuits', `${name}.circom`);
  const dir = path.join(OUT, name);
  const result = {
    name,
    dir,
    r1cs: path.join(dir, `${name}.r1cs`),
    wasm: path.join(dir, `${name}_js`, `${name}.wasm`),
  };
  if (fresh(result.r1cs, source) && existsSync(result.wasm)) return result;
  await clearStale(dir);
  const tmp = tmpName(dir);
  await mkdir(tmp, { recursive: true });
  await run(
    path.join(ROOT, 'node_modules', '.bin', 'circom2'),
    [source, '--r1cs', '--wasm', '--sym', '--O2', '-o', tmp],
    {
      maxBuffer: 1 << 26,
    },
  );
  await publishDir(tmp, dir);
  return result;
}

/**
 * Removes an outdated output directory before it is made again. It is first renamed aside in one step,
 * so a process that checked it meanwhile never sees half of it.
 */
async function clearStale(dir: string): Promise<void> {
  const aside = tmpName(`${dir}.stale`);
  try {
    await rename(dir, aside);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  await rm(aside, { recursive: true, force: true });
}

/**
 * Moves a finished directory into place unless another test process published one first: a rename onto
 * a directory with content fails, and the one already there stays. Replacing it would delete files that
 * other processes made inside it meanwhile (keys) and are reading.
 */
async function publishDir(tmp: string, dir: string): Promise<void> {
  try {
    await rename(tmp, dir);
  } catch (err) {
    await rm(tmp, { recursive: true, force: true });
    const code = (err as NodeJS.ErrnoException).code;
    if (code !== 'ENOTEMPTY' && code !== 'EEXIST') throw err;
  }
}

export async function witness(circuit: CompiledCircuit, inputs: CircuitInputs): Promise<Uint8Array> {
  const calc = await loadWitnessCalculator(circuit.wasm);
  return calc.calculateWtns(inputs);
}

let ceremonyQueue: Promise<unknown> = Promise.resolve();

/**
 * Powers of tau for the test ceremonies: 2^6 covers the test circuits (small, tiny), and each step up
 * doubles the ceremony's cost (2^8 took ~3.5x the CPU of 2^6).
 */
export const CEREMONY_POWER = 6;

/** The final powers-of-tau file of a test ceremony of 2^power. */
export const ceremonyPtau = (power: number = CEREMONY_POWER) => path.join(OUT, `pot${power}_final.ptau`);

/**
 * A zkey from snarkjs's own ceremony (powers of tau + phase 2 with one contribution and a beacon).
 * Ceremonies run one at a time; they use snarkjs's shared curve, which the test file releases at the
 * end with releaseVerifier() (terminating it here would break other tests still verifying with it).
 */
export function ceremonyZkey(circuit: CompiledCircuit, power: number = CEREMONY_POWER): Promise<string> {
  const next = ceremonyQueue.then(() => makeCeremonyZkey(circuit, power));
  ceremonyQueue = next.catch(() => undefined);
  return next;
}

async function makeCeremonyZkey(circuit: CompiledCircuit, power: number): Promise<string> {
  const zkey = path.join(circuit.dir, `${circuit.name}_ceremony_p${power}.zkey`);
  if (fresh(zkey, circuit.r1cs)) return zkey;
  // A key older than its circuit goes (one another process published meanwhile is fresh and stays).
  if (existsSync(zkey) && !fresh(zkey, circuit.r1cs)) await rm(zkey, { force: true });
  const curve = await getCurveFromName('bn128');
  const ptauFinal = ceremonyPtau(power);
  {
    if (!existsSync(ptauFinal)) {
      const p0 = tmpName(path.join(OUT, `pot${power}_0.ptau`));
      const p1 = tmpName(path.join(OUT, `pot${power}_1.ptau`));
      const pf = tmpName(ptauFinal);
      await snarkjs.powersOfTau.newAccumulator(curve, power, p0);
      await snarkjs.powersOfTau.contribute(p0, p1, 'test contribution', 'test entropy 1');
      await snarkjs.powersOfTau.preparePhase2(p1, pf);
      await publishOnce(pf, ptauFinal);
      await rm(p0, { force: true });
      await rm(p1, { force: true });
    }
    const z0 = tmpName(zkey);
    const z1 = tmpName(zkey);
    const zf = tmpName(zkey);
    await snarkjs.zKey.newZKey(circuit.r1cs, ptauFinal, z0);
    await snarkjs.zKey.contribute(z0, z1, 'test phase2', 'test entropy 2');
    await snarkjs.zKey.beacon(
      z1,
      zf,
      'final beacon',
      '0102030405060708090a0b0c0d0e0f101112131415161718191a1b1c1d1e1f',
      10,
    );
    await publishOnce(zf, zkey);
    await rm(z0, { force: true });
    await rm(z1, { force: true });
  }
  return zkey;
}

/**
 * Moves a finished file into place unless another test process got there first. Ceremonies draw fresh
 * randomness, so two processes make different files: the first one published stays, and a test that read
 * the path never sees its bytes change under it.
 */
async function publishOnce(tmp: string, final: string): Promise<void> {
  try {
    await link(tmp, final);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
  } finally {
    await rm(tmp, { force: true });
  }
}

const devKeys = new Map<string, Promise<{ zkey: string; vkey: string }>>();

/**
 * A development zkey + verification key made by our devSetup. The pair is written into a temporary
 * directory renamed into place in one step, so concurrent test processes never mix the zkey of one run
 * with the verification key of another.
 */
export function devZkey(circuit: CompiledCircuit): Promise<{ zkey: string; vkey: string }> {
  let p = devKeys.get(circuit.r1cs);
  if (!p) {
    p = makeDevZkey(circuit);
    devKeys.set(circuit.r1cs, p);
  }
  return p;
}

async function makeDevZkey(circuit: CompiledCircuit): Promise<{ zkey: string; vkey: string }> {
  const dir = path.join(circuit.dir, 'dev-key');
  const result = {
    zkey: path.join(dir, `${circuit.name}.zkey`),
    vkey: path.join(dir, 'verification_key.json'),
  };
  if (fresh(result.zkey, circuit.r1cs) && existsSync(result.vkey)) return result;
  await clearStale(dir);
  const tmp = tmpName(dir);
  await devSetup(
    circuit.r1cs,
    path.join(tmp, `${circuit.name}.zkey`),
    path.join(tmp, 'verification_key.json'),
  );
  await publishDir(tmp, dir);
  return result;
}

export async function readJson<T>(file: string): Promise<T> {
  return JSON.parse(await readFile(file, 'utf8')) as T;
}

/**
 * Makes snarkjs's helpers (groth16.verify, ...) in this process use a single-threaded bn128 curve.
 * snarkjs takes ffjavascript's process-wide curve, built with worker threads by default; after a short
 * verification those threads' message ports can stay referenced even once the curve is terminated,
 * which kept a test process alive after its tests passed. A curve without workers has nothing to leak;
 * releaseVerifier() still clears it at the end.
 */
export async function useSingleThreadSnarkjsCurve(): Promise<void> {
  const g = globalThis as { curve_bn128?: unknown };
  if (!g.curve_bn128) g.curve_bn128 = await buildBn128(true);
}
