// Turns a transaction description (notes spent with their paths, notes created, ext data, ASP proofs) into the
// named inputs of policy_tx_2_2, and the public signals the proof will carry.
import { randomBytes } from 'node:crypto';
import {
  assertField,
  assertNoteAmount,
  bytesToBigint,
  commitment,
  type ExtData,
  extDataHash,
  FIELD_MODULUS,
  type MerklePath,
  notePublicKey,
  nullifier,
  publicAmount,
  type SmtNonMembershipProof,
} from '../crypto/index.ts';
import { POLICY_CIRCUIT } from './policy-circuit.ts';
import type { CircuitInputs } from './witness-calculator.ts';

export interface SpentNote {
  amount: bigint;
  secretKey: bigint;
  blinding: bigint;
  /** Pool-tree path of the note's commitment; any path of the right length for a zero-amount dummy. */
  path: MerklePath;
}

export interface CreatedNote {
  amount: bigint;
  publicKey: bigint;
  blinding: bigint;
}

export interface AspMembershipProof {
  root: bigint;
  blinding: bigint;
  path: MerklePath;
}

export interface TransactionDescription {
  /** Pool root the spent notes' paths lead to. */
  root: bigint;
  inputs: SpentNote[];
  outputs: CreatedNote[];
  extData: ExtData;
  /** One allowlist proof per input, for that input's key. */
  membership: AspMembershipProof[];
  /** One blocklist non-membership proof per input, for that input's key. */
  nonMembership: SmtNonMembershipProof[];
}

export interface PreparedTransaction {
  inputs: CircuitInputs;
  /** The 11 public signals in snarkjs order. */
  publicSignals: bigint[];
  nullifiers: bigint[];
  commitments: bigint[];
  extDataHash: bigint;
  publicAmount: bigint;
}

/** A random blinding, uniform enough in Fr (64 bytes reduced). */
export function randomFieldElement(): bigint {
  return bytesToBigint(randomBytes(64)) % FIELD_MODULUS;
}

/** A zero-amount input for deposits and single-note spends; fresh blinding gives a fresh nullifier. */
export function dummyInput(secretKey: bigint): SpentNote {
  return {
    amount: 0n,
    secretKey,
    blinding: randomFieldElement(),
    path: { pathElements: new Array<bigint>(POLICY_CIRCUIT.levels).fill(0n), pathIndex: 0n },
  };
}

function checkPath(path: MerklePath, levels: number, what: string): void {
  if (!path || !Array.isArray(path.pathElements) || path.pathElements.length !== levels) {
    throw new RangeError(`${what} must have exactly ${levels} path elements`);
  }
  path.pathElements.forEach((e, i) => assertField(e, `${what} element ${i}`));
  if (typeof path.pathIndex !== 'bigint' || path.pathIndex < 0n || path.pathIndex >= 1n << BigInt(levels)) {
    throw new RangeError(`${what} index must be in 0..2^${levels}−1`);
  }
}

const str = (x: bigint) => x.toString();

