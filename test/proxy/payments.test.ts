// Paying x402 services from the pool, end to end: the real sandbox (on the TESTNET passphrase, so the official
// @x402/stellar facilitator can run against it), the real prover daemon and proxy, our local facilitator and
// demo service, and an independent paid service built here with @x402/core's resource server and the official
// facilitator. Checks what agents get back, the books (balances, the pool wallet's float, settlement) and what
// an observer of the ledger can see. Requests go through PoolApi (the operator's, a wallet's, the public's);
// raw only for bodies PoolApi cannot send (an unknown method, an unknown field) and a forged token.
import { randomBytes } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import { Address, humanizeEvents, Keypair, rpc, TransactionBuilder } from '#stellar-sdk';
import { x402Facilitator } from '@x402/core/facilitator';
import { type FacilitatorClient, x402ResourceServer } from '@x402/core/server';
import { createEd25519Signer } from '@x402/stellar';
import { ExactStellarScheme as OfficialFacilitatorScheme } from '@x402/stellar/exact/facilitator';
import { ExactStellarScheme as OfficialServerScheme } from '@x402/stellar/exact/server';
import test, { type ExecutionContext } from 'ava';
import { TESTNET_PASSPHRASE } from '../../src/ledger/networks.ts';
import type { ProxyHandle } from '../../src/proxy/server.ts';
import { type LocalX402, startLocalX402 } from '../../src/x402/local-services.ts';
import { startPaidService } from '../x402/helpers.ts';
import { runCli } from '../helpers/cli.ts';
import type { PayRequest, PaymentResult } from '../../src/api/types.ts';
import { PoolApi, PoolApiError, refused } from './helpers/api.ts';
import { postJson, problemOf } from './helpers/http.ts';
import { type Stack, startStack, USDC } from './helpers/stack.ts';

const NETWORK = 'stellar:testnet' as const;
const FLOAT = 100n * USDC;
/** the price of each payment of the bursts */
const BURST_PRICE = 30_000n;

let stack: Stack;
let proxy: ProxyHandle;
let local: LocalX402;
let independent: Awaited<ReturnType<typeof startPaidService>>;
let refusing: Awaited<ReturnType<typeof startPaidService>>;
/** an independent service whose official facilitator has 8 signers */
let channels: Awaited<ReturnType<typeof startPaidService>>;
const channelsPayTo = Keypair.random().publicKey();
let plain: Server;
let plainUrl: string;
let token: string;
let poolWallet: string;
const independentPayTo = Keypair.random().publicKey();
/** The payment settings of the proxy under test (another proxy can start with overrides). */
let paymentEnv: Record<string, string>;
/** How long a payment may wait for its outcome here (POOL_PROXY_PAY_DEADLINE_MS below). */
const PAY_DEADLINE_MS = 400_000;

const url = (path: string) => `${proxy.url}${path}`;
/** The operator's token, the same for every proxy of the stack. */
let operator: Record<string, string>;
/**
 * The operator's client on the proxy under test or the one at `proxyUrl`. It waits for an answer longer than
 * the client's default 180 s, as a payment may wait for its outcome (a burst to a single-signer facilitator can
 * outlast that default); fetch itself still gives up on an answer whose headers take over 300 s.
 */
const op = (proxyUrl = proxy.url): PoolApi =>
  new PoolApi({
    baseUrl: proxyUrl,
    caller: stack.operatorApi(proxyUrl).caller,
    timeoutMs: PAY_DEADLINE_MS + 60_000,
  });
/** The public's client (no credentials). */
const publicApi = () => new PoolApi({ baseUrl: proxy.url });

/** The official facilitator on its DEFAULT options (fee cap, expiration bound), with `signers`. */
function officialFacilitator(signers: Keypair[], refuse = false): FacilitatorClient {
  const facilitator = new x402Facilitator().register(
    NETWORK,
    new OfficialFacilitatorScheme(
      signers.map((s) => createEd25519Signer(s.secret(), NETWORK)),
      { rpcConfig: { url: stack.sandbox.rpcUrl } },
    ) as never,
  );
  if (refuse) facilitator.onBeforeVerify(async () => ({ abort: true, reason: 'refused_by_policy' }));
  return {
    verify: (p, r) => facilitator.verify(p, r),
    settle: (p, r) => facilitator.settle(p, r),
    getSupported: async () =>
      facilitator.getSupported() as Awaited<ReturnType<FacilitatorClient['getSupported']>>,
  };
}

function officialResourceServer(client: FacilitatorClient): x402ResourceServer {
  // @x402/core >= 2.22 asks server schemes for their payment flows; @x402/stellar 2.9.0's has none
  const scheme = Object.assign(new OfficialServerScheme(), {
    defaultAssetTransferMethod: 'default',
    paymentFlows: { default: { supported: ['authorization'], default: 'authorization' } },
  });
  return new x402ResourceServer(client).register(NETWORK, scheme as never);
}

