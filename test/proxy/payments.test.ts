// Paying x402 services from the pool, end to end: the real sandbox (on the TESTNET passphrase, so the official
// @x402/stellar facilitator can run against it), the real prover daemon and proxy, our local facilitator and
// demo service, and an independent paid service built here with @x402/core's resource server and the official
// facilitator. Checks what agents get back, the books (balances, the pool wallet's float, settlement) and what
// an observer of the ledger can see.
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
import { getJson, postJson } from './helpers/http.ts';
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

const url = (path: string) => `${proxy.url}${path}`;
/** The operator's token, the same for every proxy of the stack. */
let operator: Record<string, string>;
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

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
    POOL_PROXY_PAY_DEADLINE_MS: '400000',
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

async function operatorDeposit(agentId: string, amount: string) {
  const res = await postJson(url('/api/deposit'), { agentId, amount }, operator);
  if (res.status !== 200) throw new Error(`deposit: ${res.text}`);
}

async function balanceOf(agentId: string, headers: Record<string, string> = operator): Promise<string> {
  return (await getJson(url(`/api/balance/${agentId}`), headers)).json.balance;
}

const pay = (body: Record<string, unknown>, headers: Record<string, string> = operator) =>
  postJson(url('/api/pay'), body, headers);

/** The operator's books once nothing is owed and no settlement round runs (or after a minute, as they are). */
async function settledBooks(proxyUrl: string) {
  let books = (await getJson(`${proxyUrl}/api/operator/books`, operator)).json;
  for (let i = 0; i < 240 && (books.unsettled !== '0.0000000' || books.settling); i++) {
    await new Promise((r) => setTimeout(r, 250));
    books = (await getJson(`${proxyUrl}/api/operator/books`, operator)).json;
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
    const info = await getJson(url('/api/pool/info'));
    t.is(info.json.payments.x402Network, NETWORK);
    t.is(info.json.poolWallet, poolWallet);
    t.is(info.json.payments.demoServiceUrl, local.demo.quoteUrl);
    await operatorDeposit('payer-a', '1');
    await operatorDeposit('payer-b', '1');
    const wallet = Keypair.random();
    await stack.fund(wallet.publicKey(), 5);
    const walletToken = await stack.login(wallet, proxy.url);
    const prepared = await postJson(
      url('/api/deposit/prepare'),
      { amount: '1', publicKey: wallet.publicKey() },
      bearer(walletToken),
    );
    const tx = TransactionBuilder.fromXDR(prepared.json.transactionXDR, TESTNET_PASSPHRASE);
    tx.sign(wallet);
    const submitted = await postJson(
      url('/api/deposit/submit'),
      { prepareId: prepared.json.prepareId, signedTransactionXDR: tx.toXDR() },
      bearer(walletToken),
    );
    t.is(submitted.status, 200, submitted.text);

    const demoBefore = await onChain(local.demoPayTo);
    const independentBefore = await onChain(independentPayTo);
    const [a, b, w] = await Promise.all([
      pay({ agentId: 'payer-a', serviceUrl: local.demo.quoteUrl, method: 'GET' }),
      pay({ agentId: 'payer-b', serviceUrl: `${independent.url}/weather?city=lisbon`, method: 'GET' }),
      pay({ serviceUrl: local.demo.echoUrl, method: 'POST', body: { hello: 'pool' } }, bearer(walletToken)),
    ]);
    for (const r of [a, b, w]) {
      t.is(r.status, 200, r.text);
      t.is(r.json.paymentStatus, 'confirmed', r.text);
      t.regex(r.json.receipt.transaction, /^[0-9a-f]{64}$/);
      t.is(r.json.receipt.network, NETWORK);
      t.is(r.json.receipt.asset, token);
      t.truthy(r.json.batchId);
    }
    t.is(a.json.batchId, b.json.batchId, 'one window, one batch');
    t.deepEqual(JSON.parse(b.json.content), { sky: 'clear' });
    t.is(b.json.receipt.amount, '0.0200000');
    t.is(b.json.receipt.payTo, independentPayTo);
    t.regex(w.json.content, /hello/);
    t.is(await balanceOf('payer-a'), '0.9900000');
    t.is(await balanceOf('payer-b'), '0.9800000');
    t.is(await balanceOf(wallet.publicKey(), bearer(walletToken)), '0.9900000');
    t.is(await onChain(local.demoPayTo), demoBefore + 200_000n);
    t.is(await onChain(independentPayTo), independentBefore + 200_000n);
    // Confirmed on our own ledger: the receipt's transaction pays the service from the pool wallet.
    const landed = await stack.server.getTransaction(b.json.receipt.transaction);
    t.is(landed.status, rpc.Api.GetTransactionStatus.SUCCESS);

    const listed = await getJson(url('/api/payments'), bearer(walletToken));
    t.is(listed.json.payments.length, 1);
    t.is(listed.json.payments[0].paymentStatus, 'confirmed');
    t.deepEqual(listed.json.payments[0].receipt, w.json.receipt);
    const stats = await getJson(url('/api/pool/stats'));
    t.true(stats.json.servicesUsed >= 2);
    t.true(stats.json.recentBatches.some((batch: { payments: number }) => batch.payments >= 2));
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
        pay({ agentId: 'seven', serviceUrl: local.demo.quoteUrl, method: 'GET' }),
      ),
    );
    const confirmed = results.filter((r) => r.status === 200 && r.json.paymentStatus === 'confirmed');
    const refused = results.filter((r) => r.status === 409);
    t.is(
      confirmed.length,
      7,
      results.map((r) => `${r.status} ${r.json.code ?? r.json.paymentStatus}`).join(','),
    );
    t.is(refused.length, 13);
    t.true(refused.every((r) => r.json.code === 'insufficient_balance'));
    t.is(await balanceOf('seven'), '0.0000000');
    t.is(await onChain(local.demoPayTo), demoBefore + 7n * 100_000n);
  },
);

