// Writes the Rust contracts' proof fixtures with the project's own prover (`npm run build` first: it makes
// build/circuits/policy_tx_2_2's circuit, development proving key and verification key):
//  * contracts/verifier/testdata/policy_tx_2_2.json: the verification key in the contract's encoding, one proof
//    (A ‖ B ‖ C, 256 bytes) and its 11 public inputs;
//  * contracts/pool/testdata/transactions.json: the same key, the ASP setup, and a deposit, a withdrawal and a
//    disbursement proved in sequence against the pool tree they build (roots from src/crypto's MerkleTree).
// Proofs are randomised and the development key is made per machine, so the output differs on every run; the
// committed files are self-consistent (key, proofs and inputs from one run), which is all the tests need.
// Run: npx tsx scripts/gen-contract-fixtures.ts
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { StrKey } from '#stellar-sdk';
import {
  buildTransactionInputs,
  circuitArtifacts,
  loadWitnessCalculator,
  POLICY_CIRCUIT,
  type SpentNote,
} from '../src/circuit/index.ts';
import {
  type ExtData,
  hash,
  MerkleTree,
  membershipLeaf,
  notePublicKey,
  SparseMerkleTree,
  ENCRYPTED_NOTE_BYTES,
} from '../src/crypto/index.ts';
import { loadProver, verify } from '../src/prover/index.ts';

const VERIFIER_FIXTURE = fileURLToPath(
  new URL('../contracts/verifier/testdata/policy_tx_2_2.json', import.meta.url),
);
const POOL_FIXTURE = fileURLToPath(new URL('../contracts/pool/testdata/transactions.json', import.meta.url));

const USDC = 10_000_000n;
const hex = (x: bigint) => x.toString(16).padStart(64, '0');
const bytesHex = (b: Uint8Array) => Buffer.from(b).toString('hex');

interface SnarkjsVkey {
  nPublic: number;
  vk_alpha_1: string[];
  vk_beta_2: string[][];
  vk_gamma_2: string[][];
  vk_delta_2: string[][];
  IC: string[][];
}

const g1 = (p: string[]) => hex(BigInt(p[0] as string)) + hex(BigInt(p[1] as string));
const g2 = (p: string[][]) => {
  const [x, y] = p as [string[], string[]];
  return [x[1], x[0], y[1], y[0]].map((v) => hex(BigInt(v as string))).join('');
};

/** Deterministic stand-ins for secrets (the fixture's notes belong to nobody). */
const secret = (i: number) => hash([BigInt(i)], 77n);

