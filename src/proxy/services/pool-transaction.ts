// Builds one `transact` call for an agent: spends up to two of its notes, creates two outputs, proves
// the statement through the prover daemon, and returns the contract arguments (proof struct, ExtData).
import { createHmac } from 'node:crypto';
import { nativeToScVal, xdr } from '@stellar/stellar-sdk';
import {
  buildTransactionInputs,
  dummyInput,
  POLICY_CIRCUIT,
  randomFieldElement,
  type SpentNote,
} from '../../circuit/index.ts';
import {
  type AgentKeys,
  bytesToBigint,
  deriveAgentKeys,
  type ExtData,
  encryptNote,
  extDataToScVal,
  FIELD_MODULUS,
  fieldToBytes32,
  membershipLeaf,
  commitment as noteCommitment,
  nullifier as noteNullifier,
} from '../../crypto/index.ts';
import type { ProverClient } from '../../prover/client.ts';
import { ProblemError } from '../errors.ts';
import type { NewNote, NoteRecord } from './notebook.ts';
import type { PoolIndexer } from './pool-indexer.ts';

export interface AgentCrypto {
  keys: AgentKeys;
  membershipBlinding: bigint;
  membershipLeaf: bigint;
}

/** The agent's keys (derived, never stored) and its ASP allowlist leaf. */
export function agentCrypto(masterKey: Uint8Array, agentId: string): AgentCrypto {
  const keys = deriveAgentKeys(masterKey, agentId);
  const mac = createHmac('sha256', masterKey).update(`asp-membership-blinding/v1\0${agentId}`).digest();
  const membershipBlinding = bytesToBigint(new Uint8Array(mac)) % FIELD_MODULUS;
  return { keys, membershipBlinding, membershipLeaf: membershipLeaf(keys.notePublicKey, membershipBlinding) };
}

export interface PlannedOutput {
  amount: bigint;
}

export interface ProvedTransaction {
  args: { proof: xdr.ScVal; extData: xdr.ScVal };
  /** Output notes (amount > 0 only) with their commitments, to credit once confirmed. */
  outputs: Array<{ commitment: bigint; amount: bigint; blinding: bigint }>;
  nullifiers: bigint[];
  proveMs: number;
}

const u256 = (v: bigint) => nativeToScVal(v, { type: 'u256' });
const entry = (key: string, val: xdr.ScVal) => new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(key), val });

function proofScVal(bytes: Uint8Array, publicSignals: bigint[]): xdr.ScVal {
  const [root, publicAmount, extDataHash, n0, n1, c0, c1, memRoot, , nonMemRoot] = publicSignals;
  const groth16 = xdr.ScVal.scvMap([
    entry('a', xdr.ScVal.scvBytes(Buffer.from(bytes.subarray(0, 64)))),
    entry('b', xdr.ScVal.scvBytes(Buffer.from(bytes.subarray(64, 192)))),
    entry('c', xdr.ScVal.scvBytes(Buffer.from(bytes.subarray(192, 256)))),
  ]);
  return xdr.ScVal.scvMap([
    entry('asp_membership_root', u256(memRoot)),
    entry('asp_non_membership_root', u256(nonMemRoot)),
    entry('ext_data_hash', xdr.ScVal.scvBytes(Buffer.from(fieldToBytes32(extDataHash)))),
    entry('input_nullifiers', xdr.ScVal.scvVec([u256(n0), u256(n1)])),
    entry('output_commitment0', u256(c0)),
    entry('output_commitment1', u256(c1)),
    entry('proof', groth16),
    entry('public_amount', u256(publicAmount)),
    entry('root', u256(root)),
  ]);
}

export class PoolTransactionProver {
  readonly #indexer: PoolIndexer;
  readonly #prover: ProverClient;
  readonly #circuitId: string;
  readonly #timeoutMs: number;