test.serial('a retry with the same idempotencyKey returns the first answer and pays once', async (t) => {
  await operatorDeposit('idem', '0.5');
  const body = {
    agentId: 'idem',
    serviceUrl: local.demo.quoteUrl,
    method: 'GET',
    idempotencyKey: 'key-0001-abc',
  };
  const [first, second] = await Promise.all([pay(body), pay(body)]);
  t.is(first.status, 200, first.text);
  t.deepEqual(second.json, first.json);
  const third = await pay(body);
  t.deepEqual(third.json, first.json);
  t.is(await balanceOf('idem'), '0.4900000', 'paid once');
  const other = await pay({ ...body, serviceUrl: `${local.demo.quoteUrl}?again=1` });
  t.is(other.status, 409);
  t.is(other.json.code, 'conflict');
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
    const deposit = await postJson(
      `${small.url}/api/deposit`,
      { agentId: 'queued', amount: '0.5' },
      operator,
    );
    t.is(deposit.status, 200, deposit.text);
    // Both pass the first capacity check and quote the service; only one fits in the queue.
    const both = await Promise.all(
      [0, 1].map(() =>
        postJson(
          `${small.url}/api/pay`,
          { agentId: 'queued', serviceUrl: local.demo.quoteUrl, method: 'GET' },
          operator,
        ),
      ),
    );
    const statuses = both.map((r) => `${r.status} ${r.json.code ?? r.json.paymentStatus}`).sort();
    t.deepEqual(statuses, ['200 confirmed', '503 queue_full'], both.map((r) => r.text).join('\n'));
    const balance = await getJson(`${small.url}/api/balance/queued`, operator);
    t.is(balance.json.balance, '0.4900000', 'one price debited, the refused one released');
  } finally {
    await small.close();
  }
});

