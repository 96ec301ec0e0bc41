// Classic ledger entries the engine reads and writes: accounts (balance, sequence number, sub-entries and
// the minimum balance they require) and trustlines (a G account's balance of a classic asset), as
// stellar-core keeps them. Base reserve 0.5 XLM: an account needs (2 + sub-entries) × base reserve.
import { type Asset, xdr } from '#stellar-sdk';
import { accountEntryData, accountKey, keyId, trustlineEntryData, trustlineKey } from './keys.ts';
import { Overlay } from './overlay.ts';
import type { LedgerState } from './ledger-state.ts';
import { BASE_RESERVE } from './xdr-records.ts';

/** Largest int64: the default trustline limit and the ceiling of every classic balance. */
export const INT64_MAX = (1n << 63n) - 1n;

export interface AccountState {
  balance: bigint;
  seqNum: bigint;
  numSubEntries: number;
}

export interface TrustlineState {
  balance: bigint;
  limit: bigint;
  flags: number;
}

const trustlineIds = new Map<string, string>();

/** Store key of a trustline, memoised: the SAC reads and writes trustlines on every transfer. */
function trustlineId(accountId: string, asset: Asset): string {
  const memo = `${accountId}/${asset.getCode()}:${asset.getIssuer()}`;
  let id = trustlineIds.get(memo);
  if (!id) {
    id = keyId(trustlineKey(accountId, asset));
    if (trustlineIds.size > 100_000) trustlineIds.clear();
    trustlineIds.set(memo, id);
  }
  return id;
}

const read = (state: LedgerState | Overlay, key: string) =>
  state instanceof Overlay ? state.get(key) : state.getData(key);

export function readAccount(state: LedgerState | Overlay, accountId: string): AccountState | undefined {
  const data = read(state, keyId(accountKey(accountId)));
  if (!data) return undefined;
  const a = data.value as xdr.AccountEntry;
  return {
    balance: BigInt(a.balance as unknown as bigint),
    seqNum: BigInt(a.seqNum as unknown as bigint),
    numSubEntries: Number(a.numSubEntries),
  };
}

export function writeAccount(overlay: Overlay, accountId: string, a: AccountState): void {
  overlay.put(
    keyId(accountKey(accountId)),
    accountEntryData(accountId, a.balance, a.seqNum, a.numSubEntries),
  );
}

/** The lumens an account must keep: (2 + sub-entries) base reserves. */
export function minBalance(numSubEntries: number): bigint {
  return BigInt(2 + numSubEntries) * BigInt(BASE_RESERVE);
}

export function readTrustline(
  state: LedgerState | Overlay,
  accountId: string,
  asset: Asset,
): TrustlineState | undefined {
  const data = read(state, trustlineId(accountId, asset));
  if (!data) return undefined;
  const t = data.value as xdr.TrustLineEntry;
  return {
    balance: BigInt(t.balance as unknown as bigint),
    limit: BigInt(t.limit as unknown as bigint),
    flags: Number(t.flags),
  };
}

export function writeTrustline(overlay: Overlay, accountId: string, asset: Asset, t: TrustlineState): void {
  overlay.put(
    trustlineId(accountId, asset),
    trustlineEntryData(accountId, asset, t.balance, t.limit, t.flags),
  );
}

export function deleteTrustline(overlay: Overlay, accountId: string, asset: Asset): void {
  overlay.put(trustlineId(accountId, asset), null);
}

/** Creates an authorized trustline with the maximum limit and counts it as the account's sub-entry. */
export function createTrustline(overlay: Overlay, accountId: string, asset: Asset): void {
  if (readTrustline(overlay, accountId, asset)) return;
  const account = readAccount(overlay, accountId);
  if (!account) throw new Error(`account ${accountId} does not exist`);
  writeAccount(overlay, accountId, { ...account, numSubEntries: account.numSubEntries + 1 });
  writeTrustline(overlay, accountId, asset, { balance: 0n, limit: INT64_MAX, flags: 1 });
}
