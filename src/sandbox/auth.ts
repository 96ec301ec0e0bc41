// Soroban authorization: `require_auth(address)` must be covered by an authorization entry of the
// transaction whose invocation tree matches the call stack. Enforcing mode checks entries (source-account
// credentials, or address credentials with an ed25519 signature over the HashIdPreimage, a fresh nonce and
// an unexpired signature ledger); recording mode (simulation) builds the entries a client must sign.
import { Address, hash, Keypair, StrKey, scValToNative, xdr } from '@stellar/stellar-sdk';
import { verifyEd25519 } from '../ledger/ed25519.ts';
import { authError, HostError } from './errors.ts';
import { accountKey, keyId, nonceKey } from './keys.ts';
import type { Overlay } from './overlay.ts';

/** Longest signature validity the network accepts, in ledgers (stellar-core's max entry TTL). */
export const MAX_SIGNATURE_LEDGERS = 3_110_400;

export interface Invocation {
  contractId: string;
  fn: string;
  args: xdr.ScVal[];
}

interface EnforcedNode {
  invocation: xdr.SorobanAuthorizedInvocation;
  used: boolean;
  children: EnforcedNode[];
}

interface EnforcedEntry {
  address: string;
  entry: xdr.SorobanAuthorizationEntry;
  root: EnforcedNode;
  checked: boolean;
}

interface RecordedNode {
  invocation: Invocation;
  children: RecordedNode[];
}

/** Handle a call frame keeps for an address it has authorized, so nested require_auth calls match children. */
export type AuthMatch = EnforcedNode | RecordedNode;

export interface AuthContext {
  networkId: Uint8Array;
  ledgerSequence: number;
  /** the account whose source-account credentials cover it (operation source, else transaction source) */
  sourceAccount: string;
  overlay: Overlay;
}

function invocationMatches(node: xdr.SorobanAuthorizedInvocation, inv: Invocation): boolean {
  const f = node.function;
  if (f.type !== 'sorobanAuthorizedFunctionTypeContractFn') return false;
  const c = f.value as xdr.InvokeContractArgs;
  if (Address.fromScAddress(c.contractAddress).toString() !== inv.contractId) return false;
  if (String(c.functionName) !== inv.fn || c.args.length !== inv.args.length) return false;
  return c.args.every((a, i) => a.toXdr('base64') === (inv.args[i] as xdr.ScVal).toXdr('base64'));
}

function toEnforced(inv: xdr.SorobanAuthorizedInvocation): EnforcedNode {
  return { invocation: inv, used: false, children: inv.subInvocations.map(toEnforced) };
}

function credentialsOf(entry: xdr.SorobanAuthorizationEntry): xdr.SorobanAddressCredentials | undefined {
  const c = entry.credentials;
  if (c.type === 'sorobanCredentialsAddress' || c.type === 'sorobanCredentialsAddressV2') {
    return c.value as xdr.SorobanAddressCredentials;
  }
  return undefined;
}

export class AuthManager {
  readonly #enforced: EnforcedEntry[] = [];
  readonly #recorded: { address: string; root: RecordedNode }[] = [];

  readonly #ctx: AuthContext;

  constructor(
    readonly mode: 'enforce' | 'record',
    ctx: AuthContext,
    entries: xdr.SorobanAuthorizationEntry[] = [],
  ) {
    this.#ctx = ctx;
    for (const entry of entries) {
      let address: string;
      if (entry.credentials.type === 'sorobanCredentialsSourceAccount') address = ctx.sourceAccount;
      else {
        const creds = credentialsOf(entry);
        if (!creds) throw authError(`unsupported credential type ${entry.credentials.type}`);
        address = Address.fromScAddress(creds.address).toString();
      }
      this.#enforced.push({ address, entry, root: toEnforced(entry.rootInvocation), checked: false });
    }
  }

  /**
   * Authorizes `inv` for `address`. `parent` is the match held by the nearest enclosing frame that
   * authorized the same address: the invocation must then be one of its sub-invocations.
   */
  require(address: string, inv: Invocation, parent: AuthMatch | undefined): AuthMatch {
    if (this.mode === 'record') {
      const node: RecordedNode = { invocation: inv, children: [] };
      if (parent) (parent as RecordedNode).children.push(node);
      else this.#recorded.push({ address, root: node });
      return node;
    }
    if (parent) {
      const child = (parent as EnforcedNode).children.find(
        (c) => !c.used && invocationMatches(c.invocation, inv),
      );
      if (child) {
        child.used = true;
        return child;
      }
    }
    for (const e of this.#enforced) {
      if (e.address !== address || e.root.used || !invocationMatches(e.root.invocation, inv)) continue;
      if (!e.checked) this.#checkCredentials(e);
      e.root.used = true;
      return e.root;
    }
    throw authError(
      `${address} did not authorize ${inv.contractId}.${inv.fn} (no matching authorization entry)`,
    );
  }

