// XDR documents the RPC hands out, built the way stellar-core writes them so that the SDK's parsers
// (TransactionResult, TransactionMeta v4, LedgerHeader, LedgerCloseMeta) read them unchanged.
import { Address, Asset, hash, nativeToScVal, xdr } from '#stellar-sdk';

/** The ledger protocol: the Soroban host's (soroban-env-host 29), which the contracts' SDK targets too. */
export const PROTOCOL_VERSION = 29;
export const BASE_FEE = 100n;
export const BASE_RESERVE = 5_000_000;

export type TxErrorCode =
  | 'txTooEarly'
  | 'txTooLate'
  | 'txMissingOperation'
  | 'txBadSeq'
  | 'txBadAuth'
  | 'txInsufficientBalance'
  | 'txNoAccount'
  | 'txInsufficientFee'
  | 'txBadAuthExtra'
  | 'txNotSupported'
  | 'txMalformed'
  | 'txSorobanInvalid';

export function errorResult(code: TxErrorCode, feeCharged = 0n): xdr.TransactionResult {
  return new xdr.TransactionResult({
    feeCharged,
    result: (xdr.TransactionResultResult[code] as () => xdr.TransactionResultResult)(),
    ext: xdr.TransactionResultExt.v0(),
  });
}

/** Why an invocation failed, as stellar-core's InvokeHostFunctionResult codes name it. */
export type InvokeFailure =
  'trapped' | 'resourceLimitExceeded' | 'entryArchived' | 'insufficientRefundableFee';

const FAILURES: Record<InvokeFailure, () => xdr.InvokeHostFunctionResult> = {
  trapped: () => xdr.InvokeHostFunctionResult.invokeHostFunctionTrapped(),
  resourceLimitExceeded: () => xdr.InvokeHostFunctionResult.invokeHostFunctionResourceLimitExceeded(),
  entryArchived: () => xdr.InvokeHostFunctionResult.invokeHostFunctionEntryArchived(),
  insufficientRefundableFee: () => xdr.InvokeHostFunctionResult.invokeHostFunctionInsufficientRefundableFee(),
};

/**
 * An InvokeHostFunction transaction's result: on success the hash of the return value and the contract
 * events (InvokeHostFunctionSuccessPreImage), else the failure's code.
 */
export function invokeResult(
  feeCharged: bigint,
  returnValue: xdr.ScVal | undefined,
  failure: InvokeFailure = 'trapped',
  events: xdr.ContractEvent[] = [],
): xdr.TransactionResult {
  const inner = returnValue
    ? xdr.InvokeHostFunctionResult.invokeHostFunctionSuccess(
        hash(new xdr.InvokeHostFunctionSuccessPreImage({ returnValue, events }).toXdr()),
      )
    : FAILURES[failure]();
  const op = xdr.OperationResult.opInner(xdr.OperationResultTr.invokeHostFunction(inner));
  return new xdr.TransactionResult({
    feeCharged,
    result: returnValue
      ? xdr.TransactionResultResult.txSuccess([op])
      : xdr.TransactionResultResult.txFailed([op]),
    ext: xdr.TransactionResultExt.v0(),
  });
}

function innerResult(r: xdr.TransactionResult): xdr.InnerTransactionResult {
  const arm = r.result.type as 'txSuccess';
  const factory = xdr.InnerTransactionResultResult[arm] as (v?: unknown) => xdr.InnerTransactionResultResult;
  const value = (r.result as unknown as { value?: unknown }).value;
  return new xdr.InnerTransactionResult({
    feeCharged: 0n,
    result: value === undefined ? factory() : factory(value),
    ext: xdr.InnerTransactionResultExt.v0(),
  });
}

