import test from 'ava';
import {
  BASE_FIELD_MODULUS,
  decryptNote,
  deriveAgentKeys,
  ENCRYPTED_NOTE_BYTES,
  encryptNote,
  FIELD_MODULUS,
  notePublicKey,
  proofFromBytes,
  proofToBytes,
} from '../../src/crypto/index.ts';

const proof = {
  pi_a: ['1', '2', '1'],
  pi_b: [
    ['10', '11'],
    ['12', '13'],
    ['1', '0'],
  ],
  pi_c: [(BASE_FIELD_MODULUS - 1n).toString(), '4', '1'],
  protocol: 'groth16',
  curve: 'bn128',
};

test('proofToBytes lays out A ‖ B (imaginary limb first) ‖ C big-endian', (t) => {
  const bytes = proofToBytes(proof);
  t.is(bytes.length, 256);
  const limb = (i: number) => BigInt(`0x${Buffer.from(bytes.subarray(i * 32, i * 32 + 32)).toString('hex')}`);
  t.deepEqual([0, 1, 2, 3, 4, 5, 6, 7].map(limb), [1n, 2n, 11n, 10n, 13n, 12n, BASE_FIELD_MODULUS - 1n, 4n]);
  t.deepEqual(proofFromBytes(bytes), proof);
});

test('proof conversion rejects malformed proofs and byte strings', (t) => {
  t.throws(() => proofFromBytes(new Uint8Array(255)), { message: /exactly 256 bytes/ });
  t.throws(() => proofFromBytes('00' as unknown as Uint8Array), { message: /256 bytes/ });
  t.throws(() => proofFromBytes(new Uint8Array(256).fill(0xff)), { message: /canonical/ });
  t.throws(() => proofToBytes({ ...proof, pi_a: ['x', '1'] }), { message: /decimal string/ });
  t.throws(() => proofToBytes({ ...proof, pi_c: [BASE_FIELD_MODULUS.toString(), '1'] }), {
    message: /canonical/,
  });
  t.throws(() => proofToBytes({ ...proof, pi_b: [['1']] }), { message: /pi_b/ });
  t.throws(() => proofToBytes({} as never), { message: /pi_a, pi_b and pi_c/ });
});

test('notes encrypt to 120 bytes that only the recipient can open', (t) => {
  const alice = deriveAgentKeys(new Uint8Array(32).fill(1), 'alice');
  const bob = deriveAgentKeys(new Uint8Array(32).fill(1), 'bob');
  const note = { amount: (1n << 128n) - 1n, blinding: FIELD_MODULUS - 1n };
  const sealed = encryptNote(note, alice.encryptionPublicKey);
  t.is(sealed.length, ENCRYPTED_NOTE_BYTES);
  t.deepEqual(decryptNote(sealed, alice.encryptionSecretKey), note);
  t.is(decryptNote(sealed, bob.encryptionSecretKey), null);
  const tampered = Uint8Array.from(sealed);
  tampered[100] ^= 1;
  t.is(decryptNote(tampered, alice.encryptionSecretKey), null);
  t.notDeepEqual(encryptNote(note, alice.encryptionPublicKey), sealed, 'ephemeral key and nonce are fresh');
});

test('note encryption rejects bad input', (t) => {
  const k = deriveAgentKeys(new Uint8Array(32), 'a');
  t.throws(() => encryptNote({ amount: 1n << 128n, blinding: 1n }, k.encryptionPublicKey), {
    message: /u128/,
  });
  t.throws(() => encryptNote({ amount: -1n, blinding: 1n }, k.encryptionPublicKey), { message: /negative/ });
  t.throws(() => encryptNote({ amount: 1n, blinding: FIELD_MODULUS }, k.encryptionPublicKey), {
    message: /blinding/,
  });
  t.throws(() => encryptNote({ amount: 1n, blinding: 1n }, new Uint8Array(31)), { message: /32 bytes/ });
  t.throws(() => decryptNote(new Uint8Array(119), k.encryptionSecretKey), { message: /exactly 120 bytes/ });
  t.throws(() => decryptNote(new Uint8Array(120), new Uint8Array(5)), { message: /32 bytes/ });
});

test('agent keys are deterministic per master key and agent, and distinct otherwise', (t) => {
  const master = new Uint8Array(32).fill(42);
  const a1 = deriveAgentKeys(master, 'agent-1');
  const a1again = deriveAgentKeys(Uint8Array.from(master), 'agent-1');
  t.deepEqual(a1, a1again);
  t.is(a1.notePublicKey, notePublicKey(a1.noteSecretKey));
  t.true(a1.noteSecretKey > 0n && a1.noteSecretKey < FIELD_MODULUS);
  const a2 = deriveAgentKeys(master, 'agent-2');
  t.not(a2.noteSecretKey, a1.noteSecretKey);
  t.notDeepEqual(a2.encryptionPublicKey, a1.encryptionPublicKey);
  const other = deriveAgentKeys(new Uint8Array(32).fill(43), 'agent-1');
  t.not(other.noteSecretKey, a1.noteSecretKey);
  t.truthy(deriveAgentKeys(master, 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7'));
});

test('agents of different owners that share a name get unrelated keys', (t) => {
  const master = new Uint8Array(32).fill(7);
  const wallet = 'GAAZI4TCR3TY5OJHCTJC2A4QSY6CJWJH5IAJTGKIN2ER7LBNVKOCCWN7';
  const ofWallet = deriveAgentKeys(master, 'agent-1', wallet);
  const ofOperator = deriveAgentKeys(master, 'agent-1', 'operator');
  t.not(ofWallet.noteSecretKey, ofOperator.noteSecretKey);
  t.not(ofWallet.noteSecretKey, deriveAgentKeys(master, 'agent-1').noteSecretKey);
  t.deepEqual(deriveAgentKeys(master, 'agent-1', wallet), ofWallet);
  t.throws(() => deriveAgentKeys(master, 'agent-1', 'bad owner'), { message: /agentId/ });
});

test('agent key derivation rejects bad master keys and agent ids', (t) => {
  t.throws(() => deriveAgentKeys(new Uint8Array(31), 'a'), { message: /32 bytes/ });
  t.throws(() => deriveAgentKeys('00' as unknown as Uint8Array, 'a'), { message: /32 bytes/ });
  for (const bad of ['', 'a'.repeat(65), 'has space', 'émoji', 'semi;colon', 5]) {
    t.throws(() => deriveAgentKeys(new Uint8Array(32), bad as string), { message: /agentId/ });
  }
});
