// The IPv6 documentation prefix 3fff::/20 (RFC 9637, beside 2001:db8::/32) is no public address: a service
// URL naming one is refused like any other reserved range, and its neighbours outside it stay public.
import test from 'ava';
import { addressClass } from '../../src/x402/address-class.ts';

test('3fff::/20 is reserved (documentation, RFC 9637); the addresses around it are not', (t) => {
  for (const inside of ['3fff::1', '3fff:fff:ffff:ffff:ffff:ffff:ffff:ffff', '[3fff:abc::7]'])
    t.is(addressClass(inside), 'reserved', inside);
  for (const outside of ['3fff:1000::1', '3ffe:ffff::1']) t.is(addressClass(outside), undefined, outside);
});
