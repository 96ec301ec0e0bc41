// The real Soroban host (soroban-env-host and soroban-simulation 29.0.1, the libraries stellar-core and
// stellar-rpc run) as a native addon, built from soroban-host/ by scripts/build-soroban-host.ts into
// build/soroban-host/soroban_host.node. XDR crosses the boundary as bytes, as it does between stellar-core
// and its Rust host: applyInvoke applies one InvokeHostFunction operation as stellar-core does (outcome
// codes, fees, rent, ledger changes), simulateInvoke is stellar-rpc's preflight, and the testnet settings
// are published ones (soroban-host/config/).
import { existsSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The ledger a call runs in. */
export interface LedgerContext {
  sequence: number;
  /** close time, unix seconds */
  timestamp: bigint;
}

/** A footprint key with the ledger's entry for it. */
export interface FootprintEntry {
  /** LedgerKey XDR */
  key: Buffer;
  /** LedgerEntry XDR, or null when the ledger has no entry for the key */
  entry: Buffer | null;
  /** the entry's TTL (contract data and code); null for classic entries and absent ones */
  liveUntil: number | null;
}

export interface ApplyRequest {
  /** InvokeHostFunctionOp XDR (host function and signed authorization entries) */
  operation: Buffer;
  /** the transaction's SorobanTransactionData XDR (declared resources with the footprint, resource fee) */
  sorobanData: Buffer;
  /** AccountId XDR of the operation's source */
  sourceAccount: Buffer;
  /** the envelope's XDR size, for the size-dependent part of the non-refundable fee */
  transactionSizeBytes: number;
  ledger: LedgerContext;
  /** every footprint key: the read-only ones, then the read-write ones, each in footprint order */
  entries: FootprintEntry[];
  /** 32 bytes */
  prngSeed: Buffer;
}

/** stellar-core's InvokeHostFunction result codes. */
export type ApplyOutcome =
  'success' | 'trapped' | 'resourceLimitExceeded' | 'entryArchived' | 'insufficientRefundableFee';

/**
 * How an entry changed: `restored` is an archived entry brought back (auto-restore), `extended` a TTL
 * extension of an otherwise unchanged entry.
 */
export type ChangeKind = 'created' | 'updated' | 'deleted' | 'restored' | 'extended';

export interface LedgerChange {
  /** LedgerKey XDR */
  key: Buffer;
  readOnly: boolean;
  kind: ChangeKind;
  /** LedgerEntry XDR after the call (lastModifiedLedgerSeq set to the call's ledger); null when deleted */
  entry: Buffer | null;
  /** the TTL after the call, for contract data and code */
  liveUntil: number | null;
}

/** Fee the operation is charged, in stroops. */
export interface ApplyFee {
  /** from the declared resources and the envelope size; charged whatever the outcome */
  nonRefundable: bigint;
  /** rent + events; 0 when the operation failed (all of the refundable part is refunded) */
  refundableConsumed: bigint;
  rent: bigint;
  /** fee of the events and return value */
  events: bigint;
  /** the declared resource fee less the non-refundable fee: what rent and events may take */
  refundableDeclared: bigint;
}

export interface ApplyResult {
  outcome: ApplyOutcome;
  /** ScVal XDR, on success */
  returnValue: Buffer | null;
  /** the host's error (its text, with the host's event log) when the host function failed */
  error: string | null;
  /** only on success: created, updated, deleted and restored read-write entries, and TTL extensions */
  changes: LedgerChange[];
  /** ContractEvent XDR, on success */
  contractEvents: Buffer[];
  /** DiagnosticEvent XDR: the host's, then stellar-core's own (`host_fn_failed`, limit errors) */
  diagnosticEvents: Buffer[];
  fee: ApplyFee;
  cpuInstructions: bigint;
  memoryBytes: bigint;
  /** disk reads metered: classic entries and restored archived entries */
  diskReadBytes: number;
  /** bytes of the read-write entries written back */
  writeBytes: number;
  /** size of the contract events and the return value */
  eventsSizeBytes: number;
  /** wall time of the host invocation alone */
  invokeNanos: bigint;
}

/** One ExtendFootprintTTL (`extend`, to `extendTo` ledgers past the current one) or RestoreFootprint. */
export interface FootprintApplyRequest {
  kind: 'extend' | 'restore';
  extendTo?: number;
  /** the transaction's SorobanTransactionData XDR (its footprint names the entries) */
  sorobanData: Buffer;
  /** the envelope's XDR size, for the size-dependent part of the non-refundable fee */
  transactionSizeBytes: number;
  ledger: LedgerContext;
  /** every footprint key with the ledger's entry: the read-only ones, then the read-write ones */
  entries: FootprintEntry[];
}

/** stellar-core's ExtendFootprintTTL / RestoreFootprint result codes. */
export type FootprintOutcome =
  'success' | 'malformed' | 'resourceLimitExceeded' | 'insufficientRefundableFee';

export interface FootprintApplyResult {
  outcome: FootprintOutcome;
  /** on success: the entries whose TTL was set (LedgerKey XDR), and whether each was restored */
  changes: { key: Buffer; liveUntil: number; restored: boolean }[];
  /** DiagnosticEvent XDR: stellar-core's error events when it failed */
  diagnosticEvents: Buffer[];
  /** `events` is always 0: these operations emit none */
  fee: ApplyFee;
  diskReadBytes: number;
  writeBytes: number;
}

/** What a ledger holds for a key, as simulation reads it (archived entries included, with their TTL). */
export interface SnapshotEntry {
  /** LedgerEntry XDR */
  entry: Buffer;
  /** TTL of contract data and code (may be below the ledger: archived); null for classic entries */
  liveUntil: number | null;
}

/** Synchronous read of committed state by LedgerKey XDR; null when there is no entry. */
export type SnapshotReader = (key: Buffer) => SnapshotEntry | null;

/** stellar-rpc's authorization modes (`record_allow_nonroot` is its `disable_non_root_auth = false`). */
export type AuthMode = 'enforce' | 'record' | 'record_allow_nonroot';

export interface SimulateRequest {
  /** InvokeHostFunctionOp XDR; its auth entries are used with `enforce` and ignored when recording */
  operation: Buffer;
  /** AccountId XDR */
  sourceAccount: Buffer;
  authMode: AuthMode;
  /** record `AddressV2` credentials (stellar-rpc's `useUpgradedAuth`); default false */
  useUpgradedAuth?: boolean;
  /** the ledger the transaction would be applied in (the next one) */
  ledger: LedgerContext;
  /** added to the simulated instructions if above the default 50,000 (stellar-rpc's resourceConfig) */
  instructionLeeway?: number;
  getEntry: SnapshotReader;
}

export interface StateChange {
  /** LedgerKey XDR */
  key: Buffer;
  /** LedgerEntry XDR before and after; null when absent */
  before: Buffer | null;
  after: Buffer | null;
}

export interface SimulateSuccess {
  ok: true;
  /** ScVal XDR */
  returnValue: Buffer;
  /** SorobanAuthorizationEntry XDR: recorded ones to sign (fresh nonces), or the enforced ones */
  auth: Buffer[];
  /** SorobanTransactionData XDR with the adjusted resources and the resource fee */
  transactionData: Buffer;
  minResourceFee: bigint;
  /** ContractEvent XDR */
  contractEvents: Buffer[];
  /** DiagnosticEvent XDR */
  diagnosticEvents: Buffer[];
  stateChanges: StateChange[];
  /** measured, before the adjustment */
  cpuInstructions: bigint;
  memoryBytes: bigint;
  /** the envelope size the fee was computed for: the largest envelope of this operation, adjusted */
  transactionSizeBytes: number;
  /** the events and return value size the fee was computed for */
  eventsSizeBytes: number;
}

export interface SimulateFailure {
  ok: false;
  /** the host's error (with its event log), as stellar-rpc returns it */
  error: string;
  diagnosticEvents: Buffer[];
  cpuInstructions: bigint;
  memoryBytes: bigint;
}

export type SimulateResult = SimulateSuccess | SimulateFailure;

export type FootprintSimulation =
  | {
      ok: true;
      /** SorobanTransactionData XDR */
      transactionData: Buffer;
      minResourceFee: bigint;
      /** for an extension touching archived entries: the RestoreFootprint to submit first */
      restorePreamble: { transactionData: Buffer; minResourceFee: bigint } | null;
    }
  | { ok: false; error: string };

export interface ResourceFee {
  nonRefundable: bigint;
  refundable: bigint;
}

export interface NetworkLimits {
  txMaxInstructions: number;
  txMemoryLimit: number;
  txMaxContractEventsSizeBytes: number;
  contractMaxSizeBytes: number;
  contractDataEntrySizeBytes: number;
  contractDataKeySizeBytes: number;
  txMaxDiskReadEntries: number;
  txMaxDiskReadBytes: number;
  txMaxWriteLedgerEntries: number;
  txMaxWriteBytes: number;
  txMaxFootprintEntries: number;
  txMaxSizeBytes: number;
}

export interface HostInfo {
  hostVersion: string;
  protocolVersion: number;
  /** sha256 of the passphrase */
  networkId: Buffer;
  baseReserve: number;
  minPersistentTtl: number;
  minTemporaryTtl: number;
  maxEntryTtl: number;
  /** average of the live state size window */
  averageStateSize: number;
  /** rent write fee per 1 KB derived from that size */
  rentFeePer1Kb: bigint;
  limits: NetworkLimits;
}

/** A settings file read into ConfigSetting LedgerEntry XDR. */
export interface ConfigSettingsFile {
  /** every setting, published and synthesised, as ConfigSetting LedgerEntry XDR */
  settings: Buffer[];
  /** published settings this XDR version does not know (or knows only in part) */
  unknown: string[];
  /** settings a network keeps for itself, added because the file does not publish them */
  synthesised: string[];
}

export interface SorobanHostOptions {
  networkPassphrase: string;
  /** must be the host's protocol, 29 */
  protocolVersion: number;
  /** stroops, e.g. 5_000_000 */
  baseReserve: number;
  /** the network's ConfigSetting LedgerEntry XDRs (testnetConfigSettings() or the ledger's) */
  configSettings: Buffer[];
}

// The addon's own shapes (napi-rs objects: an optional input field is absent or undefined, never null).
interface NativeSnapshotEntry {
  entry: Buffer;
  liveUntil?: number;
}
interface NativeFootprintEntry {
  key: Buffer;
  entry?: Buffer;
  liveUntil?: number;
}
type NativeReader = (key: Buffer) => NativeSnapshotEntry | null;
interface NativeSimulateResult {
  error: string | null;
  returnValue: Buffer | null;
  auth: Buffer[];
  transactionData: Buffer | null;
  minResourceFee: bigint;
  contractEvents: Buffer[];
  diagnosticEvents: Buffer[];
  stateChanges: StateChange[];
  cpuInstructions: bigint;
  memoryBytes: bigint;
  transactionSizeBytes: number;
  eventsSizeBytes: number;
}
interface NativeFootprintResult {
  error: string | null;
  transactionData: Buffer | null;
  minResourceFee: bigint;
  restoreTransactionData: Buffer | null;
  restoreMinResourceFee: bigint | null;
}
interface NativeFootprintRequest {
  keys: Buffer[];
  extendTo?: number;
  ledger: LedgerContext;
}
interface NativeHost {
  info(): HostInfo;
  applyInvoke(request: Omit<ApplyRequest, 'entries'> & { entries: NativeFootprintEntry[] }): ApplyResult;
  applyFootprint(
    request: Omit<FootprintApplyRequest, 'entries'> & { entries: NativeFootprintEntry[] },
  ): FootprintApplyResult;
  simulateInvoke(request: Omit<SimulateRequest, 'getEntry'>, getEntry: NativeReader): NativeSimulateResult;
  simulateExtendTtl(request: NativeFootprintRequest, getEntry: NativeReader): NativeFootprintResult;
  simulateRestore(request: NativeFootprintRequest, getEntry: NativeReader): NativeFootprintResult;
  transactionResourceFee(request: {
    sorobanData: Buffer;
    transactionSizeBytes: number;
    eventsSizeBytes?: number;
  }): ResourceFee;
  hasCachedModule(wasmHash: Buffer): boolean;
  clearModuleCache(): void;
}
interface NativeAddon {
  SorobanHost: new (options: SorobanHostOptions) => NativeHost;
  testnetConfig(): ConfigSettingsFile;
  configFromUpgradeJson(json: string): ConfigSettingsFile;
  panicOnHostThread(): void;
}

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '../..');
/** Where scripts/build-soroban-host.ts puts the addon. */
export const SOROBAN_HOST_ADDON = path.join(repoRoot, 'build', 'soroban-host', 'soroban_host.node');

