// Turns the pool's confirmed events into the agents' notes (agents are named by scoped id, `owner/agentId`). Outputs of the proxy's own transactions are
// registered as pending notes before sending and credited here when their commitment appears (exactly
// once, keyed by commitment), whoever is running then; nullifiers mark notes spent; and outputs nobody
// expected are tried against every known agent's key, after learning agents from their sealed
// registrations — which is how an empty store is rebuilt from the chain.
import { decryptNote } from '../../crypto/index.ts';
import { parseScopedId, scopedId } from '../domain/agent-ref.ts';
import { FLOAT_ACCOUNT_ID, isInternalAccount } from '../domain/float-account.ts';
import type { EncryptedStore, StoreOp } from '../store/encrypted-store.ts';
import type { Logger } from '../util/logger.ts';
import type { AgentKeyring } from './agent-keyring.ts';
import type { AgentRegistry } from './agents.ts';
import type { NewNote, NoteBook } from './notebook.ts';
import type { CommitmentEvent, PoolIndexer } from './pool-indexer.ts';
import { confirmedNote } from './pool-transaction.ts';

interface PendingNote {
  agentId: string;
  amount: bigint;
  blinding: bigint;
}

interface NullifierIndex {
  agentId: string;
  commitment: bigint;
}

/** A transaction's output; `owner` (a scoped id) when it is not the operation's own agent's note. */
export type Output = { commitment: bigint; amount: bigint; blinding: bigint; owner?: string };

export interface NoteCreditingDeps {
  store: EncryptedStore;
  notes: NoteBook;
  agents: AgentRegistry;
  indexer: PoolIndexer;
  keyring: AgentKeyring;
  logger: Logger;
}

export class NoteCrediting {
  readonly #d: NoteCreditingDeps;

