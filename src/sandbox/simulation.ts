// simulateTransaction: runs the invocation against the committed state without changing it, in enforcing
// or recording auth mode, and reports the return value, the footprint, the bytes read and written and the
// resource fee they cost (fees.ts's fee model), the auth entries to sign (with fresh nonces), the
// events, and the state changes the call would make.
import { Address, xdr } from '@stellar/stellar-sdk';
import { AuthManager, nonceEntry } from './auth.ts';
import { decodeEnvelope, type Invocation, InvalidRequest, invocationOf, sorobanData } from './envelope.ts';
import { type ContractRegistry, Host } from './host.ts';
import { accountKey, keyId } from './keys.ts';
import { type Footprint, Overlay } from './overlay.ts';
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
  /** the next ledger's time (Unix seconds) */
  timestamp: number;
}

type AuthMode = 'enforce' | 'record';
type Writes = ReturnType<Overlay['changes']>;

/** The invocation run against a scratch overlay of the committed state. */
interface Run {
  inv: Invocation;
  mode: AuthMode;
  source: string;
  ledgerSequence: number;
  overlay: Overlay;
  auth: AuthManager;
  host: Host;
}

const entryBytes = (d: xdr.LedgerEntryData | null | undefined) => (d ? d.toXdr().length : 0);

/** Preflight, as Soroban RPC's simulateTransaction, against the next ledger. Never changes state. */
export async function simulate(
  ctx: SimulationContext,
  envelopeXdr: unknown,
  authMode: unknown,
  useUpgradedAuth: unknown,
): Promise<SimulationResult> {
  // a fee bump simulates as its inner transaction
  const { tx, feeBump } = decodeEnvelope(envelopeXdr, ctx.passphrase);
  checkRequest(tx, authMode);
  let inv: Invocation;
  try {
    inv = invocationOf(tx);
  } catch (e) {
    return { error: (e as Error).message, events: [] };
  }
  const run = prepareRun(ctx, tx, inv, authMode);
  const { host, auth, overlay, mode } = run;
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
  const recordedNonces = mode === 'record' ? recordNonces(run, authEntries, fp) : [];
  const base = new Overlay(ctx.state);
  const writes = overlay.changes();
  const resources = resourcesOf(run, fp, base, writes, recordedNonces, authEntries);
  const eventBytes = host.events.reduce((n, ev) => n + ev.toXdr().length, 0) + retval.toXdr().length;
  const resourceFee =
    resourcesFee(declaredResources(resources)) +
    sizeFee(
      envelopeBytes(tx, feeBump ? undefined : envelopeXdr, resources, mode === 'record' ? authEntries : []),
    ) +
    eventsFee(eventBytes) +
    rentFee(createdEntries(base, writes, recordedNonces));
  const txData = new xdr.SorobanTransactionData({
    ext: xdr.SorobanTransactionDataExt.v0(),
    resources,
    resourceFee,
  });
  return {
    transactionData: txData.toXdr('base64'),
    minResourceFee: resourceFee.toString(),
    results: [{ auth: authEntries.map((a) => a.toXdr('base64')), xdr: retval.toXdr('base64') }],
    // the diagnostic trace, as Soroban RPC returns it: fn_call, the contract events, fn_return
    events: host.trace.map((ev) => diagnosticEvent(ev, true).toXdr('base64')),
    stateChanges: stateChangesOf(ctx.state, base, writes, run.ledgerSequence),
  };
}

/** One invokeHostFunction operation and a known auth mode, or InvalidRequest. */
function checkRequest(tx: ReturnType<typeof decodeEnvelope>['tx'], authMode: unknown): void {
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
}

/** The host that runs the call in the next ledger: enforcing the signed entries, else recording. */
function prepareRun(
  ctx: SimulationContext,
  tx: ReturnType<typeof decodeEnvelope>['tx'],
  inv: Invocation,
  authMode: unknown,
): Run {
  const source = tx.operations[0]?.source ?? tx.source;
  const overlay = new Overlay(ctx.state);
  const mode: AuthMode =
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
    ledgerTimestamp: BigInt(ctx.timestamp),
  });
  return { inv, mode, source, ledgerSequence, overlay, auth, host };
}

/**
 * The nonce entries the recorded entries will create (an enforcing run writes them itself), added to the
 * footprint: an account's nonce is read, a contract's written.
 */
