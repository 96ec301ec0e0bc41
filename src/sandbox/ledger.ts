// The sandbox ledger: admits signed transaction envelopes (the checks stellar-core makes), applies them
// atomically when a ledger closes, simulates invocations for preflight, and records results and events.
import {
  Address,
  FeeBumpTransaction,
  hash,
  Keypair,
  StrKey,
  type Transaction,
  TransactionBuilder,
  xdr,
} from '@stellar/stellar-sdk';
import { AuthManager } from './auth.ts';
import { verifyEd25519 } from './ed25519.ts';
import { HostError } from './errors.ts';
import { type ContractRegistry, Host } from './host.ts';
import { accountEntryData, accountKey, keyId, rawBytes } from './keys.ts';
import { entryRecords, type Footprint, Overlay } from './overlay.ts';
import type { EventRecord, LedgerMeta, LedgerStore, TxRecord } from './store.ts';
import {
  BASE_FEE,
  BASE_RESERVE,
  diagnosticEvent,
  errorResult,
  feeBumpInnerError,
  feeBumpResult,
  invokeResult,
  ledgerEntryChanges,
  ledgerHeader,
  resourceFeeFor,
  type TxErrorCode,
  transactionMeta,
} from './xdr-records.ts';

export const STANDALONE_PASSPHRASE = 'Standalone Network ; February 2017';
const INSTRUCTIONS = 10_000_000;

export interface SendResult {
  hash: string;
  status: 'PENDING' | 'DUPLICATE' | 'TRY_AGAIN_LATER' | 'ERROR';
  errorResultXdr?: string;
}

export type SimulationResult =
  | { error: string; events: string[] }
  | {
      transactionData: string;
      minResourceFee: string;
      results: { auth: string[]; xdr: string }[];
      events: string[];
    };

interface Pending {
  hash: string;
  /** the transaction that runs (the inner one of a fee bump) */
  tx: Transaction;
  feeBump?: FeeBumpTransaction;
  envelopeXdr: string;
}

/** A privileged change applied at the next close (genesis, friendbot): runs with these addresses pre-authorized. */
/** A transaction a privileged job performed (friendbot), recorded like any applied transaction. */
export interface JobTransaction {
  hash: string;
  envelope: xdr.TransactionEnvelope;
  result: xdr.TransactionResult;
  meta: xdr.TransactionMeta;
  events: xdr.ContractEvent[];
}

/**
 * A privileged change applied at the next close (friendbot): it runs with every authorization granted and
 * returns the transactions it stands for, so that getTransaction and getEvents see them.
 */
export type InternalJob = (
  host: Host,
  overlay: Overlay,
  ledgerSequence: number,
) => JobTransaction[] | Promise<JobTransaction[]>;

/** Thrown for requests the RPC must answer with a JSON-RPC "invalid params" error. */
export class InvalidRequest extends Error {}

export class Ledger {
  readonly networkId: Uint8Array;
  private pending: Pending[] = [];
  private jobs: { job: InternalJob; resolve: (txs: JobTransaction[]) => void; reject: (e: Error) => void }[] =
    [];
  private closing: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | undefined;
  private readonly closeWaiters: (() => void)[] = [];

  constructor(
    readonly store: LedgerStore,
    readonly registry: ContractRegistry,
    readonly passphrase = STANDALONE_PASSPHRASE,
  ) {
    this.networkId = hash(new TextEncoder().encode(passphrase));
  }

  get latest(): LedgerMeta {
    if (!this.store.meta) throw new Error('ledger not initialised');
    return this.store.meta;
  }

  /** Starts closing a ledger every `ms` milliseconds. */
  start(ms: number): void {
    const tick = () => {
      this.closing = this.closing
        .then(() => this.closeLedger())
        .catch((e) => console.error('ledger close failed', e));
      this.closing.then(() => {
        if (this.timer) this.timer = setTimeout(tick, ms);
      });
    };
    this.timer = setTimeout(tick, ms);
  }

  async stop(): Promise<void> {
    const t = this.timer;
    this.timer = undefined;
    if (t) clearTimeout(t);
    await this.closing;
  }

  /** Resolves after the next ledger has closed. */
  nextClose(): Promise<void> {
    return new Promise((resolve) => this.closeWaiters.push(resolve));
  }

