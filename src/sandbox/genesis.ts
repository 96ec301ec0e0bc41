// Genesis of a new sandbox network, in two parts. Ledger 1 holds the network root account (the lumens
// friendbot hands out, as on a standalone stellar-core network), the network's configuration settings (the
// Soroban limits and fee rates testnet publishes, as ConfigSetting ledger entries) and the network
// definition's classic accounts; its secrets are kept in the data directory. Then, once the RPC serves, the
// definition deploys its contracts through it like on any network, and its public info is stored (served at
// /sandbox/info) with the passphrase. A start that stopped between the two runs the deployment again. Before
// the definition's deployment, the root account deploys the native asset's Stellar Asset Contract (XLM's
// SAC), which every Stellar network has.
import { Address, Asset, hash, Keypair, Operation, type rpc, TransactionBuilder, xdr } from '#stellar-sdk';
import { x402Network } from '../ledger/networks.ts';
import { createTrustline } from './accounts.ts';
import { accountEntryData, accountKey, keyId } from './keys.ts';
import type { DeployContext, GenesisContext, NetworkDefinition, NetworkInfo } from './network.ts';
import { entryRecords, Overlay } from './overlay.ts';
import type { LedgerState } from './ledger-state.ts';
import { SorobanHost } from './soroban-host.ts';
import { ledgerEntryXdr } from './invoke.ts';
import { ledgerHeader } from './xdr-records.ts';

/** Starting balance of genesis and friendbot accounts: 10,000 XLM. */
export const STARTING_BALANCE = 100_000_000_000n;
/** Lumens of the network root account (friendbot's source): 100 billion XLM. */
export const ROOT_BALANCE = 1_000_000_000_000_000_000n;
/** Names the engine that wrote a data directory: data from an engine before the real Soroban host is refused. */
export const ENGINE = 'soroban-env-host';

/** Writes ledger 1 (root account, network settings, the definition's accounts) into an empty ledger state. */
export async function writeGenesisLedger<I extends object, S extends object>(
  state: LedgerState,
  passphrase: string,
  network: NetworkDefinition<I, S>,
): Promise<void> {
  const sequence = 1;
  const closeTime = Math.floor(Date.now() / 1000);
  const overlay = new Overlay(state, sequence);
  const root = Keypair.master(passphrase).publicKey();
  overlay.put(keyId(accountKey(root)), accountEntryData(root, ROOT_BALANCE, 0n));
  for (const raw of SorobanHost.testnetConfigSettings()) {
    const { data } = xdr.LedgerEntry.fromXdr(raw);
    if (data.type !== 'configSetting')
      throw new Error(`the host's network settings hold a ${data.type} entry`);
    const configSettingId = xdr.ConfigSettingId[data.value.type];
    overlay.put(
      keyId(xdr.LedgerKey.configSetting(new xdr.LedgerKeyConfigSetting({ configSettingId }))),
      data,
    );
  }
  const ctx: GenesisContext = {
    passphrase,
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
  };
  const secrets = network.genesis(ctx);
  await state.putDoc('keys', { json: JSON.stringify(secrets) });
  await state.putDoc('engine', { name: ENGINE, passphrase });

  const header = ledgerHeader({
    sequence,
    closeTime,
    previousHash: new Uint8Array(32),
    txSetHash: new Uint8Array(32),
  });
  await state.commit({
    meta: {
      sequence,
      closeTime,
      hash: Buffer.from(hash(header.toXdr())).toString('hex'),
      headerXdr: header.toXdr('base64'),
      oldestLedger: sequence,
      oldestCloseTime: closeTime,
    },
    entries: entryRecords(overlay, sequence),
    txs: [],
    events: [],
  });
}

/** The network's ConfigSetting entries as stored in the ledger (LedgerEntry XDR), for the host. */
export function configSettingEntries(state: LedgerState): Buffer[] {
  const out: Buffer[] = [];
  for (const [key, rec] of state.entries) {
    if (xdr.LedgerKey.fromXdr(key, 'base64').type !== 'configSetting') continue;
    out.push(ledgerEntryXdr(xdr.LedgerEntryData.fromXdr(rec.xdr, 'base64'), rec.lastModified));
  }
  return out;
}

/** The native asset's Stellar Asset Contract, created by the root account through `server` unless it exists. */
export async function deployNativeAssetContract(
  state: LedgerState,
  passphrase: string,
  server: rpc.Server,
): Promise<void> {
  const instance = xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(Asset.native().contractId(passphrase)).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyContractInstance(),
      durability: xdr.ContractDataDurability.persistent,
    }),
  );
  if (state.get(keyId(instance))) return;
  const root = Keypair.master(passphrase);
  const tx = new TransactionBuilder(await server.getAccount(root.publicKey()), {
    fee: '100',
    networkPassphrase: passphrase,
  })
    .addOperation(Operation.createStellarAssetContract({ asset: Asset.native() }))
    .setTimeout(300)
    .build();
  const prepared = await server.prepareTransaction(tx);
  prepared.sign(root);
  const sent = await server.sendTransaction(prepared);
  if (sent.status !== 'PENDING') throw new Error(`the native asset contract was refused: ${sent.status}`);
  const final = await server.pollTransaction(sent.hash, { attempts: 1000, sleepStrategy: () => 5 });
  if (final.status !== 'SUCCESS') throw new Error(`the native asset contract failed: ${final.status}`);
}

/** Deploys the definition's contracts through the sandbox's RPC (unless done) and stores the public info. */
export async function deployNetwork<I extends object, S extends object>(
  state: LedgerState,
  passphrase: string,
  network: NetworkDefinition<I, S>,
  ctx: DeployContext,
): Promise<void> {
  if (state.docs.get('info')?.json) return;
  const info = await network.deploy(ctx, readSecrets<S>(state));
  const stored: NetworkInfo<I> = { networkPassphrase: passphrase, network: x402Network(passphrase), ...info };
  await state.putDoc('info', { json: JSON.stringify(stored) });
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
