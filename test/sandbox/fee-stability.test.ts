// Simulating an assembled transaction again prices it exactly as the first simulation did: the Soroban data
// and signatures it already carries replace the estimate's, they are not added to it. x402 facilitators rely
// on this: they re-simulate the payer's assembled transaction and refuse it if its fee is below the minimum.
import test from 'ava';
import { Address, Keypair, nativeToScVal, rpc } from '@stellar/stellar-sdk';
import { fund, invokeTx, startSandbox } from './helpers.ts';

test('re-simulating an assembled (and signed) transaction gives the same resource fee', async (t) => {
  const { sandbox, server } = await startSandbox();
  t.teardown(() => sandbox.close());
  const from = Keypair.random();
  const to = Keypair.random().publicKey();
  t.true((await fund(sandbox, from.publicKey(), '10')).ok);
  t.true((await fund(sandbox, to)).ok);
  const token = sandbox.info.contracts.token;
  const tx = invokeTx(await server.getAccount(from.publicKey()), token, 'transfer', [
    new Address(from.publicKey()).toScVal(),
    new Address(to).toScVal(),
    nativeToScVal(1_000_000n, { type: 'i128' }),
  ]);
  const first = await server.simulateTransaction(tx);
  t.true(rpc.Api.isSimulationSuccess(first));
  const assembled = rpc.assembleTransaction(tx, first as rpc.Api.SimulateTransactionSuccessResponse).build();
  const again = await server.simulateTransaction(assembled);
  t.is(
    (again as rpc.Api.SimulateTransactionSuccessResponse).minResourceFee,
    (first as rpc.Api.SimulateTransactionSuccessResponse).minResourceFee,
  );
  assembled.sign(from);
  const signed = await server.simulateTransaction(assembled);
  t.is(
    (signed as rpc.Api.SimulateTransactionSuccessResponse).minResourceFee,
    (first as rpc.Api.SimulateTransactionSuccessResponse).minResourceFee,
  );
  // and the assembled transaction's fee covers what the ledger asks
  const sent = await server.sendTransaction(assembled);
  t.is(sent.status, 'PENDING');
});
