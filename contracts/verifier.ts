// Groth16 verifier over BN254 (SPP's circom-groth16-verifier): the verification key is fixed at deployment,
// `verify(proof, public_inputs)` is one 4-pair pairing check e(-A,B)·e(α,β)·e(vk_x,γ)·e(C,δ) = 1.
// Points use the on-chain byte layout: G1 = x‖y, G2 = x.c1‖x.c0‖y.c1‖y.c0 (32-byte big-endian limbs).
import { bn254 } from '@noble/curves/bn254.js';
import type { xdr } from '@stellar/stellar-sdk';
import { FIELD_MODULUS } from '../src/crypto/index.ts';
import {
  asBytes,
  asStruct,
  asU256,
  asVec,
  bool,
  bytes,
  type ContractDefinition,
  expectArgs,
  struct,
  sym,
  vec,
} from '../src/sandbox/contract-api.ts';
import { contractError } from '../src/sandbox/errors.ts';

/** Groth16Error codes of SPP's verifier. */
export const VerifierError = { InvalidProof: 0, MalformedPublicInputs: 1, MalformedProof: 2 } as const;

type G1 = InstanceType<typeof bn254.G1.Point>;
type G2 = InstanceType<typeof bn254.G2.Point>;

const { Fp, Fp2, Fp12 } = bn254.fields;

function be32(n: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
}
function readBe(b: Uint8Array, off: number): bigint {
  return BigInt(`0x${Buffer.from(b.subarray(off, off + 32)).toString('hex')}`);
}

function g1FromBytes(b: Uint8Array): G1 {
  const x = readBe(b, 0);
  const y = readBe(b, 32);
  if (x >= Fp.ORDER || y >= Fp.ORDER)
    throw contractError(VerifierError.MalformedProof, 'G1 coordinate out of range');
  if (x === 0n && y === 0n) return bn254.G1.Point.ZERO;
  try {
    const p = bn254.G1.Point.fromAffine({ x, y });
    p.assertValidity();
    return p;
  } catch {
    throw contractError(VerifierError.MalformedProof, 'G1 point is not on the curve');
  }
}

function g2FromBytes(b: Uint8Array): G2 {
  const [x1, x0, y1, y0] = [0, 32, 64, 96].map((o) => readBe(b, o)) as [bigint, bigint, bigint, bigint];
  if ([x1, x0, y1, y0].some((v) => v >= Fp.ORDER))
    throw contractError(VerifierError.MalformedProof, 'G2 coordinate out of range');
  if (x1 === 0n && x0 === 0n && y1 === 0n && y0 === 0n) return bn254.G2.Point.ZERO;
  try {
    const p = bn254.G2.Point.fromAffine({
      x: Fp2.create({ c0: x0, c1: x1 }),
      y: Fp2.create({ c0: y0, c1: y1 }),
    });
    p.assertValidity();
    return p;
  } catch {
    throw contractError(VerifierError.MalformedProof, 'G2 point is not on the curve or not in the subgroup');
  }
}

interface SnarkjsVkey {
  protocol?: string;
  curve?: string;
  nPublic: number;
  vk_alpha_1: string[];
  vk_beta_2: string[][];
  vk_gamma_2: string[][];
  vk_delta_2: string[][];
  IC: string[][];
}

const g1Json = (p: string[]) =>
  new Uint8Array([...be32(BigInt(p[0] as string)), ...be32(BigInt(p[1] as string))]);
const g2Json = (p: string[][]) =>
  new Uint8Array([
    ...be32(BigInt((p[0] as string[])[1] as string)),
    ...be32(BigInt((p[0] as string[])[0] as string)),
    ...be32(BigInt((p[1] as string[])[1] as string)),
    ...be32(BigInt((p[1] as string[])[0] as string)),
  ]);

