// Builds one `transact` call for an agent: spends up to two of its notes, creates two outputs, proves
// the statement through the prover daemon, and returns the contract arguments (proof struct, ExtData). The
// notes of one proof are in one tree: the proof's root is that tree's (the contract finds a full tree's final
// root by the tree the proof names).
import { createHmac } from 'node:crypto';
import type { xdr } from '#stellar-sdk';
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
import { DomainError, messageOf } from '../domain/errors.ts';
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

/** An input note with the keys of its owner, when that is not the transaction's spender. */
export interface OwnedNote {
  note: NoteRecord;
  owner: AgentCrypto;
}

export interface TransferOutput {
  amount: bigint;
  /** keys of the note's owner */
  to: AgentCrypto;
  /** scoped id of the note book to credit (default: the operation's agent) */
  owner?: string;
}

/** One agent's transaction: its own notes in, its change and a zero note out, an amount in or out. */
interface AgentProof {
  agent: AgentCrypto;
  /** ≤ 2 of the agent's notes */
  inputs: NoteRecord[];
  /** the agent's new note */
  change: bigint;
  /** moved into the pool (> 0) or out of it to `recipient` (< 0) */
  extAmount: bigint;
  recipient: string;
  /** the sealed agent registration that replaces the zero note's encrypted output */
  registration?: Uint8Array;
}

/** A transfer between note books (settlement): notes of several owners in, two notes out. */
interface TransferProof {
  spender: AgentCrypto;
  inputs: Array<NoteRecord | OwnedNote>;
  outputs: [TransferOutput, TransferOutput];
  extAmount: bigint;
  recipient: string;
  registration?: Uint8Array;
}

/** Where the pool's trees stand, as the indexer has read them. */
export interface TreeState {
  /** the tree the latest commitment went to */
  tree: number;
  /** leaves used in it */
  leaves: number;
  /** leaves one tree takes */
  capacity: number;
}

export interface ProvedTransaction {
  args: { proof: xdr.ScVal; extData: xdr.ScVal };
  /** Output notes (amount > 0 only) with their commitments, to credit once confirmed. */
  outputs: Array<{ commitment: bigint; amount: bigint; blinding: bigint; owner?: string }>;
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
   * Proves: spend `inputs` (≤ 2 notes of the agent), create two outputs to the agent's key — `change`, and a
   * second always zero-valued whose encrypted output is replaced by the sealed agent `registration` when given
   * — and move `extAmount` in (> 0) or out (< 0, to `recipient`).
   */
  async prove({
    agent,
    inputs,
    change,
    extAmount,
    recipient,
    registration,
  }: AgentProof): Promise<ProvedTransaction> {
    return this.proveTransfer({
      spender: agent,
      inputs,
      outputs: [
        { amount: change, to: agent },
        { amount: 0n, to: agent },
      ],
      extAmount,
      recipient,
      registration,
    });
  }

