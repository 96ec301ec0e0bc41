// TypeScript face of the native Groth16 prover: load a zkey once, prove from .wtns bytes off the event
// loop, verify (snarkjs semantics, native pairing), and create development keys. The addon checks every
// proof against the key's own verification key before returning it, so a witness that does not satisfy
// the circuit yields a WitnessError (code witness_unsatisfied), never a proof presented as valid. Other
// failures are NativeProverErrors, told apart by their code (native-error.ts).
import { readFile, writeFile, mkdir } from 'node:fs/promises';
import path from 'node:path';
import { witnessUnsatisfied } from '../circuit/witness-error.ts';
import { proofToBytes, type SnarkjsProof } from '../crypto/proof-bytes.ts';
import { addon, type PreparedStatus } from './native-addon.ts';
import { nativeError, NativeProverError } from './native-error.ts';
import {
  type VerificationKey,
  verificationKeyFromPoints,
  verificationKeyFromZkey,
  verifyProof,
} from './verifier.ts';

export type { VerificationKey } from './verifier.ts';
export type { PreparedStatus } from './native-addon.ts';
export { NativeProverError, type NativeErrorCode } from './native-error.ts';

export type Groth16Proof = SnarkjsProof & { protocol: 'groth16'; curve: 'bn128' };

export interface ProveResult {
  proof: Groth16Proof;
  publicSignals: string[];
  /** On-chain layout A(64) ‖ B(128) ‖ C(64). */
  bytes: Uint8Array;
}

export interface Prover {
  readonly nVars: number;
  readonly nPublic: number;
  readonly domainSize: number;
  /** How the key was loaded (see PreparedStatus): "reused" when a path's prepared file matched it. */
  readonly prepared: PreparedStatus;
  /** Bytes of working memory kept for this key's proofs (pre-faulted at load, reused by every proof). */
  readonly workingMemory: number;
  /** The key's snarkjs verification key (computed on first use: it needs one pairing). */
  verificationKey(): Promise<VerificationKey>;
  prove(wtns: Uint8Array): Promise<ProveResult>;
}

export const DEV_KEY_NAME: string = addon.devKeyName;

async function bytesOf(source: string | Uint8Array, what: string): Promise<Uint8Array> {
  if (typeof source === 'string') {
    try {
      return await readFile(source);
    } catch (err) {
      throw new Error(`cannot read ${what} ${source}: ${(err as Error).message}`);
    }
  }
  if (source instanceof Uint8Array) return source;
  throw new TypeError(`${what} must be a file path or a Uint8Array`);
}

function toSnarkjsProof(p: { a: string[]; b: string[][]; c: string[] }): Groth16Proof {
  return {
    pi_a: [p.a[0], p.a[1], '1'],
    pi_b: [
      [p.b[0][0], p.b[0][1]],
      [p.b[1][0], p.b[1][1]],
      ['1', '0'],
    ],
    pi_c: [p.c[0], p.c[1], '1'],
    protocol: 'groth16',
    curve: 'bn128',
  };
}

export async function exportVerificationKey(zkey: string | Uint8Array): Promise<VerificationKey> {
  return verificationKeyFromZkey(await bytesOf(zkey, 'zkey'));
}

/**
 * Loads a proving key. A path is mapped and used in place: the first load validates it in full and writes
 * a prepared file beside it (`<path>.prep`), later loads of the unchanged file only check that file's
 * header (a few ms); any change to the key (content, replacement, even a touch) makes it validated again.
 * Replace a key file by writing a new one and renaming it over the old, never by rewriting it in place.
 * Bytes are validated in full on every call.
 */
export async function loadProver(zkey: string | Uint8Array): Promise<Prover> {
  if (typeof zkey !== 'string' && !(zkey instanceof Uint8Array))
    throw new TypeError('zkey must be a file path or a Uint8Array');
  let key: Awaited<ReturnType<typeof addon.loadKey>>;
  try {
    key = await addon.loadKey(zkey); // validates the whole key (or finds it validated), with clear errors
  } catch (err) {
    const error = nativeError(err);
    if (error.code === 'file_unreadable')
      throw new NativeProverError(error.code, `cannot read zkey ${String(zkey)}: ${error.message}`);
    throw error;
  }
  let vkey: Promise<VerificationKey> | undefined;
  return {
    nVars: key.nVars,
    nPublic: key.nPublic,
    domainSize: key.domainSize,
    prepared: key.prepared,
    workingMemory: key.workingMemory,
    verificationKey() {
      vkey ??= verificationKeyFromPoints(key.vk);
      return vkey;
    },
    async prove(wtns: Uint8Array): Promise<ProveResult> {
      if (!(wtns instanceof Uint8Array)) throw new TypeError('wtns must be a Uint8Array');
      let out: Awaited<ReturnType<typeof addon.prove>>;
      try {
        out = await addon.prove(key.handle, wtns); // includes the native pairing self-check
      } catch (err) {
        const error = nativeError(err);
        if (error.code === 'witness_unsatisfied') throw witnessUnsatisfied();
        throw error;
      }
      const proof = toSnarkjsProof(out);
      return { proof, publicSignals: out.publicSignals, bytes: proofToBytes(proof) };
    },
  };
}

/** Groth16 verification (snarkjs semantics); malformed proofs, keys or signals give false, not an error. */
export function verify(
  vkey: VerificationKey,
  proof: SnarkjsProof,
  publicSignals: string[],
): Promise<boolean> {
  return verifyProof(vkey, proof, publicSignals);
}

/**
 * Stops snarkjs's shared worker threads if this process started them (by calling snarkjs directly);
 * they keep Node alive. The prover itself never needs this: it verifies on a private single-threaded curve.
 */
export async function releaseVerifier(): Promise<void> {
  const g = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null };
  const curve = g.curve_bn128;
  if (curve) {
    g.curve_bn128 = null;
    await curve.terminate();
  }
}

/**
 * Development-only trusted setup: writes a snarkjs-compatible zkey from fresh random toxic waste that
 * is discarded, plus its verification_key.json. The key's contribution record is named DEV_KEY_NAME.
 */
export async function devSetup(r1csPath: string, zkeyOut: string, vkeyOut: string): Promise<void> {
  const r1cs = await bytesOf(r1csPath, 'r1cs');
  const zkey = await addon.devSetup(r1cs).catch((err: unknown) => {
    throw nativeError(err);
  });
  const vkey = await verificationKeyFromZkey(zkey);
  await mkdir(path.dirname(zkeyOut), { recursive: true });
  await mkdir(path.dirname(vkeyOut), { recursive: true });
  await writeFile(zkeyOut, zkey);
  await writeFile(vkeyOut, `${JSON.stringify(vkey, null, 1)}\n`);
}
