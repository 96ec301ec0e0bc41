// Finds the circuits under the daemon's circuits folder and describes each one. A circuit is served by
// dropping its folder in, laid out as circom and the setup leave it:
//   <dir>/<id>/<id>.r1cs, <dir>/<id>/<id>_js/<id>.wasm, <dir>/<id>/<id>.zkey, <dir>/<id>/verification_key.json
import { createHash } from 'node:crypto';
import { createReadStream } from 'node:fs';
import { access, readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { readR1csHeader } from '../../circuit/r1cs.ts';
import { BN254_R, readZkeyHeader } from './binfile.ts';

export interface CircuitFiles {
  id: string;
  r1cs: string;
  wasm: string;
  zkey: string;
  verificationKey: string;
}

export interface CircuitDescription {
  id: string;
  files: CircuitFiles;
  constraints: number;
  wires: number;
  /** Public outputs + public inputs: the number of public signals a proof carries. */
  publicSignals: number;
  /**
   * SHA-256 of the zkey file (hex). Hashing a large key costs more than loading it (~75 ms for the
   * 37 MiB policy key), so it runs in the background from the moment the circuit is described and
   * ListCircuits waits for it.
   */
  zkeySha256: Promise<string>;
  developmentKey: boolean;
  /** snarkjs verification key JSON. */
  verificationKey: Record<string, unknown>;
}

/** Circuit ids are folder names; keeping them to a safe alphabet keeps them out of path tricks and metric labels. */
export const CIRCUIT_ID = /^[A-Za-z0-9][A-Za-z0-9_.-]{0,63}$/;

async function exists(path: string): Promise<boolean> {
  try {
    await access(path);
    return true;
  } catch {
    return false;
  }
}

export function circuitFiles(dir: string, id: string): CircuitFiles {
  return {
    id,
    r1cs: join(dir, id, `${id}.r1cs`),
    wasm: join(dir, id, `${id}_js`, `${id}.wasm`),
    zkey: join(dir, id, `${id}.zkey`),
    verificationKey: join(dir, id, 'verification_key.json'),
  };
}

/** Every complete circuit folder under `dir`; folders missing a file are reported in `skipped`. */
export async function discoverCircuits(
  dir: string,
): Promise<{ circuits: CircuitFiles[]; skipped: { id: string; missing: string[] }[] }> {
  const entries = await readdir(dir, { withFileTypes: true });
  const circuits: CircuitFiles[] = [];
  const skipped: { id: string; missing: string[] }[] = [];
  for (const entry of entries.sort((a, b) => a.name.localeCompare(b.name))) {
    if (!entry.isDirectory() || !CIRCUIT_ID.test(entry.name)) continue;
    const files = circuitFiles(dir, entry.name);
    const missing: string[] = [];
    for (const path of [files.r1cs, files.wasm, files.zkey, files.verificationKey]) {
      if (!(await exists(path))) missing.push(path);
    }
    if (missing.length === 0) circuits.push(files);
    else skipped.push({ id: entry.name, missing });
  }
  return { circuits, skipped };
}

async function sha256File(path: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(path)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/**
 * The native prover's fast development setup (native/src/setup.cpp) names its zkey contribution
 * "DEVELOPMENT KEY: local toxic waste, NOT FOR PRODUCTION"; this prefix finds it without loading the addon.
 * A key with no phase-2 contribution at all never went through a ceremony either.
 */
const DEV_KEY_MARKER = Buffer.from('DEVELOPMENT KEY', 'latin1');

export async function describeCircuit(files: CircuitFiles): Promise<CircuitDescription> {
  const r1cs = await readR1csHeader(files.r1cs);
  const zkey = await readZkeyHeader(files.zkey);
  if (r1cs.prime !== BN254_R || zkey.prime !== BN254_R) throw new Error(`${files.id}: not a BN254 circuit`);
  const publicSignals = r1cs.nPublicOutputs + r1cs.nPublicInputs;
  if (zkey.nPublic !== publicSignals || zkey.nVars !== r1cs.nWires) {
    throw new Error(
      `${files.id}: zkey (${zkey.nVars} vars, ${zkey.nPublic} public) does not match r1cs (${r1cs.nWires} wires, ${publicSignals} public)`,
    );
  }
  const verificationKey = JSON.parse(await readFile(files.verificationKey, 'utf8')) as Record<
    string,
    unknown
  >;
  if (verificationKey.protocol !== 'groth16' || verificationKey.nPublic !== publicSignals) {
    throw new Error(
      `${files.id}: verification_key.json is not a groth16 key for ${publicSignals} public signals`,
    );
  }
  const developmentKey = zkey.contributions === 0 || zkey.contributionSection.includes(DEV_KEY_MARKER);
  const zkeySha256 = sha256File(files.zkey);
  zkeySha256.catch(() => undefined); // reported by ListCircuits, never as an unhandled rejection
  return {
    id: files.id,
    files,
    constraints: r1cs.nConstraints,
    wires: r1cs.nWires,
    publicSignals,
    zkeySha256,
    developmentKey,
    verificationKey,
  };
}
