// A ledger's LedgerCloseMeta as a protocol-23 stellar-core writes it (v2): the header, the generalized
// transaction set (a classic phase of components and a Soroban phase of parallel execution stages), each
// transaction's result pair, fee processing, apply meta and post-apply refund in application order, and no
// upgrades, SCP info or evictions.
// getLedgers and getLatestLedger serve it, so ingesters see each ledger's transactions; the header's
// txSetHash is the SHA-256 of the transaction set's XDR, as for generalized sets.
import { hash, xdr } from '#stellar-sdk';
import { rawBytes } from './keys.ts';
import type { TxRecord } from './ledger-state.ts';
import { BASE_FEE } from './xdr-records.ts';

/** Whether an envelope (or a fee bump's inner transaction) carries Soroban data: the Soroban phase. */
function isSoroban(envelope: xdr.TransactionEnvelope): boolean {
  const inner =
    envelope.type === 'envelopeTypeTxFeeBump'
      ? (envelope.value as xdr.FeeBumpTransactionEnvelope).tx.innerTx.value
      : envelope.value;
  const ext = (inner as xdr.TransactionV1Envelope).tx?.ext;
  return ext?.type === 'sorobanData';
}

/** The ledger's transaction set: classic transactions in one component, Soroban ones in one stage. */
export function transactionSet(
  previousHash: Uint8Array,
  txs: readonly Pick<TxRecord, 'envelopeXdr'>[],
): xdr.GeneralizedTransactionSet {
  const envelopes = txs.map((t) => xdr.TransactionEnvelope.fromXdr(t.envelopeXdr, 'base64'));
  const classic = envelopes.filter((e) => !isSoroban(e));
  const soroban = envelopes.filter(isSoroban);
  return xdr.GeneralizedTransactionSet.v1TxSet(
    new xdr.TransactionSetV1({
      previousLedgerHash: previousHash,
      phases: [
        xdr.TransactionPhase.v0Components(
          classic.length === 0
            ? []
            : [
                xdr.TxSetComponent.txsetCompTxsMaybeDiscountedFee(
                  new xdr.TxSetComponentTxsMaybeDiscountedFee({ baseFee: BASE_FEE, txs: classic }),
                ),
              ],
        ),
        xdr.TransactionPhase.parallelTxsComponent(
          new xdr.ParallelTxsComponent({
            baseFee: soroban.length === 0 ? null : BASE_FEE,
            executionStages: soroban.length === 0 ? [] : [[soroban]],
          }),
        ),
      ],
    }),
  );
}

/** The header's txSetHash for these transactions. */
export function transactionSetHash(previousHash: Uint8Array, txs: readonly Pick<TxRecord, 'envelopeXdr'>[]) {
  return hash(transactionSet(previousHash, txs).toXdr());
}

/** The close meta of the ledger with `header` (whose hash is `headerHash`) and its transactions. */
export function ledgerCloseMeta(
  header: xdr.LedgerHeader,
  headerHash: Uint8Array,
  txs: readonly TxRecord[],
): xdr.LedgerCloseMeta {
  const ordered = [...txs].sort((a, b) => a.applicationOrder - b.applicationOrder);
  return xdr.LedgerCloseMeta.v2(
    new xdr.LedgerCloseMetaV2({
      ext: xdr.LedgerCloseMetaExt.v0(),
      ledgerHeader: new xdr.LedgerHeaderHistoryEntry({
        hash: headerHash,
        header,
        ext: xdr.LedgerHeaderHistoryEntryExt.v0(),
      }),
      txSet: transactionSet(rawBytes(header.previousLedgerHash), ordered),
      txProcessing: ordered.map(
        (t) =>
          new xdr.TransactionResultMetaV1({
            ext: xdr.ExtensionPoint.v0(),
            result: new xdr.TransactionResultPair({
              transactionHash: Buffer.from(t.hash, 'hex'),
              result: xdr.TransactionResult.fromXdr(t.resultXdr, 'base64'),
            }),
            feeProcessing: (t.feeProcessing ?? []).map((c) => xdr.LedgerEntryChange.fromXdr(c, 'base64')),
            txApplyProcessing: xdr.TransactionMeta.fromXdr(t.resultMetaXdr, 'base64'),
            postTxApplyFeeProcessing: (t.postTxApplyFeeProcessing ?? []).map((c) =>
              xdr.LedgerEntryChange.fromXdr(c, 'base64'),
            ),
          }),
      ),
      upgradesProcessing: [],
      scpInfo: [],
      totalByteSizeOfLiveSorobanState: 0n,
      evictedKeys: [],
    }),
  );
}
