// ExtendFootprintTTL and RestoreFootprint, the two Soroban operations that only move TTLs: stellar-core's
// validity checks at submission, their application on the host addon (which entries are extended or
// restored, the resource checks and the rent, as stellar-core computes them) within the ledger being closed,
// the ledger entry changes their meta lists, and their simulation as stellar-rpc's preflight runs it (the
// footprint comes from the transaction's Soroban data: read-only keys to extend, read-write keys to restore).
import { hash, type Transaction, xdr } from '#stellar-sdk';
import { sorobanData } from './envelope.ts';
import { ledgerEntryXdr } from './invoke.ts';
import { keyId } from './keys.ts';
import type { Overlay } from './overlay.ts';
import type {
  FootprintApplyResult,
  FootprintSimulation,
  SnapshotReader,
  SorobanHost,
} from './soroban-host.ts';

export type FootprintOperation = { kind: 'extend'; extendTo: number } | { kind: 'restore' };

/** The transaction's ExtendFootprintTTL or RestoreFootprint operation, if that is what it carries. */
export function footprintOperation(tx: Transaction): FootprintOperation | undefined {
  const op = tx.operations[0];
  if (tx.operations.length !== 1 || !op) return undefined;
  if (op.type === 'extendFootprintTtl') return { kind: 'extend', extendTo: op.extendTo };
  if (op.type === 'restoreFootprint') return { kind: 'restore' };
  return undefined;
}

const isSorobanKey = (k: xdr.LedgerKey) => k.type === 'contractData' || k.type === 'contractCode';
const isPersistentKey = (k: xdr.LedgerKey) =>
  k.type === 'contractCode' ||
  (k.type === 'contractData' &&
    (k.value as xdr.LedgerKeyContractData).durability === xdr.ContractDataDurability.persistent);

/**
 * stellar-core's checks of the operation against its footprint (doCheckValidForSoroban), which refuse the
 * transaction at submission: the message of the first that fails, or undefined.
 */
export function footprintProblem(
  op: FootprintOperation,
  data: xdr.SorobanTransactionData,
  maxEntryTtl: number,
): string | undefined {
  const { readOnly, readWrite } = data.resources.footprint;
  if (op.kind === 'extend') {
    if (readWrite.length > 0) return 'read-write footprint must be empty for ExtendFootprintTTL operation';
    if (!readOnly.every(isSorobanKey))
      return 'only entries with TTL (contract data or code entries) can have it extended';
    if (op.extendTo > maxEntryTtl - 1)
      return `TTL extension is too large: ${op.extendTo} > ${maxEntryTtl - 1}`;
    return undefined;
  }
  if (readOnly.length > 0) return 'read-only footprint must be empty for RestoreFootprint operation';
  if (!readWrite.every(isPersistentKey)) return 'only persistent Soroban entries can be restored';
  return undefined;
}

/** The failed operation's result, by stellar-core's code names. */
export function footprintOpResult(op: FootprintOperation, outcome: FootprintApplyResult['outcome']) {
  if (op.kind === 'extend') {
    const code = {
      success: 'extendFootprintTtlSuccess',
      malformed: 'extendFootprintTtlMalformed',
      resourceLimitExceeded: 'extendFootprintTtlResourceLimitExceeded',
      insufficientRefundableFee: 'extendFootprintTtlInsufficientRefundableFee',
    }[outcome] as 'extendFootprintTtlSuccess';
    return xdr.OperationResult.opInner(
      xdr.OperationResultTr.extendFootprintTtl(xdr.ExtendFootprintTtlResult[code]()),
    );
  }
  const code = {
    success: 'restoreFootprintSuccess',
    malformed: 'restoreFootprintMalformed',
    resourceLimitExceeded: 'restoreFootprintResourceLimitExceeded',
    insufficientRefundableFee: 'restoreFootprintInsufficientRefundableFee',
  }[outcome] as 'restoreFootprintSuccess';
  return xdr.OperationResult.opInner(
    xdr.OperationResultTr.restoreFootprint(xdr.RestoreFootprintResult[code]()),
  );
}

