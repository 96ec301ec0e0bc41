// What an owner's deny rule denies stays denied, on the real stack (sandbox ledger, prover daemon, proxy, our
// facilitator) against a lenient paid service of our own on loopback (helpers/lenient-service.ts) that
// routes many spellings to its `/admin` and redirects from allowed paths to denied ones, on its origin and to
// another. Each attack of the report is tried through POST /api/pay and must be refused with nothing moved:
// no USDC left the pool wallet for it, the agent's balance holds no reservation, the owner's export shows
// nothing paid for it, and the denied place never received a request or a payment signature.
import { Keypair } from '#stellar-sdk';
import test, { type ExecutionContext } from 'ava';
import type { AgentPolicyRequest } from '../../src/api/types.ts';
import { quote } from '../../src/x402/index.ts';
import { type PayStack, startPayStack } from '../mcp/pay-stack.ts';
import { operatorApi, type PoolApi, refused } from './helpers/api.ts';
import { ADMIN_PRICE, type LenientService, listenLenient, WEATHER_PRICE } from './helpers/lenient-service.ts';

const AGENT = 'attacked';
let pay: PayStack;
/** the lenient service, and another origin it redirects to */
let a: LenientService;
let b: LenientService;
const adminPayTo = Keypair.random().publicKey();
const weatherPayTo = Keypair.random().publicKey();
let poolWallet: string;

const op = (): PoolApi => operatorApi(pay.proxy.url, pay.stack.operator);
const setPolicy = (policy: AgentPolicyRequest) => op().setPolicy(AGENT, policy);
const payUrl = (serviceUrl: string) => op().pay({ agentId: AGENT, serviceUrl, method: 'GET' });

/** What a payment could have moved: the books on the proxy's side and on the chain. */
async function books() {
  const exported = await op().exportPayments(AGENT);
  return {
    balance: (await op().balance(AGENT)).balance,
    poolWallet: await pay.stack.usdcBalance(poolWallet),
    admin: await pay.stack.usdcBalance(adminPayTo),
    paid: exported.payments.filter((p) => p.status === 'confirmed').map((p) => p.service),
  };
}

/** The requests and signatures the admin place of either service received. */
const reachedAdmin = (s: LenientService) => ({
  asked: s.asked.filter((p) => p.toLowerCase().includes('admin')),
  signed: s.signed,
});

test.before(async () => {
  a = await listenLenient();
  b = await listenLenient();
  pay = await startPayStack({
    POOL_PROXY_PAY_ALLOWED_HOSTS: [new URL(a.url).host, new URL(b.url).host, `localhost:${a.port}`].join(','),
    POOL_PROXY_PAY_DEADLINE_MS: '300000',
  });
  poolWallet = pay.stack.sandbox.info.accounts.poolWallet;
  await pay.stack.fund(adminPayTo, 0);
  await pay.stack.fund(weatherPayTo, 0);
  const common = {
    facilitator: pay.x402.facilitator.client,
    network: pay.x402.facilitator.network,
    asset: pay.stack.sandbox.info.contracts.token,
    adminPayTo,
    weatherPayTo,
  };
  await a.serve({ ...common, awayTo: `${b.url}/admin` });
  await b.serve({ ...common, awayTo: `${a.url}/admin` });
  await op().operatorDeposit({ agentId: AGENT, amount: '1' });
});

test.after.always(async () => {
  await pay?.close();
  await a?.close();
  await b?.close();
});

const SPELLINGS = ['/%61dmin', '/ADMIN', '/admin;v=1', '//admin', '/x/..%2fadmin', '/admin%2fx'];

test.serial('the lenient service really routes each spelling to its /admin', async (t) => {
  const payer = {
    rpcUrl: pay.stack.sandbox.rpcUrl,
    networkPassphrase: pay.stack.config.ledger.networkPassphrase,
    asset: pay.stack.sandbox.info.contracts.token,
  };
  for (const path of [...SPELLINGS, '/weather/..%2fadmin']) {
    const q = await quote({ url: `${a.url}${path}` }, payer, { allowedHosts: [new URL(a.url).host] });
    t.is(q.payTo, adminPayTo, path);
    t.is(q.amount, ADMIN_PRICE, path);
  }
});

