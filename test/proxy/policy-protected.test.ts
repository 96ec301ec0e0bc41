// A copied wallet token cannot loosen a protected agent: on the real stack (sandbox ledger, prover daemon, the
// local x402 facilitator and demo service at 0.01 USDC), once on LevelDB and once on two replicas sharing a
// PostgreSQL store (each step asked of the replica the last one was not). The owner protects an agent (wallet
// signature for every withdrawal, an address book, an allow list, a cap, a daily budget, an approval
// threshold); the token alone then tries what the thief of the issue did — `PUT policy {}`, widening the
// allow list to its own service, unfreezing, a signature by another key, one signed for another change — and
// every attempt is refused with `wallet_signature_required` / `wallet_signature_invalid` while nothing moves:
// the agent's balance, the service's USDC and the policy stay as they were, and the operator's books match the
// pool's USDC on chain. Tightening needs no signature; a fresh signature of exactly the change goes through.
// Nor can the token issue agent tokens without end: of 25 asked at once over the replicas, 20 are issued.
import { Keypair } from '#stellar-sdk';
import test, { type ExecutionContext } from 'ava';
import type { AgentPolicyRequest, AgentPolicyView, WalletConfirmationRequest } from '../../src/api/types.ts';
import type { ProxyHandle } from '../../src/proxy/server.ts';
import { type LocalX402, localX402Env, startLocalX402 } from '../../src/x402/local-services.ts';
import { startPayStack } from '../mcp/pay-stack.ts';
import { type PostgresServer, startPostgres } from '../helpers/postgres.ts';
import { type PoolApi, refused, walletApi } from './helpers/api.ts';
import { type Stack, startStack } from './helpers/stack.ts';
import { walletDeposit } from './helpers/wallet-deposit.ts';

const AGENT = 'guarded';
const PRICE = 100_000n; // the demo service's 0.01 USDC

interface Rig {
  stack: Stack;
  x402: LocalX402;
  /** the proxies' URLs: one on LevelDB, two replicas on PostgreSQL */
  urls: string[];
  close(): Promise<void>;
}

async function levelDbRig(): Promise<Rig> {
  const pay = await startPayStack();
  return { stack: pay.stack, x402: pay.x402, urls: [pay.proxy.url], close: () => pay.close() };
}

async function postgresRig(): Promise<Rig> {
  const pgServer: PostgresServer = await startPostgres();
  const stack = await startStack({ POOL_PROXY_DATABASE_URL: await pgServer.database() });
  const { sandbox } = stack;
  await stack.fund(sandbox.info.accounts.poolWallet, 100);
  const x402 = await startLocalX402({
    rpcUrl: sandbox.rpcUrl,
    networkPassphrase: stack.config.ledger.networkPassphrase,
    asset: sandbox.info.contracts.token,
    facilitator: { host: '127.0.0.1', port: 0 },
    demo: { host: '127.0.0.1', port: 0 },
  });
  await stack.proxy.close();
  const env = {
    ...localX402Env(x402, undefined),
    POOL_PROXY_POOL_WALLET_SECRET: sandbox.secrets().poolWallet,
    POOL_PROXY_BATCH_WINDOW_MS: '300',
    POOL_PROXY_SETTLE_INTERVAL_MS: '86400000',
    POOL_PROXY_PUBLIC_URL: 'http://pool.test',
  };
  const replicas: ProxyHandle[] = [];
  for (let i = 0; i < 2; i++) replicas.push((await stack.startProxy(env)).proxy);
  return {
    stack,
    x402,
    urls: replicas.map((r) => r.url),
    async close() {
      await Promise.all(replicas.map((r) => r.close()));
      await x402.close();
      await stack.daemon.stop({ force: true });
      await sandbox.close();
      await pgServer.stop();
    },
  };
}