function recordNonces(
  run: Run,
  authEntries: xdr.SorobanAuthorizationEntry[],
  fp: Footprint,
): xdr.LedgerEntryData[] {
  const recordedNonces: xdr.LedgerEntryData[] = [];
  for (const k of run.auth.recordedNonceKeys(authEntries)) {
    if (k === keyId(accountKey(run.source))) continue;
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
  return recordedNonces;
}

/** Footprint, instructions (one signature check per address credential), disk reads and writes. */
function resourcesOf(
  run: Run,
  fp: Footprint,
  base: Overlay,
  writes: Writes,
  recordedNonces: xdr.LedgerEntryData[],
  authEntries: xdr.SorobanAuthorizationEntry[],
): xdr.SorobanResources {
  const toKeys = (s: Set<string>) => [...s].sort().map((k) => xdr.LedgerKey.fromXdr(k, 'base64'));
  const readOnly = toKeys(fp.readOnly);
  const readWrite = toKeys(fp.readWrite);
  // bytes: the classic entries of the footprint as read from disk (live Soroban state is in memory), every
  // entry as written
  const readBytes = [...readOnly, ...readWrite]
    .filter(isDiskRead)
    .reduce((n, k) => n + entryBytes(base.get(keyId(k))), 0);
  const writeBytes = [...writes.values(), ...recordedNonces.map((data) => ({ data }))].reduce(
    (n, w) => n + entryBytes(w.data),
    0,
  );
  const signatures = authEntries.filter((e) => e.credentials.type !== 'sorobanCredentialsSourceAccount');
  return new xdr.SorobanResources({
    footprint: new xdr.LedgerFootprint({ readOnly, readWrite }),
    instructions: run.host.instructions + signatures.length * ED25519_VERIFY_INSTRUCTIONS,
    diskReadBytes: readBytes,
    writeBytes,
  });
}

/** New Soroban entries (a nonce, a contract's new data or code) pay rent for their first TTL. */
function createdEntries(
  base: Overlay,
  writes: Writes,
  recordedNonces: xdr.LedgerEntryData[],
): CreatedEntry[] {
  const created: CreatedEntry[] = recordedNonces.map((d) => ({ persistent: false, bytes: entryBytes(d) }));
  for (const [key, w] of writes) {
    if (!w.data || base.get(key)) continue;
    const k = xdr.LedgerKey.fromXdr(key, 'base64');
    if (k.type === 'contractData')
      created.push({
        persistent: (k.value as xdr.LedgerKeyContractData).durability.name === 'persistent',
        bytes: entryBytes(w.data),
      });
    else if (k.type === 'contractCode') created.push({ persistent: true, bytes: entryBytes(w.data) });
  }
  return created;
}

/**
 * The size the envelope will have once it carries this data and signatures (a margin per signature); a
 * transaction simulated again after assembly already carries data and maybe signatures: they are replaced,
 * not added, so simulating an assembled transaction prices it exactly as before. Recorded authorization
 * entries will be put into the operation by the client: they count too.
 */
function envelopeBytes(
  tx: ReturnType<typeof decodeEnvelope>['tx'],
  sent: unknown,
  resources: xdr.SorobanResources,
  recordedAuth: xdr.SorobanAuthorizationEntry[],
): number {
  const unpriced = new xdr.SorobanTransactionData({
    ext: xdr.SorobanTransactionDataExt.v0(),
    resources,
    resourceFee: 0n,
  });
  // The envelope as sent is the transaction's own (base64 of its XDR): its size without encoding it again.
  const size = typeof sent === 'string' ? Buffer.from(sent, 'base64').length : tx.toEnvelope().toXdr().length;
  const recordedAuthBytes = recordedAuth.reduce((n, e) => n + e.toXdr().length, 0);
  return size - carriedBytes(tx) + recordedAuthBytes + unpriced.toXdr().length + SIGNATURE_MARGIN_BYTES;
}

/** Each written entry as created, updated or deleted, with its entry before and after. */
function stateChangesOf(
  state: LedgerState,
  base: Overlay,
  writes: Writes,
  ledgerSequence: number,
): StateChange[] {
  return [...writes].flatMap(([key, w]): StateChange[] => {
    const before = base.get(key);
    const entry = (data: xdr.LedgerEntryData) =>
      new xdr.LedgerEntry({ lastModifiedLedgerSeq: ledgerSequence, data, ext: xdr.LedgerEntryExt.v0() });
    const beforeRecord = state.get(key);
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
}

/** Bytes of the Soroban data and signatures an envelope already carries (counted again by the estimate). */
function carriedBytes(tx: ReturnType<typeof decodeEnvelope>['tx']): number {
  const data = sorobanData(tx)?.toXdr().length ?? 0;
  const signatures = tx.signatures.reduce(
    (n: number, sig: xdr.DecoratedSignature) => n + sig.toXdr().length,
    0,
  );
  return data + Math.min(signatures, SIGNATURE_MARGIN_BYTES);
}
