// simulateTransaction: the invocation run by the real host's simulation (soroban-simulation, as stellar-rpc's
// preflight runs it) against the committed state without changing it, in enforcing or recording auth mode:
// the return value, the footprint, resources and resource fee, the auth entries to sign (with fresh nonces),
// the diagnostic events, and the state changes the call would make. An ExtendFootprintTTL or RestoreFootprint
// transaction is simulated as stellar-rpc simulates it (footprint-ops.ts): its Soroban data and resource fee,
// and for an extension of archived entries the restore to send first (`restorePreamble`).
import type { Transaction } from '#stellar-sdk';
import { decodeEnvelope, InvalidRequest } from './envelope.ts';
import { footprintOperation, simulateFootprintOperation } from './footprint-ops.ts';
import { invokeOperationXdr, ledgerEntryXdr, sourceAccountXdr } from './invoke.ts';
import type { LedgerState } from './ledger-state.ts';
import type { Overlay } from './overlay.ts';
import type { SimulateResult, SorobanHost } from './soroban-host.ts';

export type SimulationResult =
  | { error: string; events: string[] }
  | {
      transactionData: string;
      minResourceFee: string;
      /** an invocation's result (absent for ExtendFootprintTTL and RestoreFootprint) */
      results?: { auth: string[]; xdr: string }[];
      events: string[];
      stateChanges?: StateChange[];
      /** the RestoreFootprint to send first, when an extension touches archived entries */
      restorePreamble?: { transactionData: string; minResourceFee: string };
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
  host: SorobanHost;
  passphrase: string;
  latestSequence: number;
  /** the next ledger's time (Unix seconds) */
  timestamp: number;
}

type AuthMode = 'enforce' | 'record' | 'record_allow_nonroot';

const b64 = (b: Buffer) => b.toString('base64');

/**
 * stellar-rpc's checks of what it is asked to simulate (its simulate_transaction.go and validateAuthMode):
 * the auth mode to run with, or the error it answers as a simulation result (not a JSON-RPC error).
 */
function checkRequest(tx: Transaction, authMode: unknown): { mode: AuthMode } | { error: string } {
  if (tx.operations.length !== 1) return { error: 'Transaction contains more than one operation' };
  const op = tx.operations[0] as Transaction['operations'][number];
  if (authMode !== undefined && authMode !== '' && !AUTH_MODES.includes(authMode as AuthMode)) {
    return { error: `optional 'authMode' must be one of ${AUTH_MODES.join(',')} when included` };
  }
  const given = authMode === undefined || authMode === '' ? undefined : (authMode as AuthMode);
  if (op.type === 'extendFootprintTtl' || op.type === 'restoreFootprint') {
    return given === undefined
      ? { mode: 'record' }
      : { error: 'cannot set authMode with non-InvokeHostFunction operations' };
  }
  if (op.type !== 'invokeHostFunction') {
    // Go's name of the operation type, e.g. OperationTypePayment
    const name = `OperationType${op.type.charAt(0).toUpperCase()}${op.type.slice(1)}`;
    return { error: `Transaction contains unsupported operation type: ${name}` };
  }
  const hasAuth = ((op as { auth?: unknown[] }).auth?.length ?? 0) > 0;
  if (given === undefined) return { mode: hasAuth ? 'enforce' : 'record' };
  if (hasAuth && given !== 'enforce')
    return { error: `cannot set authMode to '${given}' with an auth footprint` };
  return { mode: given };
}

const AUTH_MODES: AuthMode[] = ['enforce', 'record', 'record_allow_nonroot'];

/** The host's simulation of `tx` reading entries through `read` (committed state, or a ledger being closed). */
function run(
  host: SorobanHost,
  read: (key: string) => Buffer | null,
  liveUntilOf: (key: string) => number | undefined,
  tx: Transaction,
  authMode: AuthMode,
  ledger: { sequence: number; timestamp: bigint },
  useUpgradedAuth = false,
  instructionLeeway = 0,
): SimulateResult {
  return host.simulateInvoke({
    operation: invokeOperationXdr(tx),
    sourceAccount: sourceAccountXdr(tx),
    authMode,
    useUpgradedAuth,
    instructionLeeway,
    ledger,
    getEntry: (key) => {
      const id = b64(key);
      const entry = read(id);
      return entry ? { entry, liveUntil: liveUntilOf(id) ?? null } : null;
    },
  });
}

