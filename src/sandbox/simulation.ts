// simulateTransaction: runs the invocation against the committed state without changing it, in enforcing
// or recording auth mode, and reports the return value, the footprint, the bytes read and written and the
// resource fee they cost (fees.ts's fee model), the auth entries to sign (with fresh nonces), the
// events, and the state changes the call would make.
import { Address, xdr } from '@stellar/stellar-sdk';
import { AuthManager, nonceEntry } from './auth.ts';
import { decodeEnvelope, type Invocation, InvalidRequest, invocationOf } from './envelope.ts';
import { type ContractRegistry, Host } from './host.ts';
import { accountKey, keyId } from './keys.ts';
import { Overlay } from './overlay.ts';
import type { LedgerState } from './ledger-state.ts';
import {
  type CreatedEntry,
  declaredResources,
  ED25519_VERIFY_INSTRUCTIONS,
  eventsFee,
  isDiskRead,
  rentFee,
  resourcesFee,
  sizeFee,
} from './fees.ts';
import { diagnosticEvent } from './xdr-records.ts';
/** Envelope bytes reserved for the signatures added after simulation (decorated signature + auth). */
const SIGNATURE_MARGIN_BYTES = 100;

export type SimulationResult =
  | { error: string; events: string[] }
  | {
      transactionData: string;
      minResourceFee: string;
      results: { auth: string[]; xdr: string }[];
      events: string[];
      stateChanges: StateChange[];
    };

/** A ledger entry the invocation would change (Soroban RPC's simulation `stateChanges`). */
export interface StateChange {
  type: 'created' | 'updated' | 'deleted';
  /** base64 LedgerKey */
  key: string;
  /** base64 LedgerEntry before and after (null when absent) */
  before: string | null;
  after: string | null;
}

export interface SimulationContext {
  state: LedgerState;
  registry: ContractRegistry;
  passphrase: string;
  networkId: Uint8Array;
  latestSequence: number;
}

