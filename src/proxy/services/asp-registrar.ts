// Registers agents' note keys in the ASP allowlist at a fixed cadence, so that no user can hold anyone's
// registration back and no registration breaks a deposit the proxy promised would stay valid.
//
// The allowlist contract keeps only its current root, and every proof commits to it: inserting a leaf makes
// every proof made before it stale. The service's own transactions (operator deposits, withdrawals) are
// simply proved again; a wallet-signed deposit cannot be. So new keys are inserted only in **registration
// slots**, at the multiples of `slotMs` on the clock, all the keys queued for a slot together (up to
// `perSlot`; more go to the next slot). Nothing a user does moves a slot, but for the bounded turns of the
// deposits that waited for the slot before it (below).
//
// A wallet deposit is proved against the current root and is promised valid until the next slot that may
// insert (its `validUntil`), never less than `windowMs` ahead:
//   - proved more than `windowMs` before the next slot: valid until that slot;
//   - proved within `windowMs` of a slot that has nothing queued: the slot is closed (it stays empty; keys
//     queued from then on go to the following slot) and the deposit is valid until the following slot;
//   - within `windowMs` of a slot that has keys queued, or while a slot's keys are being inserted: the
//     prepare waits for the insert to land, then proves against the new root.
// **Turns.** A prepare that waited for a slot (for its new agent's key, or as above) takes its turn once the
// slot landed: it is promised the signing window at once, and the next slot's insert waits for it — at most a
// retry's slack, a proof and the window after the landing. One answered `registration_pending` meanwhile keeps
// its turn for its retry, until a little after the time it was told. So no deposit waits for two slots, and
// none starves while others keep every slot busy; the next slot's own keys were queued after this slot's time.
// Between slots, queued keys are inserted at once whenever that breaks no promise: no prepared deposit is
// within its promised validity, none is being proved or sent. So on a quiet pool a new agent waits only for
// its insert; the slots bound the wait when others keep deposits outstanding.
// A new key therefore lands by its slot — at the latest `slotMs + windowMs` (plus a proof's time) after it was
// queued, plus the time to insert the keys ahead of it in its slot; `waitBoundMs` is the bound of a new
// agent's whole first prepare, as measured here, and /api/pool/info advertises it. No request is held longer
// than `holdMs` for a slot: it is answered `503 registration_pending` with `Retry-After` (the time its slot is
// expected to land) instead. A submit of a deposit proved against the current root takes a hold; a slot's
// insert first lets sends under way land (each is bounded by the ledger's confirmation timeout), and a deposit
// whose root moved is refused as stale without being sent. A slot whose insert fails (nothing applied) moves
// its keys to the next slot on the clock, inserted at that slot's time and never early, so a lasting cause
// costs one attempt per slot.
//
// This file decides when keys are inserted and what a proof may rely on; its parts are in registrar/: the
// slots (slots.ts), the promises of validity (promises.ts) and the turns after a slot (turns.ts), the deposits
// under way (holds.ts), failed inserts and `registration_pending` (retries.ts), and the measured times the
// bounds are sized by (estimates.ts).
import type { RegistrationSchedule } from '../config.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { scopedId } from '../domain/agent-ref.ts';
import { DomainError } from '../domain/errors.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { AgentKeyring } from './agent-keyring.ts';
import type { Deployment } from './deployment.ts';
import type { ChainClient } from './chain-client.ts';
import type { PoolIndexer } from './pool-indexer.ts';
import { Estimates, TURN_MARGIN_MS } from './registrar/estimates.ts';
import { Holds } from './registrar/holds.ts';
import { Promises } from './registrar/promises.ts';
import { registrationPending, retryAtNextSlot } from './registrar/retries.ts';
import { type Slot, Slots } from './registrar/slots.ts';
import { Turns } from './registrar/turns.ts';
import { nativeToScVal } from '#stellar-sdk';
import type { Mutex } from '../store/backend.ts';