/** A route's price; the service's own maxTimeoutSeconds when given, else @x402/core's default. */
const priced = (amount: bigint, payTo: string, maxTimeoutSeconds?: number) => ({
  accepts: {
    scheme: 'exact',
    price: { amount: amount.toString(), asset: token },
    network: NETWORK,
    payTo,
    ...(maxTimeoutSeconds !== undefined && { maxTimeoutSeconds }),
  },
});

test.before(async () => {
  // One-second ledgers: authorizations are signed for the nominal 5 s ledgers, so on faster ledgers they
  // live a few seconds of real time (12 ledgers at most).
  stack = await startStack({}, { networkPassphrase: TESTNET_PASSPHRASE, ledgerMs: 1000 });
  token = stack.sandbox.info.contracts.token;
  operator = stack.operator;
  poolWallet = stack.sandbox.info.accounts.poolWallet;
  await stack.fund(poolWallet, Number(FLOAT / USDC));
  local = await startLocalX402({
    rpcUrl: stack.sandbox.rpcUrl,
    networkPassphrase: TESTNET_PASSPHRASE,
    asset: token,
    facilitator: { host: '127.0.0.1', port: 0 },
    demo: { host: '127.0.0.1', port: 0 },
  });
  const facilitatorAccount = Keypair.random();
  await stack.fund(facilitatorAccount.publicKey(), 0);
  await stack.fund(independentPayTo, 0);
  independent = await startPaidService(
    officialResourceServer(officialFacilitator([facilitatorAccount])),
    {
      'GET /weather': { ...priced(200_000n, independentPayTo), description: 'weather' },
      'GET /expensive': priced(2n * USDC, independentPayTo),
      'GET /flaky': priced(100_000n, independentPayTo, 20),
      'GET /burst': priced(BURST_PRICE, independentPayTo),
    },
    (req) =>
      req.path === '/flaky'
        ? { status: 500, contentType: 'text/plain', body: 'the service broke' }
        : { status: 200, contentType: 'application/json', body: JSON.stringify({ sky: 'clear' }) },
  );
  const refuser = Keypair.random();
  await stack.fund(refuser.publicKey(), 0);
  refusing = await startPaidService(
    officialResourceServer(officialFacilitator([refuser], true)),
    { 'GET /refused': priced(100_000n, independentPayTo, 20) },
    () => ({ status: 200, contentType: 'text/plain', body: 'never' }),
  );
  const signers = Array.from({ length: 8 }, () => Keypair.random());
  for (const signer of [...signers.map((k) => k.publicKey()), channelsPayTo]) await stack.fund(signer, 0);
  channels = await startPaidService(
    officialResourceServer(officialFacilitator(signers)),
    { 'GET /tide': priced(BURST_PRICE, channelsPayTo) },
    () => ({ status: 200, contentType: 'application/json', body: JSON.stringify({ tide: 'high' }) }),
  );
  plain = createServer((_req, res) => res.end('free content'));
  await new Promise<void>((r) => plain.listen(0, '127.0.0.1', r));
  plainUrl = `http://127.0.0.1:${(plain.address() as AddressInfo).port}`;
  const hosts = [local.demo.quoteUrl, independent.url, refusing.url, channels.url, plainUrl].map(
    (u) => new URL(u).host,
  );
  paymentEnv = {
    POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'payments'),
    POOL_PROXY_POOL_WALLET_SECRET: stack.sandbox.secrets().poolWallet,
    POOL_PROXY_PAY_ALLOWED_HOSTS: hosts.join(','),
    POOL_PROXY_BATCH_WINDOW_MS: '1500',
    POOL_PROXY_SETTLE_INTERVAL_MS: '4000',
    POOL_PROXY_RECONCILE_INTERVAL_MS: '500',
    POOL_PROXY_X402_FACILITATOR_URL: local.facilitator.url,
    POOL_PROXY_X402_DEMO_URL: local.demo.quoteUrl,
    // a single-signer facilitator settles a burst one payment at a time: on a loaded machine that can take
    // longer than the default two minutes
    POOL_PROXY_PAY_DEADLINE_MS: String(PAY_DEADLINE_MS),
  };
  ({ proxy } = await stack.startProxy(paymentEnv));
});

test.after.always(async () => {
  await proxy?.close();
  await local?.close();
  await independent?.close();
  await refusing?.close();
  await channels?.close();
  plain?.close();
  await stack?.close();
});

async function operatorDeposit(agentId: string, amount: string, proxyUrl = proxy.url) {
  const res = await op(proxyUrl).operatorDeposit({ agentId, amount });
  if (res.status !== 'confirmed') throw new Error(`deposit: ${JSON.stringify(res)}`);
}

async function balanceOf(agentId: string, api: PoolApi = op()): Promise<string> {
  return (await api.balance(agentId)).balance;
}

