// Arguments of the pool's `transact` / `disburse(proof, ext_data, sender)`: the SPP `Proof` contracttype
// (a Symbol-keyed ScVal map, keys sorted) built from a Groth16 proof and the 11 public signals of
// policy_tx_2_2, and the ExtData map from src/crypto. Decoding does the inverse, strictly.
import { Address, nativeToScVal, scValToNative, xdr } from '#stellar-sdk';
import {
  bigintToBytes32,
  bytesToBigint,
  type ExtData,
  extDataToScVal,
  FIELD_MODULUS,
  PROOF_BYTES,
  proofToBytes,
  type SnarkjsProof,
} from '../crypto/index.ts';

/** Number of public signals of policy_tx_2_2 (root, publicAmount, extDataHash, 2 nullifiers, 2 commitments, 2+2 ASP roots). */
export const POOL_PUBLIC_SIGNALS = 11;

export interface PoolProof {
  /** A(64) ‖ B(128) ‖ C(64) */
  proofBytes: Uint8Array;
  root: bigint;
  inputNullifiers: bigint[];
  outputCommitment0: bigint;
  outputCommitment1: bigint;
  publicAmount: bigint;
  extDataHash: bigint;
  aspMembershipRoot: bigint;
  aspNonMembershipRoot: bigint;
  /** The tree `root` is a root of (the contract needs it for a full tree's final root). */
  tree: number;
}

const entry = (key: string, val: xdr.ScVal) => new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(key), val });
const u256 = (n: bigint) => {
  if (n < 0n || n >= 1n << 256n) throw new RangeError('value does not fit in U256');
  return nativeToScVal(n, { type: 'u256' });
};

function toField(v: string | bigint, what: string): bigint {
  let x: bigint;
  try {
    x = typeof v === 'bigint' ? v : BigInt(v);
  } catch {
    throw new TypeError(`${what} is not an integer`);
  }
  if (x < 0n || x >= FIELD_MODULUS) throw new RangeError(`${what} is not a field element`);
  return x;
}

/**
 * The pool's view of a proof from the prover: its bytes (or snarkjs JSON), the 11 public signals in order, and
 * the tree whose root the proof's root is (0 for a pool that has never rolled over).
 */
export function poolProofFromSignals(
  proof: Uint8Array | SnarkjsProof,
  publicSignals: readonly (string | bigint)[],
  tree = 0,
): PoolProof {
  if (!Number.isInteger(tree) || tree < 0 || tree > 0xffff_ffff) throw new RangeError('tree must be a u32');
  const proofBytes = proof instanceof Uint8Array ? proof : proofToBytes(proof);
  if (proofBytes.length !== PROOF_BYTES) throw new RangeError(`a proof is exactly ${PROOF_BYTES} bytes`);
  if (!Array.isArray(publicSignals) || publicSignals.length !== POOL_PUBLIC_SIGNALS) {
    throw new RangeError(`expected ${POOL_PUBLIC_SIGNALS} public signals`);
  }
  const s = publicSignals.map((v, i) => toField(v, `public signal ${i}`));
  // the contract repeats one membership and one non-membership root for both inputs
  if (s[7] !== s[8]) throw new RangeError('both inputs must prove membership against the same ASP root');
  if (s[9] !== s[10]) throw new RangeError('both inputs must prove non-membership against the same ASP root');
  return {
    proofBytes,
    root: s[0] as bigint,
    publicAmount: s[1] as bigint,
    extDataHash: s[2] as bigint,
    inputNullifiers: [s[3] as bigint, s[4] as bigint],
    outputCommitment0: s[5] as bigint,
    outputCommitment1: s[6] as bigint,
    aspMembershipRoot: s[7] as bigint,
    aspNonMembershipRoot: s[9] as bigint,
    tree,
  };
}