  constructor(indexer: PoolIndexer, prover: ProverClient, circuitId: string, timeoutMs: number) {
    this.#indexer = indexer;
    this.#prover = prover;
    this.#circuitId = circuitId;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Proves: spend `inputs` (≤ 2 notes of the agent), create `outputs` (2 amounts, to the agent's key),
   * move `extAmount` in (> 0) or out (< 0, to `recipient`).
   */
  async prove(
    agent: AgentCrypto,
    inputs: NoteRecord[],
    outputAmounts: [bigint, bigint],
    extAmount: bigint,
    recipient: string,
  ): Promise<ProvedTransaction> {
    if (inputs.length > POLICY_CIRCUIT.nIns) throw new Error('at most two notes per proof');
    const tree = this.#indexer.poolTree;
    const sk = agent.keys.noteSecretKey;
    const spent: SpentNote[] = inputs.map((note) => ({
      amount: note.amount,
      secretKey: sk,
      blinding: note.blinding,
      path: tree.path(note.leafIndex),
    }));
    while (spent.length < POLICY_CIRCUIT.nIns) spent.push(dummyInput(sk));

    const aspIndex = findLeaf(this.#indexer, agent.membershipLeaf);
    const membership = {
      root: this.#indexer.aspTree.root,
      blinding: agent.membershipBlinding,
      path: this.#indexer.aspTree.path(aspIndex),
    };
    const nonMembership = this.#indexer.blocklist.nonMembershipProof(
      agent.keys.notePublicKey,
      POLICY_CIRCUIT.smtLevels,
    );

    const outputs = outputAmounts.map((amount) => ({
      amount,
      publicKey: agent.keys.notePublicKey,
      blinding: randomFieldElement(),
    }));
    const extData: ExtData = {
      recipient,
      extAmount,
      encryptedOutput0: encryptNote(outputs[0], agent.keys.encryptionPublicKey),
      encryptedOutput1: encryptNote(outputs[1], agent.keys.encryptionPublicKey),
    };
    const prepared = buildTransactionInputs({
      root: tree.root,
      inputs: spent,
      outputs,
      extData,
      membership: [membership, membership],
      nonMembership: [nonMembership, nonMembership],
    });
    const started = Date.now();
    let proof: Uint8Array;
    try {
      proof = (
        await this.#prover.prove(
          this.#circuitId,
          { inputs: prepared.inputs },
          { deadlineMs: this.#timeoutMs },
        )
      ).proof;
    } catch (error) {
      throw new ProblemError(
        'proof_failed',
        `the prover could not prove the transaction: ${(error as Error).message}`,
        { cause: error },
      );
    }
    return {
      args: { proof: proofScVal(proof, prepared.publicSignals), extData: extDataToScVal(extData) },
      outputs: outputs
        .map((o, i) => ({ commitment: prepared.commitments[i], amount: o.amount, blinding: o.blinding }))
        .filter((o) => o.amount > 0n),
      nullifiers: prepared.nullifiers,
      proveMs: Date.now() - started,
    };
  }
}

function findLeaf(indexer: PoolIndexer, leaf: bigint): number {
  for (let i = 0; i < indexer.aspTree.nextIndex; i++) if (indexer.aspTree.leaf(i) === leaf) return i;
  throw new ProblemError('service_unavailable', 'the agent is not in the ASP allowlist yet');
}

/** A confirmed output as a note record (leaf index from the indexer, nullifier from the agent's key). */
export function confirmedNote(
  agent: AgentCrypto,
  output: { commitment: bigint; amount: bigint; blinding: bigint },
  leafIndex: number,
): NewNote {
  const check = noteCommitment(output.amount, agent.keys.notePublicKey, output.blinding);
  if (check !== output.commitment) throw new Error('note does not belong to this agent');
  return {
    ...output,
    leafIndex,
    nullifier: noteNullifier(output.commitment, BigInt(leafIndex), agent.keys.noteSecretKey),
  };
}