/** A payment by the operator (or through `api`). */
const pay = (request: PayRequest, api: PoolApi = op()) => api.pay(request);

/** A payment's answer, or the proxy's refusal of it. */
interface Outcome {
  answer?: PaymentResult;
  refusal?: PoolApiError;
}
const outcomeOf = (call: Promise<PaymentResult>): Promise<Outcome> =>
  call.then(
    (answer) => ({ answer }),
    (error: unknown) => {
      if (error instanceof PoolApiError) return { refusal: error };
      throw error;
    },
  );
/** An outcome in a few words: the answer's paymentStatus, or the refusal's status and code. */
const told = (o: Outcome) => o.answer?.paymentStatus ?? `${o.refusal?.status} ${o.refusal?.code}`;
/** An outcome in full, for an assertion's message. */
const shown = (o: Outcome) =>
  JSON.stringify(o.answer ?? { ...o.refusal?.extra, code: o.refusal?.code, detail: o.refusal?.detail });

/** The operator's books at `proxyUrl` (with payments on, they hold the pool wallet's float). */
async function booksOf(proxyUrl: string) {
  const books = await op(proxyUrl).books();
  if (books.poolWallet === undefined)
    throw new Error(`books without the pool wallet: ${JSON.stringify(books)}`);
  return { ...books, poolWallet: books.poolWallet };
}

/** The operator's books once nothing is owed and no settlement round runs (or after a minute, as they are). */
async function settledBooks(proxyUrl: string) {
  let books = await booksOf(proxyUrl);
  for (let i = 0; i < 240 && (books.unsettled !== '0.0000000' || books.settling); i++) {
    await new Promise((r) => setTimeout(r, 250));
    books = await booksOf(proxyUrl);
  }
  return books;
}

const onChain = (who: string) => usdc(who);
async function usdc(who: string): Promise<bigint> {
  return stack.usdcBalance(who);
}

test.serial(
  'agents pay the demo service and an independent service; balances fall by the prices',
  async (t) => {
    const info = await publicApi().info();
    t.is(info.payments.x402Network, NETWORK);
    t.is(info.poolWallet, poolWallet);
    t.is(info.payments.demoServiceUrl, local.demo.quoteUrl);
    await operatorDeposit('payer-a', '1');
    await operatorDeposit('payer-b', '1');
    const wallet = Keypair.random();
    await stack.fund(wallet.publicKey(), 5);
    const walletApi = await stack.walletApi(wallet, proxy.url);
    const prepared = await walletApi.prepareDeposit({ amount: '1', publicKey: wallet.publicKey() });
    const tx = TransactionBuilder.fromXDR(prepared.transactionXDR, TESTNET_PASSPHRASE);
    tx.sign(wallet);
    const submitted = await walletApi.submitDeposit({
      prepareId: prepared.prepareId,
      signedTransactionXDR: tx.toXDR(),
    });
    t.is(submitted.status, 'confirmed', JSON.stringify(submitted));

    const demoBefore = await onChain(local.demoPayTo);
    const independentBefore = await onChain(independentPayTo);
    const [a, b, w] = await Promise.all([
      pay({ agentId: 'payer-a', serviceUrl: local.demo.quoteUrl, method: 'GET' }),
      pay({ agentId: 'payer-b', serviceUrl: `${independent.url}/weather?city=lisbon`, method: 'GET' }),
      pay({ serviceUrl: local.demo.echoUrl, method: 'POST', body: { hello: 'pool' } }, walletApi),
    ]);
    for (const r of [a, b, w]) {
      t.is(r.paymentStatus, 'confirmed', JSON.stringify(r));
      t.regex(r.receipt?.transaction ?? '', /^[0-9a-f]{64}$/);
      t.is(r.receipt?.network, NETWORK);
      t.is(r.receipt?.asset, token);
      t.truthy(r.batchId);
    }
    t.is(a.batchId, b.batchId, 'one window, one batch');
    t.deepEqual(JSON.parse(b.content ?? ''), { sky: 'clear' });
    t.is(b.receipt?.amount, '0.0200000');
    t.is(b.receipt?.payTo, independentPayTo);
    t.regex(w.content ?? '', /hello/);
    t.is(await balanceOf('payer-a'), '0.9900000');
    t.is(await balanceOf('payer-b'), '0.9800000');
    t.is(await balanceOf(wallet.publicKey(), walletApi), '0.9900000');
    t.is(await onChain(local.demoPayTo), demoBefore + 200_000n);
    t.is(await onChain(independentPayTo), independentBefore + 200_000n);
    // Confirmed on our own ledger: the receipt's transaction pays the service from the pool wallet.
    const landed = await stack.server.getTransaction(b.receipt?.transaction ?? '');
    t.is(landed.status, rpc.Api.GetTransactionStatus.SUCCESS);

    const listed = await walletApi.payments(50);
    t.is(listed.payments.length, 1);
    t.is(listed.payments[0]?.paymentStatus, 'confirmed');
    t.deepEqual(listed.payments[0]?.receipt, w.receipt);
    const stats = await publicApi().stats();
    t.true(stats.servicesUsed >= 2);
    t.true(stats.recentBatches.some((batch) => batch.payments >= 2));
  },
);

