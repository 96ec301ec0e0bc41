// Per-agent notes and the balance model:
//   available = Σ unspent confirmed notes − reserved (in-flight withdrawals/payments) − unsettled debits.
// Every change is one atomic store batch taken under the agent's lock (in every process sharing the store),
// so concurrent requests cannot overdraw, and every credit is keyed by commitment, so replays (restart, re-indexing) credit once.
import { formatAmount } from '../../api/amount.ts';
import { DomainError } from '../domain/errors.ts';
import type { EncryptedStore, StoreOp } from '../store/encrypted-store.ts';

export type NoteState = 'unspent' | 'locked' | 'spent';

export interface NoteRecord {
  agentId: string;
  commitment: bigint;
  amount: bigint;
  blinding: bigint;
  /** the note's position in the pool across its trees (src/crypto/merkle-forest.ts) */
  leafIndex: number;
  nullifier: bigint;
  state: NoteState;
  /** Operation holding the note while a proof spending it is in flight. */
  lockedBy?: string;
  /** The transaction that created the note (absent on notes recorded before it was kept). */
  createdTx?: string;
  spentTx?: string;
}

export interface AccountRecord {
  agentId: string;
  /** Σ amounts of confirmed notes not yet spent (unspent or locked). */
  notes: bigint;
  /** Amounts promised to in-flight operations, by operation id. */
  reservations: Record<string, bigint>;
  /** Paid out of the pool wallet on the agent's behalf, not yet settled from its notes. */
  unsettled: bigint;
}

export interface NewNote {
  commitment: bigint;
  amount: bigint;
  blinding: bigint;
  leafIndex: number;
  nullifier: bigint;
  createdTx?: string;
}

const emptyAccount = (agentId: string): AccountRecord => ({
  agentId,
  notes: 0n,
  reservations: {},
  unsettled: 0n,
});

const reservedTotal = (account: AccountRecord) =>
  Object.values(account.reservations).reduce((s, v) => s + v, 0n);

export function availableOf(account: AccountRecord): bigint {
  return account.notes - reservedTotal(account) - account.unsettled;
}

export class NoteBook {
  readonly #store: EncryptedStore;
  readonly #mutex;

  constructor(store: EncryptedStore) {
    this.#store = store;
    this.#mutex = store.mutex('account');
  }

