// The sandbox's ledger state: ledger entries, applied transactions, contract events and the latest
// ledger header. Everything lives in memory (the sandbox is small) and, when a data directory is given,
// is written to LevelDB in one atomic batch per closed ledger so a restart resumes exactly.
// `retainLedgers(n)` gives it a retention window like a real RPC's (testnet's keeps about 7 days): the
// transactions, events and ledger records of older ledgers are dropped, and the meta's oldest ledger says so.

import { xdr } from '#stellar-sdk';
import type { Level } from 'level';
import { openLevel } from '../storage/open-level.ts';

/** One ledger entry as the RPC serves it. `xdr` is base64 LedgerEntryData. */
export interface EntryRecord {
  xdr: string;
  lastModified: number;
  liveUntil?: number;
}

/** A transaction applied in a closed ledger (successful or failed). */
export interface TxRecord {
  hash: string;
  status: 'SUCCESS' | 'FAILED';
  ledger: number;
  createdAt: number;
  applicationOrder: number;
  feeBump: boolean;
  envelopeXdr: string;
  resultXdr: string;
  resultMetaXdr: string;
  contractEvents: string[][];
  diagnosticEvents: string[];
  /** base64 TransactionEvents (the fee event); absent in records written before they were kept */
  transactionEvents?: string[];
  /** base64 LedgerEntryChanges of taking the fee (close meta `feeProcessing`); absent in older records */
  feeProcessing?: string[];
  /** base64 LedgerEntryChanges of a Soroban refund (close meta `postTxApplyFeeProcessing`) */
  postTxApplyFeeProcessing?: string[];
}

/** A contract event with the id (paging token) Soroban RPC gives it. */
export interface EventRecord {
  id: string;
  ledger: number;
  ledgerClosedAt: string;
  transactionIndex: number;
  operationIndex: number;
  txHash: string;
  contractId: string;
  topics: string[];
  value: string;
}

export interface LedgerMeta {
  sequence: number;
  closeTime: number;
  hash: string;
  headerXdr: string;
  oldestLedger: number;
  oldestCloseTime: number;
}

/** One closed ledger as getLedgers serves it. */
export interface LedgerRecord {
  sequence: number;
  hash: string;
  closeTime: number;
  /** base64 LedgerHeader */
  headerXdr: string;
}

export interface LedgerBatch {
  meta: LedgerMeta;
  entries: Map<string, EntryRecord | null>;
  txs: TxRecord[];
  events: EventRecord[];
}

type Stored = EntryRecord | TxRecord | EventRecord | LedgerMeta | LedgerRecord | Record<string, string>;

/** Key of a ledger record: zero-padded so LevelDB iterates them in sequence order. */
const ledgerKey = (sequence: number) => `l:${sequence.toString().padStart(10, '0')}`;

export class LedgerState {
  readonly entries = new Map<string, EntryRecord>();
  readonly txs = new Map<string, TxRecord>();
  /** each ledger's transactions (the close meta lists them) */
  readonly txsByLedger = new Map<number, TxRecord[]>();
  readonly events: EventRecord[] = [];
  /** closed ledgers in sequence order (data written before they were kept start later) */
  readonly ledgers: LedgerRecord[] = [];
  meta: LedgerMeta | undefined;
  /** small named documents (well-known keys, genesis record) */
  readonly docs = new Map<string, Record<string, string>>();
  readonly #decoded = new Map<string, xdr.LedgerEntryData>();

  readonly #db: Level<string, Stored> | undefined;
  /** ledgers whose transactions and events are kept (undefined: all of them) */
  #retention: number | undefined;

  private constructor(db: Level<string, Stored> | undefined) {
    this.#db = db;
  }

  /** Opens (or creates) the ledger state; `dataDir` undefined keeps everything in memory. */
  static async open(dataDir?: string): Promise<LedgerState> {
    // openLevel checks the files first and reports damage or another process holding them.
    const db = dataDir ? await openLevel<string, Stored>(dataDir, { valueEncoding: 'json' }) : undefined;
    const state = new LedgerState(db);
    if (db) {
      for await (const [key, value] of db.iterator()) {
        const kind = key.slice(0, 2);
        const id = key.slice(2);
        if (kind === 'e:') state.entries.set(id, value as EntryRecord);
        else if (kind === 't:') state.#addTx(value as TxRecord);
        else if (kind === 'v:') state.events.push(value as EventRecord);
        else if (kind === 'd:') state.docs.set(id, value as Record<string, string>);
        else if (kind === 'l:') state.ledgers.push(value as LedgerRecord);
        else if (key === 'meta') state.meta = value as LedgerMeta;
      }
    }
    return state;
  }