test.serial(
  'settlement: debts move to the float account; the pool holds exactly the unspent notes, the float is whole',
  async (t) => {
    // Settlement rounds run every few seconds here: wait until nothing is owed and no round is running.
    const books = await settledBooks(proxy.url);
    t.is(books.unsettled, '0.0000000', 'every payment was settled');
    const amount = (s: string) => BigInt(s.replace('.', ''));
    // The float (100 USDC, above its low mark) is not refilled: what the services got is in the float account.
    t.is(
      amount(books.poolWallet) + amount(books.floatAccount),
      FLOAT,
      'pool wallet + float account = the float',
    );
    t.is(amount(books.poolWallet), await onChain(poolWallet));
    // Σ of every agent's notes and the float account's = what the pool contract holds (this proxy is the
    // pool's only user here).
    const pool = await onChain(stack.sandbox.info.contracts.pool);
    t.is(pool, amount(books.agentNotes) + amount(books.floatAccount));
    t.is(await balanceOf('payer-a'), '0.9900000', 'settling changes no available balance');
  },
);

test.serial(
  '20 concurrent payments against a balance covering 7: exactly 7 confirm, the rest are refused',
  async (t) => {
    await operatorDeposit('seven', '0.07');
    const demoBefore = await onChain(local.demoPayTo);
    const results = await Promise.all(
      Array.from({ length: 20 }, () =>
        outcomeOf(pay({ agentId: 'seven', serviceUrl: local.demo.quoteUrl, method: 'GET' })),
      ),
    );
    // (a confirmed payment is answered 200, any other paymentStatus 202)
    const confirmed = results.filter((r) => r.answer?.paymentStatus === 'confirmed');
    const refusals = results.filter((r) => r.refusal?.status === 409);
    t.is(confirmed.length, 7, results.map(told).join(','));
    t.is(refusals.length, 13);
    t.true(refusals.every((r) => r.refusal?.code === 'insufficient_balance'));
    t.is(await balanceOf('seven'), '0.0000000');
    t.is(await onChain(local.demoPayTo), demoBefore + 7n * 100_000n);
  },
);

test.serial('a retry with the same idempotencyKey returns the first answer and pays once', async (t) => {
  await operatorDeposit('idem', '0.5');
  const body: PayRequest = {
    agentId: 'idem',
    serviceUrl: local.demo.quoteUrl,
    method: 'GET',
    idempotencyKey: 'key-0001-abc',
  };
  const [first, second] = await Promise.all([pay(body), pay(body)]);
  t.is(first.paymentStatus, 'confirmed', JSON.stringify(first));
  t.deepEqual(second, first);
  const third = await pay(body);
  t.deepEqual(third, first);
  t.is(await balanceOf('idem'), '0.4900000', 'paid once');
  const other = await refused(t, pay({ ...body, serviceUrl: `${local.demo.quoteUrl}?again=1` }));
  t.is(other.status, 409);
  t.is(other.code, 'conflict');
  t.is(await balanceOf('idem'), '0.4900000');
});

test.serial('a full queue refuses the payment with queue_full and gives the reservation back', async (t) => {
  const { proxy: small } = await stack.startProxy({
    ...paymentEnv,
    POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'queue-full'),
    POOL_PROXY_PAYMENT_QUEUE_MAX: '1',
    POOL_PROXY_BATCH_WINDOW_MS: '3000',
  });
  try {
    await operatorDeposit('queued', '0.5', small.url);
    // Both pass the first capacity check and quote the service; only one fits in the queue.
    const both = await Promise.all(
      [0, 1].map(() =>
        outcomeOf(pay({ agentId: 'queued', serviceUrl: local.demo.quoteUrl, method: 'GET' }, op(small.url))),
      ),
    );
    // (confirmed: answered 200)
    t.deepEqual(both.map(told).sort(), ['503 queue_full', 'confirmed'], both.map(shown).join('\n'));
    t.is(
      await balanceOf('queued', op(small.url)),
      '0.4900000',
      'one price debited, the refused one released',
    );
  } finally {
    await small.close();
  }
});

