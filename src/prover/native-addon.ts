// Loads the compiled C++ addon (built by node-gyp at `npm install` from binding.gyp) and types it.
import { createRequire } from 'node:module';
import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import path from 'node:path';

export type G1Json = [string, string];
export type G2Json = [[string, string], [string, string]];

/**
 * How a key given by path was loaded: its prepared file matched and was used ("reused"), or the key was
 * validated in full and a prepared file written ("written") or not writable ("unsaved"); "none" for a
 * key given as bytes.
 */
export type PreparedStatus = 'reused' | 'written' | 'unsaved' | 'none';

export interface KeyInfo {
  handle: unknown;
  nVars: number;
  nPublic: number;
  domainSize: number;
  prepared: PreparedStatus;
  /** Bytes of working memory kept for the key's proofs (pre-faulted at load). */
  workingMemory: number;
  /** The verification key's points, as the key holds them (decimal, not Montgomery). */
  vk: NativeVerifyingKey;
}

export interface NativeProof {
  a: G1Json;
  b: G2Json;
  c: G1Json;
  publicSignals: string[];
}

export type MsmPath = 'scalar' | 'vector' | 'auto';
export type FieldOp = 'add' | 'sub' | 'mul' | 'neg' | 'sqr' | 'inv' | 'invVartime' | 'lazy';

/** Field, curve, MSM and FFT primitives exposed only for differential tests. */
export interface TestOps {
  fq(op: FieldOp, a: string, b?: string): string;
  fr(op: FieldOp, a: string, b?: string): string;
  g1(op: 'add' | 'madd' | 'dbl' | 'neg' | 'mul', p: G1Json, q?: G1Json | string): G1Json;
  g2(op: 'add' | 'madd' | 'dbl' | 'neg' | 'mul', p: G2Json, q?: G2Json | string): G2Json;
  /** path: the scalar buckets, the AVX-512 IFMA ones, or (default) whichever the prover uses. */
  g1Msm(points: G1Json[], scalars: string[], path?: MsmPath): G1Json;
  g2Msm(points: G2Json[], scalars: string[], path?: MsmPath): G2Json;
  /** True when this CPU runs the AVX-512 IFMA bucket path (and ZKPROVER_NO_AVX512 is unset). */
  avx512: boolean;
  fft(values: string[], inverse: boolean): string[];
  rootOfUnity(log2n: number): string;
  generators(): { g1: G1Json; g2: G2Json };
  /**
   * Test hook for error delivery from the native thread pool: 64 nested pool tasks, of which task 37
   * throws a coded native error (code test_fault, section "task", index 37), a plain std::runtime_error
   * (code internal) or std::bad_alloc (code out_of_memory); "none" resolves to the number of tasks run.
   */
  failInPool(kind: 'none' | 'coded' | 'plain' | 'alloc'): Promise<number>;
}

export interface NativeVerifyingKey {
  alpha1: G1Json;
  beta2: G2Json;
  gamma2: G2Json;
  delta2: G2Json;
  IC: G1Json[];
}

/**
 * Every addon function rejects (or throws, for arguments of the wrong type) with an Error that carries
 * `code` and possibly `section` and `index`: see native-error.ts.
 */
export interface NativeAddon {
  /**
   * A path is mapped and used in place, validated in full only when its prepared file (`<path>.prep`)
   * does not match it (then written for the next load); bytes are validated in full and copied.
   */
  loadKey(zkey: string | Uint8Array): Promise<KeyInfo>;
  prove(handle: unknown, wtns: Uint8Array): Promise<NativeProof>;
  /**
   * Checks every G2 point of a loaded key (beta2, gamma2, delta2, the B2 query) for membership of the
   * prime-order subgroup (~0.16 ms of CPU per point, so for imports, not every load); resolves to the number of
   * points checked, rejects naming the first point outside the subgroup.
   */
  checkKey(handle: unknown): Promise<number>;
  devSetup(r1cs: Uint8Array): Promise<Uint8Array>;
  /** Groth16 pairing check off the event loop; malformed input resolves to false. */
  verify(
    vk: NativeVerifyingKey,
    proof: { a: G1Json; b: G2Json; c: G1Json },
    publicSignals: string[],
  ): Promise<boolean>;
  devKeyName: string;
  testOps: TestOps;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');

function load(): NativeAddon {
  const file = path.join(repoRoot, 'build', 'Release', 'zkprover.node');
  if (!existsSync(file)) {
    throw new Error(
      `native prover addon not built (${file} missing): run \`npm install\` or \`npm rebuild\``,
    );
  }
  return createRequire(import.meta.url)(file) as NativeAddon;
}

export const addon: NativeAddon = load();
