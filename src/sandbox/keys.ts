// Ledger keys and entries the sandbox stores, built exactly as stellar-core names them so that
// getLedgerEntries answers the same base64 keys clients compute (getAccount, getContractInstance, SAC balances).
import { Address, type Asset, Keypair, xdr } from '@stellar/stellar-sdk';

export type Durability = 'persistent' | 'temporary';

export function accountKey(accountId: string): xdr.LedgerKey {
  return xdr.LedgerKey.account(
    new xdr.LedgerKeyAccount({ accountId: Keypair.fromPublicKey(accountId).xdrPublicKey() }),
  );
}

const scAddresses = new Map<string, xdr.ScAddress>();

/** ScAddress of a strkey, memoised: strkey decoding (with its checksum) is a hot path of every storage access. */
export function scAddress(address: string): xdr.ScAddress {
  let a = scAddresses.get(address);
  if (!a) {
    a = new Address(address).toScAddress();
    if (scAddresses.size > 100_000) scAddresses.clear();
    scAddresses.set(address, a);
  }
  return a;
}

export function contractDataKey(contractId: string, key: xdr.ScVal, durability: Durability): xdr.LedgerKey {
  return xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: scAddress(contractId),
      key,
      durability: xdr.ContractDataDurability[durability],
    }),
  );
}

export function instanceKey(contractId: string): xdr.LedgerKey {
  return contractDataKey(contractId, xdr.ScVal.scvLedgerKeyContractInstance(), 'persistent');
}

/** Where a consumed auth nonce of `address` is remembered (temporary entry, lives until signature expiry). */
export function nonceKey(address: string, nonce: bigint): xdr.LedgerKey {
  return contractDataKey(address, xdr.ScVal.scvLedgerKeyNonce(new xdr.ScNonceKey({ nonce })), 'temporary');
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

export function contractDataEntry(
  contractId: string,
  key: xdr.ScVal,
  durability: Durability,
  val: xdr.ScVal,
): xdr.LedgerEntryData {
  return xdr.LedgerEntryData.contractData(
    new xdr.ContractDataEntry({
      ext: xdr.ExtensionPoint.v0(),
      contract: scAddress(contractId),
      key,
      durability: xdr.ContractDataDurability[durability],
      val,
    }),
  );
}

/** Raw bytes of an XDR opaque value (Hash, ContractId, SignatureHint…) or a plain byte array. */
export function rawBytes(v: unknown): Uint8Array {
  if (v instanceof Uint8Array) return v;
  const inner = (v as { value?: unknown }).value;
  if (inner instanceof Uint8Array) return inner;
  throw new TypeError('expected XDR bytes');
}

export function contractCodeKey(wasmHash: Uint8Array): xdr.LedgerKey {
  return xdr.LedgerKey.contractCode(new xdr.LedgerKeyContractCode({ hash: Buffer.from(wasmHash) }));
}

export function contractCodeEntry(wasmHash: Uint8Array, code: Uint8Array): xdr.LedgerEntryData {
  return xdr.LedgerEntryData.contractCode(
    new xdr.ContractCodeEntry({
      ext: xdr.ContractCodeEntryExt.v0(),
      hash: Buffer.from(wasmHash),
      code: Buffer.from(code),
    }),
  );
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
