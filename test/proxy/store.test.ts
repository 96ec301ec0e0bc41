import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { Level } from 'level';
import { EncryptedStore, StoreTamperError } from '../../src/proxy/store/encrypted-store.ts';
import { loadMasterKey, MasterKeyError } from '../../src/proxy/store/master-key.ts';

function tempDir(): string {
  return mkdtempSync(join(tmpdir(), 'pp-store-'));
}

test('values round-trip with bigints and bytes; keys are stable HMACs', async (t) => {
  const dir = tempDir();
  const master = randomBytes(32);
  const store = await EncryptedStore.open(dir, master);
  const key = store.key('note', 'agent-1', '0xabc');
  t.is(key, store.key('note', 'agent-1', '0xabc'));
  t.not(key, store.key('note', 'agent-2', '0xabc'));
  t.true(key.startsWith(store.prefix('note', 'agent-1')));
  const value = {
    amount: 123n,
    blinding: 2n ** 250n,
    bytes: new Uint8Array([1, 2, 3]),
    buf: Buffer.from([9]),
    nested: [1n, 'x'],
  };
  await store.put(key, value);
  const read = await store.get<typeof value>(key);
  t.is(read!.amount, 123n);
  t.is(read!.blinding, 2n ** 250n);
  t.deepEqual(read!.bytes, new Uint8Array([1, 2, 3]));
  t.deepEqual(read!.buf as unknown as Uint8Array, new Uint8Array([9]));
  t.deepEqual(read!.nested, [1n, 'x']);
  t.is(await store.get(store.key('note', 'missing')), undefined);
  await store.close();
});

test('batch is atomic and prefix listing returns only that prefix', async (t) => {
  const store = await EncryptedStore.open(tempDir(), randomBytes(32));
  await store.batch([
    { type: 'put', key: store.key('note', 'a', '1'), value: 1n },
    { type: 'put', key: store.key('note', 'a', '2'), value: 2n },
    { type: 'put', key: store.key('note', 'b', '1'), value: 3n },
  ]);
  const a = await store.entries<bigint>(store.prefix('note', 'a'));
  t.deepEqual(a.map(([, v]) => v).sort(), [1n, 2n]);
  // A batch with a value that cannot be encoded applies nothing, not even the operations before it.
  const circular: Record<string, unknown> = {};
  circular.self = circular;
  await t.throwsAsync(
    store.batch([
      { type: 'del', key: store.key('note', 'a', '1') },
      { type: 'put', key: store.key('note', 'a', '3'), value: 3n },
      { type: 'put', key: store.key('note', 'a', '4'), value: circular },
    ]),
    { message: /circular/i },
  );
  t.is(await store.get(store.key('note', 'a', '1')), 1n);
  t.is(await store.get(store.key('note', 'a', '3')), undefined);
  await store.close();
});

test('a record moved to another key, a flipped bit or a wrong master key fails loudly', async (t) => {
  const dir = tempDir();
  const master = randomBytes(32);
  const store = await EncryptedStore.open(dir, master);
  const k1 = store.key('balance', 'agent-1');
  const k2 = store.key('balance', 'agent-2');
  await store.put(k1, 500n);
  await store.put(k2, 7n);
  await store.close();

  const raw = new Level<string, Uint8Array>(dir, { keyEncoding: 'utf8', valueEncoding: 'view' });
  await raw.open();
  const sealed = (await raw.get(k1))!;
  await raw.put(k2, sealed); // swap ciphertext onto another key
  const flipped = new Uint8Array(sealed);
  flipped[20] ^= 1;
  await raw.put(k1, flipped);
  await raw.close();

  const reopened = await EncryptedStore.open(dir, master);
  await t.throwsAsync(reopened.get(k1), { instanceOf: StoreTamperError, message: /failed authentication/ });
  await t.throwsAsync(reopened.get(k2), { instanceOf: StoreTamperError });
  await reopened.close();

  await t.throwsAsync(EncryptedStore.open(dir, randomBytes(32)), {
    instanceOf: StoreTamperError,
    message: /master key is wrong/,
  });
});

test('raw LevelDB files hold no agent id, wallet address or amount in plaintext', async (t) => {
  const dir = tempDir();
  const store = await EncryptedStore.open(dir, randomBytes(32));
  const agentId = 'agent-plaintext-probe-42';
  const wallet = Keypair.random().publicKey();
  const amount = 1234567891n;
  for (let i = 0; i < 50; i++) {
    await store.put(store.key('agent', `${agentId}-${i}`), { agentId: `${agentId}-${i}`, owner: wallet });
    await store.put(store.key('balance', `${agentId}-${i}`), { amount, text: '123.4567891' });
  }
  await store.put(store.key('wallet', wallet), { wallet, agents: [agentId] });
  await store.close();
  const files = readdirSync(dir)
    .map((f) => join(dir, f))
    .filter((f) => statSync(f).isFile());
  const blob = Buffer.concat(files.map((f) => readFileSync(f)));
  t.true(blob.length > 1000, 'data was written');
  for (const needle of [agentId, wallet, amount.toString(), '123.4567891', wallet.slice(10, 30)]) {
    t.is(blob.indexOf(Buffer.from(needle)), -1, `found ${needle}`);
  }
});

test('master key: created once with mode 0600, reused, or taken from hex', (t) => {
  const dir = tempDir();
  const file = join(dir, 'sub', 'master.key');
  const first = loadMasterKey('', file);
  t.is(first.length, 32);
  t.is(statSync(file).mode & 0o777, 0o600);
  t.deepEqual(loadMasterKey('', file), first);
  t.deepEqual(loadMasterKey('11'.repeat(32), file), new Uint8Array(32).fill(0x11));
  const loose = join(dir, 'loose.key');
  writeFileSync(loose, '22'.repeat(32), { mode: 0o644 });
  t.throws(() => loadMasterKey('', loose), { instanceOf: MasterKeyError, message: /readable by others/ });
  const short = join(dir, 'short.key');
  writeFileSync(short, 'abcd', { mode: 0o600 });
  t.throws(() => loadMasterKey('', short), { instanceOf: MasterKeyError, message: /64 hex/ });
});
