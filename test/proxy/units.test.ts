import test from 'ava';
import { randomBytes } from 'node:crypto';
import { Keypair } from '#stellar-sdk';
import { OPERATOR_OWNER } from '../../src/api/agent-id.ts';
import { RateLimiter } from '../../src/proxy/http/rate-limit.ts';
import { RecoveryKey, REGISTRATION_BYTES } from '../../src/proxy/services/agent-registration.ts';
import { KeyedMutex } from '../../src/proxy/util/keyed-mutex.ts';

test('keyed mutex: sections on one key never overlap and run in arrival order; other keys run freely', async (t) => {
  const mutex = new KeyedMutex();
  const log: string[] = [];
  let inside = 0;
  let maxInside = 0;
  const section = (name: string, ms: number) => async () => {
    inside++;
    maxInside = Math.max(maxInside, inside);
    log.push(`start ${name}`);
    await new Promise((r) => setTimeout(r, ms));
    log.push(`end ${name}`);
    inside--;
    return name;
  };
  const results = await Promise.all([
    mutex.run('a', section('a1', 20)),
    mutex.run('a', section('a2', 1)),
    mutex.run('a', section('a3', 5)),
  ]);
  t.deepEqual(results, ['a1', 'a2', 'a3']);
  t.is(maxInside, 1);
  t.deepEqual(log, ['start a1', 'end a1', 'start a2', 'end a2', 'start a3', 'end a3']);
  // A failing section releases the key.
  await t.throwsAsync(
    mutex.run('a', async () => Promise.reject(new Error('boom'))),
    { message: 'boom' },
  );
  t.is(await mutex.run('a', async () => 'after'), 'after');
  // Different keys overlap.
  inside = 0;
  maxInside = 0;
  await Promise.all([mutex.run('x', section('x', 10)), mutex.run('y', section('y', 10))]);
  t.is(maxInside, 2);
});

test('agent registrations: fixed length, open only with the same master key, operator and wallet owners', (t) => {
  const master = randomBytes(32);
  const key = new RecoveryKey(master);
  const wallet = Keypair.random().publicKey();
  const long = 'x'.repeat(64);
  for (const registration of [
    { agentId: 'a', owner: wallet },
    { agentId: long, owner: OPERATOR_OWNER },
    { agentId: wallet, owner: wallet },
  ]) {
    const sealed = key.seal(registration);
    t.is(sealed.length, REGISTRATION_BYTES);
    t.deepEqual(key.open(sealed), registration);
    t.deepEqual(new RecoveryKey(master).open(sealed), registration, 'derived again from the master key');
    t.is(new RecoveryKey(randomBytes(32)).open(sealed), undefined);
    const flipped = new Uint8Array(sealed);
    flipped[80] ^= 1;
    t.is(key.open(flipped), undefined);
  }
  t.is(key.open(new Uint8Array(120)), undefined, 'a note ciphertext is not a registration');
  t.not(
    Buffer.from(key.seal({ agentId: 'a', owner: wallet })).toString('hex'),
    Buffer.from(key.seal({ agentId: 'a', owner: wallet })).toString('hex'),
  );
});

test('rate limiter: bursts up to the bucket, refills over time, keys are independent, 0 disables', (t) => {
  let now = 0;
  const limiter = new RateLimiter({ perSecond: 2, burst: 3 }, () => now);
  t.deepEqual(
    [1, 2, 3, 4].map(() => limiter.take('ip').allowed),
    [true, true, true, false],
  );
  t.is(limiter.take('ip').retryAfterSeconds, 1);
  t.true(limiter.take('other').allowed);
  now += 500;
  t.true(limiter.take('ip').allowed, 'one token refilled after 0.5 s at 2/s');
  t.false(limiter.take('ip').allowed);
  now += 10_000;
  t.deepEqual(
    [1, 2, 3, 4].map(() => limiter.take('ip').allowed),
    [true, true, true, false],
    'refill caps at the burst',
  );
  const off = new RateLimiter({ perSecond: 0, burst: 1 }, () => now);
  t.true(Array.from({ length: 100 }, () => off.take('ip').allowed).every(Boolean));
});
