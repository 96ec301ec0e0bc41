// The sandbox's chain: queues admitted envelopes (admission.ts), closes ledgers on an interval (or, while
// the genesis deployment runs, as soon as a transaction waits), applies each queued transaction (then
// privileged jobs such as friendbot's) atomically (fee and sequence always, effects only on success; Soroban
// invocations on the real host, invoke.ts) and records results, meta and events; preflight is simulation.ts.
import {
  Account,
  type FeeBumpTransaction,
  hash,
  type Keypair,
  Operation,
  StrKey,
  type Transaction,
  TransactionBuilder,
  xdr,
} from '#stellar-sdk';
import { readAccount } from './accounts.ts';
import { admissible } from './admission.ts';
import { applyClassic, isClassic, unsupportedOperations } from './classic.ts';
import { transactionSetHash } from './close-meta.ts';
import { decodeEnvelope, sorobanData } from './envelope.ts';
import { changeAccount, changesXdr, withChangesBefore } from './fee-processing.ts';
import {
  applyFootprintOperation,
  type FootprintOperation,
  footprintOpResult,
  footprintOperation,
  footprintProblem,
} from './footprint-ops.ts';
import { applyInvocation } from './invoke.ts';
import { rawBytes } from './keys.ts';
import { simulate, simulateOn, type SimulationResult } from './simulation.ts';
import { entryRecords, Overlay } from './overlay.ts';
import type { SorobanHost } from './soroban-host.ts';
import type { EventRecord, LedgerMeta, LedgerState, TxRecord } from './ledger-state.ts';
import {
  BASE_FEE,
  diagnosticMessage,
  errorResult,
  classicMeta,
  feeBumpResult,
  feeEvent,
  invokeResult,
  ledgerEntryChanges,
  type InvokeFailure,
  ledgerHeader,
  transactionMeta,
} from './xdr-records.ts';

import { STANDALONE_PASSPHRASE } from '../ledger/networks.ts';

/** How many recent ledgers getFeeStats summarises (Soroban RPC's window for Soroban inclusion fees). */
export const FEE_STATS_LEDGERS = 50;

/**
 * How many ledger closes a transaction stays banned from the queue once applied: stellar-core's
 * TRANSACTION_QUEUE_BAN_LEDGERS (src/herder/HerderImpl.cpp in https://github.com/stellar/stellar-core).
 * TransactionQueue::removeApplied bans every applied transaction and shift() drops the oldest of these
 * per-ledger sets at each close, so a resend is TRY_AGAIN_LATER until its ledger is 9 closes old, then
 * ERROR with txBadSeq (its sequence number is used).
 */
export const BAN_LEDGERS = 10;

/** The most ledgers one `advance` may skip: past the longest TTL testnet allows (about a year of ledgers). */
export const MAX_ADVANCE_LEDGERS = 10_000_000;

export interface SendResult {
  hash: string;
  status: 'PENDING' | 'DUPLICATE' | 'TRY_AGAIN_LATER' | 'ERROR';
  errorResultXdr?: string;
  /** base64 DiagnosticEvents explaining an ERROR, when there is more to say than the result code */
  diagnosticEventsXdr?: string[];
}

interface Pending {
  hash: string;
  /** the transaction that runs (the inner one of a fee bump) */
  tx: Transaction;
  feeBump?: FeeBumpTransaction;
  envelopeXdr: string;
}

/** A transaction a privileged job performed (friendbot), recorded like any applied transaction. */
export interface JobTransaction {
  hash: string;
  envelope: xdr.TransactionEnvelope;
  result: xdr.TransactionResult;
  meta: xdr.TransactionMeta;
  events: xdr.ContractEvent[];
}

/**
 * A privileged change applied at the next close (friendbot), in the ledger's overlay; it returns the
 * transactions it stands for, so that getTransaction and getEvents see them. `invoke` sends a contract call
 * signed by `signer` (its source account) through the real host, like any transaction.
 */
export type InternalJob = (ctx: {
  overlay: Overlay;
  ledgerSequence: number;
  invoke: (signer: Keypair, contractId: string, fn: string, args: xdr.ScVal[]) => Promise<JobTransaction>;
}) => JobTransaction[] | Promise<JobTransaction[]>;

