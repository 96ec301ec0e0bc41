// Three proxies (replicas) on one PostgreSQL store — a real server from Debian's package — with the sandbox
// ledger, a real prover daemon and the local x402 pair: what in-process locks decided for one proxy is
// decided in the database for all three. 60 concurrent payments spread over the replicas against a balance
// that covers 20 → exactly 20 paid, the rest refused before anything is signed; 3×10 concurrent withdrawals
// of one agent's balance through different replicas → never more than the balance; one idempotency key sent
// to all three at once → one payment; a login challenge is consumed once across replicas. A payment may
// arrive at any replica: payments sent to all three in one window are one batch of the elected batch leader,
// and each request is answered where it was asked, with its receipt and content or its problem. A rolling
// restart of all three under a trickle of payments and balance reads loses no answered request and leaves no
// money frozen or paid twice. Every request is well-formed and goes through PoolApi, on the replica asked.
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import test from 'ava';
import { Keypair, scValToNative } from '#stellar-sdk';
import { HTTPFacilitatorClient, x402HTTPResourceServer, x402ResourceServer } from '@x402/core/server';
import { ExactStellarServerScheme } from '../../src/x402/exact-server.ts';
import { paidRequestListener } from '../../src/x402/paid-http.ts';
import type { ProxyHandle } from '../../src/proxy/server.ts';
import { type LocalX402Thread, startLocalX402Thread } from '../../src/cli/threads/x402-thread.ts';
import { localX402Env } from '../../src/x402/local-services.ts';
import { type PostgresServer, startPostgres } from '../helpers/postgres.ts';
import type { Balance, PaymentListEntry, PaymentResult } from '../../src/api/types.ts';
import {
  outcomeOf,
  PoolApi,
  PoolApiError,
  refusalOf,
  refused,
  retryingRegistration,
  walletApi,
} from './helpers/api.ts';
import { type Stack, startStack, USDC } from './helpers/stack.ts';

const PRICE = USDC / 100n; // the demo service's price, 0.01 USDC

let pgServer: PostgresServer;
let stack: Stack;
let x402: LocalX402Thread;
let replicas: ProxyHandle[];
/** The replicas' environment (a restarted replica gets the same). */
let replicaEnv: Record<string, string>;
/** A paid service whose handler fails (500): its payments are never settled, so they fail. */
let broken: { url: string; server: Server };

test.before(async () => {
  pgServer = await startPostgres();
  const databaseUrl = await pgServer.database();
  // trees of 8 leaves (four transactions): the replicas' indexers follow a pool that rolls over many times
  stack = await startStack({ POOL_PROXY_DATABASE_URL: databaseUrl }, { treeCapacity: 8 });
  const { sandbox } = stack;
  await stack.fund(sandbox.info.accounts.poolWallet, 100);
  // The x402 pair on a thread of its own, as `pool-proxy start` runs it: 60 quotes at once share no event
  // loop with the three replicas.
  x402 = await startLocalX402Thread({
    rpcUrl: sandbox.rpcUrl,
    networkPassphrase: stack.config.ledger.networkPassphrase,
    asset: sandbox.info.contracts.token,
    facilitator: { host: '127.0.0.1', port: 0 },
    demo: { host: '127.0.0.1', port: 0 },
  });
  broken = await startBrokenService(stack.sandbox.info.contracts.token);
  await stack.proxy.close();
  replicaEnv = {
    ...localX402Env(x402, new URL(broken.url).host),
    POOL_PROXY_POOL_WALLET_SECRET: sandbox.secrets().poolWallet,
    // long enough for requests sent together to three replicas to be checked and queued in one window
    POOL_PROXY_BATCH_WINDOW_MS: '2500',
    POOL_PROXY_SETTLE_INTERVAL_MS: '86400000',
    // a request cut off by a stopping replica leaves a reservation that reconciliation releases soon
    POOL_PROXY_RECONCILE_INTERVAL_MS: '2000',
    // every replica answers as one service (login challenges, tokens)
    POOL_PROXY_PUBLIC_URL: 'http://pool.test',
  };
  replicas = await Promise.all([1, 2, 3].map(async () => (await stack.startProxy(replicaEnv)).proxy));
});