test.serial('bad input is refused before anything is signed, and loses nothing', async (t) => {
  await operatorDeposit('careful', '0.5');
  const wallet = Keypair.random();
  await stack.fund(wallet.publicKey(), 1);
  const walletApi = await stack.walletApi(wallet, proxy.url);
  // (the settlement job may refill the float meanwhile, so look at the services' side)
  const paidBefore = [await onChain(local.demoPayTo), await onChain(independentPayTo)];
  const operatorApi = op();
  const cases: Array<[Omit<PayRequest, 'method'>, PoolApi, number, string]> = [
    [{ agentId: 'nobody', serviceUrl: local.demo.quoteUrl }, operatorApi, 404, 'not_found'],
    [{ agentId: 'careful', serviceUrl: local.demo.quoteUrl }, walletApi, 404, 'not_found'],
    [{ agentId: 'careful', serviceUrl: 'ftp://example.org/x' }, operatorApi, 400, 'invalid_request'],
    [{ agentId: 'careful', serviceUrl: 'not a url' }, operatorApi, 400, 'invalid_request'],
    [{ agentId: 'careful', serviceUrl: 'http://127.0.0.1:9/private' }, operatorApi, 400, 'invalid_request'],
    [
      { agentId: 'careful', serviceUrl: 'http://169.254.169.254/latest' },
      operatorApi,
      400,
      'invalid_request',
    ],
    [{ agentId: 'careful', serviceUrl: plainUrl }, operatorApi, 422, 'service_not_payable'],
    [{ agentId: 'careful', serviceUrl: `${independent.url}/expensive` }, operatorApi, 422, 'price_too_high'],
    [
      { agentId: 'careful', serviceUrl: local.demo.quoteUrl, maxAmount: '0.001' },
      operatorApi,
      422,
      'price_too_high',
    ],
    [
      { agentId: 'careful', serviceUrl: local.demo.quoteUrl, headers: { authorization: 'Bearer x' } },
      operatorApi,
      400,
      'invalid_request',
    ],
    [
      { agentId: 'careful', serviceUrl: local.demo.quoteUrl, idempotencyKey: 'short' },
      operatorApi,
      400,
      'invalid_request',
    ],
    [{ serviceUrl: local.demo.quoteUrl }, operatorApi, 400, 'invalid_request'],
  ];
  for (const [request, api, status, code] of cases) {
    const res = await refused(t, pay({ method: 'GET', ...request }, api), JSON.stringify(request));
    t.is(res.status, status, `${JSON.stringify(request)} → ${res.detail}`);
    t.is(res.code, code, JSON.stringify(request));
  }
  // What PoolApi cannot send: a method no payment uses, a member the request does not have, a forged token.
  const rawCases: Array<[Record<string, unknown>, Record<string, string>, number, string]> = [
    [
      { agentId: 'careful', serviceUrl: local.demo.quoteUrl, method: 'TRACE' },
      operator,
      400,
      'invalid_request',
    ],
    [{ agentId: 'careful', serviceUrl: local.demo.quoteUrl, extra: 1 }, operator, 400, 'invalid_request'],
    [
      { agentId: 'careful', serviceUrl: local.demo.quoteUrl },
      { authorization: 'Bearer nope' },
      401,
      'unauthorized',
    ],
  ];
  for (const [body, headers, status, code] of rawCases) {
    const res = await postJson(url('/api/pay'), { method: 'GET', ...body }, headers);
    t.is(res.status, status, `${JSON.stringify(body)} → ${res.text}`);
    t.is(problemOf(res).code, code, JSON.stringify(body));
  }
  t.is(await balanceOf('careful'), '0.5000000');
  t.deepEqual(
    [await onChain(local.demoPayTo), await onChain(independentPayTo)],
    paidBefore,
    'nothing was paid',
  );
});

