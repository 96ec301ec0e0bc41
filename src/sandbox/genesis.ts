// Genesis of a new sandbox network: the well-known accounts (admin, operator, pool wallet) with fresh keys
// kept in the data directory, and the deployed contracts (USDC token, verifier with the circuit's
// verification key, ASP membership and non-membership, pool) with ids derived as stellar-core derives them.
import { x402Network } from '../ledger/networks.ts';
import { readFileSync } from 'node:fs';
import { Address, Asset, hash, Keypair, StrKey, xdr } from '@stellar/stellar-sdk';
import { aspMembership, aspNonMembership, pool, token, verifier } from '../../contracts/index.ts';
import { vkeyToScVal } from '../../contracts/verifier.ts';
import { AuthManager } from './auth.ts';
import { addr, str, u32, u256 } from './contract-api.ts';
import { type ContractRegistry, codeHash, Host } from './host.ts';
import { accountEntryData, accountKey, keyId } from './keys.ts';
import { entryRecords, Overlay } from './overlay.ts';
import type { LedgerStore } from './store.ts';
import { ledgerHeader } from './xdr-records.ts';

/** Starting balance of genesis and friendbot accounts: 10,000 XLM. */
export const STARTING_BALANCE = 100_000_000_000n;
/** Lumens of the network root account (friendbot's source): 100 billion XLM. */
export const ROOT_BALANCE = 1_000_000_000_000_000_000n;
export const POOL_LEVELS = 20;
export const ASP_MEMBERSHIP_LEVELS = 20;
/** Largest single deposit the pool accepts: 1,000,000 USDC. */
export const MAX_DEPOSIT = 1_000_000n * 10_000_000n;
/** Policy AB: allowlist (1) + blocklist (2). */
export const POLICY_FLAGS = 3;

export interface SandboxInfo {
  networkPassphrase: string;
  network: string;
  contracts: {
    token: string;
    pool: string;
    verifier: string;
    asp_membership: string;
    asp_non_membership: string;
  };
  accounts: { admin: string; operator: string; poolWallet: string };
}

export interface SandboxSecrets {
  admin: string;
  operator: string;
  poolWallet: string;
}

export type VerificationKeyInput = string | Record<string, unknown>;

/** Contract id of a contract deployed by `deployer` with `salt` (HashIdPreimage CONTRACT_ID). */
export function contractIdFor(networkId: Uint8Array, deployer: string, salt: Uint8Array): string {
  const preimage = xdr.HashIdPreimage.envelopeTypeContractId(
    new xdr.HashIdPreimageContractId({
      networkId,
      contractIdPreimage: xdr.ContractIdPreimage.contractIdPreimageFromAddress(
        new xdr.ContractIdPreimageFromAddress({ address: new Address(deployer).toScAddress(), salt }),
      ),
    }),
  );
  return StrKey.encodeContract(Buffer.from(hash(preimage.toXdr())));
}

function loadVkey(vkey: VerificationKeyInput): Record<string, unknown> {
  if (typeof vkey !== 'string') return vkey;
  try {
    return JSON.parse(readFileSync(vkey, 'utf8'));
  } catch (e) {
    throw new Error(
      `cannot read the verification key ${vkey} (run \`npm run build\` first): ${(e as Error).message}`,
    );
  }
}

