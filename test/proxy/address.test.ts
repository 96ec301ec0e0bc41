import { Keypair } from '#stellar-sdk';
import test from 'ava';
import { AddressError, isAccountAddress, parseAccountAddress } from '../../src/api/address.ts';
import { isAgentId } from '../../src/api/agent-id.ts';

const valid = Keypair.random().publicKey();

function flipLastChar(address: string): string {
  const last = address.at(-1)!;
  return address.slice(0, -1) + (last === 'A' ? 'B' : 'A');
}

test('accepts a real G address', (t) => {
  t.true(isAccountAddress(valid));
  t.is(parseAccountAddress(valid, 'destination'), valid);
});

test('refuses addresses with a broken checksum, wrong kind, case or length', (t) => {
  const contract = 'CA3D5KRYM6CB7OWQ6TWYRR3Z4T7GNZLKERYNZGGA5SOAOPIFY6YQGAXE';
  const secret = Keypair.random().secret();
  for (const bad of [
    flipLastChar(valid),
    valid.toLowerCase(),
    valid.slice(0, 55),
    `${valid}A`,
    contract,
    secret,
    '',
    ` ${valid}`,
  ]) {
    t.false(isAccountAddress(bad), bad);
    const error = t.throws(() => parseAccountAddress(bad, 'destination'), { instanceOf: AddressError });
    t.regex(error!.message, /destination is not a valid Stellar account address/);
  }
  for (const bad of [42, null, undefined, { address: valid }, [valid]]) {
    t.false(isAccountAddress(bad));
    t.throws(() => parseAccountAddress(bad, 'publicKey'), {
      instanceOf: AddressError,
      message: /publicKey must be a string/,
    });
  }
});

test('agent ids: 1–64 of [A-Za-z0-9._:-]', (t) => {
  for (const ok of ['a', 'agent-1', 'A.b_c:d-e', valid, 'x'.repeat(64)]) t.true(isAgentId(ok), ok);
  for (const bad of ['', 'x'.repeat(65), 'a b', 'a/b', 'ä', 'a\n', '../x', 7, null])
    t.false(isAgentId(bad), String(bad));
});
