// A wallet-signed deposit is simulated when it is prepared, and its footprint is what that simulation touched.
// But which Merkle-tree entries a `transact` writes depends on how many leaves came before it: if another
// deposit lands first, this one writes `FilledSubtree` levels and a `Root` slot outside its declared footprint
// and fails (the host's Storage/ExceededLimit), and the wallet's signature cannot be redone by the proxy. So
// the prepared transaction declares every tree level and the next few root slots as read-write, with the
// write bytes and resource fee they may cost: deposits prepared side by side then land in any order. When the
// current tree is nearly full, one of them may be the transaction that opens the next tree: then it also
// declares `CurrentTree` and the `FullTreeRoot` entries of the trees that may fill before it lands.
import { Account, Address, Operation, type Transaction, TransactionBuilder, xdr } from '#stellar-sdk';
import { PoolStorageKey, ROOT_HISTORY_SIZE } from '../../ledger/pool-interface.ts';
import type { TreeState } from '../services/pool-transaction.ts';

/** Deposits that may land between this one's simulation and its application without breaking it. */
export const PINNED_ROOT_SLOTS = 16;
/** Bytes declared per added entry (a tree node's key and value with their ledger-entry envelope, rounded up). */
const BYTES_PER_ENTRY = 200;
/** Resource fee added per added entry: a write entry, its bytes and its share of the transaction's size. */
const FEE_PER_ENTRY = 25_000n;

/** What a prepared deposit's footprint is pinned for. */
export interface PinFootprintOptions {
  /** the simulated transaction */
  tx: Transaction;
  poolId: string;
  /** the pool's tree depth */
  levels: number;
  passphrase: string;
  /** where the pool's trees stood when it was proved */
  trees: TreeState;
}

/**
 * The trees that may fill before a deposit prepared at `trees` lands: their `FullTreeRoot` entries, with
 * `CurrentTree`, are what opening the next tree writes. Counted for PINNED_ROOT_SLOTS other transactions landing
 * first (two leaves each), twice over, since the indexer that says where the trees stand may be behind the ledger.
 */
export function treesThatMayFill(trees: TreeState): number[] {
  const coming = 4 * (PINNED_ROOT_SLOTS + 1);
  const free = trees.capacity - trees.leaves;
  if (free >= coming) return [];
  const count = 1 + Math.floor((coming - free) / trees.capacity);
  return Array.from({ length: count }, (_, i) => trees.tree + i);
}

export function pinPoolFootprint({
  tx,
  poolId,
  levels,
  passphrase,
  trees,
}: PinFootprintOptions): Transaction {
  const envelope = tx.toEnvelope();
  if (envelope.type !== 'envelopeTypeTx') return tx;
  const ext = (envelope.value as xdr.TransactionV1Envelope).tx.ext;
  if (ext.type !== 'sorobanData') return tx;
  const data = ext.value as xdr.SorobanTransactionData;
  const resources = data.resources;
  const pool = new Address(poolId).toScAddress();
  const keyOf = (key: xdr.ScVal) =>
    xdr.LedgerKey.contractData(
      new xdr.LedgerKeyContractData({
        contract: pool,
        key,
        durability: xdr.ContractDataDurability.persistent,
      }),
    );
  const readWrite = [...resources.footprint.readWrite];
  const present = new Set(readWrite.map((k) => k.toXdr('base64')));
  // a key the simulation only read moves to the read-write list: a footprint names each key once
  const pinnedIds = new Set<string>();
  // the root slot the simulation wrote: the next ones are where later deposits push this one's root
  const rootSlot = readWrite
    .map((k) => (k.type === 'contractData' ? (k.value as xdr.LedgerKeyContractData).key : undefined))
    .map((key) => (key?.type === 'scvVec' ? key.value : undefined))
    .find((v) => v?.[0]?.type === 'scvSymbol' && String(v[0].value) === 'Root' && v[1]?.type === 'scvU32');
  const first = rootSlot === undefined ? undefined : Number(rootSlot?.[1]?.value);
  const extra: xdr.LedgerKey[] = [];
  const add = (key: xdr.LedgerKey) => {
    const id = key.toXdr('base64');
    if (!present.has(id)) {
      present.add(id);
      pinnedIds.add(id);
      extra.push(key);
    }
  };
  for (let level = 0; level < levels; level++) add(keyOf(PoolStorageKey.filledSubtree(level)));
  if (first !== undefined)
    for (let i = 1; i <= PINNED_ROOT_SLOTS; i++)
      add(keyOf(PoolStorageKey.root((first + i) % ROOT_HISTORY_SIZE)));
  const filling = treesThatMayFill(trees);
  if (filling.length > 0) add(keyOf(PoolStorageKey.currentTree()));
  for (const tree of filling) add(keyOf(PoolStorageKey.fullTreeRoot(tree)));
  if (extra.length === 0) return tx;

  const pinned = new xdr.SorobanTransactionData({
    ext: data.ext,
    resources: new xdr.SorobanResources({
      footprint: new xdr.LedgerFootprint({
        readOnly: resources.footprint.readOnly.filter((k) => !pinnedIds.has(k.toXdr('base64'))),
        readWrite: [...readWrite, ...extra],
      }),
      instructions: resources.instructions,
      diskReadBytes: resources.diskReadBytes,
      writeBytes: Number(resources.writeBytes) + extra.length * BYTES_PER_ENTRY,
    }),
    resourceFee: BigInt(data.resourceFee as unknown as bigint) + BigInt(extra.length) * FEE_PER_ENTRY,
  });
  const inclusionFee = BigInt(tx.fee) - BigInt(data.resourceFee as unknown as bigint);
  const builder = new TransactionBuilder(new Account(tx.source, (BigInt(tx.sequence) - 1n).toString()), {
    fee: inclusionFee.toString(),
    networkPassphrase: passphrase,
    timebounds: tx.timeBounds,
    sorobanData: pinned,
  });
  for (const op of tx.operations) {
    if (op.type !== 'invokeHostFunction') throw new Error(`unexpected operation ${op.type}`);
    builder.addOperation(Operation.invokeHostFunction({ func: op.func, auth: op.auth ?? [] }));
  }
  return builder.build();
}
