// Groth16 verifier over BN254 (SPP's circom-groth16-verifier): the verification key is fixed at deployment,
// `verify(proof, public_inputs)` is one 4-pair pairing check e(-A,B)·e(α,β)·e(vk_x,γ)·e(C,δ) = 1.
// Points use the on-chain byte layout: G1 = x‖y, G2 = x.c1‖x.c0‖y.c1‖y.c0 (32-byte big-endian limbs).
// The arithmetic runs on snarkjs's WASM BN254 curve (a private single-threaded instance: no worker threads).
import type { xdr } from '@stellar/stellar-sdk';
import * as snarkjs from 'snarkjs';
import { BASE_FIELD_MODULUS, FIELD_MODULUS } from '../src/crypto/index.ts';
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
import { VerifierError, VERIFIER_INTERFACE } from '../src/ledger/pool-interface.ts';

/** Points are opaque byte buffers in the curve's internal (Montgomery, Jacobian) form. */
type Point = Uint8Array;
interface CurveGroup {
  zero: Point;
  fromObject(coords: unknown[]): Point;
  isValid(p: Point): boolean;
  isZero(p: Point): boolean;
  add(a: Point, b: Point): Point;
  neg(p: Point): Point;
  timesScalar(p: Point, s: bigint): Point;
  timesFr(p: Point, s: Uint8Array): Point;
}
interface Curve {
  G1: CurveGroup;
  G2: CurveGroup;
  Fr: { e(x: bigint): Uint8Array };
  pairingEq(...args: Point[]): Promise<boolean>;
}

let curvePromise: Promise<Curve> | undefined;
const curve = (): Promise<Curve> =>
  (curvePromise ??= snarkjs.curves.getCurveFromName('bn128', { singleThread: true }) as Promise<Curve>);

function be32(n: bigint): Uint8Array {
  return Uint8Array.from(Buffer.from(n.toString(16).padStart(64, '0'), 'hex'));
}
function limbs(b: Uint8Array): bigint[] {
  const out: bigint[] = [];
  for (let o = 0; o < b.length; o += 32)
    out.push(BigInt(`0x${Buffer.from(b.subarray(o, o + 32)).toString('hex')}`));
  if (out.some((v) => v >= BASE_FIELD_MODULUS))
    throw contractError(VerifierError.MalformedProof, 'coordinate ≥ q');
  return out;
}

function g1(c: Curve, b: Uint8Array): Point {
  const [x, y] = limbs(b) as [bigint, bigint];
  if (x === 0n && y === 0n) return c.G1.zero;
  const p = c.G1.fromObject([x, y, 1n]);
  if (!c.G1.isValid(p)) throw contractError(VerifierError.MalformedProof, 'G1 point is not on the curve');
  return p;
}

function g2(c: Curve, b: Uint8Array): Point {
  const [x1, x0, y1, y0] = limbs(b) as [bigint, bigint, bigint, bigint];
  if (x1 === 0n && x0 === 0n && y1 === 0n && y0 === 0n) return c.G2.zero;
  const p = c.G2.fromObject([
    [x0, x1],
    [y0, y1],
    [1n, 0n],
  ]);
  // on the twist and in the r-torsion subgroup (the twist has other points)
  if (!c.G2.isValid(p) || !c.G2.isZero(c.G2.timesScalar(p, FIELD_MODULUS))) {
    throw contractError(VerifierError.MalformedProof, 'G2 point is not on the curve or not in the subgroup');
  }
  return p;
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
  if (typeof vkey !== 'object' || vkey === null) throw new Error('verification key must be a JSON object');
  if (vkey.protocol !== undefined && vkey.protocol !== 'groth16')
    throw new Error(`not a Groth16 key: ${vkey.protocol}`);
  if (vkey.curve !== undefined && vkey.curve !== 'bn128') throw new Error(`not a BN254 key: ${vkey.curve}`);
  if (!Array.isArray(vkey.IC) || vkey.IC.length !== vkey.nPublic + 1) {
    throw new Error('verification key IC length must be nPublic + 1');
  }
  return struct({
    alpha: bytes(g1Json(vkey.vk_alpha_1)),
    beta: bytes(g2Json(vkey.vk_beta_2)),
    gamma: bytes(g2Json(vkey.vk_gamma_2)),
    delta: bytes(g2Json(vkey.vk_delta_2)),
    ic: vec(vkey.IC.map((p) => bytes(g1Json(p)))),
  });
}

