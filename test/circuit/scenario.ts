// A small world for circuit tests: a pool tree, an ASP allowlist and blocklist, and two users' notes.

import {
  type AspMembershipProof,
  type CreatedNote,
  dummyInput,
  POLICY_CIRCUIT,
  randomFieldElement,
  type SpentNote,
  type TransactionDescription,
} from '../../src/circuit/index.ts';
import {
  commitment,
  MerkleTree,
  membershipLeaf,
  notePublicKey,
  SparseMerkleTree,
} from '../../src/crypto/index.ts';

export const RECIPIENT = 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7';
const ENCRYPTED = new Uint8Array(120).fill(7);

export class Scenario {
  readonly pool = new MerkleTree(POLICY_CIRCUIT.levels);
  readonly allowlist = new MerkleTree(POLICY_CIRCUIT.aspLevels);
  readonly blocklist = new SparseMerkleTree();
  private readonly inPool = new WeakSet<SpentNote>();
  private readonly membershipIndex = new Map<bigint, { index: number; blinding: bigint }>();

  constructor() {
    // Some unrelated blocked keys so non-membership paths are not trivial.
    for (let i = 1n; i <= 6n; i++) this.blocklist.insert(notePublicKey(1000n + i), 1n);
  }

  /** Registers a key in the allowlist and returns it. */
  allow(secretKey: bigint): bigint {
    const publicKey = notePublicKey(secretKey);
    const blinding = randomFieldElement();
    const index = this.allowlist.insert(membershipLeaf(publicKey, blinding));
    this.membershipIndex.set(publicKey, { index, blinding });
    return publicKey;
  }

  block(secretKey: bigint): void {
    this.blocklist.insert(notePublicKey(secretKey), 1n);
  }

  membershipFor(secretKey: bigint): AspMembershipProof {
    const entry = this.membershipIndex.get(notePublicKey(secretKey));
    if (!entry) {
      // An unlisted key gets a well-formed proof for a leaf that is not in the tree.
      return { root: this.allowlist.root, blinding: 0n, path: this.allowlist.path(0) };
    }
    return { root: this.allowlist.root, blinding: entry.blinding, path: this.allowlist.path(entry.index) };
  }

  nonMembershipFor(secretKey: bigint) {
    const key = notePublicKey(secretKey);
    const found = this.blocklist.find(key);
    if (found.found) {
      // A blocked key has no honest proof: claim an empty slot, which the circuit must reject.
      return {
        root: this.blocklist.root,
        siblings: new Array(POLICY_CIRCUIT.smtLevels).fill(0n),
        oldKey: 0n,
        oldValue: 0n,
        isOld0: 1n,
      };
    }
    return this.blocklist.nonMembershipProof(key, POLICY_CIRCUIT.smtLevels);
  }

  /** Puts a note in the pool (as a deposit would) and returns it spendable. */
  addNote(secretKey: bigint, amount: bigint): SpentNote {
    const blinding = randomFieldElement();
    const leaf = commitment(amount, notePublicKey(secretKey), blinding);
    const index =
      this.pool.nextIndex % 2 === 0
        ? this.pool.insertPair(leaf, randomFieldElement())[0]
        : this.pool.insert(leaf);
    const note = { amount, secretKey, blinding, path: this.pool.path(index) };
    this.inPool.add(note);
    return note;
  }

  output(amount: bigint, secretKey: bigint): CreatedNote {
    return { amount, publicKey: notePublicKey(secretKey), blinding: randomFieldElement() };
  }

  transaction(inputs: SpentNote[], outputs: CreatedNote[], extAmount: bigint): TransactionDescription {
    // Paths go stale as the tree grows: refresh those of notes that are in the tree.
    const fresh = inputs.map((n) =>
      this.inPool.has(n) ? { ...n, path: this.pool.path(Number(n.path.pathIndex)) } : n,
    );
    for (const n of fresh) if (this.inPool.has(inputs[fresh.indexOf(n)])) this.inPool.add(n);
    return {
      root: this.pool.root,
      inputs: fresh,
      outputs,
      extData: { recipient: RECIPIENT, extAmount, encryptedOutput0: ENCRYPTED, encryptedOutput1: ENCRYPTED },
      membership: inputs.map((n) => this.membershipFor(n.secretKey)),
      nonMembership: inputs.map((n) => this.nonMembershipFor(n.secretKey)),
    };
  }

  deposit(secretKey: bigint, amount: bigint): TransactionDescription {
    return this.transaction(
      [dummyInput(secretKey), dummyInput(secretKey)],
      [this.output(amount, secretKey), this.output(0n, secretKey)],
      amount,
    );
  }
}