/** Creates ledger 1 with the genesis state in an empty store. */
export async function runGenesis(
  store: LedgerStore,
  registry: ContractRegistry,
  networkId: Uint8Array,
  passphrase: string,
  vkeyInput: VerificationKeyInput,
): Promise<void> {
  const vkey = vkeyToScVal(loadVkey(vkeyInput) as unknown as Parameters<typeof vkeyToScVal>[0]);
  const keys = { admin: Keypair.random(), operator: Keypair.random(), poolWallet: Keypair.random() };
  const admin = keys.admin.publicKey();
  const sequence = 1;
  const closeTime = Math.floor(Date.now() / 1000);
  const overlay = new Overlay(store);
  // the network root account holds the lumens friendbot hands out, as on a standalone stellar-core network
  const root = Keypair.master(passphrase).publicKey();
  overlay.put(keyId(accountKey(root)), accountEntryData(root, ROOT_BALANCE, 0n));
  for (const kp of Object.values(keys)) {
    overlay.put(
      keyId(accountKey(kp.publicKey())),
      accountEntryData(kp.publicKey(), STARTING_BALANCE, BigInt(sequence) << 32n),
    );
  }
  const auth = new AuthManager('record', {
    networkId,
    ledgerSequence: sequence,
    sourceAccount: admin,
    overlay,
  });
  const host = new Host({
    overlay,
    registry,
    auth,
    ledgerSequence: sequence,
    ledgerTimestamp: BigInt(closeTime),
  });
  const salt = (name: string) => codeHash(`salt/${name}`);
  const wasm = (name: string) => xdr.ContractExecutable.contractExecutableWasm(codeHash(name));
  const contracts = {
    token: new Asset('USDC', admin).contractId(passphrase),
    verifier: contractIdFor(networkId, admin, salt(verifier.name)),
    asp_membership: contractIdFor(networkId, admin, salt(aspMembership.name)),
    asp_non_membership: contractIdFor(networkId, admin, salt(aspNonMembership.name)),
    pool: contractIdFor(networkId, admin, salt(pool.name)),
  };
  await host.deploy(contracts.token, xdr.ContractExecutable.contractExecutableStellarAsset(), token, [
    addr(admin),
    str('USDC'),
  ]);
  await host.deploy(contracts.verifier, wasm(verifier.name), verifier, [vkey]);
  await host.deploy(contracts.asp_membership, wasm(aspMembership.name), aspMembership, [
    addr(admin),
    u32(ASP_MEMBERSHIP_LEVELS),
  ]);
  await host.deploy(contracts.asp_non_membership, wasm(aspNonMembership.name), aspNonMembership, [
    addr(admin),
  ]);
  await host.deploy(contracts.pool, wasm(pool.name), pool, [
    addr(admin),
    addr(contracts.token),
    addr(contracts.verifier),
    addr(contracts.asp_membership),
    addr(contracts.asp_non_membership),
    u256(MAX_DEPOSIT),
    u32(POOL_LEVELS),
    u32(POLICY_FLAGS),
  ]);
  await host.invoke(contracts.pool, 'set_payout_wallet', [addr(keys.poolWallet.publicKey())]);

  const info: SandboxInfo = {
    networkPassphrase: passphrase,
    network: x402Network(passphrase),
    contracts,
    accounts: { admin, operator: keys.operator.publicKey(), poolWallet: keys.poolWallet.publicKey() },
  };
  await store.putDoc('keys', {
    admin: keys.admin.secret(),
    operator: keys.operator.secret(),
    poolWallet: keys.poolWallet.secret(),
  });
  await store.putDoc('info', { json: JSON.stringify(info) });

  const header = ledgerHeader({
    sequence,
    closeTime,
    previousHash: new Uint8Array(32),
    txSetHash: new Uint8Array(32),
  });
  const entries = entryRecords(overlay, sequence);
  await store.commit({
    meta: {
      sequence,
      closeTime,
      hash: Buffer.from(hash(header.toXdr())).toString('hex'),
      headerXdr: header.toXdr('base64'),
      oldestLedger: sequence,
      oldestCloseTime: closeTime,
    },
    entries,
    txs: [],
    events: [],
  });
}

export function readInfo(store: LedgerStore): SandboxInfo {
  const doc = store.docs.get('info');
  if (!doc?.json) throw new Error('sandbox has no genesis record');
  return JSON.parse(doc.json) as SandboxInfo;
}

export function readSecrets(store: LedgerStore): SandboxSecrets {
  const doc = store.docs.get('keys');
  if (!doc) throw new Error('sandbox has no genesis keys');
  return {
    admin: doc.admin as string,
    operator: doc.operator as string,
    poolWallet: doc.poolWallet as string,
  };
}