test.after.always(async () => {
  await Promise.all((replicas ?? []).map((p) => p.close()));
  await x402?.close();
  broken?.server.closeAllConnections();
  broken?.server.close();
  await stack?.daemon.stop({ force: true });
  await stack?.sandbox.close();
  await pgServer?.stop();
});

async function startBrokenService(asset: string): Promise<{ url: string; server: Server }> {
  const network = x402.facilitator.network as `${string}:${string}`;
  const resourceServer = new x402ResourceServer(
    new HTTPFacilitatorClient({ url: x402.facilitator.url }),
  ).register(network, new ExactStellarServerScheme(asset));
  const accepts = {
    scheme: 'exact',
    price: { amount: String(PRICE), asset },
    network,
    payTo: x402.demoPayTo,
  };
  const paid = new x402HTTPResourceServer(resourceServer, { 'GET /broken': { accepts } });
  await paid.initialize();
  const server = createServer(
    paidRequestListener(paid, () => ({ status: 500, contentType: 'text/plain', body: 'the service broke' })),
  );
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

const replica = (i: number) => replicas[i % replicas.length]!.url;
/** The operator's client on replica `i` (its token is the same for every replica). */
const op = (i: number): PoolApi => stack.operatorApi(replica(i));

async function balanceOf(agentId: string, i = 0): Promise<bigint> {
  return BigInt((await op(i).balance(agentId)).balance.replace('.', ''));
}

/** An operator deposit for `agentId`, retried after `registration_pending` as a client does. */
async function operatorDeposit(agentId: string, amount: string, i = 0): Promise<void> {
  await retryingRegistration(() => op(i).operatorDeposit({ agentId, amount }));
}

test.serial(
  '60 concurrent payments over three replicas against a balance for 20: exactly 20 paid',
  async (t) => {
    await operatorDeposit('payer', '0.2');
    const poolWallet = stack.sandbox.info.accounts.poolWallet;
    const floatBefore = await stack.usdcBalance(poolWallet);
    const answers = await Promise.allSettled(
      Array.from({ length: 60 }, (_, i) =>
        op(i).pay({ agentId: 'payer', serviceUrl: x402.demo.quoteUrl, method: 'GET' }),
      ),
    );
    const paid = answers.flatMap((a, i) =>
      a.status === 'fulfilled' && a.value.paymentStatus === 'confirmed'
        ? [{ ...a.value, replica: i % 3 }]
        : [],
    );
    const refusals = answers.filter((a) => a.status === 'rejected').map((a) => refusalOf(a));
    t.is(paid.length, 20, answers.map(outcomeOf).join(', '));
    t.is(refusals.length, 40, 'the rest are refused before signing');
    // Refused for the balance — or, on a loaded machine, because the service's quote did not come in time:
    // either way before anything was signed (the pool wallet's balance below says so).
    t.true(
      refusals.every((r) => ['insufficient_balance', 'service_unreachable'].includes(r?.code ?? '')),
      answers.map(outcomeOf).join(', '),
    );
    t.true(refusals.some((r) => r?.code === 'insufficient_balance'));
    t.is(new Set(paid.map((a) => a.paymentId)).size, 20);
    // Each replica paid some of them: the decision was shared, not one replica taking everything.
    t.true(new Set(paid.map((a) => a.replica)).size > 1);
    t.is(floatBefore - (await stack.usdcBalance(poolWallet)), 20n * PRICE, 'the pool wallet paid exactly 20');
    for (const i of [0, 1, 2]) t.is(await balanceOf('payer', i), 0n, `replica ${i + 1} shows nothing left`);
  },
);

test.serial(
  'payments sent to all three replicas in one window are one batch, each answered where it was asked',
  async (t) => {
    await operatorDeposit('spread', '0.1');
    const pay = (i: number, serviceUrl: string) =>
      op(i).pay({ agentId: 'spread', serviceUrl, method: 'GET' });
    // One paid and one failing payment asked of each replica: two of the three do not lead.
    const [paid, failed] = await Promise.all([
      Promise.all([0, 1, 2].map((i) => pay(i, x402.demo.quoteUrl))),
      Promise.all([0, 1, 2].map((i) => refused(t, pay(i, `${broken.url}/broken`)))),
    ]);
    for (const a of paid) {
      t.is(a.paymentStatus, 'confirmed', JSON.stringify(a));
      t.regex(a.receipt?.transaction ?? '', /^[0-9a-f]{64}$/, 'the receipt reached the replica asked');
      t.truthy(JSON.parse(a.content ?? '{}').quote, "the service's answer reached the replica asked");
    }
    // executed in the leader's batch, failed once its authorization expired unused: the problem, where asked
    for (const a of failed) {
      t.is(a.status, 502, a.detail);
      t.is(a.code, 'payment_failed');
      t.is(a.extra.paymentStatus, 'failed');
      t.is(a.extra.content, 'the service broke');
    }
    const batchIds = new Set([...paid.map((a) => a.batchId), ...failed.map((a) => a.extra.batchId)]);
    t.is(batchIds.size, 1, 'one batch for the payments of all three replicas');
    // the public stats count the batch's confirmed payments once each (the failed ones, which the chain does
    // not show, not at all)
    const stats = await new PoolApi({ baseUrl: replica(2) }).stats();
    const batch = stats.recentBatches.find((b) => batchIds.has(b.batchId));
    t.deepEqual(Object.keys(batch ?? {}).sort(), ['batchId', 'executedAt', 'payments']);
    t.like(batch, { payments: 3 }, 'recorded once, by the leader that ran it');
    t.is(await balanceOf('spread', 0), 10n * PRICE - 3n * PRICE, 'the failed payments were given back');
  },
);

test.serial(
  '3×10 concurrent withdrawals through different replicas never take more than the balance',
  async (t) => {
    await operatorDeposit('saver', '1');
    const destination = Keypair.random().publicKey();
    await stack.fund(destination, 0);
    const answers = await Promise.allSettled(
      Array.from({ length: 30 }, (_, i) => op(i).withdraw({ agentId: 'saver', amount: '0.4', destination })),
    );
    const done = answers.filter((a) => a.status === 'fulfilled' && a.value.status === 'confirmed');
    t.is(done.length, 2, answers.map(outcomeOf).join(', '));
    t.true(
      answers
        .filter((a) => a.status === 'rejected')
        .every((a) => refusalOf(a)?.code === 'insufficient_balance'),
      answers.map(outcomeOf).join(', '),
    );
    t.is(await stack.usdcBalance(destination), 8n * (USDC / 10n), 'exactly 0.8 USDC left the pool');
    t.is(await balanceOf('saver', 2), 2n * (USDC / 10n));
  },
);

test.serial(
  'a replica whose indexer has not yet seen a note another replica credited proves with it all the same',
  async (t) => {
    // This replica's indexer polls once a minute: after its start it learns new events only when asked.
    const { proxy: lagging } = await stack.startProxy({ ...replicaEnv, POOL_PROXY_INDEXER_POLL_MS: '60000' });
    t.teardown(() => lagging.close());
    await operatorDeposit('late', '0.3'); // credited in the shared store by replica 0's indexer
    const destination = Keypair.random().publicKey();
    await stack.fund(destination, 0);
    const res = await stack
      .operatorApi(lagging.url)
      .withdraw({ agentId: 'late', amount: '0.1', destination });
    t.is(res.status, 'confirmed');
    t.is(await stack.usdcBalance(destination), USDC / 10n);
  },
);

/** Every key the allowlist contract added (its LeafAdded events from the first ledger on). */
async function allowlistLeaves(): Promise<bigint[]> {
  const { events } = await stack.server.getEvents({
    startLedger: 1,
    filters: [{ type: 'contract', contractIds: [stack.sandbox.info.contracts.asp_membership] }],
    limit: 10_000,
  });
  return events
    .filter((e) => scValToNative(e.topic[0]!) === 'LeafAdded')
    .map((e) => BigInt((scValToNative(e.value) as { leaf: bigint }).leaf));
}

test.serial(
  'a replica whose indexer has not yet seen another replica register a key does not insert it again',
  async (t) => {
    const { proxy: lagging } = await stack.startProxy({ ...replicaEnv, POOL_PROXY_INDEXER_POLL_MS: '60000' });
    t.teardown(() => lagging.close());
    // Started after the others have indexed for a while, it loads the index they persisted in the shared store
    // (its trees must be the chain's, or its own proofs fail: "pool tree out of step").
    await operatorDeposit('registered-once', '0.1'); // replica 0 inserts the new agent's key
    // The lagging replica has not read that insert; its own registration of the agent finds it on the ledger.
    await retryingRegistration(() =>
      stack.operatorApi(lagging.url).operatorDeposit({ agentId: 'registered-once', amount: '0.1' }),
    );
    t.is(await balanceOf('registered-once', 1), 2n * (USDC / 10n));
    const leaves = await allowlistLeaves();
    t.is(new Set(leaves).size, leaves.length, 'no key is in the allowlist twice');
  },
);

test.serial('one idempotency key sent to all three replicas at once is one payment', async (t) => {
  await operatorDeposit('idem', '0.5', 1);
  const body = {
    agentId: 'idem',
    serviceUrl: x402.demo.quoteUrl,
    method: 'GET' as const,
    idempotencyKey: 'one-key-0001',
  };
  const answers = await Promise.all([0, 1, 2].map((i) => op(i).pay(body)));
  t.is(new Set(answers.map((a) => a.paymentId)).size, 1, 'one payment id');
  t.true(
    answers.every((a) => a.paymentStatus === 'confirmed'),
    JSON.stringify(answers),
  );
  t.is(await balanceOf('idem', 2), 50n * PRICE - PRICE, 'paid once');
  const conflict = await refused(t, op(2).pay({ ...body, serviceUrl: `${x402.demo.quoteUrl}?x=1` }));
  t.is(conflict.status, 409);
  t.is(conflict.code, 'conflict');
});

test.serial(
  'a login challenge is consumed once across replicas, and a token from one is taken by all',
  async (t) => {
    const wallet = Keypair.random();
    const publicApi = (i: number) => new PoolApi({ baseUrl: replica(i) });
    const { challenge } = await publicApi(0).challenge(wallet.publicKey());
    const signature = Buffer.from(wallet.signMessage(challenge)).toString('base64');
    const verify = { publicKey: wallet.publicKey(), challenge, signature };
    const answers = await Promise.allSettled([0, 1, 2].map((i) => publicApi(i).verify(verify)));
    t.deepEqual(
      answers.map((a) => (a.status === 'fulfilled' ? 'token' : String(refusalOf(a)?.status))).sort(),
      ['401', '401', 'token'],
      answers.map(outcomeOf).join(', '),
    );
    // A token from one replica is taken by the others.
    const token = answers.find((a) => a.status === 'fulfilled')!.value.token;
    for (const i of [0, 1, 2]) t.true(Array.isArray((await walletApi(replica(i), token).agents()).agents));
  },
);

test.serial(
  'a rolling restart under a trickle of payments and balance reads: no answered request lost, no money frozen or doubled',
  async (t) => {
    await operatorDeposit('steady', '0.5');
    const payToBefore = await stack.usdcBalance(x402.demoPayTo);
    /** An answer (status 200), a refusal (its status and code), or 0: no answer (the replica had stopped). */
    type Answer = {
      kind: 'pay' | 'read';
      status: number;
      code?: string;
      paymentId?: string;
      paymentStatus?: string;
    };
    const answers: Answer[] = [];
    const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
    const ask = (kind: Answer['kind'], request: Promise<PaymentResult | Balance>) =>
      request.then(
        (a) =>
          void answers.push({
            kind,
            status: 200,
            ...('paymentId' in a && { paymentId: a.paymentId, paymentStatus: a.paymentStatus }),
          }),
        (e: unknown) =>
          void answers.push(
            e instanceof PoolApiError && e.status > 0
              ? { kind, status: e.status, code: e.code }
              : { kind, status: 0 },
          ),
      );
    let steady = true;
    const trickle = (async () => {
      const asked: Array<Promise<void>> = [];
      for (let i = 0; steady; i++) {
        const api = op(i);
        asked.push(ask('pay', api.pay({ agentId: 'steady', serviceUrl: x402.demo.quoteUrl, method: 'GET' })));
        asked.push(ask('read', api.balance('steady')));
        await sleep(300);
      }
      await Promise.all(asked);
    })();
    // One replica after the other stops (its queued payments run, its waiting requests are answered) and a
    // new one takes its place.
    for (const i of [0, 1, 2]) {
      await sleep(500);
      await replicas[i]!.close();
      replicas[i] = (await stack.startProxy(replicaEnv)).proxy;
    }
    await sleep(500);
    steady = false;
    await trickle;

    const paid = answers.filter((a) => a.kind === 'pay' && a.status === 200);
    const reads = answers.filter((a) => a.kind === 'read' && a.status === 200);
    t.log(
      `${paid.length} payments answered 200, ${reads.length} balance reads; others: ${answers
        .filter((a) => a.status !== 200)
        .map((a) => `${a.kind} ${a.status} ${a.code ?? ''}`)
        .join(', ')}`,
    );
    t.true(paid.length > 0 && reads.length > 0);
    t.true(paid.every((a) => a.paymentStatus === 'confirmed'));
    // Refused ones were refused before anything was signed (a stopping replica takes no payment).
    t.true(
      answers
        .filter((a) => a.kind === 'pay' && a.status !== 200 && a.status !== 0)
        .every((a) => a.status === 503),
    );
    // (a request whose connection a stopping replica cut is released by reconciliation, or paid: not answered)
    let listed: PaymentListEntry[] = [];
    for (let tries = 0; tries < 60; tries++) {
      listed = (await op(0).payments(999)).payments;
      if (!listed.some((p) => p.agentId === 'steady' && p.paymentStatus === 'pending')) break;
      await sleep(500);
    }
    const mine = listed.filter((p) => p.agentId === 'steady');
    for (const a of paid)
      t.is(
        mine.find((p) => p.paymentId === a.paymentId)?.paymentStatus,
        'confirmed',
        'an answered payment stays',
      );
    t.false(
      mine.some((p) => p.paymentStatus === 'pending'),
      'every payment was decided',
    );
    const confirmed = BigInt(mine.filter((p) => p.paymentStatus === 'confirmed').length);
    t.true(confirmed >= BigInt(paid.length));
    t.is(
      await balanceOf('steady', 1),
      50n * PRICE - confirmed * PRICE,
      'nothing frozen: only what was paid is gone',
    );
    t.is(await stack.usdcBalance(x402.demoPayTo), payToBefore + confirmed * PRICE, 'nothing paid twice');
  },
);

test.serial(
  "the replicas agree on the pool's trees, which rolled over under their transactions",
  async (t) => {
    const info = await Promise.all(replicas.map((_, i) => op(i).info()));
    const latest = Math.max(...info.map((i) => i.trees.count));
    t.true(latest >= 3, `trees opened: ${latest}`);
    // each replica reads the ledger on its own: wait until every one has read as far, then compare
    for (let i = 0; i < 40; i++) {
      const trees = await Promise.all(
        replicas.map((_, r) =>
          op(r)
            .info()
            .then((x) => x.trees),
        ),
      );
      if (trees.every((x) => JSON.stringify(x) === JSON.stringify(trees[0]))) {
        t.pass();
        return;
      }
      await new Promise((r) => setTimeout(r, 250));
    }
    t.fail('the replicas never agreed on the trees');
  },
);
