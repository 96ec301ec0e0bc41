// The one cryptographic core shared by the circuit's witness builder, the sandbox contracts and the proxy.

export { type AgentKeys, deriveAgentKeys } from './agent-keys.ts';
export { type ExtData, extDataHash, extDataToScVal, publicAmount } from './ext-data.ts';
export { assertField, bigintToBytes32, bytesToBigint, FIELD_MODULUS } from './field.ts';
export { MerkleForest } from './merkle-forest.ts';
export { type MerklePath, MerkleTree, ROOT_HISTORY_SIZE, ZERO_LEAF, zeroHashes } from './merkle-tree.ts';
export {
  assertNoteAmount,
  commitment,
  MAX_NOTE_AMOUNT,
  membershipLeaf,
  notePublicKey,
  noteSignature,
  nullifier,
} from './note.ts';
export { decryptNote, ENCRYPTED_NOTE_BYTES, encryptNote } from './note-encryption.ts';
export { compress, hash, poseidon2Permutation } from './poseidon2.ts';
export {
  BASE_FIELD_MODULUS,
  PROOF_BYTES,
  proofFromBytes,
  proofToBytes,
  type SnarkjsProof,
} from './proof-bytes.ts';
export {
  type SmtNonMembershipProof,
  SparseMerkleTree,
  smtLeafHash,
  verifyNonMembership,
} from './sparse-merkle-tree.ts';
