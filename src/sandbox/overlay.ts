// A transaction's (or a closing ledger's) view of the ledger: reads fall through to the committed state,
// writes are buffered so that a failed transaction leaves nothing behind (all-or-nothing). Entries the
// Soroban host creates carry their TTL (the ledger until which they live).
import type { xdr } from '#stellar-sdk';
import type { EntryRecord, LedgerState } from './ledger-state.ts';

interface Write {
  data: xdr.LedgerEntryData | null;
  liveUntil?: number;
}

/** An entry as the host reads it: its data, the ledger that last changed it and its TTL (Soroban entries). */
export interface EntryView {
  data: xdr.LedgerEntryData;
  lastModified: number;
  liveUntil: number | undefined;
}

export class Overlay {
  #writes = new Map<string, Write>();
  readonly #base: LedgerState | Overlay;
  /** the sequence of the ledger these writes belong to */
  readonly sequence: number;

  constructor(base: LedgerState | Overlay, sequence: number) {
    this.#base = base;
    this.sequence = sequence;
  }

  get(key: string): xdr.LedgerEntryData | undefined {
    const w = this.#writes.get(key);
    if (w) return w.data ?? undefined;
    return this.#base instanceof Overlay ? this.#base.get(key) : this.#base.getData(key);
  }

  /** The entry with its last-modified ledger and TTL. */
  entry(key: string): EntryView | undefined {
    const w = this.#writes.get(key);
    if (w) return w.data ? { data: w.data, lastModified: this.sequence, liveUntil: w.liveUntil } : undefined;
    if (this.#base instanceof Overlay) return this.#base.entry(key);
    const rec: EntryRecord | undefined = this.#base.get(key);
    const data = this.#base.getData(key);
    return rec && data ? { data, lastModified: rec.lastModified, liveUntil: rec.liveUntil } : undefined;
  }

  /** Writes `data` (null deletes); a Soroban entry keeps its TTL unless `liveUntil` gives a new one. */
  put(key: string, data: xdr.LedgerEntryData | null, liveUntil?: number): void {
    const ttl = liveUntil ?? (data ? this.entry(key)?.liveUntil : undefined);
    this.#writes.set(key, { data, liveUntil: ttl });
  }

  /** Pending writes, for committing into a parent overlay or the state. */
  changes(): Map<string, Write> {
    return this.#writes;
  }

  /** Moves this overlay's writes into its parent overlay. */
  mergeInto(parent: Overlay): void {
    for (const [k, w] of this.#writes) parent.put(k, w.data, w.liveUntil);
  }
}

/** The overlay's writes as state records of ledger `sequence` (null = deleted). */
export function entryRecords(overlay: Overlay, sequence: number): Map<string, EntryRecord | null> {
  const out = new Map<string, EntryRecord | null>();
  for (const [key, w] of overlay.changes()) {
    out.set(
      key,
      w.data
        ? {
            xdr: w.data.toXdr('base64'),
            lastModified: sequence,
            ...(w.liveUntil !== undefined && { liveUntil: w.liveUntil }),
          }
        : null,
    );
  }
  return out;
}