export function buildTransactionInputs(tx: TransactionDescription): PreparedTransaction {
  const { nIns, nOuts, levels, aspLevels, smtLevels } = POLICY_CIRCUIT;
  if (!tx || typeof tx !== 'object') throw new TypeError('transaction description must be an object');
  assertField(tx.root, 'root');
  if (!Array.isArray(tx.inputs) || tx.inputs.length !== nIns)
    throw new RangeError(`exactly ${nIns} inputs are needed`);
  if (!Array.isArray(tx.outputs) || tx.outputs.length !== nOuts)
    throw new RangeError(`exactly ${nOuts} outputs are needed`);
  if (!Array.isArray(tx.membership) || tx.membership.length !== nIns) {
    throw new RangeError(`exactly ${nIns} ASP membership proofs are needed`);
  }
  if (!Array.isArray(tx.nonMembership) || tx.nonMembership.length !== nIns) {
    throw new RangeError(`exactly ${nIns} ASP non-membership proofs are needed`);
  }

  tx.inputs.forEach((note, i) => {
    assertNoteAmount(note.amount);
    assertField(note.secretKey, `input ${i} secret key`);
    assertField(note.blinding, `input ${i} blinding`);
    checkPath(note.path, levels, `input ${i} path`);
  });
  tx.outputs.forEach((note, i) => {
    assertNoteAmount(note.amount);
    assertField(note.publicKey, `output ${i} public key`);
    assertField(note.blinding, `output ${i} blinding`);
  });
  tx.membership.forEach((m, i) => {
    assertField(m.root, `membership ${i} root`);
    assertField(m.blinding, `membership ${i} blinding`);
    checkPath(m.path, aspLevels, `membership ${i} path`);
  });
  tx.nonMembership.forEach((m, i) => {
    assertField(m.root, `non-membership ${i} root`);
    if (!Array.isArray(m.siblings) || m.siblings.length !== smtLevels) {
      throw new RangeError(`non-membership ${i} must have exactly ${smtLevels} siblings`);
    }
  });

  const sumIns = tx.inputs.reduce((s, n) => s + n.amount, 0n);
  const sumOuts = tx.outputs.reduce((s, n) => s + n.amount, 0n);
  const extAmount = tx.extData.extAmount;
  const pubAmount = publicAmount(extAmount);
  if (sumIns + extAmount !== sumOuts) {
    throw new RangeError(`amounts do not balance: inputs ${sumIns} + ext ${extAmount} ≠ outputs ${sumOuts}`);
  }

  const inCommitments = tx.inputs.map((n) => commitment(n.amount, notePublicKey(n.secretKey), n.blinding));
  const nullifiers = tx.inputs.map((n, i) => nullifier(inCommitments[i], n.path.pathIndex, n.secretKey));
  if (new Set(nullifiers).size !== nullifiers.length) throw new Error('two inputs have the same nullifier');
  const commitments = tx.outputs.map((n) => commitment(n.amount, n.publicKey, n.blinding));
  const dataHash = extDataHash(tx.extData);

  const inputs: CircuitInputs = {
    root: str(tx.root),
    publicAmount: str(pubAmount),
    extDataHash: str(dataHash),
    inputNullifier: nullifiers.map(str),
    outputCommitment: commitments.map(str),
    membershipRoots: tx.membership.map((m) => str(m.root)),
    nonMembershipRoots: tx.nonMembership.map((m) => str(m.root)),
    inAmount: tx.inputs.map((n) => str(n.amount)),
    inPrivateKey: tx.inputs.map((n) => str(n.secretKey)),
    inBlinding: tx.inputs.map((n) => str(n.blinding)),
    inPathIndices: tx.inputs.map((n) => str(n.path.pathIndex)),
    inPathElements: tx.inputs.map((n) => n.path.pathElements.map(str)),
    outAmount: tx.outputs.map((n) => str(n.amount)),
    outPubkey: tx.outputs.map((n) => str(n.publicKey)),
    outBlinding: tx.outputs.map((n) => str(n.blinding)),
    membershipBlinding: tx.membership.map((m) => str(m.blinding)),
    membershipPathIndices: tx.membership.map((m) => str(m.path.pathIndex)),
    membershipPathElements: tx.membership.map((m) => m.path.pathElements.map(str)),
    nonMembershipSiblings: tx.nonMembership.map((m) => m.siblings.map(str)),
    nonMembershipOldKey: tx.nonMembership.map((m) => str(m.oldKey)),
    nonMembershipOldValue: tx.nonMembership.map((m) => str(m.oldValue)),
    nonMembershipIsOld0: tx.nonMembership.map((m) => str(m.isOld0)),
  };
  const publicSignals = [
    tx.root,
    pubAmount,
    dataHash,
    ...nullifiers,
    ...commitments,
    ...tx.membership.map((m) => m.root),
    ...tx.nonMembership.map((m) => m.root),
  ];
  return { inputs, publicSignals, nullifiers, commitments, extDataHash: dataHash, publicAmount: pubAmount };
}