test.serial(
  'a service whose payTo is one of our own accounts or contracts is refused; nothing moves',
  async (t) => {
    const { contracts, accounts } = stack.sandbox.info;
    const own: Record<string, string> = {
      pool: contracts.pool,
      token: contracts.token,
      aspMembership: contracts.asp_membership,
      aspNonMembership: contracts.asp_non_membership,
      operator: accounts.operator,
      admin: accounts.admin,
      poolWallet,
    };
    const routes = Object.fromEntries(
      Object.entries(own).map(([name, to]) => [`GET /${name}`, priced(10_000n, to)]),
    );
    // The service's facilitator refuses everything: nothing may reach it anyway.
    const thief = await startPaidService(
      officialResourceServer(officialFacilitator([Keypair.random()], true)),
      routes,
      () => ({
        status: 200,
        contentType: 'text/plain',
        body: 'paid',
      }),
    );
    const guarded = await stack
      .startProxy({
        ...paymentEnv,
        POOL_PROXY_DATA_DIR: join(stack.env.POOL_PROXY_DATA_DIR!, 'own-payee'),
        POOL_PROXY_PAY_ALLOWED_HOSTS: `${paymentEnv.POOL_PROXY_PAY_ALLOWED_HOSTS},${new URL(thief.url).host}`,
      })
      .then((started) => started.proxy)
      .catch(async (error: unknown) => {
        await thief.close();
        throw error;
      });
    try {
      const api = op(guarded.url);
      t.is((await api.operatorDeposit({ agentId: 'own-payee', amount: '0.5' })).status, 'confirmed');
      const before = await Promise.all(Object.values(own).map((a) => onChain(a)));
      for (const [name, address] of Object.entries(own)) {
        const res = await refused(
          t,
          api.pay({ agentId: 'own-payee', serviceUrl: `${thief.url}/${name}`, method: 'GET' }),
          name,
        );
        t.is(res.status, 422, `${name}: ${res.detail}`);
        t.is(res.code, 'service_not_payable', name);
        t.is(res.extra.reason, 'own_account', name);
        t.true(res.detail.includes(address), name);
      }
      t.is(await balanceOf('own-payee', api), '0.5000000');
      t.deepEqual(await Promise.all(Object.values(own).map((a) => onChain(a))), before, 'nothing moved');
      const after = await settledBooks(guarded.url);
      const amount = (v: string) => BigInt(v.replace('.', ''));
      t.is(amount(after.poolWallet), await onChain(poolWallet), 'books = chain: the pool wallet');
      t.is(
        amount(after.agentNotes) + amount(after.floatAccount),
        await onChain(contracts.pool),
        'books = chain: the pool contract holds the notes',
      );
    } finally {
      await guarded.close();
      await thief.close();
    }
  },
);

test.serial(
  'a refusing facilitator and a failing service: a payment_failed problem, the same on a replay, nothing lost',
  async (t) => {
    await operatorDeposit('unlucky', '0.5');
    const before = await onChain(independentPayTo);
    const refusedBody: PayRequest = {
      agentId: 'unlucky',
      serviceUrl: `${refusing.url}/refused`,
      method: 'GET',
      idempotencyKey: 'unlucky-refused-1',
    };
    const rejected = await refused(t, pay(refusedBody));
    // answered once the authorization expired unused: nothing was paid, and that is final
    t.is(rejected.status, 502, rejected.detail);
    t.is(rejected.code, 'payment_failed');
    t.is(rejected.extra.paymentStatus, 'failed');
    t.is(rejected.extra.reason, 'payment_rejected');
    t.truthy(rejected.extra.serviceReason, "the facilitator's reason");
    t.regex(String(rejected.extra.paymentId), /^[0-9a-f-]{36}$/);
    t.truthy(rejected.extra.batchId);
    t.regex(rejected.detail, /nothing was paid/);
    const replay = await refused(t, pay(refusedBody));
    t.is(replay.status, 502);
    // (the problem's `type` follows from its code, its `instance` from the path)
    const problem = (e: PoolApiError) => ({
      code: e.code,
      title: e.title,
      status: e.status,
      detail: e.detail,
      issues: e.issues,
      extra: e.extra,
    });
    t.deepEqual(problem(replay), problem(rejected), 'a replay gets the same answer');

    const flaky = await refused(
      t,
      pay({ agentId: 'unlucky', serviceUrl: `${independent.url}/flaky`, method: 'GET' }),
    );
    t.is(flaky.status, 502, flaky.detail);
    t.is(flaky.extra.paymentStatus, 'failed');
    t.is(flaky.extra.serviceStatus, 500);
    t.is(flaky.extra.content, 'the service broke');
    t.is(await balanceOf('unlucky'), '0.5000000', 'both reservations are back');
    t.is(await onChain(independentPayTo), before, 'nothing was paid');
    const listed = (await op().payments(50)).payments;
    for (const id of [rejected.extra.paymentId, flaky.extra.paymentId])
      t.is(listed.find((p) => p.paymentId === id)?.paymentStatus, 'failed', 'one status in every answer');
  },
);

/**
 * 20 payments in one window from 4 agents to one independent service (official resource server and
 * facilitator, default options); returns the burst's duration.
 */
async function burst(t: ExecutionContext, serviceUrl: string, payTo: string, prefix: string) {
  const agents = Array.from({ length: 4 }, (_, i) => `${prefix}-${i}`);
  for (const agent of agents) await operatorDeposit(agent, '0.5');
  const payToBefore = await onChain(payTo);
  const floatBefore = await onChain(poolWallet);
  const started = Date.now();
  const outcomes = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      outcomeOf(
        pay({
          agentId: agents[i % agents.length],
          serviceUrl,
          method: 'GET',
          idempotencyKey: `${prefix}-burst-${i}`,
        }),
      ),
    ),
  );
  const ms = Date.now() - started;
  // (confirmed: answered 200)
  t.deepEqual(
    outcomes.map(told),
    Array.from({ length: 20 }, () => 'confirmed'),
    outcomes
      .filter((o) => told(o) !== 'confirmed')
      .map(shown)
      .join('\n'),
  );
  const results = outcomes.flatMap((o) => (o.answer ? [o.answer] : []));
  // (requests that reach the proxy after the window closed join the next one)
  t.log(`batches: ${new Set(results.map((r) => r.batchId)).size}`);
  t.is(new Set(results.map((r) => r.receipt?.transaction)).size, 20, 'twenty transfers');
  t.is(await onChain(payTo), payToBefore + 20n * BURST_PRICE, 'paid exactly 20 prices');
  // the float paid them (settlement may already be refilling it, never beyond the prices)
  const float = await onChain(poolWallet);
  t.true(float >= floatBefore - 20n * BURST_PRICE && float <= FLOAT);
  for (const agent of agents) t.is(await balanceOf(agent), '0.4850000', `${agent} paid 5 prices`);
  const listed = (await op().payments(200)).payments;
  for (const r of results) t.is(listed.find((p) => p.paymentId === r.paymentId)?.paymentStatus, 'confirmed');
  return ms;
}

