// The payer's authorization of one contract call, built and signed without a recording simulation: address
// credentials (v1) with the caller's nonce (a fresh random one by default) and an expiration ledger, the call as the root invocation with
// no sub-invocations, and the ed25519 signature over the network's HashIdPreimage in the standard account
// signature form `[{public_key, signature}]`. A token `transfer(from, to, amount)` needs exactly this entry
// from `from`; the enforcing simulation that follows checks it against the real call.
import { randomBytes } from 'node:crypto';
import { Address, hash, type Keypair, xdr } from '#stellar-sdk';
import { signEd25519 } from '../ledger/ed25519.ts';

export interface SignedAuthEntry {
  entry: xdr.SorobanAuthorizationEntry;
  /** the credentials' nonce (i64) */
  nonce: bigint;
}

/**
 * Signs `call` (on `contract`) for `signer`, usable up to and including ledger `expiration`, with `nonce`
 * (i64; random when omitted). A nonce can be consumed once per address: the same nonce signed twice
 * authorizes at most one of the two.
 */
export function signInvocation(
  signer: Keypair,
  call: xdr.InvokeContractArgs,
  expiration: number,
  networkPassphrase: string,
  nonce: bigint = randomBytes(8).readBigInt64BE(),
): SignedAuthEntry {
  if (nonce < -(1n << 63n) || nonce >= 1n << 63n) throw new RangeError('the nonce is not an i64');
  const nonceXdr = xdr.Int64.fromString(nonce.toString());
  const invocation = new xdr.SorobanAuthorizedInvocation({
    function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(call),
    subInvocations: [],
  });
  const preimage = xdr.HashIdPreimage.envelopeTypeSorobanAuthorization(
    new xdr.HashIdPreimageSorobanAuthorization({
      networkId: hash(Buffer.from(networkPassphrase)),
      nonce: nonceXdr,
      signatureExpirationLedger: expiration,
      invocation,
    }),
  );
  const signature = signEd25519(signer, hash(preimage.toXDR()));
  // keys of an ScMap are sorted: public_key < signature
  const accountSignature = xdr.ScVal.scvMap([
    new xdr.ScMapEntry({
      key: xdr.ScVal.scvSymbol('public_key'),
      val: xdr.ScVal.scvBytes(signer.rawPublicKey()),
    }),
    new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol('signature'), val: xdr.ScVal.scvBytes(signature) }),
  ]);
  const entry = new xdr.SorobanAuthorizationEntry({
    credentials: xdr.SorobanCredentials.sorobanCredentialsAddress(
      new xdr.SorobanAddressCredentials({
        address: new Address(signer.publicKey()).toScAddress(),
        nonce: nonceXdr,
        signatureExpirationLedger: expiration,
        signature: xdr.ScVal.scvVec([accountSignature]),
      }),
    ),
    rootInvocation: invocation,
  });
  return { entry, nonce };
}