async function main(): Promise<void> {
  const art = circuitArtifacts(POLICY_CIRCUIT.id);
  const vkey = JSON.parse(await readFile(art.vkey, 'utf8')) as SnarkjsVkey;
  const vk = {
    alpha: g1(vkey.vk_alpha_1),
    beta: g2(vkey.vk_beta_2),
    gamma: g2(vkey.vk_gamma_2),
    delta: g2(vkey.vk_delta_2),
    ic: vkey.IC.map(g1),
  };
  const prover = await loadProver(art.zkey);
  const witness = await loadWitnessCalculator(art.wasm);

  // the ASP setup the pool test reproduces on-chain: two allowlisted keys (ours second), one blocked key
  const sk = secret(1);
  const pk = notePublicKey(sk);
  const memBlinding = secret(2);
  const aspTree = new MerkleTree(POLICY_CIRCUIT.aspLevels);
  const otherLeaf = membershipLeaf(notePublicKey(secret(3)), secret(4));
  aspTree.insert(otherLeaf);
  const ourLeaf = membershipLeaf(pk, memBlinding);
  const memIndex = aspTree.insert(ourLeaf);
  const blocklist = new SparseMerkleTree();
  const blocked = notePublicKey(secret(5));
  blocklist.insert(blocked, 1n);

  const tree = new MerkleTree(POLICY_CIRCUIT.levels);
  const recipient = StrKey.encodeContract(Buffer.alloc(32, 0x11));
  const payout = StrKey.encodeContract(Buffer.alloc(32, 0x22));
  let blindings = 10;
  const note = (tag: number) =>
    Uint8Array.from({ length: ENCRYPTED_NOTE_BYTES }, (_, i) => (i * 7 + tag) & 0xff);
  const dummy = (): SpentNote => ({
    amount: 0n,
    secretKey: sk,
    blinding: secret(blindings++),
    path: { pathElements: new Array<bigint>(POLICY_CIRCUIT.levels).fill(0n), pathIndex: 0n },
  });

  async function prove(
    kind: string,
    inputs: SpentNote[],
    outAmounts: [bigint, bigint],
    extAmount: bigint,
    to: string,
  ) {
    const outputs = outAmounts.map((amount) => ({ amount, publicKey: pk, blinding: secret(blindings++) }));
    const extData: ExtData = {
      recipient: to,
      extAmount,
      encryptedOutput0: note(blindings),
      encryptedOutput1: note(blindings + 1),
    };
    const membership = { root: aspTree.root, blinding: memBlinding, path: aspTree.path(memIndex) };
    const nonMembership = blocklist.nonMembershipProof(pk, POLICY_CIRCUIT.smtLevels);
    const prepared = buildTransactionInputs({
      root: tree.root,
      inputs,
      outputs,
      extData,
      membership: [membership, membership],
      nonMembership: [nonMembership, nonMembership],
    });
    const result = await prover.prove(await witness.calculateWtns(prepared.inputs));
    if (!(await verify(await prover.verificationKey(), result.proof, result.publicSignals))) {
      throw new Error(`${kind}: the prover's proof does not verify`);
    }
    const signals = result.publicSignals.map((s) => BigInt(s));
    const [c0, c1] = prepared.commitments as [bigint, bigint];
    const index = tree.nextIndex;
    tree.insertPair(c0, c1);
    return {
      tx: {
        kind,
        proof: bytesHex(result.bytes),
        public_inputs: signals.map(hex),
        ext_data: {
          recipient: to,
          ext_amount: extAmount.toString(),
          encrypted_output0: bytesHex(extData.encryptedOutput0),
          encrypted_output1: bytesHex(extData.encryptedOutput1),
        },
        index,
        root_after: hex(tree.root),
      },
      outputs: outputs.map((o, i) => ({ ...o, commitment: prepared.commitments[i] as bigint })),
    };
  }

  const spend = (o: { amount: bigint; blinding: bigint }, index: number): SpentNote => ({
    amount: o.amount,
    secretKey: sk,
    blinding: o.blinding,
    path: tree.path(index),
  });

  console.log('proving a deposit, a withdrawal and a disbursement…');
  const deposit = await prove('deposit', [dummy(), dummy()], [10n * USDC, 0n], 10n * USDC, recipient);
  const withdraw = await prove(
    'withdraw',
    [spend(deposit.outputs[0]!, 0), dummy()],
    [6n * USDC, 0n],
    -4n * USDC,
    recipient,
  );
  const disburse = await prove(
    'disburse',
    [spend(withdraw.outputs[0]!, 2), dummy()],
    [5n * USDC, 0n],
    -1n * USDC,
    payout,
  );

  const header = {
    generator: 'npx tsx scripts/gen-contract-fixtures.ts (after npm run build)',
    circuit: POLICY_CIRCUIT.id,
    note: 'development proving key made by the build (not from a ceremony); proofs are randomised',
  };
  writeFileSync(
    VERIFIER_FIXTURE,
    `${JSON.stringify(
      { ...header, vk, proof: deposit.tx.proof, public_inputs: deposit.tx.public_inputs },
      null,
      1,
    )}\n`,
  );
  writeFileSync(
    POOL_FIXTURE,
    `${JSON.stringify(
      {
        ...header,
        vk,
        levels: POLICY_CIRCUIT.levels,
        asp_levels: POLICY_CIRCUIT.aspLevels,
        membership_leaves: [hex(otherLeaf), hex(ourLeaf)],
        membership_root: hex(aspTree.root),
        blocked: [{ key: hex(blocked), value: hex(1n) }],
        non_membership_root: hex(blocklist.root),
        empty_root: hex(new MerkleTree(POLICY_CIRCUIT.levels).root),
        payout_wallet: payout,
        transactions: [deposit.tx, withdraw.tx, disburse.tx],
      },
      null,
      1,
    )}\n`,
  );
  console.log(`wrote ${VERIFIER_FIXTURE}\nwrote ${POOL_FIXTURE}`);
}

await main();
process.exit(0);