let loaded: NativeAddon | undefined;

function addon(): NativeAddon {
  if (!loaded) {
    if (!existsSync(SOROBAN_HOST_ADDON)) {
      throw new Error(
        `the Soroban host addon is not built (${SOROBAN_HOST_ADDON} missing): run \`npm run build\``,
      );
    }
    loaded = createRequire(import.meta.url)(SOROBAN_HOST_ADDON) as NativeAddon;
  }
  return loaded;
}

function nativeReader(getEntry: SnapshotReader): NativeReader {
  return (key) => {
    const found = getEntry(key);
    return found ? { entry: found.entry, liveUntil: found.liveUntil ?? undefined } : null;
  };
}

function footprintResult(r: NativeFootprintResult): FootprintSimulation {
  if (r.error !== null || r.transactionData === null) {
    return { ok: false, error: r.error ?? 'simulation produced no transaction data' };
  }
  return {
    ok: true,
    transactionData: r.transactionData,
    minResourceFee: r.minResourceFee,
    restorePreamble:
      r.restoreTransactionData !== null && r.restoreMinResourceFee !== null
        ? { transactionData: r.restoreTransactionData, minResourceFee: r.restoreMinResourceFee }
        : null,
  };
}

export class SorobanHost {
  readonly #native: NativeHost;

