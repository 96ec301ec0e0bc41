// Ledger keys and entries the sandbox stores, built exactly as stellar-core names them so that
// getLedgerEntries answers the same base64 keys clients compute (getAccount, getContractInstance, SAC balances).
import { type Asset, Keypair, xdr } from '#stellar-sdk';

export function accountKey(accountId: string): xdr.LedgerKey {
  return xdr.LedgerKey.account(
    new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(accountId).xdrPublicKey() }),
  );
}

export const keyId = (key: xdr.LedgerKey): string => key.toXdr('base64');

export function accountEntryData(
  accountId: string,
  balance: bigint,
  seqNum: bigint,
  numSubEntries = 0,
): xdr.LedgerEntryData {
  return xdr.LedgerEntryData.account(
    new xdr.AccountEntry({
      accountId: Keypair.fromPublicKey(accountId).xdrPublicKey(),
      balance,
      seqNum,
      numSubEntries,
      inflationDest: null,
      flags: 0,
      homeDomain: '',
      thresholds: new Uint8Array([1, 0, 0, 0]),
      signers: [],
      ext: xdr.AccountEntryExt.v0(),
    } as unknown as ConstructorParameters<typeof xdr.AccountEntry>[0]),
  );
}

/** Raw bytes of an XDR opaque value (Hash, ContractId, SignatureHint…) or a plain byte array. */
export function rawBytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  const inner = (v as { value?: unknown }).value;
  if (inner instanceof Uint8Array) return inner;
  throw new TypeError('expected XDR bytes');
}

const accountIds = new Map<string, xdr.PublicKey>();
const trustlineAssets = new Map<string, xdr.TrustLineAsset>();

/** XDR account id of a G strkey, memoised (decoding checks the strkey's checksum). */
function accountIdXdr(accountId: string): xdr.PublicKey {
  let id = accountIds.get(accountId);
  if (!id) {
    id = Keypair.fromPublicKey(accountId).xdrPublicKey();
    if (accountIds.size > 100_000) accountIds.clear();
    accountIds.set(accountId, id);
  }
  return id;
}

function trustlineAsset(asset: Asset): xdr.TrustLineAsset {
  const name = `${asset.getCode()}:${asset.getIssuer()}`;
  let a = trustlineAssets.get(name);
  if (!a) {
    a = asset.toTrustLineXdrObject();
    trustlineAssets.set(name, a);
  }
  return a;
}

export function trustlineKey(accountId: string, asset: Asset): xdr.LedgerKey {
  return xdr.LedgerKey.trustline(
    new xdr.LedgerKeyTrustLine({ accountId: accountIdXdr(accountId), asset: trustlineAsset(asset) }),
  );
}

/** Trustline flag: the holder is authorized to hold and transact the asset. */
export const AUTHORIZED_FLAG = 1;

export function trustlineEntryData(
  accountId: string,
  asset: Asset,
  balance: bigint,
  limit: bigint,
  flags = AUTHORIZED_FLAG,
): xdr.LedgerEntryData {
  return xdr.LedgerEntryData.trustline(
    new xdr.TrustLineEntry({
      accountId: accountIdXdr(accountId),
      asset: trustlineAsset(asset),
      balance,
      limit,
      flags,
      ext: xdr.TrustLineEntryExt.v0(),
    } as unknown as ConstructorParameters<typeof xdr.TrustLineEntry>[0]),
  );
}