interface PreparedKey {
  alpha: Point;
  beta: Point;
  gamma: Point;
  delta: Point;
  ic: Point[];
}

// Decoding and checking the key costs as much as a verification; the stored bytes never change.
const prepared = new Map<string, PreparedKey>();

function loadKey(c: Curve, vk: xdr.ScVal): PreparedKey {
  const id = vk.toXdr('base64');
  let key = prepared.get(id);
  if (!key) {
    const f = asStruct(vk, ['alpha', 'beta', 'gamma', 'delta', 'ic'] as const, 'verification key');
    key = {
      alpha: g1(c, asBytes(f.alpha, 'alpha', 64)),
      beta: g2(c, asBytes(f.beta, 'beta', 128)),
      gamma: g2(c, asBytes(f.gamma, 'gamma', 128)),
      delta: g2(c, asBytes(f.delta, 'delta', 128)),
      ic: asVec(f.ic, 'ic').map((p) => g1(c, asBytes(p, 'ic', 64))),
    };
    prepared.set(id, key);
  }
  return key;
}

const VK = sym('VerificationKey');

export const verifier: ContractDefinition = {
  name: 'verifier',
  interface: VERIFIER_INTERFACE,
  // a BN254 Groth16 verification measured on testnet (stellar-private-payments' cost measurements)
  instructions: { verify: 40_000_000 },
  async construct(env, args) {
    expectArgs(args, 1, '__constructor');
    loadKey(await curve(), args[0] as xdr.ScVal); // rejects a malformed key at deployment
    env.instance.set(VK, args[0] as xdr.ScVal);
  },
  functions: {
    /** verify(proof: Groth16Proof{a,b,c}, public_inputs: Vec<U256>) -> bool; a failed check is Error(Contract, #0). */
    verify: async (env, args) => {
      expectArgs(args, 2, 'verify');
      const c = await curve();
      const key = loadKey(c, env.instance.get(VK) as xdr.ScVal);
      const p = asStruct(args[0] as xdr.ScVal, ['a', 'b', 'c'] as const, 'proof');
      const inputs = asVec(args[1] as xdr.ScVal, 'public_inputs').map((v) => asU256(v, 'public input'));
      if (inputs.length + 1 !== key.ic.length) {
        throw contractError(
          VerifierError.MalformedPublicInputs,
          `expected ${key.ic.length - 1} public inputs, got ${inputs.length}`,
        );
      }
      if (inputs.some((x) => x >= FIELD_MODULUS)) {
        throw contractError(VerifierError.MalformedPublicInputs, 'public input ≥ r');
      }
      const a = g1(c, asBytes(p.a, 'a', 64));
      const b = g2(c, asBytes(p.b, 'b', 128));
      const cc = g1(c, asBytes(p.c, 'c', 64));
      // an honest proof never has a point at infinity; refusing them keeps the pairing inputs well-formed
      if (c.G1.isZero(a) || c.G2.isZero(b) || c.G1.isZero(cc)) {
        throw contractError(VerifierError.InvalidProof, 'proof point at infinity');
      }
      let vkX = key.ic[0] as Point;
      inputs.forEach((x, i) => {
        if (x !== 0n) vkX = c.G1.add(vkX, c.G1.timesFr(key.ic[i + 1] as Point, c.Fr.e(x)));
      });
      const ok = await c.pairingEq(c.G1.neg(a), b, key.alpha, key.beta, vkX, key.gamma, cc, key.delta);
      if (!ok) throw contractError(VerifierError.InvalidProof, 'pairing check failed');
      return bool(true);
    },
  },
};