  constructor(options: SorobanHostOptions) {
    this.#native = new (addon().SorobanHost)(options);
  }

  /** Testnet's published settings (soroban-host/config/testnet-p27.json) as ConfigSetting LedgerEntry XDR. */
  static testnetConfigSettings(): Buffer[] {
    return addon().testnetConfig().settings;
  }

  /** The same, with what the file has that this XDR version cannot read and what was synthesised. */
  static testnetConfig(): ConfigSettingsFile {
    return addon().testnetConfig();
  }

  /** Any ConfigUpgradeSet in stellar-xdr's JSON form, completed the same way. */
  static configFromUpgradeJson(json: string): ConfigSettingsFile {
    return addon().configFromUpgradeJson(json);
  }

  info(): HostInfo {
    return this.#native.info();
  }

  /** Applies one InvokeHostFunction operation as stellar-core applies it. */
  applyInvoke(request: ApplyRequest): ApplyResult {
    const entries = request.entries.map((e) => ({
      key: e.key,
      entry: e.entry ?? undefined,
      liveUntil: e.liveUntil ?? undefined,
    }));
    return this.#native.applyInvoke({ ...request, entries });
  }

  /** Applies one ExtendFootprintTTL or RestoreFootprint operation as stellar-core applies it. */
  applyFootprint(request: FootprintApplyRequest): FootprintApplyResult {
    const entries = request.entries.map((e) => ({
      key: e.key,
      entry: e.entry ?? undefined,
      liveUntil: e.liveUntil ?? undefined,
    }));
    return this.#native.applyFootprint({ ...request, entries });
  }