/** Result of a fee-bump envelope: the fee source paid `feeCharged`, the inner transaction's result inside. */
export function feeBumpResult(
  innerHash: Uint8Array,
  feeCharged: bigint,
  inner: xdr.TransactionResult,
): xdr.TransactionResult {
  const pair = new xdr.InnerTransactionResultPair({ transactionHash: innerHash, result: innerResult(inner) });
  const ok = inner.result.type === 'txSuccess';
  return new xdr.TransactionResult({
    feeCharged,
    result: ok
      ? xdr.TransactionResultResult.txFeeBumpInnerSuccess(pair)
      : xdr.TransactionResultResult.txFeeBumpInnerFailed(pair),
    ext: xdr.TransactionResultExt.v0(),
  });
}

/** A fee bump refused because its inner transaction is invalid. */
export function feeBumpInnerError(innerHash: Uint8Array, code: TxErrorCode): xdr.TransactionResult {
  return feeBumpResult(innerHash, 0n, errorResult(code));
}

/** One written ledger entry: its state before (absent = created) and after (null = removed). */
export interface EntryChange {
  key: xdr.LedgerKey;
  before: xdr.LedgerEntryData | undefined;
  after: xdr.LedgerEntryData | null;
}

/** stellar-core's change list: each touched entry's prior state, then created / updated / removed. */
export function ledgerEntryChanges(
  changes: EntryChange[],
  sequence: number,
  previous = sequence - 1,
): xdr.LedgerEntryChange[] {
  const entry = (data: xdr.LedgerEntryData, seq: number) =>
    new xdr.LedgerEntry({ lastModifiedLedgerSeq: seq, data, ext: xdr.LedgerEntryExt.v0() });
  return changes.flatMap(({ key, before, after }) => {
    const out: xdr.LedgerEntryChange[] = [];
    if (before) out.push(xdr.LedgerEntryChange.ledgerEntryState(entry(before, previous)));
    if (after === null) {
      if (before) out.push(xdr.LedgerEntryChange.ledgerEntryRemoved(key));
    } else if (before) out.push(xdr.LedgerEntryChange.ledgerEntryUpdated(entry(after, sequence)));
    else out.push(xdr.LedgerEntryChange.ledgerEntryCreated(entry(after, sequence)));
    return out;
  });
}

const nativeContracts = new Map<string, xdr.ContractId>();

/** The native asset's contract id on the network `passphrase` (memoised). */
function nativeContract(passphrase: string): xdr.ContractId {
  let id = nativeContracts.get(passphrase);
  if (!id) {
    id = new Address(Asset.native().contractId(passphrase)).toScAddress().value as xdr.ContractId;
    nativeContracts.set(passphrase, id);
  }
  return id;
}

/**
 * The fee event of a transaction (CAP-67): the native asset's contract reports `fee` charged to the fee
 * source before any transaction of the ledger is applied (`topics [fee, payer]`, data i128 stroops).
 */
export function feeEvent(
  passphrase: string,
  payer: string,
  fee: bigint,
  stage = xdr.TransactionEventStage.transactionEventStageBeforeAllTxs,
): xdr.TransactionEvent {
  return new xdr.TransactionEvent({
    stage,
    event: new xdr.ContractEvent({
      ext: xdr.ExtensionPoint.v0(),
      contractId: nativeContract(passphrase),
      type: xdr.ContractEventType.contract,
      body: xdr.ContractEventBody.v0(
        new xdr.ContractEventV0({
          topics: [xdr.ScVal.scvSymbol('fee'), new Address(payer).toScVal()],
          data: nativeToScVal(fee, { type: 'i128' }),
        }),
      ),
    }),
  });
}

/** Meta of a classic transaction: each operation's ledger entry changes and asset events, no Soroban part. */
export function classicMeta(
  operations: xdr.LedgerEntryChange[][],
  transactionEvents: xdr.TransactionEvent[],
  operationEvents: xdr.ContractEvent[][] = [],
): xdr.TransactionMeta {
  return xdr.TransactionMeta.v4(
    new xdr.TransactionMetaV4({
      ext: xdr.ExtensionPoint.v0(),
      txChangesBefore: [],
      operations: operations.map(
        (changes, i) =>
          new xdr.OperationMetaV2({
            ext: xdr.ExtensionPoint.v0(),
            changes,
            events: operationEvents[i] ?? [],
          }),
      ),
      txChangesAfter: [],
      sorobanMeta: null,
      events: transactionEvents,
      diagnosticEvents: [],
    }),
  );
}