  async account(agentId: string): Promise<AccountRecord> {
    return (await this.#store.get<AccountRecord>(this.#accountKey(agentId))) ?? emptyAccount(agentId);
  }

  async available(agentId: string): Promise<bigint> {
    return availableOf(await this.account(agentId));
  }

  async notes(agentId: string): Promise<NoteRecord[]> {
    return (await this.#store.entries<NoteRecord>(this.#store.prefix('note', agentId))).map(([, n]) => n);
  }

  async unspentNotes(agentId: string): Promise<NoteRecord[]> {
    return (await this.notes(agentId)).filter((n) => n.state === 'unspent');
  }

  async hasNote(agentId: string, commitment: bigint): Promise<boolean> {
    return (await this.#store.get(this.#noteKey(agentId, commitment))) !== undefined;
  }

  /**
   * Adds confirmed notes (deposit outputs, change, recovered notes). Notes already known are skipped, so a
   * credit can be replayed safely. `extra` operations commit in the same batch. Returns the amount added.
   */
  async credit(agentId: string, notes: NewNote[], extra: StoreOp[] = []): Promise<bigint> {
    return this.#mutex.run(agentId, async () => {
      const account = await this.account(agentId);
      const ops: StoreOp[] = [...extra];
      let added = 0n;
      let any = false;
      for (const note of notes) {
        const key = this.#noteKey(agentId, note.commitment);
        if ((await this.#store.get(key)) !== undefined) continue;
        any = true;
        ops.push({ type: 'put', key, value: { ...note, agentId, state: 'unspent' } satisfies NoteRecord });
        added += note.amount;
      }
      if (!any && extra.length === 0) return 0n;
      account.notes += added;
      ops.push({ type: 'put', key: this.#accountKey(agentId), value: account });
      await this.#store.batch(ops);
      return added;
    });
  }

  /** Reserves `amount` for operation `opId`, or refuses with insufficient_balance and changes nothing. */
  async reserve(agentId: string, opId: string, amount: bigint): Promise<void> {
    await this.#mutex.run(agentId, async () => {
      const account = await this.account(agentId);
      const available = availableOf(account);
      if (available < amount) {
        throw new DomainError(
          'insufficient_balance',
          `available balance ${formatAmount(available)} USDC is less than ${formatAmount(amount)} USDC`,
        );
      }
      account.reservations[opId] = amount;
      await this.#store.put(this.#accountKey(agentId), account);
    });
  }

  /** Drops a reservation (the operation failed; nothing left the pool). */
  async release(agentId: string, opId: string): Promise<void> {
    await this.#mutex.run(agentId, async () => {
      const account = await this.account(agentId);
      const ops = await this.#unlockOps(agentId, opId);
      if (!(opId in account.reservations) && ops.length === 0) return;
      delete account.reservations[opId];
      ops.push({ type: 'put', key: this.#accountKey(agentId), value: account });
      await this.#store.batch(ops);
    });
  }

  /**
   * Turns a reservation into an unsettled debit: the money already left through the pool wallet (an x402
   * payment) and is owed by the agent until settlement spends its notes.
   */
  async commitReservation(agentId: string, opId: string): Promise<boolean> {
    return this.#mutex.run(agentId, async () => {
      const account = await this.account(agentId);
      const amount = account.reservations[opId];
      // Already committed (a replay after a crash): nothing to do.
      if (amount === undefined) return false;
      delete account.reservations[opId];
      account.unsettled += amount;
      await this.#store.put(this.#accountKey(agentId), account);
      return true;
    });
  }

  /**
   * Sets the agent's unsettled debits of a store rebuilt from the chain, before it serves anything
   * (`recover-history.ts`): what its payments took from the pool wallet and settlement has not yet moved from its
   * notes. Absolute, so a recovery interrupted and run again sets the same figure.
   */
  async restoreUnsettled(agentId: string, amount: bigint): Promise<void> {
    await this.#mutex.run(agentId, async () => {
      const account = await this.account(agentId);
      if (account.unsettled === amount) return;
      account.unsettled = amount;
      await this.#store.put(this.#accountKey(agentId), account);
    });
  }

  /**
   * Starts settling `amount` of the agent's unsettled debits: moves it from `unsettled` into a reservation of
   * settlement `opId` (available is unchanged). The settlement's spend then consumes the reservation with the
   * notes; if it fails, `returnToUnsettled` moves the amount back.
   */
  async reserveFromUnsettled(agentId: string, opId: string, amount: bigint): Promise<void> {
    await this.#mutex.run(agentId, async () => {
      const account = await this.account(agentId);
      if (amount <= 0n || amount > account.unsettled)
        throw new Error(`cannot settle ${amount} of ${account.unsettled}`);
      account.unsettled -= amount;
      account.reservations[opId] = amount;
      await this.#store.put(this.#accountKey(agentId), account);
    });
  }

  /** Undoes `reserveFromUnsettled` for a settlement that did not happen (notes it locked are unlocked). */
  async returnToUnsettled(agentId: string, opId: string): Promise<void> {
    await this.#mutex.run(agentId, async () => {
      const account = await this.account(agentId);
      const ops = await this.#unlockOps(agentId, opId);
      const amount = account.reservations[opId];
      if (amount === undefined && ops.length === 0) return;
      if (amount !== undefined) {
        delete account.reservations[opId];
        account.unsettled += amount;
      }
      ops.push({ type: 'put', key: this.#accountKey(agentId), value: account });
      await this.#store.batch(ops);
    });
  }

  /** Marks `notes` as held by `opId` (they must be unspent). */
  async lock(agentId: string, opId: string, commitments: bigint[]): Promise<NoteRecord[]> {
    return this.#mutex.run(agentId, async () => {
      const locked: NoteRecord[] = [];
      for (const c of commitments) {
        const note = await this.#store.get<NoteRecord>(this.#noteKey(agentId, c));
        if (note === undefined || note.state !== 'unspent') throw new Error(`note ${c} is not unspent`);
        locked.push({ ...note, state: 'locked', lockedBy: opId });
      }
      await this.#store.batch(
        locked.map((n) => ({ type: 'put', key: this.#noteKey(agentId, n.commitment), value: n })),
      );
      return locked;
    });
  }

  /**
   * Applies a confirmed spend in one batch: inputs become spent, outputs (change) are added, and the
   * operation's reservation (if any) turns into the debit. Replays are no-ops (inputs already spent).
   */
  async applySpend(
    agentId: string,
    spend: { opId: string; txHash: string; inputs: bigint[]; outputs: NewNote[] },
    extra: StoreOp[] = [],
  ): Promise<void> {
    await this.#mutex.run(agentId, async () => {
      const account = await this.account(agentId);
      const ops: StoreOp[] = [];
      let removed = 0n;
      for (const c of spend.inputs) {
        const key = this.#noteKey(agentId, c);
        const note = await this.#store.get<NoteRecord>(key);
        if (note === undefined || note.state === 'spent') continue;
        removed += note.amount;
        ops.push({
          type: 'put',
          key,
          value: { ...note, state: 'spent', lockedBy: undefined, spentTx: spend.txHash },
        });
      }
      let added = 0n;
      for (const note of spend.outputs) {
        const key = this.#noteKey(agentId, note.commitment);
        if ((await this.#store.get(key)) !== undefined) continue;
        added += note.amount;
        ops.push({ type: 'put', key, value: { ...note, agentId, state: 'unspent' } satisfies NoteRecord });
      }
      const hadReservation = spend.opId in account.reservations;
      ops.push(...extra);
      if (ops.length === 0 && !hadReservation) return;
      account.notes += added - removed;
      delete account.reservations[spend.opId];
      ops.push({ type: 'put', key: this.#accountKey(agentId), value: account });
      await this.#store.batch(ops);
    });
  }

  /** Store operations that give the notes `opId` locked back to the unspent set. */
  async #unlockOps(agentId: string, opId: string): Promise<StoreOp[]> {
    return (await this.notes(agentId))
      .filter((note) => note.state === 'locked' && note.lockedBy === opId)
      .map((note) => ({
        type: 'put' as const,
        key: this.#noteKey(agentId, note.commitment),
        value: { ...note, state: 'unspent', lockedBy: undefined },
      }));
  }

  #accountKey(agentId: string): string {
    return this.#store.key('account', agentId);
  }

  #noteKey(agentId: string, commitment: bigint): string {
    return this.#store.key('note', agentId, commitment.toString(16));
  }
}
