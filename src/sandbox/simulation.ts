// simulateTransaction: the invocation run by the real host's simulation (soroban-simulation, as stellar-rpc's
// preflight runs it) against the committed state without changing it, in enforcing or recording auth mode:
// the return value, the footprint, resources and resource fee, the auth entries to sign (with fresh nonces),
// the diagnostic events, and the state changes the call would make.
import type { Transaction } from '#stellar-sdk';
import { decodeEnvelope, InvalidRequest } from './envelope.ts';
import { invokeOperationXdr, ledgerEntryXdr, sourceAccountXdr } from './invoke.ts';
import type { LedgerState } from './ledger-state.ts';
import type { Overlay } from './overlay.ts';
import type { SimulateResult, SorobanHost } from './soroban-host.ts';

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
  host: SorobanHost;
  passphrase: string;
  latestSequence: number;
  /** the next ledger's time (Unix seconds) */
  timestamp: number;
}

type AuthMode = 'enforce' | 'record' | 'record_allow_nonroot';

const b64 = (b: Buffer) => b.toString('base64');

/** One invokeHostFunction operation and a known auth mode, or InvalidRequest. */
function checkRequest(tx: Transaction, authMode: unknown): AuthMode | undefined {
  if (tx.operations.length !== 1 || tx.operations[0]?.type !== 'invokeHostFunction') {
    throw new InvalidRequest('simulation needs exactly one invokeHostFunction operation');
  }
  if (authMode === undefined) return undefined;
  if (authMode !== 'enforce' && authMode !== 'record' && authMode !== 'record_allow_nonroot') {
    throw new InvalidRequest(`invalid authMode ${String(authMode)}`);
  }
  return authMode;
}

/** Without an explicit mode, signed entries are enforced and none are recorded (stellar-rpc's default). */
function defaultMode(tx: Transaction): AuthMode {
  const op = tx.operations[0] as { auth?: unknown[] };
  return (op.auth?.length ?? 0) > 0 ? 'enforce' : 'record';
}

/** The host's simulation of `tx` reading entries through `read` (committed state, or a ledger being closed). */
function run(
  host: SorobanHost,
  read: (key: string) => Buffer | null,
  liveUntilOf: (key: string) => number | undefined,
  tx: Transaction,
  authMode: AuthMode,
  ledger: { sequence: number; timestamp: bigint },
  useUpgradedAuth = false,
): SimulateResult {
  return host.simulateInvoke({
    operation: invokeOperationXdr(tx),
    sourceAccount: sourceAccountXdr(tx),
    authMode,
    useUpgradedAuth,
    ledger,
    getEntry: (key) => {
      const id = b64(key);
      const entry = read(id);
      return entry ? { entry, liveUntil: liveUntilOf(id) ?? null } : null;
    },
  });
}

/**
 * Preflight, as Soroban RPC's simulateTransaction, against the next ledger. Never changes state.
 * `useUpgradedAuth`: record address credentials v2 (CAP-71) instead of v1.
 */
export function simulate(
  ctx: SimulationContext,
  envelopeXdr: unknown,
  authMode: unknown,
  useUpgradedAuth: unknown,
): SimulationResult {
  // a fee bump simulates as its inner transaction
  const { tx } = decodeEnvelope(envelopeXdr, ctx.passphrase);
  const mode = checkRequest(tx, authMode) ?? defaultMode(tx);
  const { state } = ctx;
  const result = run(
    ctx.host,
    (id) => {
      const rec = state.get(id);
      const data = state.getData(id);
      return rec && data ? ledgerEntryXdr(data, rec.lastModified) : null;
    },
    (id) => state.get(id)?.liveUntil,
    tx,
    mode,
    { sequence: ctx.latestSequence + 1, timestamp: BigInt(ctx.timestamp) },
    useUpgradedAuth === true,
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