export interface AspRegistrarDeps {
  ledger: ChainClient;
  deployment: Deployment;
  indexer: PoolIndexer;
  keyring: AgentKeyring;
  logger: Logger;
  schedule: RegistrationSchedule;
  /** The proxy's clock: slot times, promises, holds and estimates all read it. */
  clock: Clock;
  /**
   * Held around each slot's inserts by every process on the store: replicas share the allowlist admin's
   * account, and inserts simulated side by side failed on the ledger (each wrote the tree position the other
   * simulated), taking their slots' keys down with them.
   */
  insertLease: Mutex;
}

/** What a proof made now may rely on: the membership root it commits to and until when it stays current. */
export interface ProofWindow {
  aspRoot: bigint;
  validUntil: number;
}

export class AspRegistrar {
  readonly #d: AspRegistrarDeps;
  readonly #s: RegistrationSchedule;
  readonly #slots: Slots;
  /** wallet deposit proofs and sends under way, against the current root */
  readonly #holds = new Holds();
  readonly #promises = new Promises();
  readonly #estimates: Estimates;
  readonly #turns: Turns;
  #promiseTimer: NodeJS.Timeout | undefined;
  #inserting: { slot: Slot; done: Promise<void>; endsBy: number } | undefined;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(deps: AspRegistrarDeps) {
    this.#d = deps;
    this.#s = deps.schedule;
    if (!(this.#s.slotMs > this.#s.windowMs))
      throw new RangeError('the registration slot must be longer than the signing window');
    this.#slots = new Slots(this.#s.slotMs, this.#s.perSlot);
    this.#estimates = new Estimates(this.#s);
    this.#turns = new Turns(this.#estimates);
  }

  /** Starts the slot clock. */
  start(): void {
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#promiseTimer);
    this.#slots.abandon(() => new DomainError('service_unavailable', 'the service is stopping; retry'));
  }

  /** The allowlist root proofs commit to now (as indexed). */
  get root(): bigint {
    return this.#d.indexer.aspTree.root;
  }

  /** Whether the agent's key is in the allowlist (as indexed). */
  isRegistered(agent: AgentRef): boolean {
    return this.#indexOf(this.#leafOf(agent)) !== undefined;
  }

  /** Whether the agent's key is queued for a slot. */
  isQueued(agent: AgentRef): boolean {
    return this.#queuedIn(scopedId(agent)) !== undefined;
  }

  /**
   * Resolves once the agent's key is in the allowlist: at once if it is, else when its slot has landed. Held
   * past `holdUntil`, answers `registration_pending` with Retry-After (the key stays queued).
   */
  async register(agent: AgentRef, holdUntil = this.holdUntil(), newcomer = false): Promise<void> {
    if (this.isRegistered(agent)) return;
    this.#refuseIfStopped();
    const scoped = scopedId(agent);
    let slot = this.#queuedIn(scoped);
    if (slot === undefined) {
      slot = this.#slots.openFrom(this.#slots.nextIndex(this.#d.clock()));
      slot.leaves.set(scoped, this.#leafOf(agent));
      this.#insertEarly();
    }
    // A wallet's prepare asks for its proof window as soon as its key lands: it waits for a turn.
    await (newcomer
      ? this.#waitForTurn(slot, scoped, 'the agent’s key is queued for the allowlist', holdUntil)
      : this.#waitFor(slot, 'the agent’s key is queued for the allowlist', holdUntil));
  }

  /** The longest a new agent's first prepare may take from its first request, as measured here. */
  waitBoundMs(): number {
    return this.#estimates.waitBoundMs();
  }

  /**
   * Waits (bounded by the hold limit) until a wallet deposit proved now stays valid for at least the signing
   * window, and returns the root to prove against and the time until which it is promised to stay current.
   * The promise is kept under `id` (no early insert breaks it) until `release(id)` or its time passes.
   */
  async proofWindow(id: string, holdUntil = this.holdUntil(), agent?: AgentRef): Promise<ProofWindow> {
    const scoped = agent === undefined ? undefined : scopedId(agent);
    for (;;) {
      this.#refuseIfStopped();
      const now = this.#d.clock();
      // Its turn after a slot it waited for (here, for its key, or in an earlier request told to retry).
      const until = now + this.#estimates.proofMs + this.#s.windowMs + TURN_MARGIN_MS;
      if (scoped !== undefined && this.#inserting === undefined && this.#turns.take(scoped, now)) {
        if (until <= this.#turns.end) {
          this.#promises.makeOnTurn(id, until);
          return { aspRoot: this.root, validUntil: until };
        }
      }
      const due = this.#inserting?.slot ?? this.#slots.due(now);
      if (due !== undefined) {
        await this.#waitInLine(due, scoped, 'allowlist registrations are being inserted', holdUntil);
        continue;
      }
      const index = this.#slots.nextIndex(now);
      const at = this.#slots.at(index);
      // The wallet gets the signing window after the proof is made.
      if (now < at - this.#s.windowMs - this.#estimates.proofMs) return this.#promise(id, at);
      const slot = this.#slots.getOrNew(index);
      if (slot.leaves.size === 0) {
        slot.closed = true;
        return this.#promise(id, this.#slots.at(index + 1));
      }
      await this.#waitInLine(slot, scoped, 'allowlist registrations are about to be inserted', holdUntil);
    }
  }

  /** Waits for `slot`, taking a turn after it when the deposit's agent is known. */
  #waitInLine(slot: Slot, scoped: string | undefined, why: string, holdUntil: number): Promise<void> {
    return scoped === undefined
      ? this.#waitFor(slot, why, holdUntil)
      : this.#waitForTurn(slot, scoped, why, holdUntil);
  }

  /**
   * Waits for `slot` as one of the deposits to be proved once it lands: they get their windows before the next
   * insert. One answered `registration_pending` keeps its turn for its retry (at the time it was told).
   */
  async #waitForTurn(slot: Slot, scoped: string, why: string, holdUntil: number): Promise<void> {
    slot.waiting.add(scoped);
    try {
      await this.#waitFor(slot, why, holdUntil);
    } catch (error) {
      if (error instanceof DomainError && error.code === 'registration_pending')
        slot.told.set(scoped, this.#landsBy(slot));
      slot.waiting.delete(scoped);
      throw error;
    }
  }

  /**
   * Takes a hold for proving or sending a wallet deposit against `aspRoot`: refused (`prepare_stale`) when
   * the root moved or keys are being inserted; otherwise the next insert waits until `work` has settled.
   */
  hold<T>(aspRoot: bigint, send: () => Promise<T>): Promise<T> {
    if (this.#inserting !== undefined || this.root !== aspRoot) {
      throw new DomainError(
        'prepare_stale',
        'the allowlist root this deposit was proved against has been replaced by new registrations; prepare the deposit again',
      );
    }
    const sending = send();
    this.#holds.track(sending, () => this.#insertEarly());
    return sending;
  }

  /** Feeds the time a wallet deposit's proof and simulation took into the registrar's estimate. */
  recordProof(ms: number): void {
    this.#estimates.recordProof(ms);
  }

  /** Restores a promise made before a restart (a prepared deposit still open). */
  restore(id: string, validUntil: number): void {
    this.#promises.restore(id, validUntil, this.#d.clock());
  }

  /** The deposit under `id` no longer needs its root (sent, expired or failed). */
  release(id: string): void {
    if (this.#promises.release(id)) this.#insertEarly();
  }

  /** Resolves once an insert under way (if any) has landed; keys queued for later slots are not waited for. */
  async inserting(): Promise<void> {
    await this.#inserting?.done.catch(() => {});
  }

  /** When the agent's queued key is expected in the allowlist (ms), if it is queued. */
  expectedLanding(agent: AgentRef): number | undefined {
    const slot = this.#queuedIn(scopedId(agent));
    return slot === undefined ? undefined : this.#landsBy(slot);
  }

  #promise(id: string, validUntil: number): ProofWindow {
    this.#promises.make(id, validUntil);
    return { aspRoot: this.root, validUntil };
  }

  /** Inserts the earliest queued keys now if no promise, proof or send stands in the way. */
  #insertEarly(): void {
    if (this.#stopped || this.#inserting !== undefined || this.#holds.size > 0) return;
    const now = this.#d.clock();
    const latest = this.#promises.latest(now);
    clearTimeout(this.#promiseTimer);
    if (latest > 0) {
      // Promises end by themselves at the latest at their time.
      this.#promiseTimer = setTimeout(() => this.#insertEarly(), latest - now + 5);
      this.#promiseTimer.unref();
      return;
    }
    const first = this.#slots.earliestEarly();
    if (first !== undefined) void this.#run(first.index);
  }

  #refuseIfStopped(): void {
    if (this.#stopped) throw new DomainError('service_unavailable', 'the service is stopping; retry');
  }

  /**
   * Waits for the slot to land — it may land before its time, once nothing stands in the way — until the
   * request's hold limit (`holdUntil`); past it, answers `registration_pending` with Retry-After.
   */
  async #waitFor(slot: Slot, why: string, holdUntil: number): Promise<void> {
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<'timeout'>((resolve) => {
      timer = setTimeout(() => resolve('timeout'), Math.max(0, holdUntil - this.#d.clock()));
    });
    try {
      if ((await Promise.race([slot.landed.then(() => 'landed' as const), timeout])) === 'landed') return;
    } finally {
      clearTimeout(timer);
    }
    const slotAt = new Date(this.#slots.at(slot.index)).toISOString();
    throw registrationPending(
      this.#landsBy(slot),
      this.#d.clock(),
      (seconds) => `${why}; the slot at ${slotAt} inserts them (expected within ${seconds} s); retry then`,
    );
  }

  /** The latest time (ms) a request arriving now may be held for a slot. */
  holdUntil(): number {
    return this.#d.clock() + this.#s.holdMs;
  }

  /** When the slot's keys are expected to be inserted and indexed (ms). */
  #landsBy(slot: Slot): number {
    if (this.#inserting?.slot === slot) return this.#inserting.endsBy;
    // after the slot's time, the insert under way and the turns it leaves (estimated: the whole window)
    const inserting = this.#inserting;
    const afterInsert =
      inserting === undefined
        ? 0
        : inserting.endsBy + (inserting.slot.waiting.size > 0 ? this.#estimates.turnWindowMs() : 0);
    const turns = this.#turns.size > 0 || this.#promises.anyOnTurn ? this.#turns.end : 0;
    const start = Math.max(this.#slots.at(slot.index), afterInsert, turns);
    return start + (slot.leaves.size + 1) * this.#estimates.insertMs;
  }

  #queuedIn(scoped: string): Slot | undefined {
    if (this.#inserting?.slot.leaves.has(scoped)) return this.#inserting.slot;
    return this.#slots.queuedIn(scoped);
  }

  #arm(): void {
    if (this.#stopped) return;
    const index = this.#slots.nextIndex(this.#d.clock());
    this.#timer = setTimeout(
      () => {
        this.#arm();
        void this.#run(index);
      },
      this.#slots.at(index) - this.#d.clock(),
    );
    this.#timer.unref();
  }

  async #run(index: number): Promise<void> {
    const slot = this.#slots.get(index);
    // Slots that passed without keys are forgotten.
    this.#slots.forgetPassedEmpty(this.#d.clock());
    if (slot === undefined || slot.leaves.size === 0) {
      if (slot !== undefined) {
        this.#slots.delete(index);
        slot.settle();
      }
      return;
    }
    // One insert at a time: a slot whose predecessor is still inserting follows it, and after the deposits
    // that waited for the slot before it had their turns.
    for (;;) {
      while (this.#inserting !== undefined) await this.#inserting.done.catch(() => {});
      const wait = this.#turnsWait();
      if (wait === 0) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 50)));
    }
    if (this.#slots.get(index) !== slot) return; // run meanwhile (early and by its timer)
    this.#slots.delete(index);
    const started = this.#d.clock();
    const done = this.#d.insertLease.run('insert', () => this.#insert(slot));
    this.#inserting = { slot, done, endsBy: started + (slot.leaves.size + 1) * this.#estimates.insertMs };
    try {
      await done;
      // The deposits that waited for it take their turns next; the following insert waits for them
      // (#turnsWait), those told to retry until a little after they were told to come back.
      this.#turns.open(slot, this.#d.clock());
      slot.settle();
    } catch (error) {
      slot.settle(this.#requeue(slot, error));
    } finally {
      this.#inserting = undefined;
      this.#insertEarly();
    }
  }

  /** How long an insert must still wait for the turns after the slot before it (0: not at all), at most. */
  #turnsWait(): number {
    const now = this.#d.clock();
    const until = Math.max(this.#turns.latest(now), this.#promises.latestOnTurn(now));
    return Math.max(0, Math.min(until, this.#turns.end) - now);
  }

  async #insert(slot: Slot): Promise<void> {
    // Deposits already being sent against the current root land first (each is bounded by its confirmation).
    await this.#holds.settled();
    // Another replica may have inserted some of these keys just before this one took the insert lease: read
    // the ledger up to now first, so that no key is inserted twice (a tree position spent for nothing).
    await this.#d.indexer.catchUp();
    let lastLedger = 0;
    let inserted = 0;
    const started = this.#d.clock();
    try {
      for (const leaf of slot.leaves.values()) {
        if (this.#indexOf(leaf) !== undefined) continue;
        const confirmed = await this.#d.ledger.invokeAndConfirm(
          this.#d.deployment.aspAdmin,
          this.#d.deployment.contracts.aspMembership,
          'insert_leaf',
          [nativeToScVal(leaf, { type: 'u256' })],
        );
        lastLedger = Math.max(lastLedger, confirmed.ledger);
        inserted++;
      }
    } finally {
      if (lastLedger > 0) await this.#d.indexer.waitForLedger(lastLedger);
      if (inserted > 0) this.#estimates.recordInsert((this.#d.clock() - started) / inserted);
    }
    this.#d.logger.log('info', 'allowlist registrations inserted', { count: inserted, slot: slot.index });
    for (const leaf of slot.leaves.values()) {
      if (this.#indexOf(leaf) === undefined)
        throw new DomainError('service_unavailable', 'the allowlist registration is not indexed yet; retry');
    }
  }

  /** A slot whose insert failed: its keys not in the allowlist yet retry at the next slot (registrar/retries.ts). */
  #requeue(failed: Slot, error: unknown): unknown {
    const missing = [...failed.leaves].filter(([, leaf]) => this.#indexOf(leaf) === undefined);
    if (missing.length === 0 || this.#stopped) return error;
    return retryAtNextSlot(failed, missing, error, {
      slots: this.#slots,
      now: this.#d.clock(),
      logger: this.#d.logger,
      landsBy: (slot) => this.#landsBy(slot),
    });
  }

  #leafOf(agent: AgentRef): bigint {
    return this.#d.keyring.crypto(scopedId(agent)).membershipLeaf;
  }

  #indexOf(leaf: bigint): number | undefined {
    const tree = this.#d.indexer.aspTree;
    for (let i = tree.nextIndex - 1; i >= 0; i--) if (tree.leaf(i) === leaf) return i;
    return undefined;
  }
}
