// Encoding of the pool's call arguments: the Proof contracttype map (sorted Symbol keys, byte layout) and
// its strict decoding.

import { Keypair, scValToNative, xdr } from '#stellar-sdk';
import test from 'ava';
import { extDataHash, FIELD_MODULUS } from '../../src/crypto/index.ts';
import {
  poolCallArgs,
  poolProofFromScVal,
  poolProofFromSignals,
  poolProofToScVal,
} from '../../src/ledger/pool-args.ts';

const bytes = Uint8Array.from({ length: 256 }, (_, i) => i);
const signals = ['1', '2', '3', '4', '5', '6', '7', '8', '8', '9', '9'];

test('Proof is a map with SPP field names in sorted order and round-trips', (t) => {
  const proof = poolProofFromSignals(bytes, signals);
  const v = poolProofToScVal(proof);
  const keys = (v.value as xdr.ScMapEntry[]).map((e) => String(e.key.value));
  t.deepEqual(keys, [
    'asp_membership_root',
    'asp_non_membership_root',
    'ext_data_hash',
    'input_nullifiers',
    'output_commitment0',
    'output_commitment1',
    'proof',
    'public_amount',
    'root',
    'tree',
  ]);
  const native = scValToNative(v) as Record<string, unknown>;
  t.is(native.root, 1n);
  t.is(native.tree, 0, 'a proof names tree 0 unless told');
  t.is(scValToNative(poolProofToScVal(poolProofFromSignals(bytes, signals, 7))).tree, 7);
  t.throws(() => poolProofFromSignals(bytes, signals, -1), { message: /tree must be a u32/ });
  t.throws(() => poolProofFromSignals(bytes, signals, 2 ** 32), { message: /tree must be a u32/ });
  t.is(native.public_amount, 2n);
  t.deepEqual(native.input_nullifiers, [4n, 5n]);
  t.is(native.asp_membership_root, 8n);
  t.is(native.asp_non_membership_root, 9n);
  const ext = native.ext_data_hash as Uint8Array;
  t.is(ext.length, 32);
  t.is(ext[31], 3);
  const g = native.proof as { a: Uint8Array; b: Uint8Array; c: Uint8Array };
  t.deepEqual([g.a.length, g.b.length, g.c.length], [64, 128, 64]);
  t.is(g.b[0], 64);
  // XDR round trip
  const decoded = poolProofFromScVal(xdr.ScVal.fromXdr(v.toXdr('base64'), 'base64'));
  t.deepEqual(decoded, proof);
});

test('call arguments are (proof, ext_data, sender) with the ExtData hash the proof commits to', (t) => {
  const sender = Keypair.random().publicKey();
  const extData = {
    recipient: sender,
    extAmount: -5n,
    encryptedOutput0: new Uint8Array(120),
    encryptedOutput1: new Uint8Array(120),
  };
  const proof = poolProofFromSignals(bytes, [
    '1',
    String(FIELD_MODULUS - 5n),
    String(extDataHash(extData)),
    '4',
    '5',
    '6',
    '7',
    '8',
    '8',
    '9',
    '9',
  ]);
  const args = poolCallArgs(proof, extData, sender);
  t.is(args.length, 3);
  t.is(args[2]?.type, 'scvAddress');
  t.is(scValToNative(args[2] as xdr.ScVal), sender);
  t.is(args[1]?.type, 'scvMap');
  t.is((scValToNative(args[1] as xdr.ScVal) as { ext_amount: bigint }).ext_amount, -5n);
});

test('bad proofs and signals are refused with clear errors', (t) => {
  t.throws(() => poolProofFromSignals(new Uint8Array(255), signals), { message: /256 bytes/ });
  t.throws(() => poolProofFromSignals(bytes, signals.slice(1)), { message: /11 public signals/ });
  t.throws(() => poolProofFromSignals(bytes, [...signals.slice(0, 10), '10']), { message: /non-membership/ });
  t.throws(() => poolProofFromSignals(bytes, ['1', '2', '3', '4', '5', '6', '7', '8', '7', '9', '9']), {
    message: /membership/,
  });
  t.throws(() => poolProofFromSignals(bytes, [String(FIELD_MODULUS), ...signals.slice(1)]), {
    message: /field element/,
  });
  t.throws(() => poolProofFromSignals(bytes, ['x', ...signals.slice(1)]), { message: /not an integer/ });
  t.throws(() => poolProofFromSignals(bytes, ['-1', ...signals.slice(1)]), { message: /field element/ });
  const good = poolProofToScVal(poolProofFromSignals(bytes, signals));
  const entries = good.value as xdr.ScMapEntry[];
  t.throws(() => poolProofFromScVal(xdr.ScVal.scvMap([...entries].reverse())), { message: /sorted order/ });
  t.throws(() => poolProofFromScVal(xdr.ScVal.scvMap(entries.slice(1))), { message: /exactly the fields/ });
  t.throws(() => poolProofFromScVal(xdr.ScVal.scvU32(1)), { message: /must be a map/ });
});