  /** simulateTransaction of one InvokeHostFunction operation, as stellar-rpc's preflight computes it. */
  simulateInvoke(request: SimulateRequest): SimulateResult {
    const { getEntry, ...rest } = request;
    const r = this.#native.simulateInvoke(rest, nativeReader(getEntry));
    if (r.error !== null || r.returnValue === null || r.transactionData === null) {
      return {
        ok: false,
        error: r.error ?? 'simulation produced no result',
        diagnosticEvents: r.diagnosticEvents,
        cpuInstructions: r.cpuInstructions,
        memoryBytes: r.memoryBytes,
      };
    }
    return {
      ok: true,
      returnValue: r.returnValue,
      auth: r.auth,
      transactionData: r.transactionData,
      minResourceFee: r.minResourceFee,
      contractEvents: r.contractEvents,
      diagnosticEvents: r.diagnosticEvents,
      stateChanges: r.stateChanges,
      cpuInstructions: r.cpuInstructions,
      memoryBytes: r.memoryBytes,
      transactionSizeBytes: r.transactionSizeBytes,
      eventsSizeBytes: r.eventsSizeBytes,
    };
  }

  /** ExtendFootprintTTL preflight: extend `keys` (LedgerKey XDR) to live `extendTo` more ledgers. */
  simulateExtendTtl(request: {
    keys: Buffer[];
    extendTo: number;
    ledger: LedgerContext;
    getEntry: SnapshotReader;
  }): FootprintSimulation {
    const { getEntry, ...rest } = request;
    return footprintResult(this.#native.simulateExtendTtl(rest, nativeReader(getEntry)));
  }

  /** RestoreFootprint preflight: restore the archived entries among `keys` (LedgerKey XDR). */
  simulateRestore(request: {
    keys: Buffer[];
    ledger: LedgerContext;
    getEntry: SnapshotReader;
  }): FootprintSimulation {
    const { getEntry, ...rest } = request;
    return footprintResult(this.#native.simulateRestore(rest, nativeReader(getEntry)));
  }

  /**
   * Non-refundable and refundable fee of a transaction's declared resources, as stellar-core computes them
   * (takes SorobanTransactionData, not bare SorobanResources: archived entries being restored count as disk
   * reads). `eventsSizeBytes` is 0 at admission.
   */
  transactionResourceFee(request: {
    sorobanData: Buffer;
    transactionSizeBytes: number;
    eventsSizeBytes?: number;
  }): ResourceFee {
    return this.#native.transactionResourceFee(request);
  }

  /** Whether the module cache holds parsed code for this Wasm hash (32 bytes). */
  hasCachedModule(wasmHash: Buffer): boolean {
    return this.#native.hasCachedModule(wasmHash);
  }

  /** Forgets every parsed module, as a restarted stellar-core would have to parse them again. */
  clearModuleCache(): void {
    this.#native.clearModuleCache();
  }
}

/** Panics inside the addon's host thread; the panic comes back as a thrown Error (for tests). */
export function panicOnHostThreadForTest(): void {
  addon().panicOnHostThread();
}