/** `Proof` contracttype as ScVal::Map, keys in sorted order (as soroban encodes structs). */
export function poolProofToScVal(p: PoolProof): xdr.ScVal {
  if (p.proofBytes.length !== PROOF_BYTES) throw new RangeError(`a proof is exactly ${PROOF_BYTES} bytes`);
  const groth16 = xdr.ScVal.scvMap([
    entry('a', xdr.ScVal.scvBytes(p.proofBytes.slice(0, 64))),
    entry('b', xdr.ScVal.scvBytes(p.proofBytes.slice(64, 192))),
    entry('c', xdr.ScVal.scvBytes(p.proofBytes.slice(192, 256))),
  ]);
  return xdr.ScVal.scvMap([
    entry('asp_membership_root', u256(p.aspMembershipRoot)),
    entry('asp_non_membership_root', u256(p.aspNonMembershipRoot)),
    entry('ext_data_hash', xdr.ScVal.scvBytes(bigintToBytes32(p.extDataHash))),
    entry('input_nullifiers', xdr.ScVal.scvVec(p.inputNullifiers.map(u256))),
    entry('output_commitment0', u256(p.outputCommitment0)),
    entry('output_commitment1', u256(p.outputCommitment1)),
    entry('proof', groth16),
    entry('public_amount', u256(p.publicAmount)),
    entry('root', u256(p.root)),
    entry('tree', xdr.ScVal.scvU32(p.tree)),
  ]);
}

function fields(v: xdr.ScVal, keys: string[], what: string): Map<string, xdr.ScVal> {
  if (v.type !== 'scvMap' || !v.value) throw new TypeError(`${what} must be a map`);
  const entries = v.value as xdr.ScMapEntry[];
  const names = entries.map((e) => (e.key.type === 'scvSymbol' ? String(e.key.value) : ''));
  const sorted = [...keys].sort();
  if (names.length !== sorted.length || names.some((n, i) => n !== sorted[i])) {
    throw new TypeError(`${what} must have exactly the fields ${sorted.join(', ')} in sorted order`);
  }
  return new Map(entries.map((e, i) => [names[i] as string, e.val]));
}

function readU256(v: xdr.ScVal | undefined, what: string): bigint {
  if (v?.type !== 'scvU256') throw new TypeError(`${what} must be a U256`);
  return BigInt(scValToNative(v));
}

function readBytes(v: xdr.ScVal | undefined, what: string, length: number): Uint8Array {
  if (v?.type !== 'scvBytes') throw new TypeError(`${what} must be Bytes`);
  const b = new Uint8Array(scValToNative(v) as Uint8Array);
  if (b.length !== length) throw new RangeError(`${what} must be ${length} bytes`);
  return b;
}

export function poolProofFromScVal(v: xdr.ScVal): PoolProof {
  const f = fields(
    v,
    [
      'asp_membership_root',
      'asp_non_membership_root',
      'ext_data_hash',
      'input_nullifiers',
      'output_commitment0',
      'output_commitment1',
      'proof',
      'public_amount',
      'root',
      'tree',
    ],
    'proof',
  );
  const tree = f.get('tree');
  if (tree?.type !== 'scvU32') throw new TypeError('tree must be a U32');
  const g = fields(f.get('proof') as xdr.ScVal, ['a', 'b', 'c'], 'proof.proof');
  const nullifiers = f.get('input_nullifiers') as xdr.ScVal;
  if (nullifiers.type !== 'scvVec' || !nullifiers.value)
    throw new TypeError('input_nullifiers must be a vec');
  return {
    proofBytes: new Uint8Array([
      ...readBytes(g.get('a'), 'proof.a', 64),
      ...readBytes(g.get('b'), 'proof.b', 128),
      ...readBytes(g.get('c'), 'proof.c', 64),
    ]),
    root: readU256(f.get('root'), 'root'),
    inputNullifiers: (nullifiers.value as xdr.ScVal[]).map((n, i) => readU256(n, `input_nullifiers[${i}]`)),
    outputCommitment0: readU256(f.get('output_commitment0'), 'output_commitment0'),
    outputCommitment1: readU256(f.get('output_commitment1'), 'output_commitment1'),
    publicAmount: readU256(f.get('public_amount'), 'public_amount'),
    extDataHash: bytesToBigint(readBytes(f.get('ext_data_hash'), 'ext_data_hash', 32)),
    aspMembershipRoot: readU256(f.get('asp_membership_root'), 'asp_membership_root'),
    aspNonMembershipRoot: readU256(f.get('asp_non_membership_root'), 'asp_non_membership_root'),
    tree: tree.value as number,
  };
}

/** The three arguments of `transact` / `disburse`: (proof, ext_data, sender). */
export function poolCallArgs(proof: PoolProof, extData: ExtData, sender: string): xdr.ScVal[] {
  return [poolProofToScVal(proof), extDataToScVal(extData), new Address(sender).toScVal()];
}
