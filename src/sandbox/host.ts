// The contract host: runs one host-function invocation against an Overlay, dispatching to the TypeScript
// contracts by the executable recorded in each contract instance entry. It keeps the call stack (for
// authorization matching and cross-contract calls), instance/persistent/temporary storage and events.
import { Address, xdr } from '@stellar/stellar-sdk';
import type { AuthManager, AuthMatch } from './auth.ts';
import type { ContractDefinition, ContractEnv, ContractStorage } from './contract-api.ts';
import { HostError } from './errors.ts';
import {
  contractCodeEntry,
  contractCodeKey,
  contractDataEntry,
  contractDataKey,
  type Durability,
  instanceKey,
  keyId,
  rawBytes,
} from './keys.ts';
import { CONTRACT_CALL_INSTRUCTIONS, STELLAR_ASSET_CALL_INSTRUCTIONS } from './fees.ts';
import { checkCall } from './spec-check.ts';
import type { Overlay } from './overlay.ts';
import { stellarAssetContract } from './stellar-asset.ts';
import { contractWasm, wasmHash } from './wasm.ts';

/** The code the host can run: the built-in Stellar Asset Contract and the network's contracts by wasm hash. */
export class ContractRegistry {
  readonly #byHash = new Map<string, { def: ContractDefinition; wasm: Buffer; hash: Buffer }>();
  readonly stellarAssetContract: ContractDefinition = stellarAssetContract;

  constructor(defs: readonly ContractDefinition[] = []) {
    for (const def of defs) this.register(def);
  }

  /** Registers `def` under the hash of its published wasm module; returns that hash and module. */
  register(def: ContractDefinition): { wasm: Buffer; hash: Buffer } {
    const wasm = contractWasm(def);
    const code = { def, wasm, hash: wasmHash(wasm) };
    this.#byHash.set(code.hash.toString('hex'), code);
    return code;
  }

  /** The wasm module and hash `def` was registered under. */
  codeOf(def: ContractDefinition): { wasm: Buffer; hash: Buffer } {
    for (const code of this.#byHash.values()) if (code.def === def) return code;
    throw new Error(`contract ${def.name} is not registered`);
  }

  resolve(executable: xdr.ContractExecutable): ContractDefinition | undefined {
    if (executable.type === 'contractExecutableStellarAsset') return this.stellarAssetContract;
    if (executable.type === 'contractExecutableWasm') {
      return this.#byHash.get(Buffer.from(rawBytes(executable.value)).toString('hex'))?.def;
    }
    return undefined;
  }
}

interface Frame {
  contractId: string;
  fn: string;
  args: xdr.ScVal[];
  auth: Map<string, AuthMatch>;
}

export interface HostContext {
  overlay: Overlay;
  registry: ContractRegistry;
  auth: AuthManager;
  ledgerSequence: number;
  ledgerTimestamp: bigint;
}

/** Maximum depth of cross-contract calls, as the Soroban host limits it. */
const MAX_CALL_DEPTH = 100;

export class Host {
  readonly events: xdr.ContractEvent[] = [];
  /** diagnostic events (errors where they arose), in order */
  readonly diagnostics: xdr.ContractEvent[] = [];
  /**
   * the diagnostic trace of the invocation, as the Soroban host records it: `fn_call` (topics
   * [fn_call, callee id, function], data the arguments) from the caller's frame, the contract events, and
   * `fn_return` (topics [fn_return, function], data the return value) from the callee's
   */
  readonly trace: xdr.ContractEvent[] = [];
  /** estimated CPU instructions of the calls made so far (fees.ts's per-call estimates) */
  instructions = 0;
  readonly #logged = new WeakSet<HostError>();
  readonly #stack: Frame[] = [];

  readonly #ctx: HostContext;

  constructor(ctx: HostContext) {
    this.#ctx = ctx;
  }

