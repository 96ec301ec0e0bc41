// A Soroban transaction's InvokeHostFunction operation applied on the real host (soroban-host.ts) within the
// ledger being closed, as stellar-core applies it: the footprint's entries (with their TTLs) go in, the host
// enforces the footprint, the signed authorization entries and the declared resources, and what comes out
// (new and changed entries with their TTLs, events, the fee actually consumed) is written to the overlay only
// when the operation succeeded.
import { hash, Keypair, type Transaction, xdr } from '#stellar-sdk';
import { keyId } from './keys.ts';
import type { Overlay } from './overlay.ts';
import type { ApplyResult, SorobanHost } from './soroban-host.ts';
import { sorobanData } from './envelope.ts';

/** A LedgerEntry's XDR from its data and the ledger that last changed it (no sponsorship extension). */
export function ledgerEntryXdr(data: xdr.LedgerEntryData, lastModified: number): Buffer {
  return Buffer.from(
    new xdr.LedgerEntry({ lastModifiedLedgerSeq: lastModified, data, ext: xdr.LedgerEntryExt.v0() }).toXdr(),
  );
}

/** The operation's source as the host takes it (AccountId XDR). */
export function sourceAccountXdr(tx: Transaction): Buffer {
  const source = tx.operations[0]?.source ?? tx.source;
  return Buffer.from(Keypair.fromPublicKey(source).xdrAccountId().toXdr());
}

/** The transaction's single InvokeHostFunctionOp, as XDR. */
export function invokeOperationXdr(tx: Transaction): Buffer {
  const env = tx.toEnvelope();
  if (env.type !== 'envelopeTypeTx') throw new Error('a fee bump runs as its inner transaction');
  const body = env.value.tx.operations[0]?.body;
  if (body?.type !== 'invokeHostFunction')
    throw new Error('the transaction has no invokeHostFunction operation');
  return Buffer.from(body.value.toXdr());
}

export interface Invoked {
  result: ApplyResult;
  /** the entries the operation changed, before and after (for the transaction's meta) */
  changes: {
    key: xdr.LedgerKey;
    before: xdr.LedgerEntryData | undefined;
    after: xdr.LedgerEntryData | null;
  }[];
  events: xdr.ContractEvent[];
  diagnostics: xdr.DiagnosticEvent[];
  returnValue: xdr.ScVal | undefined;
}

/** Applies `tx`'s invocation to `overlay` (ledger `overlay.sequence`, closing at `closeTime`). */
export function applyInvocation(
  host: SorobanHost,
  overlay: Overlay,
  tx: Transaction,
  transactionSizeBytes: number,
  closeTime: number,
): Invoked {
  const data = sorobanData(tx) as xdr.SorobanTransactionData;
  const { footprint } = data.resources;
  const keys = [...footprint.readOnly, ...footprint.readWrite];
  const entries = keys.map((key) => {
    const view = overlay.entry(keyId(key));
    return {
      key: Buffer.from(key.toXdr()),
      entry: view ? ledgerEntryXdr(view.data, view.lastModified) : null,
      liveUntil: view?.liveUntil ?? null,
    };
  });
  const result = host.applyInvoke({
    operation: invokeOperationXdr(tx),
    sorobanData: Buffer.from(data.toXdr()),
    sourceAccount: sourceAccountXdr(tx),
    transactionSizeBytes,
    ledger: { sequence: overlay.sequence, timestamp: BigInt(closeTime) },
    entries,
    // stellar-core seeds each transaction's PRNG from the ledger; this sandbox from the transaction and ledger
    prngSeed: Buffer.from(hash(Buffer.concat([tx.hash(), Buffer.from(String(overlay.sequence))]))),
  });
  const changes: Invoked['changes'] = [];
  if (result.outcome === 'success') {
    for (const change of result.changes) {
      const key = xdr.LedgerKey.fromXdr(change.key);
      const id = keyId(key);
      const before = overlay.get(id);
      if (change.readOnly) {
        // a read-only entry only has its TTL extended
        if (before && change.liveUntil !== null) overlay.put(id, before, change.liveUntil);
        continue;
      }
      const after = change.entry ? xdr.LedgerEntry.fromXdr(change.entry).data : null;
      overlay.put(id, after, change.liveUntil ?? undefined);
      changes.push({ key, before, after });
    }
  }
  const events = result.contractEvents.map((e: Buffer) => xdr.ContractEvent.fromXdr(e));
  return {
    result,
    changes,
    events,
    diagnostics: [
      ...result.diagnosticEvents.map((e: Buffer) => xdr.DiagnosticEvent.fromXdr(e)),
      ...metricsEvents(result, {
        readEntries: keys.length,
        writeEntries: footprint.readWrite.length,
        events: events.length,
      }),
    ],
    returnValue: result.returnValue ? xdr.ScVal.fromXdr(result.returnValue) : undefined,
  };
}

/**
 * stellar-core's `core_metrics` diagnostic events (topics `[core_metrics, name]`, data u64), which it adds
 * after the host's when diagnostics are on: what the invocation read, wrote, emitted and metered.
 */
function metricsEvents(
  r: ApplyResult,
  counts: { readEntries: number; writeEntries: number; events: number },
): xdr.DiagnosticEvent[] {
  const success = r.outcome === 'success';
  const metrics: [string, bigint | number][] = [
    ['read_entry', counts.readEntries],
    ['write_entry', success ? counts.writeEntries : 0],
    ['ledger_read_byte', r.diskReadBytes],
    ['ledger_write_byte', r.writeBytes],
    ['emit_event', success ? counts.events : 0],
    ['emit_event_byte', r.eventsSizeBytes],
    ['cpu_insn', r.cpuInstructions],
    ['mem_byte', r.memoryBytes],
    ['invoke_time_nsecs', r.invokeNanos],
  ];
  return metrics.map(
    ([name, value]) =>
      new xdr.DiagnosticEvent({
        inSuccessfulContractCall: success,
        event: new xdr.ContractEvent({
          ext: xdr.ExtensionPoint.v0(),
          contractId: null,
          type: xdr.ContractEventType.diagnostic,
          body: xdr.ContractEventBody.v0(
            new xdr.ContractEventV0({
              topics: [xdr.ScVal.scvSymbol('core_metrics'), xdr.ScVal.scvSymbol(name)],
              data: xdr.ScVal.scvU64(xdr.Uint64.fromString(value.toString())),
            }),
          ),
        }),
      }),
  );
}
