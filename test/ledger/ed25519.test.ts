// Ed25519 through node:crypto: the same bytes as the SDK's signer, and a verification cache that never turns
// a bad signature good (it keeps successes only, by key, signature and message).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { Keypair } from '#stellar-sdk';
import { signEd25519, verifyEd25519 } from '../../src/ledger/ed25519.ts';

test('signs as the SDK does, and verifies', (t) => {
  const kp = Keypair.random();
  const message = randomBytes(32);
  const signature = signEd25519(kp, message);
  t.deepEqual(Buffer.from(kp.sign(message)), signature);
  t.true(verifyEd25519(kp.rawPublicKey(), message, signature));
});

test('a signature verified once stays bound to its key and message', (t) => {
  const kp = Keypair.random();
  const other = Keypair.random();
  const message = randomBytes(32);
  const signature = signEd25519(kp, message);
  t.true(verifyEd25519(kp.rawPublicKey(), message, signature));
  t.true(verifyEd25519(kp.rawPublicKey(), message, signature), 'again, from the cache');
  const changed = Buffer.from(message);
  changed[0] ^= 1;
  t.false(verifyEd25519(kp.rawPublicKey(), changed, signature), 'another message');
  t.false(verifyEd25519(other.rawPublicKey(), message, signature), 'another key');
  const forged = Buffer.from(signature);
  forged[63] ^= 0x10;
  t.false(verifyEd25519(kp.rawPublicKey(), message, forged), 'a changed signature');
  t.false(verifyEd25519(kp.rawPublicKey().subarray(1), message, signature), 'a short key');
  t.false(verifyEd25519(kp.rawPublicKey(), message, signature.subarray(1)), 'a short signature');
});
