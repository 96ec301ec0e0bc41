import { keccak_256 } from '@noble/hashes/sha3.js';
import { Keypair, StrKey, xdr } from '#stellar-sdk';
import test from 'ava';
import {
  commitment,
  extDataHash,
  extDataToScVal,
  FIELD_MODULUS,
  hash,
  MAX_NOTE_AMOUNT,
  membershipLeaf,
  notePublicKey,
  noteSignature,
  nullifier,
  publicAmount,
} from '../../src/crypto/index.ts';

test('note key, commitment, signature and nullifier follow SPP domains', (t) => {
  const sk = 123456789n;
  const pk = notePublicKey(sk);
  t.is(pk, hash([sk, 0n], 3n));
  const c = commitment(50n, pk, 77n);
  t.is(c, hash([50n, pk, 77n], 1n));
  const sig = noteSignature(sk, c, 5n);
  t.is(sig, hash([sk, c, 5n], 4n));
  t.is(nullifier(c, 5n, sk), hash([c, 5n, sig], 2n));
  t.not(nullifier(c, 6n, sk), nullifier(c, 5n, sk), 'the nullifier is bound to the leaf index');
  t.is(membershipLeaf(pk, 9n), hash([pk, 9n], 1n));
});

test('note functions reject bad values', (t) => {
  t.throws(() => notePublicKey(FIELD_MODULUS), { message: /secret key/ });
  t.throws(() => commitment(-1n, 1n, 1n), { message: /negative/ });
  t.throws(() => commitment(MAX_NOTE_AMOUNT + 1n, 1n, 1n), { message: /2\^248/ });
  t.throws(() => commitment(1 as unknown as bigint, 1n, 1n), { message: /bigint/ });
  t.throws(() => nullifier(1n, -1n, 1n), { message: /path index/ });
});

test('publicAmount maps withdrawals to r − |amount| and refuses ≥ 2^248', (t) => {
  t.is(publicAmount(0n), 0n);
  t.is(publicAmount(10n), 10n);
  t.is(publicAmount(-10n), FIELD_MODULUS - 10n);
  t.throws(() => publicAmount(1n << 248n), { message: /2\^248/ });
  t.throws(() => publicAmount(-(1n << 248n)), { message: /2\^248/ });
  t.throws(() => publicAmount(5 as unknown as bigint), { message: /bigint/ });
});

// The contract's ExtData ScVal, assembled by hand from raw XDR types rather than through our encoder.
function independentScVal(
  recipient: string,
  extAmount: bigint,
  out0: Uint8Array,
  out1: Uint8Array,
): xdr.ScVal {
  const mask = (1n << 64n) - 1n;
  const u = BigInt.asUintN(256, extAmount);
  const i256 = new xdr.Int256Parts({
    hiHi: xdr.Int64.fromString(BigInt.asIntN(64, u >> 192n).toString()),
    hiLo: xdr.Uint64.fromString(((u >> 128n) & mask).toString()),
    loHi: xdr.Uint64.fromString(((u >> 64n) & mask).toString()),
    loLo: xdr.Uint64.fromString((u & mask).toString()),
  });
  const address = StrKey.isValidEd25519PublicKey(recipient)
    ? xdr.ScAddress.scAddressTypeAccount(
        xdr.PublicKey.publicKeyTypeEd25519(StrKey.decodeEd25519PublicKey(recipient)),
      )
    : xdr.ScAddress.scAddressTypeContract(new xdr.ContractId(StrKey.decodeContract(recipient)));
  return xdr.ScVal.scvMap([
    new xdr.ScMapEntry({
      key: xdr.ScVal.scvSymbol('encrypted_output0'),
      val: xdr.ScVal.scvBytes(Buffer.from(out0)),
    }),
    new xdr.ScMapEntry({
      key: xdr.ScVal.scvSymbol('encrypted_output1'),
      val: xdr.ScVal.scvBytes(Buffer.from(out1)),
    }),
    new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('ext_amount'), val: xdr.ScVal.scvI256(i256) }),
    new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('recipient'), val: xdr.ScVal.scvAddress(address) }),
  ]);
}

const hashOf = (v: xdr.ScVal) =>
  BigInt(`0x${Buffer.from(keccak_256(v.toXDR())).toString('hex')}`) % FIELD_MODULUS;

for (const [label, extAmount] of [
  ['deposit', 1_0000000n],
  ['withdrawal', -25_5000000n],
  ['transfer', 0n],
  ['large negative', -(1n << 200n)],
] as const) {
  test(`extDataHash equals keccak256 of an independently built ExtData ScVal (${label})`, (t) => {
    const recipient = Keypair.random().publicKey();
    const out0 = new Uint8Array(120).map((_, i) => i);
    const out1 = new Uint8Array(120).map((_, i) => 255 - i);
    const ext = { recipient, extAmount, encryptedOutput0: out0, encryptedOutput1: out1 };
    const reference = independentScVal(recipient, extAmount, out0, out1);
    t.is(extDataToScVal(ext).toXDR('base64'), reference.toXDR('base64'));
    t.is(extDataHash(ext), hashOf(reference));
  });
}

test('extDataHash accepts a contract recipient and binds every field', (t) => {
  const contract = StrKey.encodeContract(Buffer.alloc(32, 9));
  const base = {
    recipient: contract,
    extAmount: -5n,
    encryptedOutput0: new Uint8Array(3),
    encryptedOutput1: new Uint8Array(3),
  };
  t.is(
    extDataHash(base),
    hashOf(independentScVal(contract, -5n, base.encryptedOutput0, base.encryptedOutput1)),
  );
  const h = extDataHash(base);
  t.not(extDataHash({ ...base, extAmount: -6n }), h);
  t.not(extDataHash({ ...base, encryptedOutput1: new Uint8Array([0, 0, 1]) }), h);
  t.not(extDataHash({ ...base, recipient: Keypair.random().publicKey() }), h);
});

test('extData with bad fields throws a clear error', (t) => {
  const good = {
    recipient: Keypair.random().publicKey(),
    extAmount: 1n,
    encryptedOutput0: new Uint8Array(1),
    encryptedOutput1: new Uint8Array(1),
  };
  t.throws(() => extDataHash({ ...good, recipient: 'GABC' }), { message: /not a valid Stellar address/ });
  t.throws(() => extDataHash({ ...good, recipient: 5 as unknown as string }), { message: /recipient/ });
  t.throws(() => extDataHash({ ...good, extAmount: 1 as unknown as bigint }), { message: /bigint/ });
  t.throws(() => extDataHash({ ...good, extAmount: 1n << 250n }), { message: /2\^248/ });
  t.throws(() => extDataHash({ ...good, encryptedOutput0: 'aa' as unknown as Uint8Array }), {
    message: /encryptedOutput0/,
  });
  t.throws(() => extDataHash(null as never), { message: /object/ });
});
