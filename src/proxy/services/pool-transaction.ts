// Builds one `transact` call for an agent: spends up to two of its notes, creates two outputs, proves
// the statement through the prover daemon, and returns the contract arguments (proof struct, ExtData).
import { createHmac } from 'node:crypto';
import type { xdr } from '@stellar/stellar-sdk';
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
  membershipLeaf,
  commitment as noteCommitment,
  nullifier as noteNullifier,
} from '../../crypto/index.ts';
import { poolProofFromSignals, poolProofToScVal } from '../../ledger/pool-args.ts';
import type { ProverClient } from '../../prover/client.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { ProblemError } from '../../api/problem.ts';
import type { ProxyMetrics } from '../util/metrics.ts';
import type { NewNote, NoteRecord } from './notebook.ts';
import type { PoolIndexer } from './pool-indexer.ts';

export interface AgentCrypto {
  keys: AgentKeys;
  membershipBlinding: bigint;
  membershipLeaf: bigint;
}

/** The agent's keys (derived, never stored) and its ASP allowlist leaf; the agent is (owner, agentId). */
export function agentCrypto(masterKey: Uint8Array, agent: AgentRef): AgentCrypto {
  const keys = deriveAgentKeys(masterKey, agent.agentId, agent.owner);
  const mac = createHmac('sha256', masterKey)
    .update(`asp-membership-blinding/v2\0${agent.owner}\0${agent.agentId}`)
    .digest();
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

export class PoolTransactionProver {
  readonly #indexer: PoolIndexer;
  readonly #prover: ProverClient;
  readonly #circuitId: string;
  readonly #timeoutMs: number;
  readonly #metrics: ProxyMetrics;

  constructor(
    indexer: PoolIndexer,
    prover: ProverClient,
    circuitId: string,
    timeoutMs: number,
    metrics: ProxyMetrics,
  ) {
    this.#metrics = metrics;
    this.#indexer = indexer;
    this.#prover = prover;
    this.#circuitId = circuitId;
    this.#timeoutMs = timeoutMs;
  }

  /**
   * Proves: spend `inputs` (≤ 2 notes of the agent), create two outputs to the agent's key (the second
   * always zero-valued, its encrypted output replaced by the sealed agent `registration`), and move
   * `extAmount` in (> 0) or out (< 0, to `recipient`).
   */
  async prove(
    agent: AgentCrypto,
    inputs: NoteRecord[],
    amount: bigint,
    extAmount: bigint,
    recipient: string,
    registration: Uint8Array,
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

    const outputs = [amount, 0n].map((value) => ({
      amount: value,
      publicKey: agent.keys.notePublicKey,
      blinding: randomFieldElement(),
    }));
    const extData: ExtData = {
      recipient,
      extAmount,
      encryptedOutput0: encryptNote(outputs[0], agent.keys.encryptionPublicKey),
      encryptedOutput1: registration,
    };
    const prepared = buildTransactionInputs({
      root: tree.root,
      inputs: spent,
      outputs,
      extData,
      membership: [membership, membership],
      nonMembership: [nonMembership, nonMembership],
    });
    const started = performance.now();
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
    const proveMs = Math.round(performance.now() - started);
    this.#metrics.proofDuration.observe(proveMs / 1000);
    return {
      args: {
        proof: poolProofToScVal(poolProofFromSignals(proof, prepared.publicSignals)),
        extData: extDataToScVal(extData),
      },
      outputs: outputs
        .map((o, i) => ({ commitment: prepared.commitments[i], amount: o.amount, blinding: o.blinding }))
        .filter((o) => o.amount > 0n),
      nullifiers: prepared.nullifiers,
      proveMs,
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