  /** The retention window in ledgers, when one is set. */
  get retentionLedgers(): number | undefined {
    return this.#retention;
  }

  /**
   * Keeps only the transactions, events and ledger records of the last `ledgers` ledgers from the next close
   * on, as a real RPC's retention window does: getTransaction answers NOT_FOUND for older transactions,
   * getEvents / getTransactions / getLedgers refuse an older start, and getHealth reports the oldest ledger.
   */
  retainLedgers(ledgers: number): void {
    if (!Number.isInteger(ledgers) || ledgers < 1)
      throw new RangeError('the retention window is 1 ledger or more');
    this.#retention = ledgers;
  }

  /** Drops what fell out of the retention window; returns the store operations that delete it. */
  #prune(meta: LedgerMeta): { type: 'del'; key: string }[] {
    const oldest = this.#retention === undefined ? 0 : meta.sequence - this.#retention + 1;
    if (oldest <= meta.oldestLedger) return [];
    const ops: { type: 'del'; key: string }[] = [];
    let drop = 0;
    while (drop < this.events.length && (this.events[drop] as EventRecord).ledger < oldest) {
      ops.push({ type: 'del', key: `v:${(this.events[drop] as EventRecord).id}` });
      drop++;
    }
    this.events.splice(0, drop);
    for (const [sequence, txs] of this.txsByLedger) {
      if (sequence >= oldest) continue;
      for (const tx of txs) {
        this.txs.delete(tx.hash);
        ops.push({ type: 'del', key: `t:${tx.hash}` });
      }
      this.txsByLedger.delete(sequence);
    }
    while (this.ledgers.length > 0 && (this.ledgers[0] as LedgerRecord).sequence < oldest)
      ops.push({ type: 'del', key: ledgerKey((this.ledgers.shift() as LedgerRecord).sequence) });
    meta.oldestLedger = oldest;
    meta.oldestCloseTime = this.ledgers[0]?.closeTime ?? meta.closeTime;
    return ops;
  }

  get persistent(): boolean {
    return this.#db !== undefined;
  }

  get(key: string): EntryRecord | undefined {
    return this.entries.get(key);
  }

  /** Decoded entry data, cached because contracts read the same entries again and again. */
  getData(key: string): xdr.LedgerEntryData | undefined {
    const rec = this.entries.get(key);
    if (!rec) return undefined;
    let data = this.#decoded.get(key);
    if (!data) {
      data = xdr.LedgerEntryData.fromXdr(rec.xdr, 'base64');
      this.#decoded.set(key, data);
    }
    return data;
  }

  async putDoc(name: string, doc: Record<string, string>): Promise<void> {
    this.docs.set(name, doc);
    await this.#db?.put(`d:${name}`, doc);
  }

  /** Applies one closed ledger: memory first, then one atomic LevelDB batch. */
  async commit(batch: LedgerBatch): Promise<void> {
    const ops: ({ type: 'put'; key: string; value: Stored } | { type: 'del'; key: string })[] = [];
    for (const [key, rec] of batch.entries) {
      this.#decoded.delete(key);
      if (rec) {
        this.entries.set(key, rec);
        ops.push({ type: 'put', key: `e:${key}`, value: rec });
      } else {
        this.entries.delete(key);
        ops.push({ type: 'del', key: `e:${key}` });
      }
    }
    for (const tx of batch.txs) {
      this.#addTx(tx);
      ops.push({ type: 'put', key: `t:${tx.hash}`, value: tx });
    }
    for (const ev of batch.events) {
      this.events.push(ev);
      ops.push({ type: 'put', key: `v:${ev.id}`, value: ev });
    }
    this.meta = batch.meta;
    ops.push({ type: 'put', key: 'meta', value: batch.meta });
    const { sequence, hash, closeTime, headerXdr } = batch.meta;
    const ledger: LedgerRecord = { sequence, hash, closeTime, headerXdr };
    this.ledgers.push(ledger);
    ops.push({ type: 'put', key: ledgerKey(sequence), value: ledger });
    ops.push(...this.#prune(batch.meta));
    if (this.#db) await this.#db.batch(ops);
  }

  #addTx(tx: TxRecord): void {
    this.txs.set(tx.hash, tx);
    const list = this.txsByLedger.get(tx.ledger);
    if (list) list.push(tx);
    else this.txsByLedger.set(tx.ledger, [tx]);
  }

  async close(): Promise<void> {
    await this.#db?.close();
  }
}
