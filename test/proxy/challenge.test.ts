// Stateless login challenges against a real proxy and its LevelDB store: issuing challenges (and
// refusing forged ones) writes nothing; only a consumed nonce is stored, it survives a restart (a replay
// is still refused), and a challenge is recognised by the MAC alone, so a restarted proxy with the same
// master key accepts it and one with another key does not. Requests go through PoolApi, as the public's.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { EncryptedStore } from '../../src/proxy/store/encrypted-store.ts';
import { PoolApi, refused } from './helpers/api.ts';
import { startTestProxy } from './helpers/proxy.ts';

function storeFiles(dir: string): Record<string, number> {
  return Object.fromEntries(
    readdirSync(dir)
      .filter((name) => name !== 'LOG' && name !== 'LOG.old')
      .map((name) => [name, statSync(join(dir, name)).size]),
  );
}

async function countRecords(dir: string, masterKey: Uint8Array): Promise<Record<string, number>> {
  const store = await EncryptedStore.open(dir, masterKey);
  try {
    const counts: Record<string, number> = {};
    for (const [key] of await store.entries<unknown>('')) {
      const namespace = key.split('/')[0];
      counts[namespace] = (counts[namespace] ?? 0) + 1;
    }
    return counts;
  } finally {
    await store.close();
  }
}

const sign = (wallet: Keypair, message: string) =>
  Buffer.from(wallet.signMessage(message)).toString('base64');

/** The proxy at `url` for the public (no credentials), which logs in. */
const at = (url: string) => new PoolApi({ baseUrl: url });

/** The verify request of `wallet` for `challenge`, signed by the wallet. */
const signed = (wallet: Keypair, challenge: string) => ({
  publicKey: wallet.publicKey(),
  challenge,
  signature: sign(wallet, challenge),
});

test('hundreds of challenges and forged verifies leave the store untouched; one login stores one nonce', async (t) => {
  const dataDir = mkdtempSync(join(tmpdir(), 'pp-challenge-'));
  const masterKey = randomBytes(32).toString('hex');
  const env = {
    POOL_PROXY_DATA_DIR: dataDir,
    POOL_PROXY_MASTER_KEY: masterKey,
    POOL_PROXY_RATE_LIMIT_IP_PER_SECOND: '0',
  };
  const proxy = await startTestProxy(env);
  const before = storeFiles(proxy.config.storeDir);
  const issued: { wallet: Keypair; challenge: string }[] = [];
  for (let i = 0; i < 300; i++) {
    const wallet = Keypair.random();
    issued.push({ wallet, challenge: (await at(proxy.url).challenge(wallet.publicKey())).challenge });
  }
  // Forged challenges (nonce or expiry changed, then signed by the wallet) are refused and store nothing.
  for (const { wallet, challenge } of issued.slice(0, 50)) {
    const forged = challenge.replace(/Expiration Time: .*/, 'Expiration Time: 2099-01-01T00:00:00.000Z');
    const res = await refused(t, at(proxy.url).verify(signed(wallet, forged)));
    t.is(res.status, 401);
    t.regex(res.detail, /altered or the challenge was not issued by this service/);
  }
  t.deepEqual(storeFiles(proxy.config.storeDir), before, 'no byte written to the store');

  const { wallet, challenge } = issued[299];
  const body = signed(wallet, challenge);
  t.truthy((await at(proxy.url).verify(body)).token);
  await proxy.close();
  const counts = await countRecords(proxy.config.storeDir, Buffer.from(masterKey, 'hex'));
  t.is(counts['login-nonce'], 1, 'exactly the consumed nonce');
  t.false('challenge' in counts, 'no issued challenge is stored');

  // After a restart on the same store the consumed nonce still refuses the replay, and a challenge issued
  // before the restart (never used) is accepted: the MAC alone identifies it.
  const again = await startTestProxy(env);
  t.teardown(() => again.close());
  const replay = await refused(t, at(again.url).verify(body));
  t.is(replay.status, 401);
  t.regex(replay.detail, /already used/);
  const earlier = issued[100];
  t.truthy((await at(again.url).verify(signed(earlier.wallet, earlier.challenge))).token);
});

test('a proxy with another master key does not accept this proxy’s challenges', async (t) => {
  const first = await startTestProxy();
  const other = await startTestProxy();
  t.teardown(async () => {
    await first.close();
    await other.close();
  });
  const wallet = Keypair.random();
  const body = signed(wallet, (await at(first.url).challenge(wallet.publicKey())).challenge);
  const res = await refused(t, at(other.url).verify(body));
  t.is(res.status, 401);
  t.is(res.code, 'unauthorized');
  // Both proxies share the public URL of the test helper, so only the MAC tells them apart.
  t.truthy((await at(first.url).verify(body)).token);
});

test('challenge text that is not exactly what the service writes is refused', async (t) => {
  const proxy = await startTestProxy();
  t.teardown(() => proxy.close());
  const wallet = Keypair.random();
  const { challenge } = await at(proxy.url).challenge(wallet.publicKey());
  t.regex(challenge, /\nNonce: [0-9a-f]{64}\n/);
  for (const variant of [
    `${challenge}\n`,
    challenge.replace('\n', '\r\n'),
    challenge.replace('Version: 1', 'Version:  1'),
    challenge.replace(/Issued At: (.*)Z/, 'Issued At: $1+00:00'),
    challenge.replace('Chain ID: stellar:local', 'Chain ID: stellar:pubnet'),
  ]) {
    const res = await refused(t, at(proxy.url).verify(signed(wallet, variant)), variant);
    t.is(res.status, 401, variant);
    t.is(res.code, 'unauthorized');
  }
  // None of those consumed it.
  t.truthy((await at(proxy.url).verify(signed(wallet, challenge))).token);
});