  constructor(deps: NoteCreditingDeps) {
    this.#d = deps;
    deps.indexer.onCommitments((commitments, nullifiers) => this.#onEvents(commitments, nullifiers));
  }

  /**
   * Store operations that register `outputs` as pending notes of the agent (or of each output's own `owner`,
   * e.g. the float account's note of a settlement); commit them before sending.
   */
  pendingOps(agentId: string, outputs: Output[]): StoreOp[] {
    return outputs.map((o) => ({
      type: 'put' as const,
      key: this.#pendingKey(o.commitment),
      value: { agentId: o.owner ?? agentId, amount: o.amount, blinding: o.blinding } satisfies PendingNote,
    }));
  }

  /** Store operations that forget pending notes of a transaction the ledger refused. */
  dropPendingOps(outputs: Output[]): StoreOp[] {
    return outputs.map((o) => ({ type: 'del' as const, key: this.#pendingKey(o.commitment) }));
  }

  /**
   * Applies confirmed events one transaction at a time, and for each agent a transaction touches, its spent
   * notes and its new notes in ONE note-book batch: a balance never shows a spend without its change.
   */
  async #onEvents(
    commitments: CommitmentEvent[],
    nullifiers: Array<{ nullifier: bigint; txHash: string }>,
  ): Promise<void> {
    // Registrations first: a recovering proxy learns an agent in the same transaction as its first note.
    for (const event of commitments) {
      const registration = this.#d.keyring.openRegistration(event.encryptedOutput);
      if (registration === undefined || (await this.#d.agents.get(registration)) !== undefined) continue;
      await this.#d.agents.ensure(registration);
      // A transaction whose outputs this proxy registered as pending is a new agent's first deposit; anything
      // else is an agent learnt from the chain alone (a rebuilt store).
      if (await this.#expected(event.txHash, commitments))
        this.#d.logger.log('debug', 'agent added by its first deposit', { ledger: event.ledger });
      else this.#d.logger.log('info', 'agent recovered from the chain', { ledger: event.ledger });
    }
    const order: string[] = [];
    const byTx = new Map<string, { spent: NullifierIndex[]; created: CommitmentEvent[] }>();
    const entry = (txHash: string) => {
      let e = byTx.get(txHash);
      if (e === undefined) {
        e = { spent: [], created: [] };
        byTx.set(txHash, e);
        order.push(txHash);
      }
      return e;
    };
    for (const { nullifier, txHash } of nullifiers) {
      const index = await this.#d.store.get<NullifierIndex>(this.#nullifierKey(nullifier));
      if (index !== undefined) entry(txHash).spent.push(index);
    }
    for (const event of commitments) entry(event.txHash).created.push(event);
    // where each nullifier of this pass was spent: a note created and spent within one pass (a replay) is
    // marked spent by the transaction that spent it, not the one that created it
    const spentIn = new Map(nullifiers.map(({ nullifier, txHash }) => [nullifier, txHash]));

    for (const txHash of order) {
      const { spent, created } = byTx.get(txHash)!;
      const perAgent = new Map<string, { inputs: bigint[]; outputs: NewNote[]; extra: StoreOp[] }>();
      const forAgent = (agentId: string) => {
        let a = perAgent.get(agentId);
        if (a === undefined) {
          a = { inputs: [], outputs: [], extra: [] };
          perAgent.set(agentId, a);
        }
        return a;
      };
      for (const index of spent) forAgent(index.agentId).inputs.push(index.commitment);
      const unexpected: CommitmentEvent[] = [];
      for (const event of created) {
        const pendingKey = this.#pendingKey(event.commitment);
        const pending = await this.#d.store.get<PendingNote>(pendingKey);
        if (pending === undefined) {
          unexpected.push(event);
          continue;
        }
        const note = {
          ...confirmedNote(
            this.#d.keyring.crypto(pending.agentId),
            { commitment: event.commitment, amount: pending.amount, blinding: pending.blinding },
            event,
          ),
          createdTx: txHash,
        };
        const a = forAgent(pending.agentId);
        a.outputs.push(note);
        a.extra.push({ type: 'del', key: pendingKey }, this.#nullifierOp(pending.agentId, note));
      }
      for (const [agentId, change] of perAgent) {
        // The agent exists from its first confirmed note on (a deposit that never landed leaves nothing).
        if (change.outputs.length > 0 && !isInternalAccount(agentId))
          await this.#d.agents.ensure(parseScopedId(agentId));
        const locked = change.inputs.length
          ? (await this.#d.notes.notes(agentId)).find((n) => n.commitment === change.inputs[0])?.lockedBy
          : undefined;
        await this.#d.notes.applySpend(
          agentId,
          { opId: locked ?? `chain:${txHash}`, txHash, inputs: change.inputs, outputs: change.outputs },
          change.extra,
        );
        // Events applied late (a restart, a replay): a new note may already be spent further on.
        for (const note of change.outputs) {
          if (!this.#d.indexer.spent.has(note.nullifier)) continue;
          const spentTx = spentIn.get(note.nullifier) ?? txHash;
          await this.#d.notes.applySpend(agentId, {
            opId: `chain:${spentTx}`,
            txHash: spentTx,
            inputs: [note.commitment],
            outputs: [],
          });
        }
      }
      for (const event of unexpected) await this.#discover(event, spentIn);
    }
  }

  /**
   * Tries the float account's key and every known agent's key on an output nobody expected (recovery from the
   * chain alone).
   */
  async #discover(event: CommitmentEvent, spentIn: Map<bigint, string>): Promise<void> {
    if (event.encryptedOutput.length !== 120) return;
    const accounts = [FLOAT_ACCOUNT_ID, ...(await this.#d.agents.all()).map((a) => scopedId(a))];
    for (const scoped of accounts) {
      const plain = decryptNote(
        event.encryptedOutput,
        this.#d.keyring.crypto(scoped).keys.encryptionSecretKey,
      );
      if (plain === null) continue;
      if (plain.amount === 0n) return;
      try {
        await this.#credit(scoped, { commitment: event.commitment, ...plain }, event, spentIn);
      } catch {
        // Decrypted, but the commitment is not this key's note: ignore it.
      }
      return;
    }
  }

  async #credit(
    agentId: string,
    output: Output,
    event: CommitmentEvent,
    spentIn: Map<bigint, string>,
  ): Promise<void> {
    const note = {
      ...confirmedNote(this.#d.keyring.crypto(agentId), output, event),
      createdTx: event.txHash,
    };
    // The agent exists from its first confirmed note on (a deposit that never landed leaves nothing).
    if (!isInternalAccount(agentId)) await this.#d.agents.ensure(parseScopedId(agentId));
    await this.#d.notes.credit(agentId, [note], [this.#nullifierOp(agentId, note)]);
    // Replaying history (recovery): the note may already be spent further on.
    if (this.#d.indexer.spent.has(note.nullifier)) {
      const spentTx = spentIn.get(note.nullifier) ?? event.txHash;
      await this.#d.notes.applySpend(agentId, {
        opId: `chain:${spentTx}`,
        txHash: spentTx,
        inputs: [note.commitment],
        outputs: [],
      });
    }
  }

  #nullifierOp(agentId: string, note: NewNote): StoreOp {
    return {
      type: 'put',
      key: this.#nullifierKey(note.nullifier),
      value: { agentId, commitment: note.commitment } satisfies NullifierIndex,
    };
  }

  /** Whether any output of transaction `txHash` is a pending note this proxy registered before sending it. */
  async #expected(txHash: string, commitments: CommitmentEvent[]): Promise<boolean> {
    for (const event of commitments)
      if (
        event.txHash === txHash &&
        (await this.#d.store.get(this.#pendingKey(event.commitment))) !== undefined
      )
        return true;
    return false;
  }

  #pendingKey(commitment: bigint): string {
    return this.#d.store.key('pending-note', commitment.toString(16));
  }

  #nullifierKey(nullifier: bigint): string {
    return this.#d.store.key('nullifier', nullifier.toString(16));
  }
}