  /** Queues a privileged job for the next ledger; resolves once that ledger is committed. */
  runInternal(job: InternalJob): Promise<JobTransaction[]> {
    return new Promise((resolve, reject) => this.jobs.push({ job, resolve, reject }));
  }

  // ---------------------------------------------------------------- admission

  private decode(envelopeXdr: unknown): { tx: Transaction; feeBump?: FeeBumpTransaction } {
    if (typeof envelopeXdr !== 'string' || envelopeXdr.length === 0)
      throw new InvalidRequest('transaction must be a base64 string');
    let tx: Transaction | FeeBumpTransaction;
    try {
      tx = TransactionBuilder.fromXDR(envelopeXdr, this.passphrase);
    } catch (e) {
      throw new InvalidRequest(`could not unmarshal transaction: ${(e as Error).message}`);
    }
    return tx instanceof FeeBumpTransaction ? { tx: tx.innerTransaction, feeBump: tx } : { tx };
  }

  submit(envelopeXdr: unknown): SendResult {
    const { tx, feeBump } = this.decode(envelopeXdr);
    const txHash = Buffer.from((feeBump ?? tx).hash()).toString('hex');
    if (this.pending.some((p) => p.hash === txHash)) return { hash: txHash, status: 'DUPLICATE' };
    if (this.pending.some((p) => p.tx.source === tx.source))
      return { hash: txHash, status: 'TRY_AGAIN_LATER' };
    const failure = this.admissible(
      { hash: txHash, tx, feeBump, envelopeXdr: envelopeXdr as string },
      this.store,
      now(),
    );
    if (failure) return { hash: txHash, status: 'ERROR', errorResultXdr: failure.toXdr('base64') };
    this.pending.push({ hash: txHash, tx, feeBump, envelopeXdr: envelopeXdr as string });
    return { hash: txHash, status: 'PENDING' };
  }

  /** Checks a (possibly fee-bumped) transaction; returns the result that refuses it, or undefined. */
  /**
   * Checks a (possibly fee-bumped) transaction; returns the result that refuses it, or undefined.
   * `signed`: signatures were already verified at admission (envelopes are immutable, keys never rotate here).
   */
  private admissible(
    p: Pending,
    state: LedgerStore | Overlay,
    time: number,
    signed = false,
  ): xdr.TransactionResult | undefined {
    if (!p.feeBump) {
      const code = this.validate(p.tx, state, time, false, signed);
      return code ? errorResult(code) : undefined;
    }
    const fb = p.feeBump;
    const payer = readAccount(state, fb.feeSource);
    if (!payer) return errorResult('txNoAccount');
    const sig = signed ? undefined : checkSigners(fb.hash(), fb.signatures, [fb.feeSource]);
    if (sig) return errorResult(sig);
    const data = this.sorobanData(p.tx);
    const resourceFee = data ? BigInt(data.resourceFee as unknown as bigint) : 0n;
    // the outer fee covers the resource fee and the inclusion fee of both envelopes (operations + 1)
    if (BigInt(fb.fee) < resourceFee + 2n * BASE_FEE) return errorResult('txInsufficientFee');
    if (payer.balance - BigInt(2 * BASE_RESERVE) < BigInt(fb.fee))
      return errorResult('txInsufficientBalance');
    const inner = this.validate(p.tx, state, time, true, signed);
    return inner ? feeBumpInnerError(p.tx.hash(), inner) : undefined;
  }

  private sorobanData(tx: Transaction): xdr.SorobanTransactionData | undefined {
    // re-encoding the envelope is costly and the transaction never changes: remember the answer
    if (sorobanDataCache.has(tx)) return sorobanDataCache.get(tx);
    const env = tx.toEnvelope();
    const ext = env.type === 'envelopeTypeTx' ? (env.value as xdr.TransactionV1Envelope).tx.ext : undefined;
    const data = ext?.type === 'sorobanData' ? (ext.value as xdr.SorobanTransactionData) : undefined;
    sorobanDataCache.set(tx, data);
    return data;
  }