/** The resource fee a Soroban transaction was charged, by part (SorobanTransactionMetaExtV1). */
export interface ChargedResourceFee {
  nonRefundable: bigint;
  refundable: bigint;
  rent: bigint;
}

export function transactionMeta(
  events: xdr.ContractEvent[],
  returnValue: xdr.ScVal | undefined,
  diagnostic: xdr.DiagnosticEvent[],
  changes: xdr.LedgerEntryChange[] = [],
  transactionEvents: xdr.TransactionEvent[] = [],
  fee?: ChargedResourceFee,
): xdr.TransactionMeta {
  const ext = fee
    ? xdr.SorobanTransactionMetaExt.v1(
        new xdr.SorobanTransactionMetaExtV1({
          ext: xdr.ExtensionPoint.v0(),
          totalNonRefundableResourceFeeCharged: xdr.Int64.fromString(fee.nonRefundable.toString()),
          totalRefundableResourceFeeCharged: xdr.Int64.fromString(fee.refundable.toString()),
          rentFeeCharged: xdr.Int64.fromString(fee.rent.toString()),
        }),
      )
    : xdr.SorobanTransactionMetaExt.v0();
  return xdr.TransactionMeta.v4(
    new xdr.TransactionMetaV4({
      ext: xdr.ExtensionPoint.v0(),
      txChangesBefore: [],
      operations: [new xdr.OperationMetaV2({ ext: xdr.ExtensionPoint.v0(), changes, events })],
      txChangesAfter: [],
      sorobanMeta: new xdr.SorobanTransactionMetaV2({ ext, returnValue: returnValue ?? null }),
      events: transactionEvents,
      diagnosticEvents: diagnostic,
    }),
  );
}

/** A host diagnostic event carrying a message (topics ["error", Error(Context, InvalidInput)]). */
export function diagnosticMessage(message: string): xdr.DiagnosticEvent {
  return new xdr.DiagnosticEvent({
    inSuccessfulContractCall: false,
    event: new xdr.ContractEvent({
      ext: xdr.ExtensionPoint.v0(),
      contractId: null,
      type: xdr.ContractEventType.diagnostic,
      body: xdr.ContractEventBody.v0(
        new xdr.ContractEventV0({
          topics: [
            xdr.ScVal.scvSymbol('error'),
            xdr.ScVal.scvError(xdr.ScError.sceContext(xdr.ScErrorCode.scecInvalidInput)),
          ],
          data: xdr.ScVal.scvString(message),
        }),
      ),
    }),
  });
}

export interface HeaderFields {
  sequence: number;
  closeTime: number;
  previousHash: Uint8Array;
  txSetHash: Uint8Array;
  /** the fees collected so far, in stroops (0 at genesis) */
  feePool?: bigint;
}

export function ledgerHeader(f: HeaderFields): xdr.LedgerHeader {
  const zero = new Uint8Array(32);
  return new xdr.LedgerHeader({
    ledgerVersion: PROTOCOL_VERSION,
    previousLedgerHash: f.previousHash,
    scpValue: new xdr.StellarValue({
      txSetHash: f.txSetHash,
      closeTime: BigInt(f.closeTime),
      upgrades: [],
      ext: xdr.StellarValueExt.stellarValueBasic(),
    }),
    txSetResultHash: zero,
    bucketListHash: zero,
    ledgerSeq: f.sequence,
    totalCoins: 1_000_000_000_000_000_000n,
    feePool: f.feePool ?? 0n,
    inflationSeq: 0,
    idPool: 0n,
    baseFee: Number(BASE_FEE),
    baseReserve: BASE_RESERVE,
    maxTxSetSize: 1000,
    skipList: [zero, zero, zero, zero],
    ext: xdr.LedgerHeaderExt.v0(),
  } as unknown as ConstructorParameters<typeof xdr.LedgerHeader>[0]);
}
