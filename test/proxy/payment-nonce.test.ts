// Payment nonces derived from the master key: deterministic per (agent, key, attempt), distinct across
// attempts, agents and keys, opening back to their agent and attempt under the master key only, and random
// looking on chain (no bit of the agent's tag shows through).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { MAX_NONCE_ATTEMPT, PaymentNonces, paymentNonce } from '../../src/proxy/payments/payment-nonce.ts';

const master = new Uint8Array(randomBytes(32));
const nonces = new PaymentNonces(master);
const agent = 'GABC/agent-1';

test('the same agent, key and attempt give the same i64 nonce; attempts, keys, agents and master keys differ', (t) => {
  const n0 = paymentNonce(master, agent, 'k-1');
  t.is(n0, nonces.derive(agent, 'k-1', 0), 'attempt 0 by default');
  t.is(n0, BigInt.asIntN(64, n0), 'a signed 64-bit integer');
  const all = new Set<bigint>();
  for (let attempt = 0; attempt < 16; attempt++) all.add(nonces.derive(agent, 'k-1', attempt));
  all.add(nonces.derive(agent, 'k-2'));
  all.add(nonces.derive('GABC/agent-2', 'k-1'));
  all.add(paymentNonce(new Uint8Array(randomBytes(32)), agent, 'k-1'));
  t.is(all.size, 19);
  t.not(nonces.derive(agent, undefined), nonces.derive(agent, undefined), 'no key: random');
  t.throws(() => nonces.derive(agent, 'k', MAX_NONCE_ATTEMPT + 1), { instanceOf: RangeError });
  t.throws(() => nonces.derive(agent, 'k', -1), { instanceOf: RangeError });
});

test('a nonce opens to its agent tag and attempt; attemptOf recognises only its own agent and key', (t) => {
  for (const attempt of [0, 1, 7, MAX_NONCE_ATTEMPT]) {
    const nonce = nonces.derive(agent, 'key-x', attempt);
    const opened = nonces.open(nonce);
    t.is(opened.agentTag, nonces.agentTag(agent));
    t.is(opened.attempt, attempt);
    t.is(nonces.attemptOf(nonce, agent, 'key-x'), attempt);
    t.is(nonces.attemptOf(nonce, agent, 'key-y'), undefined);
    t.is(nonces.attemptOf(nonce, 'GABC/other', 'key-x'), undefined);
    t.is(new PaymentNonces(new Uint8Array(randomBytes(32))).attemptOf(nonce, agent, 'key-x'), undefined);
  }
  t.is(
    nonces.open(nonces.derive(agent, undefined)).agentTag,
    nonces.agentTag(agent),
    'unkeyed: agent still named',
  );
});

test('on chain the nonces of one agent share no fixed bits (each bit ~ half set)', (t) => {
  const n = 2000;
  const ones = new Array<number>(64).fill(0);
  for (let i = 0; i < n; i++) {
    const u = BigInt.asUintN(64, nonces.derive(agent, `key-${i}`));
    for (let b = 0; b < 64; b++) if ((u >> BigInt(b)) & 1n) ones[b]!++;
  }
  // a fixed agent tag in the clear would show 32 bits always 0 or always 1
  for (const count of ones) t.true(count > n * 0.4 && count < n * 0.6, `bit frequency ${count / n}`);
});