test.serial(
  'a burst of 20 to a service whose official facilitator has ONE signer: all 20 settle, paid exactly once',
  async (t) => {
    const ms = await burst(t, `${independent.url}/burst`, independentPayTo, 'single');
    t.log(`single-signer burst of 20: ${ms} ms`);
  },
);

test.serial(
  'a burst of 20 to a service whose official facilitator has 8 signers: all 20 settle concurrently',
  async (t) => {
    const ms = await burst(t, `${channels.url}/tide`, channelsPayTo, 'eight');
    t.log(`8-signer burst of 20: ${ms} ms`);
  },
);

test.serial(
  'observer: no transaction links an agent to a service; services are paid by the pool wallet only',
  async (t) => {
    const wallet = Keypair.random();
    await stack.fund(wallet.publicKey(), 2);
    await operatorDeposit('observed-0', '0.2');
    const ids = Array.from({ length: 8 }, (_, i) => `observed-${i}`);
    for (const id of ids.slice(1)) await operatorDeposit(id, '0.2');
    // Requests in a known order, inside one window.
    const answers = [];
    for (const id of ids) {
      answers.push(pay({ agentId: id, serviceUrl: local.demo.quoteUrl, method: 'GET' }));
      await new Promise((r) => setTimeout(r, 30));
    }
    const results = await Promise.all(answers);
    for (const r of results) t.is(r.paymentStatus, 'confirmed', JSON.stringify(r));
    t.is(new Set(results.map((r) => r.batchId)).size, 1);

    // Everything the ledger recorded: every transaction of every ledger.
    const txs: rpc.Api.TransactionInfo[] = [];
    const latest = (await stack.server.getLatestLedger()).sequence;
    const health = await stack.server.getHealth();
    let page = await stack.server.getTransactions({
      startLedger: health.oldestLedger,
      pagination: { limit: 200 },
    });
    for (;;) {
      txs.push(...page.transactions);
      if (page.transactions.length < 200 || page.latestLedger > latest + 100) break;
      page = await stack.server.getTransactions({ pagination: { cursor: page.cursor, limit: 200 } });
    }
    const servicePayees = new Set([local.demoPayTo, independentPayTo]);
    const agentMarkers = [...ids, 'payer-a', 'payer-b', wallet.publicKey()];
    let toServices = 0;
    for (const tx of txs) {
      const transfers = humanizeEvents((tx.events?.contractEventsXdr ?? []).flat())
        .filter((e) => e.type === 'contract' && e.topics[0] === 'transfer')
        .map((e) => ({ from: String(e.topics[1]), to: String(e.topics[2]) }));
      const paysService = transfers.filter((x) => servicePayees.has(x.to));
      if (paysService.length === 0) continue;
      toServices += paysService.length;
      t.true(
        paysService.every((x) => x.from === poolWallet),
        'every transfer to a service comes from the pool wallet',
      );
      const envelope = Buffer.from(tx.envelopeXdr.toXDR());
      for (const marker of agentMarkers) {
        t.false(envelope.includes(Buffer.from(marker)), 'no agent id in a service payment');
      }
      t.false(
        envelope.includes(Buffer.from(new Address(wallet.publicKey()).toScAddress().toXDR())),
        'no agent wallet in a service payment',
      );
    }
    t.true(toServices >= 8);

    // The batch's transfers land within its burst, and not in the order the requests came.
    const receipts = results.map((r) => r.receipt?.transaction ?? '');
    const position = new Map(txs.map((tx, i) => [tx.txHash, i]));
    const order = receipts.map((h) => position.get(h));
    t.true(order.every((i) => i !== undefined));
    const ledgers = txs.filter((tx) => receipts.includes(tx.txHash)).map((tx) => tx.ledger);
    t.true(
      Math.max(...ledgers) - Math.min(...ledgers) <= 40,
      `burst spans ${Math.min(...ledgers)}..${Math.max(...ledgers)}`,
    );
    const sorted = [...order].sort((x, y) => (x as number) - (y as number));
    t.notDeepEqual(order, sorted, 'the chain order is not the request order');
  },
);