  /** stellar-core's validity checks; returns the failure code or undefined. */
  private validate(
    tx: Transaction,
    state: LedgerStore | Overlay,
    now: number,
    feeBumped = false,
    signed = false,
  ): TxErrorCode | undefined {
    if (tx.operations.length === 0) return 'txMissingOperation';
    if (tx.operations.length !== 1 || tx.operations[0]?.type !== 'invokeHostFunction')
      return 'txNotSupported';
    const data = this.sorobanData(tx);
    if (!data) return 'txMalformed';
    const account = readAccount(state, tx.source);
    if (!account) return 'txNoAccount';
    const tb = tx.timeBounds;
    if (tb) {
      if (BigInt(tb.minTime) > BigInt(now)) return 'txTooEarly';
      if (BigInt(tb.maxTime) !== 0n && BigInt(tb.maxTime) < BigInt(now)) return 'txTooLate';
    }
    if (BigInt(tx.sequence) !== account.seqNum + 1n) return 'txBadSeq';
    const resourceFee = BigInt(data.resourceFee as unknown as bigint);
    const fp = data.resources.footprint;
    if (resourceFee < resourceFeeFor(fp.readOnly.length, fp.readWrite.length)) return 'txSorobanInvalid';
    // a fee-bumped transaction's own fee is not charged; the fee source pays
    if (!feeBumped && BigInt(tx.fee) < resourceFee + BASE_FEE) return 'txInsufficientFee';
    const sigCode = signed ? undefined : this.checkSignatures(tx);
    if (sigCode) return sigCode;
    if (!feeBumped && account.balance - BigInt(2 * BASE_RESERVE) < resourceFee + BASE_FEE)
      return 'txInsufficientBalance';
    return undefined;
  }

  private checkSignatures(tx: Transaction): TxErrorCode | undefined {
    const signers = [tx.source];
    const opSource = tx.operations[0]?.source;
    if (opSource && opSource !== tx.source) {
      if (!StrKey.isValidEd25519PublicKey(opSource)) return 'txNotSupported';
      signers.push(opSource);
    }
    return checkSigners(tx.hash(), tx.signatures, signers);
  }

  // ---------------------------------------------------------------- execution

  private invocation(tx: Transaction): {
    contractId: string;
    fn: string;
    args: xdr.ScVal[];
    auth: xdr.SorobanAuthorizationEntry[];
  } {
    const op = tx.operations[0] as {
      type: string;
      func: xdr.HostFunction;
      auth?: xdr.SorobanAuthorizationEntry[];
    };
    if (op.func.type !== 'hostFunctionTypeInvokeContract') {
      throw new HostError(
        'Value',
        'InvalidInput',
        `host function ${op.func.type} is not supported by the sandbox`,
      );
    }
    const c = op.func.value as xdr.InvokeContractArgs;
    return {
      contractId: Address.fromScAddress(c.contractAddress).toString(),
      fn: String(c.functionName),
      args: c.args,
      auth: op.auth ?? [],
    };
  }