  /** Calls `fn` on `contractId` as the transaction's root invocation (or from another contract). */
  async invoke(contractId: string, fn: string, args: xdr.ScVal[]): Promise<xdr.ScVal> {
    if (this.#stack.length >= MAX_CALL_DEPTH)
      throw new HostError('Context', 'ExceededLimit', 'call depth exceeded');
    const { def } = this.#loadInstance(contractId);
    this.instructions +=
      def === this.#ctx.registry.stellarAssetContract
        ? STELLAR_ASSET_CALL_INSTRUCTIONS
        : (def.instructions?.[fn] ?? CONTRACT_CALL_INSTRUCTIONS);
    const caller = this.#stack[this.#stack.length - 1]?.contractId;
    this.trace.push(
      diagnosticTraceEvent(
        caller,
        [
          xdr.ScVal.scvSymbol('fn_call'),
          xdr.ScVal.scvBytes(Buffer.from(rawBytes(new Address(contractId).toScAddress().value))),
          xdr.ScVal.scvSymbol(fn),
        ],
        args.length === 0
          ? xdr.ScVal.scvVoid()
          : args.length === 1
            ? (args[0] as xdr.ScVal)
            : xdr.ScVal.scvVec(args),
      ),
    );
    this.#stack.push({ contractId, fn, args, auth: new Map() });
    try {
      if (def.interface && !fn.startsWith('__')) checkCall(def.interface, fn, args);
      const impl = fn.startsWith('__') ? undefined : def.functions[fn];
      if (!impl || !Object.hasOwn(def.functions, fn)) {
        throw new HostError(
          'WasmVm',
          'MissingValue',
          `trying to invoke non-existent contract function ${fn}`,
        );
      }
      const value = await impl(this.#env(contractId, def === this.#ctx.registry.stellarAssetContract), args);
      this.trace.push(
        diagnosticTraceEvent(contractId, [xdr.ScVal.scvSymbol('fn_return'), xdr.ScVal.scvSymbol(fn)], value),
      );
      return value;
    } catch (e) {
      this.#logError(contractId, e);
      throw e;
    } finally {
      this.#stack.pop();
    }
  }

  /**
   * Diagnostic event `["error", Error(…)]` in the frame of the contract where an error arose, once per
   * error (the host logs the origin; the callers it propagates through are not the cause).
   */
  #logError(contractId: string, e: unknown): void {
    if (!(e instanceof HostError) || this.#logged.has(e)) return;
    this.#logged.add(e);
    this.diagnostics.push(
      new xdr.ContractEvent({
        ext: xdr.ExtensionPoint.v0(),
        contractId: new Address(contractId).toScAddress().value as xdr.ContractId,
        type: xdr.ContractEventType.diagnostic,
        body: xdr.ContractEventBody.v0(
          new xdr.ContractEventV0({
            topics: [xdr.ScVal.scvSymbol('error'), xdr.ScVal.scvError(e.toScError())],
            data: xdr.ScVal.scvString(e.detail || e.message),
          }),
        ),
      }),
    );
  }

  /** Creates a contract instance and runs its constructor (genesis deployment). */
  async deploy(
    contractId: string,
    executable: xdr.ContractExecutable,
    def: ContractDefinition,
    args: xdr.ScVal[],
  ): Promise<void> {
    const key = keyId(instanceKey(contractId));
    if (this.#ctx.overlay.get(key))
      throw new HostError('Storage', 'ExistingValue', `contract ${contractId} exists`);
    if (executable.type === 'contractExecutableWasm') {
      const code = this.#ctx.registry.codeOf(def);
      this.#ctx.overlay.put(keyId(contractCodeKey(code.hash)), contractCodeEntry(code.hash, code.wasm));
    }
    this.#writeInstance(contractId, executable, []);
    this.#stack.push({ contractId, fn: '__constructor', args, auth: new Map() });
    try {
      if (def.interface?.functions.some((f) => f.name === '__constructor'))
        checkCall(def.interface, '__constructor', args);
      await def.construct?.(this.#env(contractId, def === this.#ctx.registry.stellarAssetContract), args);
    } catch (e) {
      this.#logError(contractId, e);
      throw e;
    } finally {
      this.#stack.pop();
    }
  }

  #loadInstance(contractId: string): { def: ContractDefinition; instance: xdr.ScContractInstance } {
    const data = this.#ctx.overlay.get(keyId(instanceKey(contractId)));
    if (!data) throw new HostError('Storage', 'MissingValue', `contract ${contractId} does not exist`);
    const entry = data.value as xdr.ContractDataEntry;
    const instance = entry.val.value as xdr.ScContractInstance;
    const def = this.#ctx.registry.resolve(instance.executable);
    if (!def) throw new HostError('Storage', 'MissingValue', `no code for contract ${contractId}`);
    return { def, instance };
  }

  #writeInstance(contractId: string, executable: xdr.ContractExecutable, storage: xdr.ScMapEntry[]): void {
    const val = xdr.ScVal.scvContractInstance(new xdr.ScContractInstance({ executable, storage }));
    this.#ctx.overlay.put(
      keyId(instanceKey(contractId)),
      contractDataEntry(contractId, xdr.ScVal.scvLedgerKeyContractInstance(), 'persistent', val),
    );
  }

  #env(contractId: string, builtin = false): ContractEnv {
    return {
      contractId,
      ...(builtin && { classicEntries: this.#ctx.overlay }),
      ledgerSequence: this.#ctx.ledgerSequence,
      ledgerTimestamp: this.#ctx.ledgerTimestamp,
      persistent: this.#dataStorage(contractId, 'persistent'),
      temporary: this.#dataStorage(contractId, 'temporary'),
      instance: this.#instanceStorage(contractId),
      requireAuth: (address) => this.#requireAuth(address),
      call: (id, fn, args) => this.invoke(id, fn, args),
      tryCall: async (id, fn, args) => {
        const snapshot = this.#ctx.overlay.checkpoint();
        const nEvents = this.events.length;
        const nDiagnostics = this.diagnostics.length;
        const nTrace = this.trace.length;
        try {
          return { ok: true, value: await this.invoke(id, fn, args) };
        } catch (error) {
          this.#ctx.overlay.restore(snapshot);
          this.events.length = nEvents;
          this.diagnostics.length = nDiagnostics;
          this.trace.length = nTrace;
          return { ok: false, error: error as Error };
        }
      },
      emit: (topics, data) => {
        const event = new xdr.ContractEvent({
          ext: xdr.ExtensionPoint.v0(),
          contractId: new Address(contractId).toScAddress().value as xdr.ContractId,
          type: xdr.ContractEventType.contract,
          body: xdr.ContractEventBody.v0(new xdr.ContractEventV0({ topics, data })),
        });
        this.events.push(event);
        this.trace.push(event);
      },
    };
  }

  #requireAuth(address: string): void {
    const frame = this.#stack[this.#stack.length - 1];
    if (!frame) throw new HostError('Context', 'InternalError', 'require_auth outside a contract call');
    // a contract is implicitly authorized for the calls it makes itself (invoker contract auth)
    const caller = this.#stack[this.#stack.length - 2];
    if (caller && caller.contractId === address) return;
    let parent: AuthMatch | undefined;
    for (let i = this.#stack.length - 2; i >= 0 && !parent; i--) parent = this.#stack[i]?.auth.get(address);
    if (frame.auth.has(address)) return; // already authorized for this very invocation
    frame.auth.set(
      address,
      this.#ctx.auth.require(
        address,
        { contractId: frame.contractId, fn: frame.fn, args: frame.args },
        parent,
      ),
    );
  }

  #dataStorage(contractId: string, durability: Durability): ContractStorage {
    const overlay = this.#ctx.overlay;
    const k = (key: xdr.ScVal) => keyId(contractDataKey(contractId, key, durability));
    return {
      get: (key) => {
        const data = overlay.get(k(key));
        return data ? (data.value as xdr.ContractDataEntry).val : undefined;
      },
      has: (key) => overlay.get(k(key)) !== undefined,
      set: (key, val) => overlay.put(k(key), contractDataEntry(contractId, key, durability, val)),
      remove: (key) => overlay.put(k(key), null),
    };
  }

