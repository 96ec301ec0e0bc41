// Trustline view of Stellar Asset Contract balances: on a real network a G-account's balance of a classic
// asset lives in a trustline. The sandbox's built-in SAC keeps every balance in contract data, so
// getLedgerEntries answers the trustline key of an asset whose SAC is deployed from that data
// (rpc.Server.getAssetBalance works).
import { Asset, Keypair, StrKey, xdr } from '@stellar/stellar-sdk';
import { addr } from './contract-api.ts';
import { accountKey, contractDataKey, instanceKey, keyId, rawBytes } from './keys.ts';
import type { EntryRecord, LedgerStore } from './store.ts';

const INT64_MAX = (1n << 63n) - 1n;
const AUTHORIZED_FLAG = 1;

/** The trustline entry for `key` if it names an asset whose SAC is deployed and an existing account. */
export function trustlineView(
  store: LedgerStore,
  key: xdr.LedgerKey,
  passphrase: string,
): EntryRecord | undefined {
  if (key.type !== 'trustline') return undefined;
  const tl = key.value as xdr.LedgerKeyTrustLine;
  if (tl.asset.type !== 'assetTypeCreditAlphanum4') return undefined;
  const a4 = tl.asset.value as xdr.AlphaNum4;
  const code = Buffer.from(rawBytes(a4.assetCode)).toString('latin1').replace(/\0+$/, '');
  const issuer = StrKey.encodeEd25519PublicKey(Buffer.from(rawBytes(a4.issuer.value)));
  const token = new Asset(code, issuer).contractId(passphrase);
  if (!store.get(keyId(instanceKey(token)))) return undefined;
  const account = StrKey.encodeEd25519PublicKey(Buffer.from(rawBytes(tl.accountId.value)));
  const accountRecord = store.get(keyId(accountKey(account)));
  if (!accountRecord) return undefined;
  const balanceKey = keyId(
    contractDataKey(token, xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Balance'), addr(account)]), 'persistent'),
  );
  const balanceRecord = store.get(balanceKey);
  let balance = 0n;
  if (balanceRecord) {
    const data = store.getData(balanceKey)?.value as xdr.ContractDataEntry;
    const amount = (data.val.value as xdr.ScMapEntry[]).find((e) => String(e.key.value) === 'amount');
    const parts = amount?.val.value as xdr.Int128Parts;
    balance = (BigInt(parts.hi as unknown as bigint) << 64n) | BigInt(parts.lo as unknown as bigint);
  }
  const entry = new xdr.TrustLineEntry({
    accountId: Keypair.fromPublicKey(account).xdrPublicKey(),
    asset: new Asset(code, issuer).toTrustLineXdrObject(),
    balance,
    limit: INT64_MAX,
    flags: AUTHORIZED_FLAG,
    ext: xdr.TrustLineEntryExt.v0(),
  } as unknown as ConstructorParameters<typeof xdr.TrustLineEntry>[0]);
  return {
    xdr: xdr.LedgerEntryData.trustline(entry).toXdr('base64'),
    lastModified: (balanceRecord ?? accountRecord).lastModified,
  };
}
