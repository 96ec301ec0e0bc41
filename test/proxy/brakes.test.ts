// An agent cannot hold its owner off the brakes: on the real stack (sandbox ledger, prover daemon), once on
// LevelDB and once on two replicas sharing a PostgreSQL store (whose rate buckets the replicas share). An
// agent floods the proxy with its own token from the owner's own address until both its token's bucket and
// the address's are empty; the agent is refused, the owner's wallet bucket is untouched, and the owner's
// freeze, unfreeze and revocation of that agent's token still answer 200 (each on the replica the agent did
// not flood). A made-up token on a brake still counts against its address, and the revoked token is refused
// everywhere; the agent's balance never moved. A connected proxy's /health answers `healthy`.
import { Keypair } from '#stellar-sdk';
import test, { type ExecutionContext } from 'ava';
import type { ProxyHandle } from '../../src/proxy/server.ts';
import { type PostgresServer, startPostgres } from '../helpers/postgres.ts';
import { type PoolApi, refused, walletApi } from './helpers/api.ts';
import { rawRequest } from './helpers/http.ts';
import { type Stack, startStack } from './helpers/stack.ts';
import { walletDeposit } from './helpers/wallet-deposit.ts';

const AGENT = 'braked';
/** Per address 12 requests, per token 6; then one every 100 s. */
const LIMITS = {
  POOL_PROXY_RATE_LIMIT_IP_PER_SECOND: '0.01',
  POOL_PROXY_RATE_LIMIT_IP_BURST: '12',
  POOL_PROXY_RATE_LIMIT_TOKEN_PER_SECOND: '0.01',
  POOL_PROXY_RATE_LIMIT_TOKEN_BURST: '6',
};

interface Rig {
  stack: Stack;
  /** the proxies (with LIMITS) */
  proxies: ProxyHandle[];
  close(): Promise<void>;
}

/** The stack; once the wallet's agent is set up, its proxy is replaced by `count` with the rate limits. */
async function rig(databaseUrl: string | undefined, count: number, setup: (s: Stack) => Promise<void>) {
  const stack = await startStack(databaseUrl === undefined ? {} : { POOL_PROXY_DATABASE_URL: databaseUrl });
  await setup(stack);
  await stack.proxy.close();
  const proxies: ProxyHandle[] = [];
  for (let i = 0; i < count; i++) proxies.push((await stack.startProxy(LIMITS)).proxy);
  return {
    stack,
    proxies,
    async close() {
      await Promise.all(proxies.map((p) => p.close()));
      await stack.daemon.stop({ force: true });
      await stack.sandbox.close();
    },
  } satisfies Rig;
}

async function scenario(t: ExecutionContext, databaseUrl: string | undefined, replicas: number) {
  const wallet = Keypair.random();
  let token = '';
  let agentToken = '';
  let tokenId = '';
  const r = await rig(databaseUrl, replicas, async (stack) => {
    await stack.fund(wallet.publicKey(), 5);
    token = await stack.login(wallet);
    const own = walletApi(stack.proxy.url, token);
    await walletDeposit({
      api: own,
      wallet,
      networkPassphrase: stack.config.ledger.networkPassphrase,
      agentId: AGENT,
      amount: '1',
    });
    ({ token: agentToken, tokenId } = await own.issueAgentToken(AGENT));
  });
  try {
    const flooded = r.proxies[0]!.url;
    const other = r.proxies[r.proxies.length - 1]!.url;
    const owner = (url: string): PoolApi => walletApi(url, token);
    const agent = walletApi(flooded, agentToken);
    // connected: ready for traffic (another address, so the limits below start full)
    const ready = await rawRequest(`${flooded}/health`, { localAddress: '127.0.0.4' });
    t.is(ready.status, 200, ready.text);
    t.is(JSON.parse(ready.text).status, 'healthy');
    // The agent floods its own balance, from the address the owner uses too, until the address is refused.
    const details: string[] = [];
    for (let i = 0; i < 20 && !details.some((d) => /from this address/.test(d)); i++) {
      const res = await agent.balance(AGENT).then(
        () => 'ok',
        (error: { detail?: string }) => String(error.detail),
      );
      details.push(res);
    }
    t.is(details.filter((d) => d === 'ok').length, 6, details.join(' | '));
    t.true(
      details.some((d) => /too many requests for this agent token/.test(d)),
      details.join(' | '),
    );
    t.regex(details.at(-1)!, /too many requests from this address/);
    // it floods the brakes too: refused for its token, nothing counted in the owner's buckets
    for (let i = 0; i < 5; i++) await refused(t, agent.setFrozen(AGENT, true));
    // a made-up token on a brake counts against its address, which is empty
    const forged = await rawRequest(`${flooded}/api/agents/${AGENT}/freeze`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token.slice(0, -4)}AAAA` },
    });
    t.is(forged.status, 429, forged.text);

    // The owner's brakes answer at once, on the flooded replica and the other.
    t.true((await owner(flooded).setFrozen(AGENT, true)).frozen);
    t.false((await owner(other).setFrozen(AGENT, false)).frozen);
    t.true((await owner(other).setFrozen(AGENT, true)).frozen);
    t.deepEqual(await owner(flooded).revokeAgentToken(AGENT, tokenId), { tokenId, revoked: true });
    for (const url of r.proxies.map((p) => p.url)) {
      const revoked = await rawRequest(`${url}/api/balance/${AGENT}`, {
        headers: { authorization: `Bearer ${agentToken}` },
        localAddress: '127.0.0.3',
      });
      t.is(revoked.status, 401, `${url}: ${revoked.text}`);
    }
    // The owner's own reads use the wallet's bucket, which the agent never touched (from another address,
    // since this one is spent).
    const read = await rawRequest(`${other}/api/balance/${AGENT}`, {
      headers: { authorization: `Bearer ${token}` },
      localAddress: '127.0.0.2',
    });
    t.is(read.status, 200, read.text);
    t.is(JSON.parse(read.text).balance, '1.0000000', 'nothing moved');
  } finally {
    await r.close();
  }
}

test.serial('LevelDB: the owner’s freeze, unfreeze and revoke answer while its agent floods', async (t) => {
  await scenario(t, undefined, 1);
});

test.serial('PostgreSQL replicas: the same, the buckets shared by both replicas', async (t) => {
  const pg: PostgresServer = await startPostgres();
  try {
    await scenario(t, await pg.database(), 2);
  } finally {
    await pg.stop();
  }
});
