// Builds the daemon's test circuits once and caches them under build/test-circuits/daemon/, laid out as
// the daemon expects (<id>/<id>.r1cs, <id>/<id>_js/<id>.wasm, <id>/<id>.zkey, <id>/verification_key.json).
// Keys come from a real snarkjs ceremony over a 2^8 powers of tau: power_chain_8 gets one phase-2
// contribution (a "ceremony" key), power_chain_64 none (a development key). Test files run in parallel
// processes, so the build holds a directory lock and publishes with a rename.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, readFile, rename, rm, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import * as snarkjs from 'snarkjs';

const run = promisify(execFile);
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../../..');
const SOURCES = path.join(ROOT, 'test', 'daemon', 'circuits');
const OUT = path.join(ROOT, 'build', 'test-circuits');
/** The circuits folder handed to test daemons. */
export const TEST_CIRCUITS_DIR = path.join(OUT, 'daemon');
const LOCK = path.join(OUT, 'daemon.lock');
const STAMP = path.join(TEST_CIRCUITS_DIR, '.sources-sha256');
const PTAU_POWER = 8;

export const TEST_CIRCUITS = [
  { id: 'power_chain_8', squarings: 8, contributions: 1 },
  { id: 'power_chain_64', squarings: 64, contributions: 0 },
] as const;

export const FIELD = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

/** Inputs of a PowerChain(n) test circuit; `work` spins the witness calculator for that many steps. */
export function chainInputs(squarings: number, x: bigint, options: { work?: number; wrong?: boolean } = {}) {
  let expected = x;
  for (let i = 0; i < squarings; i++) expected = (expected * expected) % FIELD;
  if (options.wrong) expected = (expected + 1n) % FIELD;
  return { x, salt: [3n, 5n], expected, work: BigInt(options.work ?? 0) };
}

async function sourcesHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const file of ['power_chain.circom', ...TEST_CIRCUITS.map((c) => `${c.id}.circom`)]) {
    hash.update(file).update(await readFile(path.join(SOURCES, file)));
  }
  hash.update(`ptau ${PTAU_POWER}`);
  return hash.digest('hex');
}

async function isCurrent(hash: string): Promise<boolean> {
  return existsSync(STAMP) && (await readFile(STAMP, 'utf8')) === hash;
}

async function withLock<T>(work: () => Promise<T>): Promise<T> {
  await mkdir(OUT, { recursive: true });
  for (;;) {
    try {
      await mkdir(LOCK);
      break;
    } catch {
      // A lock left by a killed process is stale after 15 minutes (a full build takes well under that).
      const age = await stat(LOCK).then(
        (s) => Date.now() - s.mtimeMs,
        () => 0,
      );
      if (age > 15 * 60_000) await rm(LOCK, { recursive: true, force: true });
      await sleep(250);
    }
  }
  try {
    return await work();
  } finally {
    await rm(LOCK, { recursive: true, force: true });
  }
}

async function build(hash: string): Promise<void> {
  const staging = `${TEST_CIRCUITS_DIR}.tmp-${process.pid}`;
  await rm(staging, { recursive: true, force: true });
  await mkdir(staging, { recursive: true });
  const ptau0 = path.join(staging, 'pot0.ptau');
  const ptau1 = path.join(staging, 'pot1.ptau');
  const ptau = path.join(staging, 'pot_final.ptau');
  await snarkjs.powersOfTau.newAccumulator(await curve(), PTAU_POWER, ptau0);
  await snarkjs.powersOfTau.contribute(ptau0, ptau1, 'daemon test ptau', `entropy ${Math.random()}`);
  await snarkjs.powersOfTau.preparePhase2(ptau1, ptau);
  for (const circuit of TEST_CIRCUITS) {
    const dir = path.join(staging, circuit.id);
    await mkdir(dir, { recursive: true });
    await run(
      path.join(ROOT, 'node_modules', '.bin', 'circom2'),
      [path.join(SOURCES, `${circuit.id}.circom`), '--r1cs', '--wasm', '--sym', '--O2', '-o', dir],
      { maxBuffer: 1 << 26 },
    );
    const zkey = path.join(dir, `${circuit.id}.zkey`);
    if (circuit.contributions === 0) {
      await snarkjs.zKey.newZKey(path.join(dir, `${circuit.id}.r1cs`), ptau, zkey);
    } else {
      const initial = path.join(dir, 'initial.zkey');
      await snarkjs.zKey.newZKey(path.join(dir, `${circuit.id}.r1cs`), ptau, initial);
      await snarkjs.zKey.contribute(initial, zkey, 'daemon test phase 2', `entropy ${Math.random()}`);
      await rm(initial);
    }
    const vkey = await snarkjs.zKey.exportVerificationKey(zkey);
    await writeFile(path.join(dir, 'verification_key.json'), JSON.stringify(vkey, null, 1));
  }
  // The ptau is not a circuit; keep the published folder to circuit folders only.
  for (const file of [ptau0, ptau1, ptau]) await rm(file);
  await writeFile(path.join(staging, '.sources-sha256'), hash);
  await rm(TEST_CIRCUITS_DIR, { recursive: true, force: true });
  await rename(staging, TEST_CIRCUITS_DIR);
}

// ffjavascript ships no types; the specifier is widened to string so the import is typed `any`.
const FFJAVASCRIPT: string = 'ffjavascript';

async function curve(): Promise<unknown> {
  const { getCurveFromName } = await import(FFJAVASCRIPT);
  return getCurveFromName('bn128');
}

/** Ensures the test circuits are built; returns the circuits folder for a daemon. */
export async function ensureTestCircuits(): Promise<string> {
  const hash = await sourcesHash();
  if (await isCurrent(hash)) return TEST_CIRCUITS_DIR;
  await withLock(async () => {
    if (!(await isCurrent(hash))) await build(hash);
  });
  return TEST_CIRCUITS_DIR;
}

/** Stops snarkjs's worker threads so the test process can exit. */
export async function releaseCurve(): Promise<void> {
  const holder = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null };
  const found = holder.curve_bn128;
  if (found) {
    holder.curve_bn128 = null;
    await found.terminate();
  }
}