test.serial(
  'a retried payment never pays twice, even after the store is lost: recover rebuilds it and its debt from the chain, a replay names it',
  async (t) => {
    const dataDir = join(stack.env.POOL_PROXY_DATA_DIR!, 'lost-store');
    // First with settlement rounds of one transfer every ~2 s, so one payment is settled before the loss ...
    const settling = {
      ...paymentEnv,
      POOL_PROXY_DATA_DIR: dataDir,
      // its own master key: the proxy of the other tests shares the pool and the pool wallet, not the books
      POOL_PROXY_MASTER_KEY: randomBytes(32).toString('hex'),
      POOL_PROXY_SETTLE_INTERVAL_MS: '2000',
      POOL_PROXY_SETTLE_ROUND_SIZE: '1',
    };
    // ... then none, so the next one is still owed when the store is lost.
    const env = { ...settling, POOL_PROXY_SETTLE_INTERVAL_MS: '86400000' };
    let a = (await stack.startProxy(settling)).proxy;
    t.teardown(() => a.close());
    const books = (p: ProxyHandle) => booksOf(p.url);
    const balance = (p: ProxyHandle) => balanceOf('lost', op(p.url));
    const deposited = await op(a.url).operatorDeposit({ agentId: 'lost', amount: '0.5' });
    t.is(deposited.status, 'confirmed', JSON.stringify(deposited));
    const body: PayRequest = {
      agentId: 'lost',
      serviceUrl: local.demo.quoteUrl,
      method: 'GET',
      idempotencyKey: 'lost-key-0001',
    };
    const settled = await pay({ ...body, idempotencyKey: 'lost-key-0000' }, op(a.url));
    t.is(settled.paymentStatus, 'confirmed', JSON.stringify(settled));
    let before = await settledBooks(a.url);
    t.is(before.unsettled, '0.0000000', 'the first payment was settled inside the pool');
    await a.close();
    a = (await stack.startProxy(env)).proxy;
    const first = await pay(body, op(a.url));
    t.is(first.paymentStatus, 'confirmed', JSON.stringify(first));
    t.truthy(first.receipt, JSON.stringify(first));
    const firstTransaction = first.receipt?.transaction ?? '';
    const service = local.demoPayTo;
    const servicePaid = await stack.usdcBalance(service);
    before = await books(a);
    const balanceBefore = await balance(a);
    t.is(before.unsettled, first.receipt?.amount ?? '', 'the second payment is owed');
    await a.close();

    // The store is lost; `store recover` makes an empty one that asks the next start for the history.
    rmSync(join(dataDir, 'proxy-store'), { recursive: true, force: true });
    const recover = runCli(['store', 'recover', '--data-dir', dataDir], {
      ...process.env,
      ...stack.env,
      ...env,
      POOL_PROXY_PORT: undefined,
    });
    t.is(await recover.exited, 0, recover.output());
    a = (await stack.startProxy(env)).proxy;

    // The history lists the payment rebuilt from the chain.
    const list = await op(a.url).payments(50);
    const rebuilt = list.payments.find((p) => p.receipt?.transaction === firstTransaction);
    t.truthy(rebuilt, JSON.stringify(list));
    t.is(rebuilt?.agentId, 'lost');
    t.is(rebuilt?.paymentStatus, 'confirmed');
    // The books as they were: the unsettled payment is owed again, the settled one is in the float account,
    // and the agent's balance does not show the money that already paid the service.
    const after = await books(a);
    t.is(
      after.unsettled,
      before.unsettled,
      'the unsettled debt is rebuilt, the settled one is not owed twice',
    );
    t.is(after.floatAccount, before.floatAccount);
    t.is(after.agentNotes, before.agentNotes);
    t.is(await balance(a), balanceBefore);

    // The same request with the same key: the original payment's answer, and the service is not paid again.
    const replay = await pay(body, op(a.url));
    t.is(replay.paymentStatus, 'confirmed', JSON.stringify(replay));
    t.is(replay.receipt?.transaction, firstTransaction, 'names the original payment');
    t.is(rebuilt?.paymentId, replay.paymentId, 'the rebuilt payment');
    const again = await pay(body, op(a.url));
    t.deepEqual(again, replay, 'bound to the key from now on');
    t.is(await stack.usdcBalance(service), servicePaid, 'the service was paid once');
    // Another key of the same agent is a new payment (the rebuilt history does not swallow it).
    const other = await pay({ ...body, idempotencyKey: 'lost-key-0002' }, op(a.url));
    t.is(other.paymentStatus, 'confirmed', JSON.stringify(other));
    t.truthy(other.receipt?.transaction);
    t.not(other.receipt?.transaction, firstTransaction);
  },
);