  /** Preflight, as Soroban RPC's simulateTransaction. Never changes state. */
  async simulate(
    envelopeXdr: unknown,
    authMode: unknown,
    useUpgradedAuth: unknown,
  ): Promise<SimulationResult> {
    // a fee bump simulates as its inner transaction
    const { tx } = this.decode(envelopeXdr);
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
    const overlay = new Overlay(this.store);
    let inv: ReturnType<Ledger['invocation']>;
    try {
      inv = this.invocation(tx);
    } catch (e) {
      return { error: (e as Error).message, events: [] };
    }
    const mode =
      authMode === 'enforce' || (authMode === undefined && inv.auth.length > 0) ? 'enforce' : 'record';
    const ledgerSequence = this.latest.sequence + 1;
    const auth = new AuthManager(
      mode,
      { networkId: this.networkId, ledgerSequence, sourceAccount: source, overlay },
      mode === 'enforce' ? inv.auth : [],
    );
    const host = new Host({
      overlay,
      registry: this.registry,
      auth,
      ledgerSequence,
      ledgerTimestamp: BigInt(Math.floor(Date.now() / 1000)),
    });
    let retval: xdr.ScVal;
    try {
      retval = await host.invoke(inv.contractId, inv.fn, inv.args);
    } catch (e) {
      const events = host.events.map((ev) => diagnosticEvent(ev, false).toXdr('base64'));
      return { error: (e as Error).message, events };
    }
    const authEntries = mode === 'record' ? auth.recordedEntries(useUpgradedAuth === true) : inv.auth;
    const fp = overlay.footprint();
    if (mode === 'record') {
      for (const k of auth.recordedNonceKeys(authEntries)) {
        if (k.startsWith(keyId(accountKey(source)))) continue;
        if (xdr.LedgerKey.fromXdr(k, 'base64').type === 'account') fp.readOnly.add(k);
        else fp.readWrite.add(k);
      }
    }
    const toKeys = (s: Set<string>) => [...s].sort().map((k) => xdr.LedgerKey.fromXdr(k, 'base64'));
    const readOnly = toKeys(fp.readOnly);
    const readWrite = toKeys(fp.readWrite);
    const resourceFee = resourceFeeFor(readOnly.length, readWrite.length);
    const txData = new xdr.SorobanTransactionData({
      ext: xdr.SorobanTransactionDataExt.v0(),
      resources: new xdr.SorobanResources({
        footprint: new xdr.LedgerFootprint({ readOnly, readWrite }),
        instructions: INSTRUCTIONS,
        diskReadBytes: 10_000 * (readOnly.length + readWrite.length),
        writeBytes: 10_000 * readWrite.length,
      }),
      resourceFee,
    });
    return {
      transactionData: txData.toXdr('base64'),
      minResourceFee: resourceFee.toString(),
      results: [{ auth: authEntries.map((a) => a.toXdr('base64')), xdr: retval.toXdr('base64') }],
      events: host.events.map((ev) => diagnosticEvent(ev, true).toXdr('base64')),
    };
  }

  /** Closes one ledger: applies privileged jobs, then queued transactions in arrival order. */
  async closeLedger(): Promise<void> {
    const prev = this.latest;
    const sequence = prev.sequence + 1;
    const closeTime = Math.max(prev.closeTime, Math.floor(Date.now() / 1000));
    const closedAt = new Date(closeTime * 1000).toISOString().replace('.000Z', 'Z');
    const ledgerOverlay = new Overlay(this.store);
    const jobs = this.jobs;
    this.jobs = [];
    const jobOutcomes: (JobTransaction[] | Error)[] = [];
    const txs: TxRecord[] = [];
    let order = 0;
    const events: EventRecord[] = [];
    const record = (evs: xdr.ContractEvent[], txHash: string, order: number, op: number) => {
      evs.forEach((ev, j) => {
        const body = ev.body.value as xdr.ContractEventV0;
        events.push({
          id: eventId(sequence, order, op, j),
          ledger: sequence,
          ledgerClosedAt: closedAt,
          transactionIndex: order,
          operationIndex: op - 1,
          txHash,
          contractId: StrKey.encodeContract(Buffer.from(rawBytes(ev.contractId))),
          topics: body.topics.map((t) => t.toXdr('base64')),
          value: body.data.toXdr('base64'),
        });
      });
    };
    for (const { job } of jobs) {
      const overlay = new Overlay(ledgerOverlay);
      const host = this.internalHost(overlay, sequence, closeTime);
      try {
        const done = await job(host, overlay, sequence);
        overlay.mergeInto(ledgerOverlay);
        for (const jt of done) {
          order++;
          txs.push({
            hash: jt.hash,
            status: 'SUCCESS',
            ledger: sequence,
            createdAt: closeTime,
            applicationOrder: order,
            feeBump: false,
            envelopeXdr: jt.envelope.toXdr('base64'),
            resultXdr: jt.result.toXdr('base64'),
            resultMetaXdr: jt.meta.toXdr('base64'),
            contractEvents: [jt.events.map((e) => e.toXdr('base64'))],
            diagnosticEvents: [],
          });
          record(jt.events, jt.hash, order, 1);
        }
        jobOutcomes.push(done);
      } catch (e) {
        jobOutcomes.push(e as Error);
      }
    }

    const pending = this.pending;
    this.pending = [];
    let slice = performance.now();
    for (const p of pending) {
      order++;
      const { record: txRecord, contractEvents } = await this.apply(
        p,
        ledgerOverlay,
        sequence,
        closeTime,
        order,
      );
      txs.push(txRecord);
      record(contractEvents, p.hash, order, 1);
      // a big ledger must not stall the RPC: let queued requests run between transactions
      if (performance.now() - slice > 20) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
      }
    }