test.serial('bad input is refused before anything is signed, and loses nothing', async (t) => {
  await operatorDeposit('careful', '0.5');
  const wallet = Keypair.random();
  await stack.fund(wallet.publicKey(), 1);
  const walletToken = await stack.login(wallet, proxy.url);
  // (the settlement job may refill the float meanwhile, so look at the services' side)
  const paidBefore = [await onChain(local.demoPayTo), await onChain(independentPayTo)];
  const cases: Array<[Record<string, unknown>, Record<string, string>, number, string]> = [
    [{ agentId: 'nobody', serviceUrl: local.demo.quoteUrl }, operator, 404, 'not_found'],
    [{ agentId: 'careful', serviceUrl: local.demo.quoteUrl }, bearer(walletToken), 404, 'not_found'],
    [{ agentId: 'careful', serviceUrl: 'ftp://example.org/x' }, operator, 400, 'invalid_request'],
    [{ agentId: 'careful', serviceUrl: 'not a url' }, operator, 400, 'invalid_request'],
    [{ agentId: 'careful', serviceUrl: 'http://127.0.0.1:9/private' }, operator, 400, 'invalid_request'],
    [{ agentId: 'careful', serviceUrl: 'http://169.254.169.254/latest' }, operator, 400, 'invalid_request'],
    [{ agentId: 'careful', serviceUrl: plainUrl }, operator, 422, 'service_not_payable'],
    [{ agentId: 'careful', serviceUrl: `${independent.url}/expensive` }, operator, 422, 'price_too_high'],
    [
      { agentId: 'careful', serviceUrl: local.demo.quoteUrl, maxAmount: '0.001' },
      operator,
      422,
      'price_too_high',
    ],
    [
      { agentId: 'careful', serviceUrl: local.demo.quoteUrl, method: 'TRACE' },
      operator,
      400,
      'invalid_request',
    ],
    [{ agentId: 'careful', serviceUrl: local.demo.quoteUrl, extra: 1 }, operator, 400, 'invalid_request'],
    [
      { agentId: 'careful', serviceUrl: local.demo.quoteUrl, headers: { authorization: 'Bearer x' } },
      operator,
      400,
      'invalid_request',
    ],
    [
      { agentId: 'careful', serviceUrl: local.demo.quoteUrl, idempotencyKey: 'short' },
      operator,
      400,
      'invalid_request',
    ],
    [{ serviceUrl: local.demo.quoteUrl }, operator, 400, 'invalid_request'],
    [
      { agentId: 'careful', serviceUrl: local.demo.quoteUrl },
      { authorization: 'Bearer nope' },
      401,
      'unauthorized',
    ],
  ];
  for (const [body, headers, status, code] of cases) {
    const res = await pay({ method: 'GET', ...body }, headers);
    t.is(res.status, status, `${JSON.stringify(body)} → ${res.text}`);
    t.is(res.json.code, code, JSON.stringify(body));
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
      const at = (path: string) => `${guarded.url}${path}`;
      t.is(
        (await postJson(at('/api/deposit'), { agentId: 'own-payee', amount: '0.5' }, operator)).status,
        200,
      );
      const before = await Promise.all(Object.values(own).map((a) => onChain(a)));
      for (const [name, address] of Object.entries(own)) {
        const res = await postJson(
          at('/api/pay'),
          { agentId: 'own-payee', serviceUrl: `${thief.url}/${name}`, method: 'GET' },
          operator,
        );
        t.is(res.status, 422, `${name}: ${res.text}`);
        t.is(res.json.code, 'service_not_payable', name);
        t.is(res.json.reason, 'own_account', name);
        t.true(res.json.detail.includes(address), name);
      }
      t.is((await getJson(at('/api/balance/own-payee'), operator)).json.balance, '0.5000000');
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
    const refusedBody = {
      agentId: 'unlucky',
      serviceUrl: `${refusing.url}/refused`,
      method: 'GET',
      idempotencyKey: 'unlucky-refused-1',
    };
    const refused = await pay(refusedBody);
    // answered once the authorization expired unused: nothing was paid, and that is final
    t.is(refused.status, 502, refused.text);
    t.is(refused.json.code, 'payment_failed');
    t.is(refused.json.paymentStatus, 'failed');
    t.is(refused.json.reason, 'payment_rejected');
    t.truthy(refused.json.serviceReason, "the facilitator's reason");
    t.regex(refused.json.paymentId, /^[0-9a-f-]{36}$/);
    t.truthy(refused.json.batchId);
    t.regex(refused.json.detail, /nothing was paid/);
    const replay = await pay(refusedBody);
    t.is(replay.status, 502);
    t.deepEqual(replay.json, refused.json, 'a replay gets the same answer');

    const flaky = await pay({ agentId: 'unlucky', serviceUrl: `${independent.url}/flaky`, method: 'GET' });
    t.is(flaky.status, 502, flaky.text);
    t.is(flaky.json.paymentStatus, 'failed');
    t.is(flaky.json.serviceStatus, 500);
    t.is(flaky.json.content, 'the service broke');
    t.is(await balanceOf('unlucky'), '0.5000000', 'both reservations are back');
    t.is(await onChain(independentPayTo), before, 'nothing was paid');
    const listed = (await getJson(url('/api/payments'), operator)).json.payments as Array<{
      paymentId: string;
      paymentStatus: string;
    }>;
    for (const id of [refused.json.paymentId, flaky.json.paymentId])
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
  const results = await Promise.all(
    Array.from({ length: 20 }, (_, i) =>
      pay({
        agentId: agents[i % agents.length],
        serviceUrl,
        method: 'GET',
        idempotencyKey: `${prefix}-burst-${i}`,
      }),
    ),
  );
  const ms = Date.now() - started;
  t.deepEqual(
    results.map((r) => `${r.status} ${r.json.paymentStatus ?? r.json.code}`),
    Array.from({ length: 20 }, () => '200 confirmed'),
    results.find((r) => r.status !== 200)?.text,
  );
  // (requests that reach the proxy after the window closed join the next one)
  t.log(`batches: ${new Set(results.map((r) => r.json.batchId)).size}`);
  t.is(new Set(results.map((r) => r.json.receipt.transaction)).size, 20, 'twenty transfers');
  t.is(await onChain(payTo), payToBefore + 20n * BURST_PRICE, 'paid exactly 20 prices');
  // the float paid them (settlement may already be refilling it, never beyond the prices)
  const float = await onChain(poolWallet);
  t.true(float >= floatBefore - 20n * BURST_PRICE && float <= FLOAT);
  for (const agent of agents) t.is(await balanceOf(agent), '0.4850000', `${agent} paid 5 prices`);
  const listed = (await getJson(url('/api/payments?limit=200'), operator)).json.payments as Array<{
    paymentId: string;
    paymentStatus: string;
  }>;
  for (const r of results)
    t.is(listed.find((p) => p.paymentId === r.json.paymentId)?.paymentStatus, 'confirmed');
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
    for (const r of results) t.is(r.json.paymentStatus, 'confirmed', r.text);
    t.is(new Set(results.map((r) => r.json.batchId)).size, 1);

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
    const receipts = results.map((r) => r.json.receipt.transaction as string);
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
    const at = (p: ProxyHandle, path: string) => `${p.url}${path}`;
    const books = async (p: ProxyHandle) => (await getJson(at(p, '/api/operator/books'), operator)).json;
    const balance = async (p: ProxyHandle) =>
      (await getJson(at(p, '/api/balance/lost'), operator)).json.balance as string;
    const deposited = await postJson(at(a, '/api/deposit'), { agentId: 'lost', amount: '0.5' }, operator);
    t.is(deposited.status, 200, deposited.text);
    const body = {
      agentId: 'lost',
      serviceUrl: local.demo.quoteUrl,
      method: 'GET',
      idempotencyKey: 'lost-key-0001',
    };
    const settled = await postJson(at(a, '/api/pay'), { ...body, idempotencyKey: 'lost-key-0000' }, operator);
    t.is(settled.json.paymentStatus, 'confirmed', settled.text);
    let before = await settledBooks(a.url);
    t.is(before.unsettled, '0.0000000', 'the first payment was settled inside the pool');
    await a.close();
    a = (await stack.startProxy(env)).proxy;
    const first = await postJson(at(a, '/api/pay'), body, operator);
    t.is(first.status, 200, first.text);
    t.is(first.json.paymentStatus, 'confirmed');
    const service = local.demoPayTo;
    const servicePaid = await stack.usdcBalance(service);
    before = await books(a);
    const balanceBefore = await balance(a);
    t.is(before.unsettled, first.json.receipt.amount, 'the second payment is owed');
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
    const list = await getJson(at(a, '/api/payments'), operator);
    t.is(list.status, 200, list.text);
    const rebuilt = list.json.payments.find(
      (p: { receipt?: { transaction: string } }) => p.receipt?.transaction === first.json.receipt.transaction,
    );
    t.truthy(rebuilt, list.text);
    t.is(rebuilt.agentId, 'lost');
    t.is(rebuilt.paymentStatus, 'confirmed');
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
    const replay = await postJson(at(a, '/api/pay'), body, operator);
    t.is(replay.status, 200, replay.text);
    t.is(replay.json.paymentStatus, 'confirmed');
    t.is(replay.json.receipt.transaction, first.json.receipt.transaction, 'names the original payment');
    t.is(replay.json.paymentId, rebuilt.paymentId);
    const again = await postJson(at(a, '/api/pay'), body, operator);
    t.deepEqual(again.json, replay.json, 'bound to the key from now on');
    t.is(await stack.usdcBalance(service), servicePaid, 'the service was paid once');
    // Another key of the same agent is a new payment (the rebuilt history does not swallow it).
    const other = await postJson(at(a, '/api/pay'), { ...body, idempotencyKey: 'lost-key-0002' }, operator);
    t.is(other.status, 200, other.text);
    t.not(other.json.receipt.transaction, first.json.receipt.transaction);
  },
);