  #instanceStorage(contractId: string): ContractStorage {
    const read = () => this.#loadInstance(contractId).instance;
    const find = (storage: xdr.ScMapEntry[], key: xdr.ScVal) => {
      const kx = key.toXdr('base64');
      return storage.findIndex((e) => e.key.toXdr('base64') === kx);
    };
    const update = (key: xdr.ScVal, val: xdr.ScVal | undefined) => {
      const instance = read();
      const storage = [...(instance.storage ?? [])];
      const i = find(storage, key);
      if (i >= 0) storage.splice(i, 1);
      if (val) storage.push(new xdr.ScMapEntry({ key, val }));
      // soroban keeps instance storage as a map sorted by key
      storage.sort((a, b) => Buffer.compare(Buffer.from(a.key.toXdr()), Buffer.from(b.key.toXdr())));
      this.#writeInstance(contractId, instance.executable, storage);
    };
    return {
      get: (key) => {
        const storage = read().storage ?? [];
        const i = find(storage, key);
        return i >= 0 ? storage[i]?.val : undefined;
      },
      has: (key) => find(read().storage ?? [], key) >= 0,
      set: (key, val) => update(key, val),
      remove: (key) => update(key, undefined),
    };
  }
}

/** A diagnostic event of the trace, in the frame of `contractId` (none for the transaction's root call). */
function diagnosticTraceEvent(
  contractId: string | undefined,
  topics: xdr.ScVal[],
  data: xdr.ScVal,
): xdr.ContractEvent {
  return new xdr.ContractEvent({
    ext: xdr.ExtensionPoint.v0(),
    contractId:
      contractId === undefined ? null : (new Address(contractId).toScAddress().value as xdr.ContractId),
    type: xdr.ContractEventType.diagnostic,
    body: xdr.ContractEventBody.v0(new xdr.ContractEventV0({ topics, data })),
  });
}