/** stellar-rpc's `resourceConfig.instructionLeeway`: instructions added to the simulated ones (0 if absent). */
function instructionLeewayOf(resourceConfig: unknown): number {
  if (resourceConfig === undefined || resourceConfig === null) return 0;
  const leeway = (resourceConfig as { instructionLeeway?: unknown }).instructionLeeway;
  if (typeof resourceConfig !== 'object' || leeway === undefined) return 0;
  if (!Number.isInteger(leeway) || (leeway as number) < 0 || (leeway as number) > 0xffff_ffff)
    throw new InvalidRequest('resourceConfig.instructionLeeway must be a non-negative integer');
  return leeway as number;
}

/**
 * Preflight, as Soroban RPC's simulateTransaction, against the next ledger. Never changes state.
 * `useUpgradedAuth`: record address credentials v2 (CAP-71) instead of v1; `resourceConfig`:
 * stellar-rpc's `{ instructionLeeway }`, honoured as its preflight honours it.
 */
export function simulate(
  ctx: SimulationContext,
  envelopeXdr: unknown,
  authMode: unknown,
  useUpgradedAuth: unknown,
  resourceConfig?: unknown,
): SimulationResult {
  const instructionLeeway = instructionLeewayOf(resourceConfig);
  if (typeof envelopeXdr !== 'string') throw new InvalidRequest('transaction must be a base64 string');
  let tx: Transaction;
  try {
    // a fee bump simulates as its inner transaction
    ({ tx } = decodeEnvelope(envelopeXdr, ctx.passphrase));
  } catch {
    return { error: 'Could not unmarshal transaction', events: [] };
  }
  const checked = checkRequest(tx, authMode);
  if ('error' in checked) return { error: checked.error, events: [] };
  const { state } = ctx;
  const read = (id: string) => {
    const rec = state.get(id);
    const data = state.getData(id);
    return rec && data ? ledgerEntryXdr(data, rec.lastModified) : null;
  };
  const ledger = { sequence: ctx.latestSequence + 1, timestamp: BigInt(ctx.timestamp) };
  const footprintOp = footprintOperation(tx);
  if (footprintOp) {
    const sim = simulateFootprintOperation(
      ctx.host,
      tx,
      footprintOp,
      (key) => {
        const id = b64(key);
        const entry = read(id);
        return entry ? { entry, liveUntil: state.get(id)?.liveUntil ?? null } : null;
      },
      ledger,
    );
    if (!sim.ok) return { error: sim.error, events: [] };
    return {
      transactionData: b64(sim.transactionData),
      minResourceFee: sim.minResourceFee.toString(),
      events: [],
      ...(sim.restorePreamble && {
        restorePreamble: {
          transactionData: b64(sim.restorePreamble.transactionData),
          minResourceFee: sim.restorePreamble.minResourceFee.toString(),
        },
      }),
    };
  }
  const result = run(
    ctx.host,
    read,
    (id) => state.get(id)?.liveUntil,
    tx,
    checked.mode,
    ledger,
    useUpgradedAuth === true,
    instructionLeeway,
  );
  const events = result.diagnosticEvents.map(b64);
  if (!result.ok) return { error: result.error, events };
  return {
    transactionData: b64(result.transactionData),
    minResourceFee: result.minResourceFee.toString(),
    results: [{ auth: result.auth.map(b64), xdr: b64(result.returnValue) }],
    events,
    stateChanges: result.stateChanges.map((c) => ({
      type: c.before === null ? 'created' : c.after === null ? 'deleted' : 'updated',
      key: b64(c.key),
      before: c.before === null ? null : b64(c.before),
      after: c.after === null ? null : b64(c.after),
    })),
  };
}

/** The host's simulation of `tx` against a ledger being closed (a privileged job's transactions). */
export function simulateOn(
  host: SorobanHost,
  overlay: Overlay,
  tx: Transaction,
  authMode: AuthMode,
  closeTime: number,
): SimulateResult {
  return run(
    host,
    (id) => {
      const view = overlay.entry(id);
      return view ? ledgerEntryXdr(view.data, view.lastModified) : null;
    },
    (id) => overlay.entry(id)?.liveUntil,
    tx,
    authMode,
    { sequence: overlay.sequence, timestamp: BigInt(closeTime) },
  );
}