export class Chain {
  readonly networkId: Uint8Array;
  #pending: Pending[] = [];
  #jobs: { job: InternalJob; resolve: (txs: JobTransaction[]) => void; reject: (e: Error) => void }[] = [];
  #closing: Promise<void> = Promise.resolve();
  /** full hashes of applied transactions, one set per recent close (newest first), as stellar-core bans them */
  readonly #banned: Set<string>[] = Array.from({ length: BAN_LEDGERS }, () => new Set<string>());
  /** transactions the ledger being closed applies: still in stellar-core's queue then, so a resend is DUPLICATE */
  #applying = new Set<string>();
  /** inclusion fees (per operation) of the transactions applied in the ledger being closed */
  #feeSamples: bigint[] = [];
  #classicFeeSamples: bigint[] = [];
  /** inclusion fees of the last FEE_STATS_LEDGERS ledgers, for getFeeStats */
  readonly recentFees: { ledger: number; fees: bigint[]; classic: bigint[] }[] = [];
  #timer: NodeJS.Timeout | undefined;
  readonly #closeWaiters: (() => void)[] = [];
  /** Told about every committed ledger and its transactions (logging); its errors are ignored. */
  onClosed: ((meta: LedgerMeta, txs: readonly TxRecord[]) => void) | undefined;
  /** Told when a timed close fails (logging); unset, the failure is a process warning. */
  onCloseFailed: ((error: Error) => void) | undefined;
  /** Close a ledger as soon as a transaction or job waits (while the genesis deployment runs). */
  closeWhenPending = false;
  /** ledgers the next close skips (`advance`): its sequence is the latest's + 1 + this */
  #skip = 0;

  /** Milliseconds since the epoch: the network's time (close times, time bounds, simulated timestamps). */
  readonly #clock: () => number;

  constructor(
    readonly state: LedgerState,
    readonly host: SorobanHost,
    readonly passphrase = STANDALONE_PASSPHRASE,
    clock: () => number = Date.now,
  ) {
    this.networkId = hash(new TextEncoder().encode(passphrase));
    this.#clock = clock;
  }

  /** The network's time in Unix seconds. */
  #now(): number {
    return Math.floor(this.#clock() / 1000);
  }

  get latest(): LedgerMeta {
    if (!this.state.meta) throw new Error('ledger not initialised');
    return this.state.meta;
  }

