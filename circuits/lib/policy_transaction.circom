// SPP's policy transaction with allowlist and blocklist (policy _AB): nIns notes spent, nOuts created,
// balance sumIns + publicAmount = sumOuts, every spent key in the ASP allowlist and absent from the blocklist.
pragma circom 2.2.0;

include "poseidon2.circom";
include "bits.circom";
include "keypair.circom";
include "merkle_proof.circom";
include "smt_non_membership.circom";

template PolicyTransaction(nIns, nOuts, levels, aspLevels, smtLevels) {
  // Public inputs, in the order circom and snarkjs report them (declaration order).
  signal input root;
  signal input publicAmount;
  signal input extDataHash;
  signal input inputNullifier[nIns];
  signal input outputCommitment[nOuts];
  signal input membershipRoots[nIns];
  signal input nonMembershipRoots[nIns];

  // Spent notes and their positions in the pool tree.
  signal input inAmount[nIns];
  signal input inPrivateKey[nIns];
  signal input inBlinding[nIns];
  signal input inPathIndices[nIns];
  signal input inPathElements[nIns][levels];

  // Created notes.
  signal input outAmount[nOuts];
  signal input outPubkey[nOuts];
  signal input outBlinding[nOuts];

  // ASP allowlist membership of each spent note's key.
  signal input membershipBlinding[nIns];
  signal input membershipPathIndices[nIns];
  signal input membershipPathElements[nIns][aspLevels];

  // ASP blocklist non-membership of each spent note's key.
  signal input nonMembershipSiblings[nIns][smtLevels];
  signal input nonMembershipOldKey[nIns];
  signal input nonMembershipOldValue[nIns];
  signal input nonMembershipIsOld0[nIns];

  component keypair[nIns];
  component inCommitment[nIns];
  component signature[nIns];
  component inNullifier[nIns];
  component inTree[nIns];
  component rootCheck[nIns];
  component aspLeaf[nIns];
  component aspTree[nIns];
  component blocklist[nIns];

  var sumIns = 0;
  for (var tx = 0; tx < nIns; tx++) {
    keypair[tx] = NotePublicKey();
    keypair[tx].secretKey <== inPrivateKey[tx];

    inCommitment[tx] = Poseidon2Hash(3, 1);
    inCommitment[tx].in[0] <== inAmount[tx];
    inCommitment[tx].in[1] <== keypair[tx].publicKey;
    inCommitment[tx].in[2] <== inBlinding[tx];

    signature[tx] = NoteSignature();
    signature[tx].secretKey <== inPrivateKey[tx];
    signature[tx].commitment <== inCommitment[tx].out;
    signature[tx].pathIndex <== inPathIndices[tx];

    // The nullifier is bound to the leaf position, so a note can be spent once only.
    inNullifier[tx] = Poseidon2Hash(3, 2);
    inNullifier[tx].in[0] <== inCommitment[tx].out;
    inNullifier[tx].in[1] <== inPathIndices[tx];
    inNullifier[tx].in[2] <== signature[tx].out;
    inNullifier[tx].out === inputNullifier[tx];

    // Zero-amount dummy inputs may carry any path: membership is enforced only for real notes.
    inTree[tx] = MerkleRoot(levels);
    inTree[tx].leaf <== inCommitment[tx].out;
    inTree[tx].pathIndex <== inPathIndices[tx];
    for (var i = 0; i < levels; i++) inTree[tx].pathElements[i] <== inPathElements[tx][i];
    rootCheck[tx] = ForceEqualIfEnabled();
    rootCheck[tx].enabled <== inAmount[tx];
    rootCheck[tx].in[0] <== root;
    rootCheck[tx].in[1] <== inTree[tx].root;

    // Allowlist: the leaf is tied to the same key that owns the spent note.
    aspLeaf[tx] = Poseidon2Hash(2, 1);
    aspLeaf[tx].in[0] <== keypair[tx].publicKey;
    aspLeaf[tx].in[1] <== membershipBlinding[tx];
    aspTree[tx] = MerkleRoot(aspLevels);
    aspTree[tx].leaf <== aspLeaf[tx].out;
    aspTree[tx].pathIndex <== membershipPathIndices[tx];
    for (var i = 0; i < aspLevels; i++) aspTree[tx].pathElements[i] <== membershipPathElements[tx][i];
    aspTree[tx].root === membershipRoots[tx];

    // Blocklist: keyed by the note public key.
    blocklist[tx] = SmtNonMembership(smtLevels);
    blocklist[tx].root <== nonMembershipRoots[tx];
    blocklist[tx].key <== keypair[tx].publicKey;
    for (var i = 0; i < smtLevels; i++) blocklist[tx].siblings[i] <== nonMembershipSiblings[tx][i];
    blocklist[tx].oldKey <== nonMembershipOldKey[tx];
    blocklist[tx].oldValue <== nonMembershipOldValue[tx];
    blocklist[tx].isOld0 <== nonMembershipIsOld0[tx];

    sumIns += inAmount[tx];
  }

  component outCommitment[nOuts];
  component outRange[nOuts];
  var sumOuts = 0;
  for (var tx = 0; tx < nOuts; tx++) {
    outCommitment[tx] = Poseidon2Hash(3, 1);
    outCommitment[tx].in[0] <== outAmount[tx];
    outCommitment[tx].in[1] <== outPubkey[tx];
    outCommitment[tx].in[2] <== outBlinding[tx];
    outCommitment[tx].out === outputCommitment[tx];
    // 248 bits keeps every sum far from wrapping around the field.
    outRange[tx] = Num2Bits(248);
    outRange[tx].in <== outAmount[tx];
    sumOuts += outAmount[tx];
  }

  // No two inputs may share a nullifier.
  component sameNullifier[nIns * (nIns - 1) / 2];
  var k = 0;
  for (var i = 0; i < nIns - 1; i++) {
    for (var j = i + 1; j < nIns; j++) {
      sameNullifier[k] = IsEqual();
      sameNullifier[k].in[0] <== inputNullifier[i];
      sameNullifier[k].in[1] <== inputNullifier[j];
      sameNullifier[k].out === 0;
      k++;
    }
  }

  sumIns + publicAmount === sumOuts;

  // A quadratic use keeps extDataHash bound as a public input under optimisation.
  signal extDataSquare <== extDataHash * extDataHash;
}