  /** Verifies an address-credential entry once, on first use: expiry, nonce (consumed), signature. */
  #checkCredentials(e: EnforcedEntry): void {
    e.checked = true;
    const creds = credentialsOf(e.entry);
    if (!creds) return; // source-account credentials: covered by the transaction signature
    const { ledgerSequence, overlay, networkId } = this.#ctx;
    const exp = creds.signatureExpirationLedger;
    if (exp < ledgerSequence) throw authError(`signature for ${e.address} expired at ledger ${exp}`);
    if (exp > ledgerSequence + MAX_SIGNATURE_LEDGERS)
      throw authError('signature expiration is too far in the future');
    const nonce = BigInt(creds.nonce as unknown as bigint);
    const nk = keyId(nonceKey(e.address, nonce));
    if (overlay.get(nk)) throw new HostError('Auth', 'ExistingValue', `nonce already used by ${e.address}`);
    const preimage =
      e.entry.credentials.type === 'sorobanCredentialsAddress'
        ? xdr.HashIdPreimage.envelopeTypeSorobanAuthorization(
            new xdr.HashIdPreimageSorobanAuthorization({
              networkId,
              nonce: creds.nonce,
              signatureExpirationLedger: exp,
              invocation: e.entry.rootInvocation,
            }),
          )
        : xdr.HashIdPreimage.envelopeTypeSorobanAuthorizationWithAddress(
            new xdr.HashIdPreimageSorobanAuthorizationWithAddress({
              networkId,
              nonce: creds.nonce,
              signatureExpirationLedger: exp,
              address: creds.address,
              invocation: e.entry.rootInvocation,
            }),
          );
    this.#checkSignature(e.address, hash(preimage.toXdr()), creds.signature);
    overlay.put(nk, nonceEntry(e.address, nonce), exp);
  }

  /** Account (G…) signatures: a Vec of {public_key, signature} maps; the master key must have signed. */
  #checkSignature(address: string, payload: Uint8Array, sig: xdr.ScVal): void {
    if (!StrKey.isValidEd25519PublicKey(address)) {
      throw authError(`contract-account authorization (__check_auth) is not supported for ${address}`);
    }
    if (!this.#ctx.overlay.get(keyId(accountKey(address))))
      throw authError(`account ${address} does not exist`);
    if (sig.type !== 'scvVec' || !sig.value || (sig.value as xdr.ScVal[]).length === 0) {
      throw authError(`missing signature for ${address}`);
    }
    let signedByMaster = false;
    for (const item of sig.value as xdr.ScVal[]) {
      if (item.type !== 'scvMap' || !item.value) throw authError('signature entries must be maps');
      const fields = new Map((item.value as xdr.ScMapEntry[]).map((m) => [String(m.key.value), m.val]));
      const pk = fields.get('public_key');
      const s = fields.get('signature');
      if (pk?.type !== 'scvBytes' || s?.type !== 'scvBytes') throw authError('malformed account signature');
      const pkBytes = new Uint8Array(scValToNative(pk) as Uint8Array);
      const sBytes = new Uint8Array(scValToNative(s) as Uint8Array);
      if (pkBytes.length !== 32 || sBytes.length !== 64) throw authError('malformed account signature');
      const signer = StrKey.encodeEd25519PublicKey(pkBytes);
      if (!verifyEd25519(pkBytes, payload, sBytes)) throw authError(`bad signature by ${signer}`);
      if (signer === address) signedByMaster = true;
    }
    if (!signedByMaster) throw authError(`${address} has not signed the authorization`);
  }

  /** Entries found in recording mode, ready for the client to sign (fresh random nonces). */
  recordedEntries(v2: boolean): xdr.SorobanAuthorizationEntry[] {
    return this.#recorded.map(({ address, root }) => {
      let credentials: xdr.SorobanCredentials;
      if (address === this.#ctx.sourceAccount)
        credentials = xdr.SorobanCredentials.sorobanCredentialsSourceAccount();
      else {
        const nonceBytes = Keypair.random().rawPublicKey().subarray(0, 8);
        const nonce = BigInt.asIntN(64, BigInt(`0x${Buffer.from(nonceBytes).toString('hex')}`));
        const ac = new xdr.SorobanAddressCredentials({
          address: new Address(address).toScAddress(),
          nonce,
          signatureExpirationLedger: 0,
          signature: xdr.ScVal.scvVoid(),
        } as unknown as ConstructorParameters<typeof xdr.SorobanAddressCredentials>[0]);
        credentials = v2
          ? xdr.SorobanCredentials.sorobanCredentialsAddressV2(ac)
          : xdr.SorobanCredentials.sorobanCredentialsAddress(ac);
      }
      return new xdr.SorobanAuthorizationEntry({ credentials, rootInvocation: toAuthorized(root) });
    });
  }

  /** Nonce keys the recorded entries will consume when signed (for the simulated footprint). */
  recordedNonceKeys(entries: xdr.SorobanAuthorizationEntry[]): string[] {
    const keys: string[] = [];
    for (const e of entries) {
      const c = credentialsOf(e);
      if (c) {
        const a = Address.fromScAddress(c.address).toString();
        keys.push(keyId(nonceKey(a, BigInt(c.nonce as unknown as bigint))));
        keys.push(keyId(accountKey(a)));
      }
    }
    return keys;
  }
}

function toAuthorized(node: RecordedNode): xdr.SorobanAuthorizedInvocation {
  const { contractId, fn, args } = node.invocation;
  return new xdr.SorobanAuthorizedInvocation({
    function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(
      new xdr.InvokeContractArgs({
        contractAddress: new Address(contractId).toScAddress(),
        functionName: fn,
        args,
      }),
    ),
    subInvocations: node.children.map(toAuthorized),
  });
}

/** The (temporary) entry a consumed nonce leaves in the address's storage. */
export function nonceEntry(address: string, nonce: bigint): xdr.LedgerEntryData {
  return xdr.LedgerEntryData.contractData(
    new xdr.ContractDataEntry({
      ext: xdr.ExtensionPoint.v0(),
      contract: new Address(address).toScAddress(),
      key: xdr.ScVal.scvLedgerKeyNonce(new xdr.ScNonceKey({ nonce })),
      durability: xdr.ContractDataDurability.temporary,
      val: xdr.ScVal.scvVoid(),
    }),
  );
}
