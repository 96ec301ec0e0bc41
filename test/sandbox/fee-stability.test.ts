// Simulating an assembled transaction again prices it as the first simulation did, to within the few bytes
// of size estimate that the signed authorization entries now in the operation add (the real preflight's
// estimate, as stellar-rpc computes it), and the envelope's own signatures change nothing. x402 facilitators
// rely on this: they re-simulate the payer's assembled transaction and refuse it if its whole fee (resource
// fee plus the inclusion fee) is below the minimum.
import test from 'ava';
import { Address, Keypair, nativeToScVal, rpc } from '#stellar-sdk';
import { fund, invokeTx, startSandbox } from './helpers.ts';

test('re-simulating an assembled (and signed) transaction gives the resource fee its whole fee covers', async (t) => {
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
  if (!rpc.Api.isSimulationSuccess(first)) return t.fail('simulation failed');
  const assembled = rpc.assembleTransaction(tx, first).build();
  const again = await server.simulateTransaction(assembled);
  if (!rpc.Api.isSimulationSuccess(again)) return t.fail('re-simulation failed');
  const fee = (s: rpc.Api.SimulateTransactionSuccessResponse) => BigInt(s.minResourceFee);
  t.true(fee(again) - fee(first) >= 0n && fee(again) - fee(first) < 50n, `${fee(first)} then ${fee(again)}`);
  t.true(BigInt(assembled.fee) >= fee(again), 'the whole fee covers the re-simulated minimum');
  assembled.sign(from);
  const signed = await server.simulateTransaction(assembled);
  if (!rpc.Api.isSimulationSuccess(signed)) return t.fail('signed re-simulation failed');
  t.is(fee(signed), fee(again), "the envelope's signatures do not change the estimate");
  // and the assembled transaction's fee covers what the ledger asks
  const sent = await server.sendTransaction(assembled);
  t.is(sent.status, 'PENDING');
});