    const txSetHash = hash(Buffer.concat(pending.map((p) => Buffer.from(p.hash, 'hex'))));
    const header = ledgerHeader({
      sequence,
      closeTime,
      previousHash: Buffer.from(prev.hash, 'hex'),
      txSetHash,
    });
    const entries = entryRecords(ledgerOverlay, sequence);
    await this.store.commit({
      meta: {
        sequence,
        closeTime,
        hash: Buffer.from(hash(header.toXdr())).toString('hex'),
        headerXdr: header.toXdr('base64'),
        oldestLedger: prev.oldestLedger,
        oldestCloseTime: prev.oldestCloseTime,
      },
      entries,
      txs,
      events,
    });
    jobs.forEach(({ resolve, reject }, i) => {
      const outcome = jobOutcomes[i] as JobTransaction[] | Error;
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    });
    for (const w of this.closeWaiters.splice(0)) w();
  }

  private internalHost(overlay: Overlay, sequence: number, closeTime: number): Host {
    const auth = new AuthManager('record', {
      networkId: this.networkId,
      ledgerSequence: sequence,
      sourceAccount: '',
      overlay,
    });
    return new Host({
      overlay,
      registry: this.registry,
      auth,
      ledgerSequence: sequence,
      ledgerTimestamp: BigInt(closeTime),
    });
  }

  private async apply(
    p: Pending,
    ledgerOverlay: Overlay,
    sequence: number,
    closeTime: number,
    order: number,
  ): Promise<{ record: TxRecord; contractEvents: xdr.ContractEvent[] }> {
    const base = {
      hash: p.hash,
      ledger: sequence,
      createdAt: closeTime,
      applicationOrder: order,
      feeBump: p.feeBump !== undefined,
      envelopeXdr: p.envelopeXdr,
    };
    const refused = this.admissible(p, ledgerOverlay, closeTime, true);
    const empty = transactionMeta([], undefined, []).toXdr('base64');
    if (refused) {
      const record: TxRecord = {
        ...base,
        status: 'FAILED',
        resultXdr: refused.toXdr('base64'),
        resultMetaXdr: empty,
        contractEvents: [[]],
        diagnosticEvents: [],
      };
      return { record, contractEvents: [] };
    }
    // fee and sequence number are consumed whether or not the operation succeeds
    const data = this.sorobanData(p.tx) as xdr.SorobanTransactionData;
    const baseFee = BigInt(data.resourceFee as unknown as bigint) + BASE_FEE;
    const fee = p.feeBump ? BigInt(p.feeBump.fee) : baseFee;
    const account = readAccount(ledgerOverlay, p.tx.source) as { balance: bigint; seqNum: bigint };
    ledgerOverlay.put(
      keyId(accountKey(p.tx.source)),
      accountEntryData(p.tx.source, account.balance, BigInt(p.tx.sequence)),
    );
    const payerId = p.feeBump?.feeSource ?? p.tx.source;
    const payer = readAccount(ledgerOverlay, payerId) as { balance: bigint; seqNum: bigint };
    ledgerOverlay.put(
      keyId(accountKey(payerId)),
      accountEntryData(payerId, payer.balance - fee, payer.seqNum),
    );
    const wrap = (r: xdr.TransactionResult) => (p.feeBump ? feeBumpResult(p.tx.hash(), fee, r) : r);

    const fp = data.resources.footprint;
    const allowed: Footprint = {
      readOnly: new Set(fp.readOnly.map((k) => k.toXdr('base64'))),
      readWrite: new Set(fp.readWrite.map((k) => k.toXdr('base64'))),
    };
    const overlay = new Overlay(ledgerOverlay, allowed);
    let host: Host | undefined;
    try {
      const inv = this.invocation(p.tx);
      const source = p.tx.operations[0]?.source ?? p.tx.source;
      const auth = new AuthManager(
        'enforce',
        { networkId: this.networkId, ledgerSequence: sequence, sourceAccount: source, overlay },
        inv.auth,
      );
      host = new Host({
        overlay,
        registry: this.registry,
        auth,
        ledgerSequence: sequence,
        ledgerTimestamp: BigInt(closeTime),
      });
      const retval = await host.invoke(inv.contractId, inv.fn, inv.args);
      const changes = ledgerEntryChanges(
        [...overlay.changes()].map(([key, w]) => ({
          key: xdr.LedgerKey.fromXdr(key, 'base64'),
          before: ledgerOverlay.get(key),
          after: w.data,
        })),
        sequence,
      );
      overlay.mergeInto(ledgerOverlay);
      const diag = host.events.map((e) => diagnosticEvent(e, true));
      const record: TxRecord = {
        ...base,
        status: 'SUCCESS',
        resultXdr: wrap(invokeResult(fee, retval)).toXdr('base64'),
        resultMetaXdr: transactionMeta(host.events, retval, [], changes).toXdr('base64'),
        contractEvents: [host.events.map((e) => e.toXdr('base64'))],
        diagnosticEvents: diag.map((d) => d.toXdr('base64')),
      };
      return { record, contractEvents: host.events };
    } catch (e) {
      const message =
        e instanceof HostError ? e : new HostError('Context', 'InternalError', (e as Error).message);
      const errEvent = new xdr.ContractEvent({
        ext: xdr.ExtensionPoint.v0(),
        contractId: null,
        type: xdr.ContractEventType.diagnostic,
        body: xdr.ContractEventBody.v0(
          new xdr.ContractEventV0({
            topics: [xdr.ScVal.scvSymbol('host_fn_failed'), xdr.ScVal.scvError(message.toScError())],
            data: xdr.ScVal.scvString(message.message),
          }),
        ),
      });
      const diag = [
        ...(host?.events ?? []).map((ev) => diagnosticEvent(ev, false)),
        diagnosticEvent(errEvent, false),
      ];
      const record: TxRecord = {
        ...base,
        status: 'FAILED',
        resultXdr: wrap(invokeResult(fee, undefined)).toXdr('base64'),
        resultMetaXdr: transactionMeta([], undefined, diag).toXdr('base64'),
        contractEvents: [[]],
        diagnosticEvents: diag.map((d) => d.toXdr('base64')),
      };
      return { record, contractEvents: [] };
    }
  }
}

