// Trees that roll over, end to end: a pool whose trees take 8 leaves (4 transactions) runs deposits, x402
// payments with settlement rounds and withdrawals on the real sandbox, prover and proxy. At least three trees
// open; a note deposited in the first tree is withdrawn after the third opened; every agent then withdraws its
// whole balance (its notes spread over several trees); the books equal the chain after every step.
import { Keypair } from '#stellar-sdk';
import test, { type ExecutionContext } from 'ava';
import { PoolApi } from './helpers/api.ts';
import { getJson } from './helpers/http.ts';
import { type PayStack, startPayStack } from '../mcp/pay-stack.ts';

const CAPACITY = 8;
let pay: PayStack;
let op: PoolApi;

test.before(async () => {
  pay = await startPayStack(
    { POOL_PROXY_SETTLE_INTERVAL_MS: '1000', POOL_PROXY_SETTLE_ROUND_SIZE: '2' },
    { sandbox: { treeCapacity: CAPACITY } },
  );
  op = new PoolApi({ baseUrl: pay.proxy.url, caller: pay.stack.operatorApi(pay.proxy.url).caller });
});

test.after.always(async () => {
  await pay?.close();
});

const stroops = (s: string) => BigInt(s.replace('.', ''));

/** Waits until nothing is owed and no settlement round runs, then checks books = chain. */
async function booksEqualChain(t: ExecutionContext, step: string): Promise<void> {
  let books = await op.books();
  for (let i = 0; i < 400 && (books.unsettled !== '0.0000000' || books.settling); i++) {
    await new Promise((r) => setTimeout(r, 250));
    books = await op.books();
  }
  t.is(books.unsettled, '0.0000000', `${step}: everything settled`);
  const { contracts, accounts } = pay.stack.sandbox.info;
  t.is(
    stroops(books.agentNotes) + stroops(books.floatAccount),
    await pay.stack.usdcBalance(contracts.pool),
    `${step}: the pool contract holds exactly the agents' and the float account's notes`,
  );
  t.is(
    stroops(books.poolWallet ?? '0'),
    await pay.stack.usdcBalance(accounts.poolWallet),
    `${step}: pool wallet`,
  );
}

async function deposit(agentId: string, amount: string): Promise<void> {
  const res = await op.operatorDeposit({ agentId, amount });
  if (res.status !== 'confirmed') throw new Error(`deposit: ${JSON.stringify(res)}`);
}

async function payDemo(agentId: string): Promise<void> {
  const res = await op.pay({ agentId, serviceUrl: pay.x402.demo.quoteUrl, method: 'GET' });
  if (res.paymentStatus !== 'confirmed') throw new Error(`payment: ${JSON.stringify(res)}`);
}

async function withdrawAll(agentId: string, destination: string): Promise<bigint> {
  const { balance } = await op.balance(agentId);
  const res = await op.withdraw({ amount: balance, destination, agentId });
  if (res.status !== 'confirmed') throw new Error(`withdrawal: ${JSON.stringify(res)}`);
  return stroops(balance);
}

test.serial(
  'trees roll over under deposits, payments with settlement and withdrawals; nothing freezes',
  async (t) => {
    const before = await op.info();
    t.deepEqual(before.trees, {
      current: 0,
      count: 1,
      leavesUsed: 0,
      leavesFree: CAPACITY,
      capacity: CAPACITY,
    });

    // tree 0: four deposits fill it (two leaves each); 'first' keeps its note there until the end
    await deposit('first', '5');
    await deposit('payer', '3');
    await deposit('b', '2');
    await deposit('c', '2');
    t.like((await op.info()).trees, { current: 0, leavesUsed: CAPACITY, leavesFree: 0 });
    await booksEqualChain(t, 'tree 0 full');

    // a payment owes; its settlement round (a transfer and a padding transfer) opens tree 1
    await payDemo('payer');
    await booksEqualChain(t, 'first settlement');
    t.true((await op.info()).trees.current >= 1, 'the settlement opened tree 1');

    await deposit('d', '1');
    await payDemo('b');
    await booksEqualChain(t, 'second settlement');
    await deposit('d', '1');
    const trees = (await op.info()).trees;
    t.true(trees.count >= 3, `three trees opened: ${JSON.stringify(trees)}`);

    // the note deposited in tree 0 is withdrawn now, proved against tree 0's final root
    const destination = Keypair.random().publicKey();
    await pay.stack.fund(destination, 0);
    const firstOut = await withdrawAll('first', destination);
    t.is(firstOut, 50_000_000n);
    t.is(await pay.stack.usdcBalance(destination), 50_000_000n);
    await booksEqualChain(t, 'first tree note withdrawn');

    // every agent takes its whole balance out (notes in several trees are moved together first)
    let out = firstOut;
    for (const agentId of ['payer', 'b', 'c', 'd']) {
      out += await withdrawAll(agentId, destination);
      t.is((await op.balance(agentId)).balance, '0.0000000', `${agentId} holds nothing`);
      await booksEqualChain(t, `${agentId} withdrew`);
    }
    t.is(await pay.stack.usdcBalance(destination), out);
    const books = await op.books();
    t.is(stroops(books.agentNotes), 0n, 'no agent note is left');

    // the operator sees the trees in its metrics
    const metrics = (await getJson(`${pay.proxy.url}/metrics`, pay.stack.operator)).text;
    const after = (await op.info()).trees;
    t.true(
      metrics.includes(`pool_proxy_pool_tree{measure="current"} ${after.current}`),
      metrics.slice(0, 200),
    );
    t.true(metrics.includes(`pool_proxy_pool_tree{measure="capacity"} ${CAPACITY}`));
  },
);
