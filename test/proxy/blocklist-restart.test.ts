// The ASP blocklist survives a restart: on the real stack (sandbox ledger, prover daemon, proxy), the ASP admin
// blocks a key, the proxy indexes it (its withdrawal proves non-membership against the new root), and a proxy
// started again over the same store — which reads on from its saved cursor, never reading that event again —
// still proves against the chain's blocklist root.
import { join } from 'node:path';
import test from 'ava';
import { Contract, Keypair, nativeToScVal, rpc, TransactionBuilder } from '#stellar-sdk';
import { retryingRegistration } from './helpers/api.ts';
import { type Stack, startStack } from './helpers/stack.ts';

let stack: Stack;
test.before(async () => {
  stack = await startStack();
});
test.after.always(async () => {
  await stack?.close();
});

/** The ASP admin adds `key` to the blocklist (the non-membership tree), and the ledger applies it. */
async function block(key: bigint): Promise<void> {
  const admin = Keypair.fromSecret(stack.sandbox.secrets().admin);
  const account = await stack.server.getAccount(admin.publicKey());
  const tx = new TransactionBuilder(account, {
    fee: '100',
    networkPassphrase: stack.config.ledger.networkPassphrase,
  })
    .addOperation(
      new Contract(stack.sandbox.info.contracts.asp_non_membership).call(
        'insert_leaf',
        nativeToScVal(key, { type: 'u256' }),
        nativeToScVal(1n, { type: 'u256' }),
      ),
    )
    .setTimeout(30)
    .build();
  const prepared = await stack.server.prepareTransaction(tx);
  prepared.sign(admin);
  const sent = await stack.server.sendTransaction(prepared);
  if (sent.status !== 'PENDING') throw new Error(`blocklist insert: ${sent.status}`);
  const landed = await stack.server.pollTransaction(sent.hash, { attempts: 400, sleepStrategy: () => 100 });
  if (landed.status !== rpc.Api.GetTransactionStatus.SUCCESS)
    throw new Error(`blocklist insert: ${landed.status}`);
}

test('a key blocked while the proxy ran is still in its blocklist after a restart', async (t) => {
  const env = { POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'blocklist-restart') };
  let { proxy } = await stack.startProxy(env);
  try {
    const agentId = 'unblocked';
    await retryingRegistration(() => stack.operatorApi(proxy.url).operatorDeposit({ agentId, amount: '1' }));
    await block(123_456_789n);
    const destination = Keypair.random().publicKey();
    await stack.fund(destination, 0);
    const withdraw = () => stack.operatorApi(proxy.url).withdraw({ agentId, amount: '0.1', destination });
    t.is((await withdraw()).status, 'confirmed', 'proved against the blocklist with the new key');
    await proxy.close();
    ({ proxy } = await stack.startProxy(env));
    t.is((await withdraw()).status, 'confirmed', 'and again after the restart');
    t.is(await stack.usdcBalance(destination), 2_000_000n);
  } finally {
    await proxy.close();
  }
});