export function readAccount(
  state: LedgerStore | Overlay,
  accountId: string,
): { balance: bigint; seqNum: bigint } | undefined {
  const key = keyId(accountKey(accountId));
  const data = state instanceof Overlay ? state.get(key) : state.getData(key);
  if (!data) return undefined;
  const a = data.value as xdr.AccountEntry;
  return { balance: BigInt(a.balance as unknown as bigint), seqNum: BigInt(a.seqNum as unknown as bigint) };
}

/** Soroban RPC event id: TOID(ledger, tx, op) and the event's index, zero-padded so ids sort as strings. */
export function eventId(ledger: number, txOrder: number, opIndex: number, index: number): string {
  const toid = (BigInt(ledger) << 32n) | (BigInt(txOrder) << 12n) | BigInt(opIndex);
  return `${toid.toString().padStart(19, '0')}-${index.toString().padStart(10, '0')}`;
}

const now = () => Math.floor(Date.now() / 1000);
const sorobanDataCache = new WeakMap<Transaction, xdr.SorobanTransactionData | undefined>();

/** Every signer must have exactly one valid signature (hint and ed25519); extra signatures are refused. */
function checkSigners(
  txHash: Uint8Array,
  signatures: xdr.DecoratedSignature[],
  signers: string[],
): TxErrorCode | undefined {
  const used = new Set<number>();
  for (const signer of signers) {
    const kp = Keypair.fromPublicKey(signer);
    const hint = Buffer.from(rawBytes(kp.signatureHint()));
    const i = signatures.findIndex(
      (s, idx) =>
        !used.has(idx) &&
        Buffer.from(rawBytes(s.hint)).equals(hint) &&
        verifyEd25519(kp.rawPublicKey(), txHash, rawBytes(s.signature)),
    );
    if (i < 0) return 'txBadAuth';
    used.add(i);
  }
  return used.size === signatures.length ? undefined : 'txBadAuthExtra';
}
