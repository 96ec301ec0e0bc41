// Genesis of a new sandbox network: ledger 1 with the network root account (the lumens friendbot hands
// out, as on a standalone stellar-core network), then the network definition's own genesis (its accounts
// and contracts). The definition's info is stored (served at /sandbox/info) with the passphrase, and its
// secrets are kept in the data directory.
import { Address, Asset, hash, Keypair, StrKey, xdr } from '@stellar/stellar-sdk';
import { x402Network } from '../ledger/networks.ts';
import { createTrustline } from './accounts.ts';
import { AuthManager } from './auth.ts';
import { addr, str } from './contract-api.ts';
import { type ContractRegistry, Host } from './host.ts';
import { accountEntryData, accountKey, keyId } from './keys.ts';
import type { GenesisContext, NetworkDefinition, NetworkInfo } from './network.ts';
import { entryRecords, Overlay } from './overlay.ts';
import type { LedgerState } from './ledger-state.ts';
import { ledgerHeader } from './xdr-records.ts';

/** Starting balance of genesis and friendbot accounts: 10,000 XLM. */
export const STARTING_BALANCE = 100_000_000_000n;
/** Lumens of the network root account (friendbot's source): 100 billion XLM. */
export const ROOT_BALANCE = 1_000_000_000_000_000_000n;

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

/** Creates ledger 1 with the root account and the network's genesis entries in an empty ledger state. */
export async function runGenesis<I extends object, S extends object>(
  state: LedgerState,
  registry: ContractRegistry,
  networkId: Uint8Array,
  passphrase: string,
  network: NetworkDefinition<I, S>,
): Promise<void> {
  const sequence = 1;
  const closeTime = Math.floor(Date.now() / 1000);
  const overlay = new Overlay(state);
  const root = Keypair.master(passphrase).publicKey();
  overlay.put(keyId(accountKey(root)), accountEntryData(root, ROOT_BALANCE, 0n));
  const hostFor = (source: string) =>
    new Host({
      overlay,
      registry,
      auth: new AuthManager('record', {
        networkId,
        ledgerSequence: sequence,
        sourceAccount: source,
        overlay,
      }),
      ledgerSequence: sequence,
      ledgerTimestamp: BigInt(closeTime),
    });
  const ctx: GenesisContext = {
    passphrase,
    networkId,
    sequence,
    createAccount(publicKey, balance) {
      overlay.put(
        keyId(accountKey(publicKey)),
        accountEntryData(publicKey, balance, BigInt(sequence) << 32n),
      );
    },
    createTrustline(account, code, issuer) {
      createTrustline(overlay, account, new Asset(code, issuer));
    },
    async deployContract(deployer, salt, def, args) {
      const id = contractIdFor(networkId, deployer, hash(Buffer.from(salt, 'utf8')));
      const code = registry.codeOf(def);
      await hostFor(deployer).deploy(id, xdr.ContractExecutable.contractExecutableWasm(code.hash), def, args);
      return id;
    },
    async deployStellarAsset(code, issuer) {
      const id = new Asset(code, issuer).contractId(passphrase);
      await hostFor(issuer).deploy(
        id,
        xdr.ContractExecutable.contractExecutableStellarAsset(),
        registry.stellarAssetContract,
        [addr(issuer), str(code)],
      );
      return id;
    },
    invoke: (source, contractId, fn, args) => hostFor(source).invoke(contractId, fn, args),
  };
  const { info, secrets } = await network.genesis(ctx);
  const stored: NetworkInfo<I> = { networkPassphrase: passphrase, network: x402Network(passphrase), ...info };
  await state.putDoc('keys', { json: JSON.stringify(secrets) });
  await state.putDoc('info', { json: JSON.stringify(stored) });

  const header = ledgerHeader({
    sequence,
    closeTime,
    previousHash: new Uint8Array(32),
    txSetHash: new Uint8Array(32),
  });
  const entries = entryRecords(overlay, sequence);
  await state.commit({
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

export function readInfo<I extends object = object>(state: LedgerState): NetworkInfo<I> {
  const doc = state.docs.get('info');
  if (!doc?.json) throw new Error('sandbox has no genesis record');
  return JSON.parse(doc.json) as NetworkInfo<I>;
}

export function readSecrets<S extends object = object>(state: LedgerState): S {
  const doc = state.docs.get('keys');
  if (!doc?.json) throw new Error('sandbox has no genesis keys');
  return JSON.parse(doc.json) as S;
}