/** A TTL ledger entry: the SHA-256 of its entry's key and the ledger it lives until. */
function ttlEntry(key: xdr.LedgerKey, liveUntil: number, lastModified: number): xdr.LedgerEntry {
  return new xdr.LedgerEntry({
    lastModifiedLedgerSeq: lastModified,
    data: xdr.LedgerEntryData.ttl(
      new xdr.TtlEntry({ keyHash: hash(key.toXdr()), liveUntilLedgerSeq: liveUntil }),
    ),
    ext: xdr.LedgerEntryExt.v0(),
  });
}

export interface FootprintApplied {
  result: FootprintApplyResult;
  /** the operation's meta changes: each TTL entry's state then update; a restored entry and its TTL as restored */
  changes: xdr.LedgerEntryChange[];
  diagnostics: xdr.DiagnosticEvent[];
}

/** Applies `tx`'s operation to `overlay` (ledger `overlay.sequence`); its writes only when it succeeded. */
export function applyFootprintOperation(
  host: SorobanHost,
  overlay: Overlay,
  tx: Transaction,
  op: FootprintOperation,
  transactionSizeBytes: number,
  closeTime: number,
): FootprintApplied {
  const data = sorobanData(tx) as xdr.SorobanTransactionData;
  const { readOnly, readWrite } = data.resources.footprint;
  const entries = [...readOnly, ...readWrite].map((key) => {
    const view = overlay.entry(keyId(key));
    return {
      key: Buffer.from(key.toXdr()),
      entry: view ? ledgerEntryXdr(view.data, view.lastModified) : null,
      liveUntil: view?.liveUntil ?? null,
    };
  });
  const result = host.applyFootprint({
    kind: op.kind,
    ...(op.kind === 'extend' && { extendTo: op.extendTo }),
    sorobanData: Buffer.from(data.toXdr()),
    transactionSizeBytes,
    ledger: { sequence: overlay.sequence, timestamp: BigInt(closeTime) },
    entries,
  });
  const changes: xdr.LedgerEntryChange[] = [];
  if (result.outcome === 'success') {
    for (const change of result.changes) {
      const key = xdr.LedgerKey.fromXdr(change.key);
      const id = keyId(key);
      const view = overlay.entry(id);
      if (!view) continue;
      const seq = overlay.sequence;
      if (change.restored) {
        const restored = new xdr.LedgerEntry({
          lastModifiedLedgerSeq: seq,
          data: view.data,
          ext: xdr.LedgerEntryExt.v0(),
        });
        changes.push(
          xdr.LedgerEntryChange.ledgerEntryRestored(restored),
          xdr.LedgerEntryChange.ledgerEntryRestored(ttlEntry(key, change.liveUntil, seq)),
        );
      } else {
        changes.push(
          xdr.LedgerEntryChange.ledgerEntryState(ttlEntry(key, view.liveUntil ?? 0, view.lastModified)),
          xdr.LedgerEntryChange.ledgerEntryUpdated(ttlEntry(key, change.liveUntil, seq)),
        );
      }
      overlay.put(id, view.data, change.liveUntil);
    }
  }
  return {
    result,
    changes,
    diagnostics: result.diagnosticEvents.map((e) => xdr.DiagnosticEvent.fromXdr(e)),
  };
}

/** stellar-rpc's refusal of a footprint simulation without Soroban data. */
const NO_SOROBAN_DATA =
  'To perform a SimulateTransaction for ExtendFootprintTtl or RestoreFootprint operations, SorobanTransactionData must be provided';

/** Preflight of the operation against committed state read through `read` (the next ledger's). */
export function simulateFootprintOperation(
  host: SorobanHost,
  tx: Transaction,
  op: FootprintOperation,
  read: SnapshotReader,
  ledger: { sequence: number; timestamp: bigint },
): FootprintSimulation {
  const data = sorobanData(tx);
  if (!data) return { ok: false, error: NO_SOROBAN_DATA };
  const { readOnly, readWrite } = data.resources.footprint;
  if (op.kind === 'extend') {
    return host.simulateExtendTtl({
      keys: readOnly.map((k) => Buffer.from(k.toXdr())),
      extendTo: op.extendTo,
      ledger,
      getEntry: read,
    });
  }
  return host.simulateRestore({ keys: readWrite.map((k) => Buffer.from(k.toXdr())), ledger, getEntry: read });
}
