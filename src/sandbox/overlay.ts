// A transaction's view of the ledger: reads fall through to the committed state, writes are buffered so
// that a failed transaction leaves nothing behind (all-or-nothing). It also records the footprint (keys
// read and written) for simulation, and enforces the declared footprint when a transaction is applied.
import type { xdr } from '@stellar/stellar-sdk';
import { HostError } from './errors.ts';
import type { EntryRecord, LedgerState } from './ledger-state.ts';

/** Lifetime given to persistent contract data, in ledgers (reported as liveUntilLedgerSeq). */
export const PERSISTENT_TTL = 2_073_600;

interface Write {
  data: xdr.LedgerEntryData | null;
  liveUntil?: number;
}

export interface Footprint {
  readOnly: Set<string>;
  readWrite: Set<string>;
}

export class Overlay {
  #writes = new Map<string, Write>();
  readonly read = new Set<string>();
  readonly written = new Set<string>();

  /** `allowed` set: accesses outside it fail as on a real network (Error(Storage, ExceededLimit)). */
  readonly #base: LedgerState | Overlay;
  readonly #allowed: Footprint | undefined;

  constructor(base: LedgerState | Overlay, allowed?: Footprint) {
    this.#base = base;
    this.#allowed = allowed;
  }

  get(key: string): xdr.LedgerEntryData | undefined {
    if (this.#allowed && !this.#allowed.readOnly.has(key) && !this.#allowed.readWrite.has(key)) {
      throw new HostError(
        'Storage',
        'ExceededLimit',
        'trying to access a ledger entry outside of the footprint',
      );
    }
    if (!this.written.has(key)) this.read.add(key);
    const w = this.#writes.get(key);
    if (w) return w.data ?? undefined;
    return this.#base instanceof Overlay ? this.#base.get(key) : this.#base.getData(key);
  }

  put(key: string, data: xdr.LedgerEntryData | null, liveUntil?: number): void {
    if (this.#allowed && !this.#allowed.readWrite.has(key)) {
      throw new HostError(
        'Storage',
        'ExceededLimit',
        'trying to write a ledger entry outside of the read-write footprint',
      );
    }
    this.written.add(key);
    this.#writes.set(key, { data, liveUntil });
  }

  /** Snapshot for try_call: restore() drops writes made after it. */
  checkpoint(): Map<string, Write> {
    return new Map(this.#writes);
  }

  restore(snapshot: Map<string, Write>): void {
    this.#writes = snapshot;
  }

  /** Footprint of everything touched (written keys are read-write, the rest read-only). */
  footprint(): Footprint {
    const readWrite = new Set(this.written);
    const readOnly = new Set([...this.read].filter((k) => !readWrite.has(k)));
    return { readOnly, readWrite };
  }

  /** Pending writes, for committing into a parent overlay or the state. */
  changes(): Map<string, Write> {
    return this.#writes;
  }

  /** Moves this overlay's writes into its parent overlay. */
  mergeInto(parent: Overlay): void {
    for (const [k, w] of this.#writes) parent.put(k, w.data, w.liveUntil);
  }

  liveUntil(key: string): number | undefined {
    return this.#writes.get(key)?.liveUntil;
  }
}

/** The overlay's writes as state records of ledger `sequence` (null = deleted). */
export function entryRecords(overlay: Overlay, sequence: number): Map<string, EntryRecord | null> {
  const out = new Map<string, EntryRecord | null>();
  for (const [key, w] of overlay.changes()) {
    if (!w.data) {
      out.set(key, null);
      continue;
    }
    out.set(key, {
      xdr: w.data.toXdr('base64'),
      lastModified: sequence,
      ...(w.data.type === 'contractData' && { liveUntil: w.liveUntil ?? sequence + PERSISTENT_TTL }),
    });
  }
  return out;
}