/** Constructor argument from a snarkjs verification_key.json: VerificationKeyBytes {alpha, beta, gamma, delta, ic}. */
export function vkeyToScVal(vkey: SnarkjsVkey): xdr.ScVal {
  if (vkey.protocol !== undefined && vkey.protocol !== 'groth16')
    throw new Error(`not a Groth16 key: ${vkey.protocol}`);
  if (vkey.curve !== undefined && vkey.curve !== 'bn128') throw new Error(`not a BN254 key: ${vkey.curve}`);
  if (!Array.isArray(vkey.IC) || vkey.IC.length !== vkey.nPublic + 1)
    throw new Error('verification key IC length must be nPublic + 1');
  return struct({
    alpha: bytes(g1Json(vkey.vk_alpha_1)),
    beta: bytes(g2Json(vkey.vk_beta_2)),
    gamma: bytes(g2Json(vkey.vk_gamma_2)),
    delta: bytes(g2Json(vkey.vk_delta_2)),
    ic: vec(vkey.IC.map((p) => bytes(g1Json(p)))),
  });
}

interface PreparedKey {
  alpha: G1;
  beta: G2;
  gamma: G2;
  delta: G2;
  ic: G1[];
}

// Decoding and validating the key costs more than a verification; the stored bytes never change.
const prepared = new Map<string, PreparedKey>();

function loadKey(vk: xdr.ScVal): PreparedKey {
  const id = vk.toXdr('base64');
  let key = prepared.get(id);
  if (!key) {
    const f = asStruct(vk, ['alpha', 'beta', 'gamma', 'delta', 'ic'] as const, 'verification key');
    key = {
      alpha: g1FromBytes(asBytes(f.alpha, 'alpha', 64)),
      beta: g2FromBytes(asBytes(f.beta, 'beta', 128)),
      gamma: g2FromBytes(asBytes(f.gamma, 'gamma', 128)),
      delta: g2FromBytes(asBytes(f.delta, 'delta', 128)),
      ic: asVec(f.ic, 'ic').map((p) => g1FromBytes(asBytes(p, 'ic', 64))),
    };
    prepared.set(id, key);
  }
  return key;
}

const VK = sym('VerificationKey');

export const verifier: ContractDefinition = {
  name: 'verifier',
  construct(env, args) {
    expectArgs(args, 1, '__constructor');
    loadKey(args[0] as xdr.ScVal); // rejects a malformed key at deployment
    env.instance.set(VK, args[0] as xdr.ScVal);
  },
  functions: {
    /** verify(proof: Groth16Proof{a,b,c}, public_inputs: Vec<U256>) -> bool; a failed check is Error(Contract, #0). */
    verify: (env, args) => {
      expectArgs(args, 2, 'verify');
      const key = loadKey(env.instance.get(VK) as xdr.ScVal);
      const p = asStruct(args[0] as xdr.ScVal, ['a', 'b', 'c'] as const, 'proof');
      const inputs = asVec(args[1] as xdr.ScVal, 'public_inputs').map((v) => asU256(v, 'public input'));
      if (inputs.length + 1 !== key.ic.length) {
        throw contractError(
          VerifierError.MalformedPublicInputs,
          `expected ${key.ic.length - 1} public inputs, got ${inputs.length}`,
        );
      }
      if (inputs.some((x) => x >= FIELD_MODULUS))
        throw contractError(VerifierError.MalformedPublicInputs, 'public input ≥ r');
      const a = g1FromBytes(asBytes(p.a, 'a', 64));
      const b = g2FromBytes(asBytes(p.b, 'b', 128));
      const c = g1FromBytes(asBytes(p.c, 'c', 64));
      let vkX = key.ic[0] as G1;
      inputs.forEach((x, i) => {
        if (x !== 0n) vkX = vkX.add((key.ic[i + 1] as G1).multiply(x));
      });
      const pairs = [
        { g1: a.negate(), g2: b },
        { g1: key.alpha, g2: key.beta },
        { g1: vkX, g2: key.gamma },
        { g1: c, g2: key.delta },
      ].filter((pair) => !pair.g1.equals(bn254.G1.Point.ZERO) && !pair.g2.equals(bn254.G2.Point.ZERO));
      const ok = Fp12.eql(bn254.pairingBatch(pairs), Fp12.ONE);
      if (!ok) throw contractError(VerifierError.InvalidProof, 'pairing check failed');
      return bool(true);
    },
  },
};
