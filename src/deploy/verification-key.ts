// The verifier contract's constructor argument from a snarkjs verification_key.json: VerificationKeyBytes
// {alpha, beta, gamma, delta, ic} in the byte layout the Soroban host's BN254 functions take (CAP-0074):
// G1 = be32(x) ‖ be32(y), G2 = be32(x.c1) ‖ be32(x.c0) ‖ be32(y.c1) ‖ be32(y.c0) (imaginary part first).
// snarkjs writes G2 coordinates real part first, so the limbs of each pair are swapped here.
import { readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { xdr } from '#stellar-sdk';
import { bigintToBytes32 } from '../crypto/index.ts';

/** The verification key `npm run build` writes for the pool's circuit (a development key). */
export const DEFAULT_VKEY_PATH = fileURLToPath(
  new URL('../../build/circuits/policy_tx_2_2/verification_key.json', import.meta.url),
);

/** The fields of a snarkjs Groth16 verification_key.json the verifier needs. */
export interface SnarkjsVerificationKey {
  protocol?: string;
  curve?: string;
  nPublic: number;
  vk_alpha_1: string[];
  vk_beta_2: string[][];
  vk_gamma_2: string[][];
  vk_delta_2: string[][];
  IC: string[][];
}

/** A verification key given as a path to its JSON file or as the parsed object. */
export type VerificationKeyInput = string | SnarkjsVerificationKey;

const limb = (v: string | undefined, what: string): Uint8Array => {
  if (typeof v !== 'string' || !/^[0-9]+$/.test(v))
    throw new Error(`verification key: ${what} is not a decimal`);
  return bigintToBytes32(BigInt(v));
};

const g1 = (p: string[] | undefined, what: string): Buffer => {
  if (!Array.isArray(p)) throw new Error(`verification key: ${what} is missing`);
  return Buffer.concat([limb(p[0], `${what}.x`), limb(p[1], `${what}.y`)]);
};

const g2 = (p: string[][] | undefined, what: string): Buffer => {
  if (!Array.isArray(p) || !Array.isArray(p[0]) || !Array.isArray(p[1]))
    throw new Error(`verification key: ${what} is missing`);
  return Buffer.concat([
    limb(p[0][1], `${what}.x.c1`),
    limb(p[0][0], `${what}.x.c0`),
    limb(p[1][1], `${what}.y.c1`),
    limb(p[1][0], `${what}.y.c0`),
  ]);
};

const field = (name: string, val: xdr.ScVal) => new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(name), val });

/** VerificationKeyBytes as the verifier's `__constructor` takes it (a map with its field names sorted). */
export function verificationKeyToScVal(vkey: SnarkjsVerificationKey): xdr.ScVal {
  if (typeof vkey !== 'object' || vkey === null) throw new Error('verification key must be a JSON object');
  if (vkey.protocol !== undefined && vkey.protocol !== 'groth16')
    throw new Error(`not a Groth16 key: ${vkey.protocol}`);
  if (vkey.curve !== undefined && vkey.curve !== 'bn128') throw new Error(`not a BN254 key: ${vkey.curve}`);
  if (!Array.isArray(vkey.IC) || vkey.IC.length !== vkey.nPublic + 1)
    throw new Error('verification key IC length must be nPublic + 1');
  return xdr.ScVal.scvMap([
    field('alpha', xdr.ScVal.scvBytes(g1(vkey.vk_alpha_1, 'vk_alpha_1'))),
    field('beta', xdr.ScVal.scvBytes(g2(vkey.vk_beta_2, 'vk_beta_2'))),
    field('delta', xdr.ScVal.scvBytes(g2(vkey.vk_delta_2, 'vk_delta_2'))),
    field('gamma', xdr.ScVal.scvBytes(g2(vkey.vk_gamma_2, 'vk_gamma_2'))),
    field('ic', xdr.ScVal.scvVec(vkey.IC.map((p, i) => xdr.ScVal.scvBytes(g1(p, `IC[${i}]`))))),
  ]);
}

/** Reads a verification key from its path (or returns the object given). */
export function loadVerificationKey(vkey: VerificationKeyInput = DEFAULT_VKEY_PATH): SnarkjsVerificationKey {
  if (typeof vkey !== 'string') return vkey;
  try {
    return JSON.parse(readFileSync(vkey, 'utf8')) as SnarkjsVerificationKey;
  } catch (e) {
    throw new Error(
      `cannot read the verification key ${vkey} (run \`npm run build\` first): ${(e as Error).message}`,
    );
  }
}