async function scenario(t: ExecutionContext, rig: Rig): Promise<void> {
  const { stack, x402 } = rig;
  const wallet = Keypair.random();
  const dest = Keypair.random();
  await stack.fund(wallet.publicKey(), 5);
  const token = await stack.login(wallet, rig.urls[0]);
  let turn = 0;
  /** The wallet's client (the owner's, or the thief's copy of its token), on the next replica each call. */
  const own = (): PoolApi => walletApi(rig.urls[turn++ % rig.urls.length]!, token);
  await walletDeposit({
    api: own(),
    wallet,
    networkPassphrase: stack.config.ledger.networkPassphrase,
    agentId: AGENT,
    amount: '1',
  });
  const demoOrigin = new URL(x402.demo.quoteUrl).origin;
  const protectedPolicy: AgentPolicyRequest = {
    requireWithdrawalSignature: true,
    withdrawalDestinations: [dest.publicKey()],
    allowedServices: ['https://weather.example'],
    perPaymentCap: '0.005',
    budgetPerDay: '0.005',
    approvalThreshold: '0.001',
  };
  // protecting is a tightening: the token alone may do it
  t.like(await own().setPolicy(AGENT, protectedPolicy), { requireWithdrawalSignature: true });
  const policyBefore = await own().policy(AGENT);
  const confirm = async (action: WalletConfirmationRequest, signer = wallet) => {
    const { message, nonce } = await own().walletConfirmation(AGENT, action);
    return { nonce, signature: Buffer.from(signer.signMessage(message)).toString('base64') };
  };
  const pool = stack.sandbox.info.contracts.pool;
  const demoBefore = await stack.usdcBalance(x402.demoPayTo);
  const nothingMoved = async (label: string) => {
    t.is((await own().balance(AGENT)).balance, '1.0000000', `${label}: the agent's balance`);
    t.is(await stack.usdcBalance(x402.demoPayTo), demoBefore, `${label}: the service got nothing`);
    const rules = (p: AgentPolicyView) => ({ ...p, frozen: false, updatedAt: null });
    t.deepEqual(rules(await own().policy(AGENT)), rules(policyBefore), `${label}: the policy`);
    const books = await stack.operatorApi(rig.urls[0]).books();
    const stroops = (s: string) => BigInt(s.replace('.', ''));
    t.is(books.unsettled, '0.0000000', `${label}: nothing owed`);
    t.is(
      await stack.usdcBalance(pool),
      stroops(books.agentNotes) + stroops(books.floatAccount),
      `${label}: books = chain`,
    );
  };
  const refusedWith = async (call: Promise<unknown>, code: string, label: string) => {
    const res = await refused(t, call, code);
    t.is(res.status, 403, `${label}: ${res.detail}`);
    t.is(res.code, code, label);
    await nothingMoved(label);
    return res;
  };

  // the issue's attack: the token alone resets the policy to the operator's defaults, then pays its own service
  const reset = await refusedWith(own().setPolicy(AGENT, {}), 'wallet_signature_required', 'PUT {}');
  t.deepEqual(
    (reset.issues ?? []).map((i) => i.path),
    ['perPaymentCap', 'budgetPerDay', 'approvalThreshold', 'allowedServices'],
  );
  t.regex(reset.detail, /fresh wallet signature to loosen its policy/);
  await refusedWith(
    own().pay({ agentId: AGENT, serviceUrl: x402.demo.quoteUrl, method: 'GET' }),
    'policy_service_not_allowed',
    'paying a service the allow list does not hold',
  );
  const widened = { ...protectedPolicy, allowedServices: ['https://weather.example', demoOrigin] };
  await refusedWith(own().setPolicy(AGENT, widened), 'wallet_signature_required', 'widening the allow list');
  const raised = { ...protectedPolicy, perPaymentCap: '0.5' };
  await refusedWith(own().setPolicy(AGENT, raised), 'wallet_signature_required', 'raising the cap');
  // a freeze never needs the wallet; the unfreeze does
  t.true((await own().setFrozen(AGENT, true)).frozen);
  await refusedWith(own().setFrozen(AGENT, false), 'wallet_signature_required', 'unfreezing');
  // signatures that are not the wallet's of exactly this change
  await refusedWith(
    own().setPolicy(AGENT, {
      ...widened,
      confirmation: await confirm({ policy: widened }, Keypair.random()),
    }),
    'wallet_signature_invalid',
    'signed by another key',
  );
  await refusedWith(
    own().setPolicy(AGENT, { ...widened, confirmation: await confirm({ policy: raised }) }),
    'wallet_signature_invalid',
    'signed for another change',
  );
  await refusedWith(
    own().setFrozen(AGENT, false, await confirm({ policy: raised })),
    'wallet_signature_invalid',
    'an unfreeze with a policy change’s signature',
  );
  t.true((await own().policy(AGENT)).frozen, 'still frozen');

  // tightening needs nothing; the owner's fresh signature of exactly the change goes through, once
  t.is(
    (await own().setPolicy(AGENT, { ...protectedPolicy, perPaymentCap: '0.002' })).perPaymentCap,
    '0.0020000',
  );
  const loosened = {
    ...protectedPolicy,
    allowedServices: [demoOrigin],
    perPaymentCap: '0.05',
    budgetPerDay: '0.05',
    approvalThreshold: null,
  };
  const signed = await confirm({ policy: loosened });
  t.like(await own().setPolicy(AGENT, { ...loosened, confirmation: signed }), {
    allowedServices: [demoOrigin],
    perPaymentCap: '0.0500000',
    frozen: true,
  });
  await refused(
    t,
    own().setPolicy(AGENT, { ...loosened, perPaymentCap: '0.06', confirmation: signed }),
    'replayed',
  );
  t.is((await own().policy(AGENT)).perPaymentCap, '0.0500000', 'the replay changed nothing');
  t.false((await own().setFrozen(AGENT, false, await confirm({ unfreeze: true }))).frozen);
  const paid = await own().pay({ agentId: AGENT, serviceUrl: x402.demo.quoteUrl, method: 'GET' });
  t.is(paid.paymentStatus, 'confirmed');
  t.is(await stack.usdcBalance(x402.demoPayTo), demoBefore + PRICE);

  // The copied token cannot mint tokens without end either: 25 asked at once (over the replicas), 20 live.
  const issued = await Promise.allSettled(Array.from({ length: 25 }, () => own().issueAgentToken(AGENT)));
  t.is(issued.filter((r) => r.status === 'fulfilled').length, 20);
  for (const r of issued.filter((r) => r.status === 'rejected'))
    t.like(r.reason, { status: 409, code: 'conflict' });
  t.is((await own().agentTokens(AGENT)).tokens.length, 20);
  const first = (await own().agentTokens(AGENT)).tokens[0]!;
  await own().revokeAgentToken(AGENT, first.tokenId);
  t.truthy((await own().issueAgentToken(AGENT)).token, 'one revoked, one more may be issued');
}

test.serial('LevelDB: a copied token alone cannot loosen a protected agent; the wallet can', async (t) => {
  const rig = await levelDbRig();
  try {
    await scenario(t, rig);
  } finally {
    await rig.close();
  }
});

test.serial('PostgreSQL replicas: the same, each step on the other replica', async (t) => {
  const rig = await postgresRig();
  try {
    await scenario(t, rig);
  } finally {
    await rig.close();
  }
});