/** Preflight, as Soroban RPC's simulateTransaction, against the next ledger. Never changes state. */
export async function simulate(
  ctx: SimulationContext,
  envelopeXdr: unknown,
  authMode: unknown,
  useUpgradedAuth: unknown,
): Promise<SimulationResult> {
  // a fee bump simulates as its inner transaction
  const { tx } = decodeEnvelope(envelopeXdr, ctx.passphrase);
  if (tx.operations.length !== 1 || tx.operations[0]?.type !== 'invokeHostFunction') {
    throw new InvalidRequest('simulation needs exactly one invokeHostFunction operation');
  }
  if (
    authMode !== undefined &&
    authMode !== 'enforce' &&
    authMode !== 'record' &&
    authMode !== 'record_allow_nonroot'
  ) {
    throw new InvalidRequest(`invalid authMode ${String(authMode)}`);
  }
  const source = tx.operations[0].source ?? tx.source;
  const overlay = new Overlay(ctx.state);
  let inv: Invocation;
  try {
    inv = invocationOf(tx);
  } catch (e) {
    return { error: (e as Error).message, events: [] };
  }
  const mode =
    authMode === 'enforce' || (authMode === undefined && inv.auth.length > 0) ? 'enforce' : 'record';
  const ledgerSequence = ctx.latestSequence + 1;
  const auth = new AuthManager(
    mode,
    { networkId: ctx.networkId, ledgerSequence, sourceAccount: source, overlay },
    mode === 'enforce' ? inv.auth : [],
  );
  const host = new Host({
    overlay,
    registry: ctx.registry,
    auth,
    ledgerSequence,
    ledgerTimestamp: BigInt(Math.floor(Date.now() / 1000)),
  });
  let retval: xdr.ScVal;
  try {
    retval = await host.invoke(inv.contractId, inv.fn, inv.args);
  } catch (e) {
    // the failed call's events, then the error where it arose (as the host logs it)
    const events = [...host.events, ...host.diagnostics].map((ev) =>
      diagnosticEvent(ev, false).toXdr('base64'),
    );
    return { error: (e as Error).message, events };
  }
  const authEntries = mode === 'record' ? auth.recordedEntries(useUpgradedAuth === true) : inv.auth;
  const fp = overlay.footprint();
  // the nonce entries the signed entries will create (an enforcing run writes them itself)
  const recordedNonces: xdr.LedgerEntryData[] = [];
  if (mode === 'record') {
    for (const k of auth.recordedNonceKeys(authEntries)) {
      if (k === keyId(accountKey(source))) continue;
      const key = xdr.LedgerKey.fromXdr(k, 'base64');
      if (key.type === 'account') fp.readOnly.add(k);
      else {
        fp.readWrite.add(k);
        const cd = key.value as xdr.LedgerKeyContractData;
        const nonce = cd.key.value as xdr.ScNonceKey;
        recordedNonces.push(
          nonceEntry(Address.fromScAddress(cd.contract).toString(), BigInt(nonce.nonce as unknown as bigint)),
        );
      }
    }
  }
  const toKeys = (s: Set<string>) => [...s].sort().map((k) => xdr.LedgerKey.fromXdr(k, 'base64'));
  const readOnly = toKeys(fp.readOnly);
  const readWrite = toKeys(fp.readWrite);
  // bytes: the classic entries of the footprint as read from disk (live Soroban state is in memory), every
  // entry as written
  const size = (d: xdr.LedgerEntryData | null | undefined) => (d ? d.toXdr().length : 0);
  const base = new Overlay(ctx.state);
  const readBytes = [...readOnly, ...readWrite]
    .filter(isDiskRead)
    .reduce((n, k) => n + size(base.get(keyId(k))), 0);
  const writes = overlay.changes();
  const writeBytes = [...writes.values(), ...recordedNonces.map((data) => ({ data }))].reduce(
    (n, w) => n + size(w.data),
    0,
  );
  const eventBytes = host.events.reduce((n, ev) => n + ev.toXdr().length, 0) + retval.toXdr().length;
  // new Soroban entries (a nonce, a contract's new data) pay rent for their first TTL
  const created: CreatedEntry[] = recordedNonces.map((d) => ({ persistent: false, bytes: size(d) }));
  for (const [key, w] of writes) {
    if (!w.data || base.get(key)) continue;
    const k = xdr.LedgerKey.fromXdr(key, 'base64');
    if (k.type === 'contractData')
      created.push({
        persistent: (k.value as xdr.LedgerKeyContractData).durability.name === 'persistent',
        bytes: size(w.data),
      });
    else if (k.type === 'contractCode') created.push({ persistent: true, bytes: size(w.data) });
  }
  // every address credential is one signature check
  const signatures = authEntries.filter((e) => e.credentials.type !== 'sorobanCredentialsSourceAccount');
  const resources = new xdr.SorobanResources({
    footprint: new xdr.LedgerFootprint({ readOnly, readWrite }),
    instructions: host.instructions + signatures.length * ED25519_VERIFY_INSTRUCTIONS,
    diskReadBytes: readBytes,
    writeBytes,
  });
  const unpriced = new xdr.SorobanTransactionData({
    ext: xdr.SorobanTransactionDataExt.v0(),
    resources,
    resourceFee: 0n,
  });
  // the size the envelope will have once it carries this data and signatures (a margin per signature); a
  // transaction simulated again after assembly already carries data and maybe signatures: they are replaced,
  // not added, so simulating an assembled transaction prices it exactly as before
  const envelope = tx.toEnvelope();
  // recorded authorization entries will be put into the operation by the client: count them too
  const recordedAuthBytes = mode === 'record' ? authEntries.reduce((n, e) => n + e.toXdr().length, 0) : 0;
  const envelopeBytes =
    envelope.toXdr().length -
    carriedBytes(envelope) +
    recordedAuthBytes +
    unpriced.toXdr().length +
    SIGNATURE_MARGIN_BYTES;
  const resourceFee =
    resourcesFee(declaredResources(resources)) +
    sizeFee(envelopeBytes) +
    eventsFee(eventBytes) +
    rentFee(created);
  const txData = new xdr.SorobanTransactionData({
    ext: xdr.SorobanTransactionDataExt.v0(),
    resources,
    resourceFee,
  });
  const stateChanges = [...writes].flatMap(([key, w]): StateChange[] => {
    const before = base.get(key);
    const entry = (data: xdr.LedgerEntryData) =>
      new xdr.LedgerEntry({ lastModifiedLedgerSeq: ledgerSequence, data, ext: xdr.LedgerEntryExt.v0() });
    const beforeRecord = ctx.state.get(key);
    if (!before && !w.data) return [];
    return [
      {
        type: !before ? 'created' : w.data ? 'updated' : 'deleted',
        key,
        before: before
          ? new xdr.LedgerEntry({
              lastModifiedLedgerSeq: beforeRecord?.lastModified ?? ledgerSequence,
              data: before,
              ext: xdr.LedgerEntryExt.v0(),
            }).toXdr('base64')
          : null,
        after: w.data ? entry(w.data).toXdr('base64') : null,
      },
    ];
  });
  return {
    transactionData: txData.toXdr('base64'),
    minResourceFee: resourceFee.toString(),
    results: [{ auth: authEntries.map((a) => a.toXdr('base64')), xdr: retval.toXdr('base64') }],
    // the diagnostic trace, as Soroban RPC returns it: fn_call, the contract events, fn_return
    events: host.trace.map((ev) => diagnosticEvent(ev, true).toXdr('base64')),
    stateChanges,
  };
}

/** Bytes of the Soroban data and signatures an envelope already carries (counted again by the estimate). */
function carriedBytes(envelope: xdr.TransactionEnvelope): number {
  if (envelope.type !== 'envelopeTypeTx') return 0;
  const v1 = envelope.value as xdr.TransactionV1Envelope;
  const ext = v1.tx.ext;
  const data = ext.type === 'sorobanData' ? (ext.value as xdr.SorobanTransactionData).toXdr().length : 0;
  const signatures = v1.signatures.reduce(
    (n: number, sig: xdr.DecoratedSignature) => n + sig.toXdr().length,
    0,
  );
  return data + Math.min(signatures, SIGNATURE_MARGIN_BYTES);
}
