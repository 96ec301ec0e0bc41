// What charging a transaction does to accounts, as stellar-core records it in a ledger's close meta since
// protocol 23: the fee taken from the fee source before any transaction applies (`feeProcessing`), the source's
// sequence number bump when the transaction applies (its meta's `txChangesBefore`), and a Soroban
// transaction's refund after all have applied (`postTxApplyFeeProcessing`); each an account entry's state
// before and after. The fees kept go to the header's fee pool.
import { xdr } from '#stellar-sdk';
import { type AccountState, readAccount, writeAccount } from './accounts.ts';
import { accountKey, keyId } from './keys.ts';
import type { Overlay } from './overlay.ts';

/** Changes `address`'s account in `overlay` by `update`; returns the change as meta records it. */
export function changeAccount(
  overlay: Overlay,
  address: string,
  update: (account: AccountState) => AccountState,
): xdr.LedgerEntryChange[] {
  const id = keyId(accountKey(address));
  const before = overlay.entry(id);
  writeAccount(overlay, address, update(readAccount(overlay, address) as AccountState));
  const after = overlay.get(id);
  if (!before || !after) return [];
  const entry = (data: xdr.LedgerEntryData, seq: number) =>
    new xdr.LedgerEntry({ lastModifiedLedgerSeq: seq, data, ext: xdr.LedgerEntryExt.v0() });
  return [
    xdr.LedgerEntryChange.ledgerEntryState(entry(before.data, before.lastModified)),
    xdr.LedgerEntryChange.ledgerEntryUpdated(entry(after, overlay.sequence)),
  ];
}

/** A transaction's meta with the changes made before it applied (the sequence number bump). */
export function withChangesBefore(
  meta: xdr.TransactionMeta,
  changes: xdr.LedgerEntryChange[],
): xdr.TransactionMeta {
  if (meta.type !== 'v4' || changes.length === 0) return meta;
  const v4 = meta.value as xdr.TransactionMetaV4;
  return xdr.TransactionMeta.v4(
    new xdr.TransactionMetaV4({
      ext: v4.ext,
      txChangesBefore: changes,
      operations: v4.operations,
      txChangesAfter: v4.txChangesAfter,
      sorobanMeta: v4.sorobanMeta,
      events: v4.events,
      diagnosticEvents: v4.diagnosticEvents,
    }),
  );
}

/** base64 of each change, as a transaction record keeps them. */
export const changesXdr = (changes: xdr.LedgerEntryChange[]): string[] =>
  changes.map((c) => c.toXdr('base64'));
