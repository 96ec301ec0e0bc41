// The one cryptographic core shared by the circuit's witness builder, the sandbox contracts and the proxy.
export { FIELD_MODULUS, assertField, mod, fieldToBytes32, fieldToHex, bytesToBigint, bigintToBytes32 } from './field.ts';
export { poseidon2Permutation, hash, compress } from './poseidon2.ts';
export { MerkleTree, ZERO_LEAF, zeroHashes, ROOT_HISTORY_SIZE, DEFAULT_DEPTH, type MerklePath } from './merkle-tree.ts';
export {
  SparseMerkleTree,
  smtLeafHash,
  verifyNonMembership,
  type SmtFindResult,
  type SmtNonMembershipProof,
} from './sparse-merkle-tree.ts';
export {
  notePublicKey,
  commitment,
  noteSignature,
  nullifier,
  membershipLeaf,
  assertNoteAmount,
  MAX_NOTE_AMOUNT,
} from './note.ts';
export { extDataToScVal, extDataHash, extDataHashOfScVal, publicAmount, type ExtData } from './ext-data.ts';
export { proofToBytes, proofFromBytes, PROOF_BYTES, BASE_FIELD_MODULUS, type SnarkjsProof } from './proof-bytes.ts';
export { encryptNote, decryptNote, ENCRYPTED_NOTE_BYTES, type NotePlaintext } from './note-encryption.ts';
export { deriveAgentKeys, assertAgentId, AGENT_ID_PATTERN, type AgentKeys } from './agent-keys.ts';