  /** Starts closing a ledger every `ms` milliseconds. */
  start(ms: number): void {
    const tick = () => {
      this.#closing = this.#closing
        .then(() => this.closeLedger())
        .catch((e: Error) => {
          if (this.onCloseFailed) this.onCloseFailed(e);
          else process.emitWarning(`ledger close failed: ${e.message}`);
        });
      this.#closing.then(() => {
        if (this.#timer) this.#timer = setTimeout(tick, ms);
      });
    };
    this.#timer = setTimeout(tick, ms);
  }

  async stop(): Promise<void> {
    const t = this.#timer;
    this.#timer = undefined;
    if (t) clearTimeout(t);
    await this.#closing;
  }

  /**
   * Sandbox only, for tests of time: closes the next ledger `ledgers` sequence numbers after the latest, as if
   * the ledgers between had closed empty (they are not recorded: getLedgers skips them). Entries whose TTL
   * ends before it are archived, temporary ones expire. The network's clock is not moved.
   */
  advance(ledgers: number): Promise<void> {
    if (!Number.isInteger(ledgers) || ledgers < 1 || ledgers > MAX_ADVANCE_LEDGERS) {
      return Promise.reject(
        new RangeError(`the ledgers to advance must be an integer from 1 to ${MAX_ADVANCE_LEDGERS}`),
      );
    }
    const run = this.#closing.then(() => {
      this.#skip = ledgers - 1;
      return this.closeLedger();
    });
    this.#closing = run.catch((e: Error) => process.emitWarning(`ledger close failed: ${e.message}`));
    return run;
  }

  /** Resolves after the next ledger has closed. */
  nextClose(): Promise<void> {
    return new Promise((resolve) => this.#closeWaiters.push(resolve));
  }

  /** Queues a privileged job for the next ledger; resolves once that ledger is committed. */
  runInternal(job: InternalJob): Promise<JobTransaction[]> {
    const done = new Promise<JobTransaction[]>((resolve, reject) =>
      this.#jobs.push({ job, resolve, reject }),
    );
    this.#closeSoonIfEager();
    return done;
  }

  /** While the deployment runs, a waiting transaction closes the next ledger at once. */
  #closeSoonIfEager(): void {
    if (!this.closeWhenPending) return;
    setImmediate(() => {
      if (this.#pending.length === 0 && this.#jobs.length === 0) return;
      this.#closing = this.#closing
        .then(() => (this.#pending.length + this.#jobs.length > 0 ? this.closeLedger() : undefined))
        .catch((e: Error) => process.emitWarning(`ledger close failed: ${e.message}`));
    });
  }

  submit(envelopeXdr: unknown): SendResult {
    const { tx, feeBump } = decodeEnvelope(envelopeXdr, this.passphrase);
    const txHash = Buffer.from((feeBump ?? tx).hash()).toString('hex');
    // stellar-core's TransactionQueue::canAdd checks the ban first: an applied transaction sent again
    if (this.#banned.some((set) => set.has(txHash))) return { hash: txHash, status: 'TRY_AGAIN_LATER' };
    if (this.#applying.has(txHash) || this.#pending.some((p) => p.hash === txHash))
      return { hash: txHash, status: 'DUPLICATE' };
    if (this.#pending.some((p) => p.tx.source === tx.source))
      return { hash: txHash, status: 'TRY_AGAIN_LATER' };
    const unsupported = unsupportedOperations(tx);
    if (unsupported) {
      return {
        hash: txHash,
        status: 'ERROR',
        errorResultXdr: errorResult('txNotSupported').toXdr('base64'),
        diagnosticEventsXdr: [diagnosticMessage(unsupported).toXdr('base64')],
      };
    }
    const failure = admissible(tx, feeBump, this.state, this.#now(), this.#fees);
    if (failure) return { hash: txHash, status: 'ERROR', errorResultXdr: failure.toXdr('base64') };
    const footprintOp = footprintOperation(tx);
    const data = sorobanData(tx);
    const problem =
      footprintOp && data ? footprintProblem(footprintOp, data, this.host.info().maxEntryTtl) : undefined;
    if (footprintOp && problem) {
      // stellar-core refuses it at submission: txFAILED with the operation's MALFORMED code
      const refused = new xdr.TransactionResult({
        feeCharged: 0n,
        result: xdr.TransactionResultResult.txFailed([footprintOpResult(footprintOp, 'malformed')]),
        ext: xdr.TransactionResultExt.v0(),
      });
      return {
        hash: txHash,
        status: 'ERROR',
        errorResultXdr: (feeBump ? feeBumpResult(tx.hash(), 0n, refused) : refused).toXdr('base64'),
        diagnosticEventsXdr: [diagnosticMessage(problem).toXdr('base64')],
      };
    }
    this.#pending.push({ hash: txHash, tx, feeBump, envelopeXdr: envelopeXdr as string });
    this.#closeSoonIfEager();
    return { hash: txHash, status: 'PENDING' };
  }

  /** The non-refundable resource fee of a Soroban transaction's declared resources, by the host's fee model. */
  readonly #fees = (data: xdr.SorobanTransactionData, sizeBytes: number): bigint =>
    this.host.transactionResourceFee({
      sorobanData: Buffer.from(data.toXdr()),
      transactionSizeBytes: sizeBytes,
    }).nonRefundable;

  /** Preflight against the next ledger (see simulation.ts). */
  simulate(
    envelopeXdr: unknown,
    authMode: unknown,
    useUpgradedAuth: unknown,
    resourceConfig?: unknown,
  ): SimulationResult {
    return simulate(
      {
        state: this.state,
        host: this.host,
        passphrase: this.passphrase,
        latestSequence: this.latest.sequence,
        timestamp: this.#now(),
      },
      envelopeXdr,
      authMode,
      useUpgradedAuth,
      resourceConfig,
    );
  }

  /**
   * Closes one ledger: applies the queued transactions in arrival order, then the privileged jobs. A job
   * stands for transactions that a real network would have queued behind those already admitted (stellar-core
   * admits one transaction per source account at a time): one that signs as an account with a transaction in
   * the queue (friendbot's USDC mint, signed by the issuer) takes the sequence number after it, instead of
   * taking the queued transaction's number and making it fail with txBadSeq.
   */
  async closeLedger(): Promise<void> {
    const prev = this.latest;
    const closeTime = Math.max(prev.closeTime, this.#now());
    const closing = new ClosingLedger(prev.sequence + 1 + this.#skip, closeTime);
    this.#skip = 0;
    const ledgerOverlay = new Overlay(this.state, closing.sequence);
    const pending = this.#pending;
    this.#pending = [];
    const jobs = this.#jobs;
    this.#jobs = [];
    await this.#applyPending(pending, ledgerOverlay, closing);
    const jobOutcomes = await this.#runJobs(jobs, ledgerOverlay, closing);
    await this.#commit(prev, ledgerOverlay, closing);
    try {
      this.onClosed?.(this.latest, closing.txs);
    } catch {
      // an observer never breaks a ledger close
    }
    jobs.forEach(({ resolve, reject }, i) => {
      const outcome = jobOutcomes[i] as JobTransaction[] | Error;
      if (outcome instanceof Error) reject(outcome);
      else resolve(outcome);
    });
    this.#afterClose(pending, closing.sequence);
  }

  /** The privileged jobs, each in an overlay of its own: merged when it succeeds, its error kept if not. */
  async #runJobs(
    jobs: { job: InternalJob }[],
    ledgerOverlay: Overlay,
    closing: ClosingLedger,
  ): Promise<(JobTransaction[] | Error)[]> {
    const { sequence, closeTime } = closing;
    const outcomes: (JobTransaction[] | Error)[] = [];
    for (const { job } of jobs) {
      const overlay = new Overlay(ledgerOverlay, sequence);
      try {
        const done = await job({
          overlay,
          ledgerSequence: sequence,
          invoke: async (signer, contractId, fn, args) =>
            this.#jobInvoke(overlay, closeTime, signer, contractId, fn, args),
        });
        overlay.mergeInto(ledgerOverlay);
        for (const jt of done) {
          const order = closing.nextOrder();
          closing.add(
            {
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
            },
            [jt.events],
          );
        }
        outcomes.push(done);
      } catch (e) {
        outcomes.push(e as Error);
      }
    }
    return outcomes;
  }

  /** The queued transactions in arrival order, yielding to the event loop every 20 ms of work. */
  async #applyPending(pending: Pending[], ledgerOverlay: Overlay, closing: ClosingLedger): Promise<void> {
    this.#applying = new Set(pending.map((p) => p.hash));
    this.#feeSamples = [];
    this.#classicFeeSamples = [];
    let slice = performance.now();
    for (const p of pending) {
      const order = closing.nextOrder();
      const { record, contractEvents } = await this.#apply(
        p,
        ledgerOverlay,
        closing.sequence,
        closing.closeTime,
        order,
      );
      closing.add(record, contractEvents);
      // a big ledger must not stall the RPC: let queued requests run between transactions
      if (performance.now() - slice > 20) {
        await new Promise((resolve) => setImmediate(resolve));
        slice = performance.now();
      }
    }
  }

  /** The header over the transaction set, and the ledger's entries, transactions and events in one batch. */
  async #commit(prev: LedgerMeta, ledgerOverlay: Overlay, closing: ClosingLedger): Promise<void> {
    const { sequence, closeTime, txs, events } = closing;
    const txSetHash = transactionSetHash(Buffer.from(prev.hash, 'hex'), txs);
    const prevFeePool = BigInt(
      xdr.LedgerHeader.fromXdr(prev.headerXdr, 'base64').feePool as unknown as bigint,
    );
    const header = ledgerHeader({
      sequence,
      closeTime,
      previousHash: Buffer.from(prev.hash, 'hex'),
      txSetHash,
      feePool: prevFeePool + closing.fees,
    });
    const entries = entryRecords(ledgerOverlay, sequence);
    await this.state.commit({
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
  }

  /** The queue's bans and fee statistics move on; waiters of the next close are told. */
  #afterClose(pending: Pending[], sequence: number): void {
    // removeApplied then shift, as stellar-core's herder does after each close
    for (const p of pending) (this.#banned[0] as Set<string>).add(p.hash);
    this.#applying = new Set();
    this.#banned.pop();
    this.#banned.unshift(new Set());
    this.recentFees.push({ ledger: sequence, fees: this.#feeSamples, classic: this.#classicFeeSamples });
    if (this.recentFees.length > FEE_STATS_LEDGERS) this.recentFees.shift();
    for (const w of this.#closeWaiters.splice(0)) w();
  }

  /**
   * A job's contract call: a transaction from `signer` (source-account authorization) at its next sequence
   * number in the ledger being closed, simulated on that ledger's state, then applied like any transaction.
   */
  #jobInvoke(
    overlay: Overlay,
    closeTime: number,
    signer: Keypair,
    contractId: string,
    fn: string,
    args: xdr.ScVal[],
  ): JobTransaction {
    const source = signer.publicKey();
    const account = readAccount(overlay, source);
    if (!account) throw new Error(`the account ${source} is missing`);
    const build = (data?: xdr.SorobanTransactionData, auth: xdr.SorobanAuthorizationEntry[] = []) => {
      // the inclusion fee: the builder adds the Soroban data's resource fee to it
      const builder = new TransactionBuilder(new Account(source, account.seqNum.toString()), {
        fee: BASE_FEE.toString(),
        networkPassphrase: this.passphrase,
      })
        .addOperation(Operation.invokeContractFunction({ contract: contractId, function: fn, args, auth }))
        .setTimeout(0);
      if (data) builder.setSorobanData(data);
      return builder.build();
    };
    const sim = simulateOn(this.host, overlay, build(), 'record', closeTime);
    if (!sim.ok) throw new Error(`${fn} could not be simulated: ${sim.error}`);
    const tx = build(
      xdr.SorobanTransactionData.fromXdr(sim.transactionData),
      sim.auth.map((a: Buffer) => xdr.SorobanAuthorizationEntry.fromXdr(a)),
    );
    tx.sign(signer);
    const envelopeXdr = tx.toEnvelope().toXdr('base64');
    const p: Pending = { hash: Buffer.from(tx.hash()).toString('hex'), tx, envelopeXdr };
    const charge = this.#chargeSoroban(p, overlay);
    const applied = this.#invokeSoroban(p, overlay, closeTime, charge);
    if (applied.record.status !== 'SUCCESS') throw new Error(`${fn} failed on the ledger`);
    return {
      hash: p.hash,
      envelope: tx.toEnvelope(),
      result: xdr.TransactionResult.fromXdr(applied.record.resultXdr, 'base64'),
      meta: xdr.TransactionMeta.fromXdr(applied.record.resultMetaXdr, 'base64'),
      events: applied.contractEvents[0] ?? [],
    };
  }

  /** A classic transaction: fee and sequence always, its operations all or nothing. */
  #applyClassicTx(p: Pending, ledgerOverlay: Overlay, sequence: number, base: RecordBase): Applied {
    const nOps = BigInt(p.tx.operations.length);
    // charged: the base fee per operation (no surge pricing); a fee bump counts as one more operation
    const fee = BASE_FEE * (p.feeBump ? nOps + 1n : nOps);
    // the fee first (stellar-core charges every fee before applying), then the sequence number
    const payerId = p.feeBump?.feeSource ?? p.tx.source;
    const feeChanges = changeAccount(ledgerOverlay, payerId, (a) => ({ ...a, balance: a.balance - fee }));
    const seqChanges = changeAccount(ledgerOverlay, p.tx.source, (a) => ({
      ...a,
      seqNum: BigInt(p.tx.sequence),
    }));
    const bid = BigInt(p.feeBump ? p.feeBump.fee : p.tx.fee);
    this.#classicFeeSamples.push(bid / (p.feeBump ? nOps + 1n : nOps));
    const feeEvents = [feeEvent(this.passphrase, payerId, fee)];

    const outcome = applyClassic(ledgerOverlay, p.tx, sequence, this.passphrase);
    const opChanges = outcome.overlays.map((overlay, i) => {
      if (!outcome.success) return [];
      const before = i === 0 ? ledgerOverlay : (outcome.overlays[i - 1] as Overlay);
      return ledgerEntryChanges(
        [...overlay.changes()].map(([key, w]) => ({
          key: xdr.LedgerKey.fromXdr(key, 'base64'),
          before: before.get(key),
          after: w.data,
        })),
        sequence,
      );
    });
    if (outcome.success) for (const overlay of outcome.overlays) overlay.mergeInto(ledgerOverlay);
    const inner = new xdr.TransactionResult({
      feeCharged: fee,
      result: outcome.success
        ? xdr.TransactionResultResult.txSuccess(outcome.results)
        : xdr.TransactionResultResult.txFailed(outcome.results),
      ext: xdr.TransactionResultExt.v0(),
    });
    const record: TxRecord = {
      ...base,
      status: outcome.success ? 'SUCCESS' : 'FAILED',
      resultXdr: (p.feeBump ? feeBumpResult(p.tx.hash(), fee, inner) : inner).toXdr('base64'),
      resultMetaXdr: withChangesBefore(classicMeta(opChanges, feeEvents, outcome.events), seqChanges).toXdr(
        'base64',
      ),
      feeProcessing: changesXdr(feeChanges),
      contractEvents: outcome.events.map((evs) => evs.map((e) => e.toXdr('base64'))),
      diagnosticEvents: [],
      transactionEvents: feeEvents.map((e) => e.toXdr('base64')),
    };
    return { record, contractEvents: outcome.events };
  }

  /** One queued transaction: refused, classic, or a Soroban invocation. */
  async #apply(
    p: Pending,
    ledgerOverlay: Overlay,
    sequence: number,
    closeTime: number,
    order: number,
  ): Promise<Applied> {
    const base: RecordBase = {
      hash: p.hash,
      ledger: sequence,
      createdAt: closeTime,
      applicationOrder: order,
      feeBump: p.feeBump !== undefined,
      envelopeXdr: p.envelopeXdr,
    };
    const refused = admissible(p.tx, p.feeBump, ledgerOverlay, closeTime, this.#fees, true);
    if (refused) return refusedRecord(base, refused);
    if (isClassic(p.tx)) return this.#applyClassicTx(p, ledgerOverlay, sequence, base);
    const charge = this.#chargeSoroban(p, ledgerOverlay);
    const footprintOp = footprintOperation(p.tx);
    if (footprintOp) return this.#applyFootprint(p, footprintOp, ledgerOverlay, closeTime, charge, base);
    return this.#invokeSoroban(p, ledgerOverlay, closeTime, charge, base);
  }

  /** The declared fee and the sequence number of a Soroban transaction, taken whether or not it succeeds. */
  #chargeSoroban(p: Pending, ledgerOverlay: Overlay): SorobanCharge {
    const data = sorobanData(p.tx) as xdr.SorobanTransactionData;
    const resourceFee = BigInt(data.resourceFee as unknown as bigint);
    const declared = p.feeBump ? BigInt(p.feeBump.fee) : resourceFee + BASE_FEE;
    const payerId = p.feeBump?.feeSource ?? p.tx.source;
    const feeChanges = changeAccount(ledgerOverlay, payerId, (a) => ({
      ...a,
      balance: a.balance - declared,
    }));
    const seqChanges = changeAccount(ledgerOverlay, p.tx.source, (a) => ({
      ...a,
      seqNum: BigInt(p.tx.sequence),
    }));
    // the inclusion fee bid per operation (a fee bump's outer fee covers its inner operation and itself)
    const bid = BigInt(p.feeBump ? p.feeBump.fee : p.tx.fee);
    this.#feeSamples.push((bid - resourceFee) / (p.feeBump ? 2n : 1n));
    return {
      data,
      declared,
      resourceFee,
      inclusionFee: p.feeBump ? 2n * BASE_FEE : BASE_FEE,
      payer: payerId,
      feeChanges,
      seqChanges,
      sizeBytes: Buffer.from(p.envelopeXdr, 'base64').length,
      wrap: (r) => (p.feeBump ? feeBumpResult(p.tx.hash(), BigInt(r.feeCharged as unknown as bigint), r) : r),
    };
  }

  /**
   * The invocation on the real host; all or nothing. The refundable part of the fee it did not consume
   * (rent, events) is refunded, as stellar-core does after applying.
   */
  #invokeSoroban(
    p: Pending,
    ledgerOverlay: Overlay,
    closeTime: number,
    charge: SorobanCharge,
    base: RecordBase = {
      hash: p.hash,
      ledger: ledgerOverlay.sequence,
      createdAt: closeTime,
      applicationOrder: 0,
      feeBump: p.feeBump !== undefined,
      envelopeXdr: p.envelopeXdr,
    },
  ): Applied {
    const overlay = new Overlay(ledgerOverlay, ledgerOverlay.sequence);
    const invoked = applyInvocation(this.host, overlay, p.tx, charge.sizeBytes, closeTime);
    const { result } = invoked;
    const success = result.outcome === 'success';
    const { charged, feeEvents, feeRecords } = this.#settleFee(charge, ledgerOverlay, result.fee, success);
    const feeMeta = {
      nonRefundable: result.fee.nonRefundable,
      refundable: success ? result.fee.refundableConsumed : 0n,
      rent: success ? result.fee.rent : 0n,
    };
    if (!success) {
      const record: TxRecord = {
        ...base,
        status: 'FAILED',
        resultXdr: charge
          .wrap(invokeResult(charged, undefined, result.outcome as InvokeFailure))
          .toXdr('base64'),
        resultMetaXdr: withChangesBefore(
          transactionMeta([], undefined, invoked.diagnostics, [], feeEvents, feeMeta),
          charge.seqChanges,
        ).toXdr('base64'),
        ...feeRecords,
        contractEvents: [[]],
        diagnosticEvents: invoked.diagnostics.map((d) => d.toXdr('base64')),
        transactionEvents: feeEvents.map((e) => e.toXdr('base64')),
      };
      return { record, contractEvents: [] };
    }
    const changes = ledgerEntryChanges(invoked.changes, ledgerOverlay.sequence);
    overlay.mergeInto(ledgerOverlay);
    const record: TxRecord = {
      ...base,
      status: 'SUCCESS',
      resultXdr: charge
        .wrap(invokeResult(charged, invoked.returnValue, 'trapped', invoked.events))
        .toXdr('base64'),
      resultMetaXdr: withChangesBefore(
        transactionMeta(
          invoked.events,
          invoked.returnValue,
          invoked.diagnostics,
          changes,
          feeEvents,
          feeMeta,
        ),
        charge.seqChanges,
      ).toXdr('base64'),
      ...feeRecords,
      contractEvents: [invoked.events.map((e) => e.toXdr('base64'))],
      diagnosticEvents: invoked.diagnostics.map((d) => d.toXdr('base64')),
      transactionEvents: feeEvents.map((e) => e.toXdr('base64')),
    };
    return { record, contractEvents: [invoked.events] };
  }

  /**
   * What a Soroban transaction stays charged once applied: the inclusion fee, the non-refundable fee and, when
   * it succeeded, the refundable fee it consumed; the rest of what was taken up front is refunded to the payer,
   * as stellar-core refunds it once every transaction of the ledger is applied. Returns its fee events.
   */
  #settleFee(
    charge: SorobanCharge,
    ledgerOverlay: Overlay,
    fee: { nonRefundable: bigint; refundableConsumed: bigint },
    success: boolean,
  ): { charged: bigint; feeEvents: xdr.TransactionEvent[]; feeRecords: FeeRecords } {
    const due = charge.inclusionFee + fee.nonRefundable + (success ? fee.refundableConsumed : 0n);
    const charged = due < charge.declared ? due : charge.declared;
    const refund = charge.declared - charged;
    const refundChanges =
      refund > 0n
        ? changeAccount(ledgerOverlay, charge.payer, (a) => ({ ...a, balance: a.balance + refund }))
        : [];
    const feeRecords: FeeRecords = {
      feeProcessing: changesXdr(charge.feeChanges),
      postTxApplyFeeProcessing: changesXdr(refundChanges),
    };
    const feeEvents = [
      feeEvent(this.passphrase, charge.payer, charge.declared),
      ...(refund > 0n
        ? [
            feeEvent(
              this.passphrase,
              charge.payer,
              -refund,
              xdr.TransactionEventStage.transactionEventStageAfterAllTxs,
            ),
          ]
        : []),
    ];
    return { charged, feeEvents, feeRecords };
  }

  /** An ExtendFootprintTTL or RestoreFootprint (footprint-ops.ts): TTLs only, all or nothing. */
  #applyFootprint(
    p: Pending,
    op: FootprintOperation,
    ledgerOverlay: Overlay,
    closeTime: number,
    charge: SorobanCharge,
    base: RecordBase,
  ): Applied {
    const overlay = new Overlay(ledgerOverlay, ledgerOverlay.sequence);
    const applied = applyFootprintOperation(this.host, overlay, p.tx, op, charge.sizeBytes, closeTime);
    const { result } = applied;
    const success = result.outcome === 'success';
    const { charged, feeEvents, feeRecords } = this.#settleFee(charge, ledgerOverlay, result.fee, success);
    if (success) overlay.mergeInto(ledgerOverlay);
    const opResult = footprintOpResult(op, result.outcome);
    const inner = new xdr.TransactionResult({
      feeCharged: charged,
      result: success
        ? xdr.TransactionResultResult.txSuccess([opResult])
        : xdr.TransactionResultResult.txFailed([opResult]),
      ext: xdr.TransactionResultExt.v0(),
    });
    const feeMeta = {
      nonRefundable: result.fee.nonRefundable,
      refundable: success ? result.fee.refundableConsumed : 0n,
      rent: success ? result.fee.rent : 0n,
    };
    const record: TxRecord = {
      ...base,
      status: success ? 'SUCCESS' : 'FAILED',
      resultXdr: charge.wrap(inner).toXdr('base64'),
      resultMetaXdr: withChangesBefore(
        transactionMeta([], undefined, applied.diagnostics, applied.changes, feeEvents, feeMeta),
        charge.seqChanges,
      ).toXdr('base64'),
      ...feeRecords,
      contractEvents: [[]],
      diagnosticEvents: applied.diagnostics.map((d) => d.toXdr('base64')),
      transactionEvents: feeEvents.map((e) => e.toXdr('base64')),
    };
    return { record, contractEvents: [] };
  }
}

/** What applying one transaction yields: its record and its contract events per operation. */
interface Applied {
  record: TxRecord;
  contractEvents: xdr.ContractEvent[][];
}

type RecordBase = Pick<
  TxRecord,
  'hash' | 'ledger' | 'createdAt' | 'applicationOrder' | 'feeBump' | 'envelopeXdr'
>;

/** A transaction record's fee changes (base64 LedgerEntryChanges) for the close meta. */
type FeeRecords = Pick<TxRecord, 'feeProcessing' | 'postTxApplyFeeProcessing'>;

/** What a Soroban transaction declared and was charged up front, and how its result is wrapped. */
interface SorobanCharge {
  data: xdr.SorobanTransactionData;
  /** the whole fee taken before applying (resource fee + inclusion fee, or the fee bump's fee) */
  declared: bigint;
  resourceFee: bigint;
  /** the inclusion fee charged: the base fee per operation (no surge pricing) */
  inclusionFee: bigint;
  payer: string;
  /** the payer's account as the fee was taken, and the source's as its sequence number was used */
  feeChanges: xdr.LedgerEntryChange[];
  seqChanges: xdr.LedgerEntryChange[];
  /** the envelope's size, which the non-refundable fee prices */
  sizeBytes: number;
  wrap: (r: xdr.TransactionResult) => xdr.TransactionResult;
}

/** The ledger being closed: its transactions and events in application order. */
class ClosingLedger {
  readonly txs: TxRecord[] = [];
  readonly events: EventRecord[] = [];
  readonly closedAt: string;
  #order = 0;

  constructor(
    readonly sequence: number,
    readonly closeTime: number,
  ) {
    this.closedAt = new Date(closeTime * 1000).toISOString().replace('.000Z', 'Z');
  }

  /** The application order of the next transaction (1-based). */
  nextOrder(): number {
    return ++this.#order;
  }

  /** The fees this ledger's transactions were charged (after refunds): they join the header's fee pool. */
  fees = 0n;

  /** A transaction applied at the current order, with its contract events per operation. */
  add(record: TxRecord, contractEvents: xdr.ContractEvent[][]): void {
    this.txs.push(record);
    this.fees += BigInt(
      xdr.TransactionResult.fromXdr(record.resultXdr, 'base64').feeCharged as unknown as bigint,
    );
    contractEvents.forEach((evs, op) => this.#record(evs, record.hash, this.#order, op + 1));
  }

  #record(evs: xdr.ContractEvent[], txHash: string, order: number, op: number): void {
    evs.forEach((ev, j) => {
      const body = ev.body.value as xdr.ContractEventV0;
      this.events.push({
        id: eventId(this.sequence, order, op, j),
        ledger: this.sequence,
        ledgerClosedAt: this.closedAt,
        transactionIndex: order,
        operationIndex: op - 1,
        txHash,
        contractId: StrKey.encodeContract(Buffer.from(rawBytes(ev.contractId))),
        topics: body.topics.map((t) => t.toXdr('base64')),
        value: body.data.toXdr('base64'),
      });
    });
  }
}

/** A transaction refused when applied: nothing charged, nothing changed. */
function refusedRecord(base: RecordBase, refused: xdr.TransactionResult): Applied {
  const record: TxRecord = {
    ...base,
    status: 'FAILED',
    resultXdr: refused.toXdr('base64'),
    resultMetaXdr: transactionMeta([], undefined, []).toXdr('base64'),
    contractEvents: [[]],
    diagnosticEvents: [],
  };
  return { record, contractEvents: [] };
}

/** Soroban RPC event id: TOID(ledger, tx, op) and the event's index, zero-padded so ids sort as strings. */
export function eventId(ledger: number, txOrder: number, opIndex: number, index: number): string {
  const toid = (BigInt(ledger) << 32n) | (BigInt(txOrder) << 12n) | BigInt(opIndex);
  return `${toid.toString().padStart(19, '0')}-${index.toString().padStart(10, '0')}`;
}
