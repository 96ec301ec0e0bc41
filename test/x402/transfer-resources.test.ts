// Reusing a transfer's simulated resources: the payer's nonce key (and only it) is swapped for the new
// nonce, a footprint without exactly one such key is not reused, and entries expire and can be dropped.
// End to end (a reused simulation accepted by our facilitator and by the official one) is covered by the
// payments tests, where every payment after the first to a service reuses the first one's simulation.
import test from 'ava';
import { Address, Keypair, rpc, SorobanDataBuilder, StrKey, xdr } from '#stellar-sdk';
import { TransferResources, withNonce } from '../../src/x402/transfer-resources.ts';

const payer = Keypair.random().publicKey();
const other = Keypair.random().publicKey();
const token = StrKey.encodeContract(Buffer.alloc(32, 7));

const nonceKey = (who: string, nonce: bigint) =>
  xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(who).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyNonce(new xdr.ScNonceKey({ nonce })),
      durability: xdr.ContractDataDurability.temporary,
    }),
  );
const instanceKey = xdr.LedgerKey.contractData(
  new xdr.LedgerKeyContractData({
    contract: new Address(token).toScAddress(),
    key: xdr.ScVal.scvLedgerKeyContractInstance(),
    durability: xdr.ContractDataDurability.persistent,
  }),
);

function data(readWrite: xdr.LedgerKey[]): xdr.SorobanTransactionData {
  return new SorobanDataBuilder()
    .setReadOnly([instanceKey])
    .setReadWrite(readWrite)
    .setResources(1_000_000, 2_000, 300)
    .setResourceFee(63_000n)
    .build();
}
const ids = (keys: xdr.LedgerKey[]) => keys.map((k) => k.toXdr('base64'));

test('the payer’s nonce key is replaced; every other key and every resource figure stays', (t) => {
  const before = data([nonceKey(other, 5n), nonceKey(payer, 1n), instanceKey]);
  const after = withNonce(before, payer, -42n);
  t.truthy(after);
  t.deepEqual(
    ids(after!.resources.footprint.readWrite),
    ids([nonceKey(other, 5n), nonceKey(payer, -42n), instanceKey]),
  );
  t.deepEqual(ids(after!.resources.footprint.readOnly), ids([instanceKey]));
  t.is(after!.resources.instructions, before.resources.instructions);
  t.is(after!.resources.writeBytes, before.resources.writeBytes);
  t.is(BigInt(after!.resourceFee as unknown as bigint), 63_000n);
  // the input is left as it was
  t.deepEqual(ids(before.resources.footprint.readWrite)[1], nonceKey(payer, 1n).toXdr('base64'));
});

test('a footprint without exactly one nonce key of the payer is not reused', (t) => {
  t.is(withNonce(data([instanceKey]), payer, 1n), undefined);
  t.is(withNonce(data([nonceKey(other, 1n)]), payer, 1n), undefined);
  t.is(withNonce(data([nonceKey(payer, 1n), nonceKey(payer, 2n)]), payer, 3n), undefined);
});

test('the cache answers the same transfer only, fitted to the new nonce, until cleared', (t) => {
  const cache = new TransferResources();
  const sim = {
    transactionData: new SorobanDataBuilder(data([nonceKey(payer, 1n)])),
    minResourceFee: '63000',
  } as unknown as rpc.Api.SimulateTransactionSuccessResponse;
  const key = TransferResources.key(token, payer, other, 100_000n);
  t.is(cache.get(key, payer, 9n), undefined);
  cache.set(key, sim);
  t.is(cache.get(TransferResources.key(token, payer, other, 100_001n), payer, 9n), undefined);
  const hit = cache.get(key, payer, 9n);
  t.deepEqual(ids(hit!.transactionData.build().resources.footprint.readWrite), ids([nonceKey(payer, 9n)]));
  t.is(hit!.minResourceFee, '63000');
  cache.clear();
  t.is(cache.get(key, payer, 9n), undefined);
});

test('payments asking while an identical transfer is being simulated wait for it, fitted to their nonces', async (t) => {
  const cache = new TransferResources();
  const key = TransferResources.key(token, payer, other, 100_000n);
  let simulations = 0;
  let release!: () => void;
  const gate = new Promise<void>((r) => (release = r));
  const simulate = (nonce: bigint) => async () => {
    simulations++;
    await gate;
    return {
      transactionData: new SorobanDataBuilder(data([nonceKey(payer, nonce)])),
      minResourceFee: '63000',
    } as unknown as rpc.Api.SimulateTransactionSuccessResponse;
  };
  const answers = Promise.all([1n, 2n, 3n].map((n) => cache.fitted(key, payer, n, simulate(n))));
  release();
  const sims = await answers;
  t.is(simulations, 1);
  sims.forEach((sim, i) =>
    t.deepEqual(
      ids(sim.transactionData.build().resources.footprint.readWrite),
      ids([nonceKey(payer, BigInt(i + 1))]),
    ),
  );
  // and the next one reuses it from the cache
  await cache.fitted(key, payer, 4n, simulate(4n));
  t.is(simulations, 1);
});

test('when the shared simulation fails, each waiting payment simulates its own', async (t) => {
  const cache = new TransferResources();
  const key = TransferResources.key(token, payer, other, 100_000n);
  let simulations = 0;
  const failing = async (): Promise<rpc.Api.SimulateTransactionSuccessResponse> => {
    simulations++;
    await new Promise((r) => setTimeout(r, 10));
    throw new Error('simulation failed');
  };
  const own = async () => {
    simulations++;
    return {
      transactionData: new SorobanDataBuilder(data([nonceKey(payer, 2n)])),
      minResourceFee: '63000',
    } as unknown as rpc.Api.SimulateTransactionSuccessResponse;
  };
  const first = cache.fitted(key, payer, 1n, failing);
  const second = cache.fitted(key, payer, 2n, own);
  await t.throwsAsync(first, { message: 'simulation failed' });
  t.is((await second).minResourceFee, '63000');
  t.is(simulations, 2);
});