test.serial('every spelling of a denied /admin is refused before the service is asked', async (t) => {
  await setPolicy({ deniedServices: [`${a.url}/admin`] });
  const before = await books();
  const askedBefore = a.asked.length;
  const refusedAs = async (url: string, code: string, rule: string) => {
    const res = await refused(t, payUrl(url), url);
    t.is(res.status, 403, `${url}: ${res.detail}`);
    t.is(res.code, code, url);
    t.is(res.extra.rule, rule, url);
  };
  for (const path of SPELLINGS.slice(0, 4))
    await refusedAs(`${a.url}${path}`, 'policy_service_denied', 'deniedServices');
  for (const path of SPELLINGS.slice(4))
    await refusedAs(`${a.url}${path}`, 'policy_service_denied', 'encodedPath');
  // an allow-list of /weather is not passed by a path that leaves it
  await setPolicy({ allowedServices: [`${a.url}/weather`] });
  await refusedAs(`${a.url}/weather/..%2fadmin`, 'policy_service_denied', 'encodedPath');
  await refusedAs(`${a.url}/weather/..;/admin`, 'policy_service_not_allowed', 'allowedServices');
  // a deny of the loopback address covers localhost
  await setPolicy({ deniedServices: [a.url] });
  await refusedAs(`http://localhost:${a.port}/admin`, 'policy_service_denied', 'deniedServices');
  await refusedAs(`http://[::1]:${a.port}/weather`, 'policy_service_denied', 'deniedServices');
  t.is(a.asked.length, askedBefore, 'the service was never asked');
  t.deepEqual(await books(), before, 'nothing moved, nothing reserved, nothing paid');

  // The same service is paid where the policy allows it: the refusals were the rules, not the service.
  await setPolicy({ deniedServices: [`${a.url}/admin`], allowedServices: [`${a.url}/weather`] });
  const paid = await payUrl(`${a.url}/weather`);
  t.is(paid.paymentStatus, 'confirmed', JSON.stringify(paid));
  const after = await books();
  t.is(after.poolWallet, before.poolWallet - WEATHER_PRICE);
  t.is(after.admin, before.admin, 'the admin got nothing');
  t.deepEqual(after.paid, [...before.paid, `${a.url}/weather`]);
});

/** Asserts that paying `url` is refused as a redirect, and that nothing was signed or moved. */
async function redirectRefused(t: ExecutionContext, url: string, target: string) {
  const before = await books();
  const signedBefore = [a.signed.length, b.signed.length];
  const adminBefore = [reachedAdmin(a).asked.length, reachedAdmin(b).asked.length];
  const res = await refused(t, payUrl(url));
  t.is(res.status, 422, res.detail);
  t.is(res.code, 'service_not_payable');
  t.is(res.extra.reason, 'redirect_refused');
  t.true(res.detail.includes(target), res.detail);
  t.deepEqual([a.signed.length, b.signed.length], signedBefore, 'no payment signature was sent anywhere');
  t.deepEqual(
    [reachedAdmin(a).asked.length, reachedAdmin(b).asked.length],
    adminBefore,
    'the denied place was never asked',
  );
  t.deepEqual(await books(), before, 'nothing moved, nothing reserved, nothing paid');
}

test.serial('a 302 from an allowed path to a denied one is refused at the quote', async (t) => {
  await setPolicy({ deniedServices: [`${a.url}/admin`] });
  await redirectRefused(t, `${a.url}/weather/go`, `${a.url}/admin`);
});

test.serial(
  'a 302 to a denied origin is refused: the allowed origin never holds an authorization',
  async (t) => {
    await setPolicy({ deniedServices: [b.url], allowedServices: [a.url] });
    await redirectRefused(t, `${a.url}/weather/away`, `${b.url}/admin`);
  },
);

test.serial(
  'a paid request answered with a redirect is not followed: the signature reaches the quoted URL only',
  async (t) => {
    await setPolicy({ deniedServices: [`${a.url}/admin`] });
    const before = await books();
    const signedBefore = a.signed.length;
    const res = await refused(t, payUrl(`${a.url}/weather/sneaky`));
    t.is(res.status, 502, res.detail);
    t.is(res.code, 'payment_failed');
    t.deepEqual(a.signed.slice(signedBefore), ['/weather/sneaky'], 'one signature, to the URL quoted');
    t.deepEqual(b.signed, []);
    const after = await books();
    t.deepEqual(after, before, 'nothing moved, the reservation released, nothing paid');
  },
);