  /**
   * Proves a transaction that spends `inputs` (≤ 2 notes of `spender`, or of the owner given with a note: a
   * settlement spends an agent's note and a float-account note together) and creates `outputs`, each a note to
   * its own key (`owner`, a scoped id, says whose note book credits it; default: the operation's agent). Both
   * encrypted outputs are 120-byte notes, unless `registration` replaces the second (which must be zero).
   */
  async proveTransfer({
    spender,
    inputs,
    outputs,
    extAmount,
    recipient,
    registration,
  }: TransferProof): Promise<ProvedTransaction> {
    if (inputs.length > POLICY_CIRCUIT.nIns) throw new Error('at most two notes per proof');
    if (registration !== undefined && outputs[1].amount !== 0n)
      throw new Error('a registration replaces only a zero-valued second output');
    const forest = this.#indexer.poolTree;
    // Each input is proved with its owner's key (the spender's unless given), and so its allowlist and
    // blocklist proofs; dummy inputs use the spender's.
    const owned = inputs.map((i) => ('note' in i ? i : { note: i, owner: spender }));
    for (const { note } of owned) await this.#indexer.waitForLeaf(note.leafIndex);
    const trees = new Set(owned.map(({ note }) => forest.placeOf(note.leafIndex).tree));
    if (trees.size > 1) throw new Error('the notes of one proof must be in one tree');
    const tree = trees.size === 1 ? [...trees][0]! : forest.currentTree;
    const spent: SpentNote[] = owned.map(({ note, owner }) => ({
      amount: note.amount,
      secretKey: owner.keys.noteSecretKey,
      blinding: note.blinding,
      path: forest.path(note.leafIndex),
    }));
    const keys = owned.map(({ owner }) => owner);
    while (spent.length < POLICY_CIRCUIT.nIns) {
      spent.push(dummyInput(spender.keys.noteSecretKey));
      keys.push(spender);
    }
    const membership = keys.map((k) => ({
      root: this.#indexer.aspTree.root,
      blinding: k.membershipBlinding,
      path: this.#indexer.aspTree.path(findLeaf(this.#indexer, k.membershipLeaf)),
    }));
    const nonMembership = keys.map((k) =>
      this.#indexer.blocklist.nonMembershipProof(k.keys.notePublicKey, POLICY_CIRCUIT.smtLevels),
    );

    const created = outputs.map((o) => ({
      amount: o.amount,
      publicKey: o.to.keys.notePublicKey,
      blinding: randomFieldElement(),
    }));
    const extData: ExtData = {
      recipient,
      extAmount,
      encryptedOutput0: encryptNote(created[0], outputs[0].to.keys.encryptionPublicKey),
      encryptedOutput1: registration ?? encryptNote(created[1], outputs[1].to.keys.encryptionPublicKey),
    };
    const prepared = buildTransactionInputs({
      root: forest.rootOf(tree),
      inputs: spent,
      outputs: created,
      extData,
      membership,
      nonMembership,
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
      throw new DomainError(
        'proof_failed',
        `the prover could not prove the transaction: ${messageOf(error)}`,
        { cause: error },
      );
    }
    const proveMs = Math.round(performance.now() - started);
    this.#metrics.proofDuration.observe(proveMs / 1000);
    return {
      args: {
        proof: poolProofToScVal(poolProofFromSignals(proof, prepared.publicSignals, tree)),
        extData: extDataToScVal(extData),
      },
      outputs: created
        .map((o, i) => ({
          commitment: prepared.commitments[i],
          amount: o.amount,
          blinding: o.blinding,
          ...(outputs[i].owner !== undefined && { owner: outputs[i].owner }),
        }))
        .filter((o) => o.amount > 0n),
      nullifiers: prepared.nullifiers,
      proveMs,
    };
  }

  /** The tree a note's commitment is in (the notes of one proof must share it). */
  treeOf(note: NoteRecord): number {
    return this.#indexer.poolTree.placeOf(note.leafIndex).tree;
  }

  /** The tree new outputs go to (once it is full, the next one). */
  get currentTree(): number {
    return this.#indexer.poolTree.currentTree;
  }

  /** The current tree, how many of its leaves are used, and how many one tree takes. */
  treeState(): TreeState {
    const forest = this.#indexer.poolTree;
    return { tree: forest.currentTree, leaves: forest.currentTreeLeaves, capacity: forest.capacity };
  }
}

function findLeaf(indexer: PoolIndexer, leaf: bigint): number {
  for (let i = 0; i < indexer.aspTree.nextIndex; i++) if (indexer.aspTree.leaf(i) === leaf) return i;
  throw new DomainError('service_unavailable', 'the agent is not in the ASP allowlist yet');
}

/**
 * A confirmed output as a note record: its position in the pool and its leaf index in its own tree from the
 * indexer, its nullifier (which commits to that leaf index) from the agent's key.
 */
export function confirmedNote(
  agent: AgentCrypto,
  output: { commitment: bigint; amount: bigint; blinding: bigint },
  at: { leafIndex: number; indexInTree: number },
): NewNote {
  const check = noteCommitment(output.amount, agent.keys.notePublicKey, output.blinding);
  if (check !== output.commitment) throw new Error('note does not belong to this agent');
  return {
    ...output,
    leafIndex: at.leafIndex,
    nullifier: noteNullifier(output.commitment, BigInt(at.indexInTree), agent.keys.noteSecretKey),
  };
}
