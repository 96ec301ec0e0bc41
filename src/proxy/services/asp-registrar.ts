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
import type { RegistrationSchedule } from '../config.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { scopedId } from '../domain/agent-ref.ts';
import { ProblemError } from '../../api/problem.ts';
import type { Clock } from '../util/clock.ts';
import type { Logger } from '../util/logger.ts';
import type { AgentKeyring } from './agent-keyring.ts';
import type { Deployment } from './deployment.ts';
import type { ChainClient } from './chain-client.ts';
import type { PoolIndexer } from './pool-indexer.ts';
import { nativeToScVal } from '@stellar/stellar-sdk';

export interface AspRegistrarDeps {
  ledger: ChainClient;
  deployment: Deployment;
  indexer: PoolIndexer;
  keyring: AgentKeyring;
  logger: Logger;
  schedule: RegistrationSchedule;
  /** The proxy's clock: slot times, promises, holds and estimates all read it. */
  clock: Clock;
}

interface Slot {
  index: number;
  /** scoped id → leaf, in the order they were queued */
  leaves: Map<string, bigint>;
  /** a deposit was promised validity past this slot while it was empty: it takes no keys */
  closed: boolean;
  /** holds keys whose insert failed: inserted at the slot's time, never early (no retry loop) */
  retry: boolean;
  /** settles once the slot's keys are inserted and indexed (rejects when the insert failed) */
  landed: Promise<void>;
  /** wallet deposits (scoped agent ids) waiting for this slot before they are proved: each gets a turn */
  waiting: Set<string>;
  /** those of them answered `registration_pending` while waiting → the landing time they were told */
  told: Map<string, number>;
  settle: (error?: unknown) => void;
}

/** What a proof made now may rely on: the membership root it commits to and until when it stays current. */
export interface ProofWindow {
  aspRoot: bigint;
  validUntil: number;
}

/** First guess of a wallet deposit's proof and simulation, refined by measurement. */
const INITIAL_PROOF_MS = 2000;
/** First guess of one `insert_leaf`'s time to confirmation, refined by measurement. */
const INITIAL_INSERT_MS = 2000;
/** Beyond the signing window and a proof, what a newcomer's promise after its slot landed is given. */
const TURN_MARGIN_MS = 1000;
/** A client retrying after `registration_pending` asks again within this of its Retry-After (whole seconds). */
const RETRY_SLACK_MS = 2000;

export class AspRegistrar {
  readonly #d: AspRegistrarDeps;
  readonly #s: RegistrationSchedule;
  readonly #slots = new Map<number, Slot>();
  /** wallet deposit sends under way, proved against the current root */
  readonly #holds = new Set<Promise<unknown>>();
  /** deposits proved or being proved against the current root → until when they were promised it (ms) */
  readonly #promises = new Map<string, number>();
  /** promises made on a turn (deposit id → until when, ms): the next insert waits for them */
  readonly #priority = new Map<string, number>();
  /**
   * Turns after a slot landed: the deposits that waited for it (scoped agent id → until when its turn is kept,
   * ms) are promised their window first, and the next insert waits for them — at most until `#turnsEnd`.
   */
  readonly #turns = new Map<string, number>();
  #turnsEnd = 0;
  #promiseTimer: NodeJS.Timeout | undefined;
  #inserting: { slot: Slot; done: Promise<void>; endsBy: number } | undefined;
  #insertMs = INITIAL_INSERT_MS;
  /** how long proving and simulating a wallet deposit takes (ms), measured */
  #proofMs = INITIAL_PROOF_MS;
  #timer: NodeJS.Timeout | undefined;
  #stopped = false;

  constructor(deps: AspRegistrarDeps) {
    this.#d = deps;
    this.#s = deps.schedule;
    if (!(this.#s.slotMs > this.#s.windowMs))
      throw new RangeError('the registration slot must be longer than the signing window');
  }

  /** Starts the slot clock. */
  start(): void {
    this.#arm();
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    clearTimeout(this.#promiseTimer);
    for (const slot of this.#slots.values())
      slot.settle(new ProblemError('service_unavailable', 'the service is stopping; retry'));
    this.#slots.clear();
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
      slot = this.#openSlotFrom(this.#nextIndex(this.#d.clock()));
      slot.leaves.set(scoped, this.#leafOf(agent));
      this.#insertEarly();
    }
    // A wallet's prepare asks for its proof window as soon as its key lands: it waits for a turn.
    await (newcomer
      ? this.#waitForTurn(slot, scoped, 'the agent’s key is queued for the allowlist', holdUntil)
      : this.#waitFor(slot, 'the agent’s key is queued for the allowlist', holdUntil));
  }

  /**
   * The longest a new agent's first prepare may take from its first request, as measured here: a slot
   * interval and the turns after the run before its key's (or the signing window and a proof, when its slot was
   * closed just before), that run's inserts and its own slot's, its own proof, and a retry after
   * `registration_pending`. Holds while no more than `perSlot` new agents arrive per slot.
   */
  waitBoundMs(): number {
    const { slotMs, perSlot } = this.#s;
    const fullSlot = (perSlot + 1) * this.#insertMs;
    // after a run lands, the next one may wait this long for the turns (#turnsEnd)
    const turns = this.#turnWindowMs();
    return slotMs + turns + 2 * fullSlot + this.#proofMs + RETRY_SLACK_MS;
  }

  /** How long after a slot landed its turns may hold the next insert back (ms). */
  #turnWindowMs(): number {
    return RETRY_SLACK_MS + this.#proofMs + this.#s.windowMs + 2 * TURN_MARGIN_MS;
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
      const until = now + this.#proofMs + this.#s.windowMs + TURN_MARGIN_MS;
      if (scoped !== undefined && this.#inserting === undefined && (this.#turns.get(scoped) ?? 0) > now) {
        this.#turns.delete(scoped);
        if (until <= this.#turnsEnd) {
          this.#priority.set(id, until);
          return this.#promise(id, until);
        }
      }
      const due = this.#inserting?.slot ?? this.#dueSlot(now);
      if (due !== undefined) {
        await this.#waitInLine(due, scoped, 'allowlist registrations are being inserted', holdUntil);
        continue;
      }
      const index = this.#nextIndex(now);
      const at = this.#at(index);
      // The wallet gets the signing window after the proof is made.
      if (now < at - this.#s.windowMs - this.#proofMs) return this.#promise(id, at);
      const slot = this.#slots.get(index) ?? this.#newSlot(index);
      if (slot.leaves.size === 0) {
        slot.closed = true;
        return this.#promise(id, this.#at(index + 1));
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
      if (error instanceof ProblemError && error.code === 'registration_pending')
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
      throw new ProblemError(
        'prepare_stale',
        'the allowlist root this deposit was proved against has been replaced by new registrations; prepare the deposit again',
      );
    }
    const sending = send();
    const tracked = sending.then(
      () => {},
      () => {},
    );
    this.#holds.add(tracked);
    void tracked.finally(() => {
      this.#holds.delete(tracked);
      this.#insertEarly();
    });
    return sending;
  }

  /** Feeds the time a wallet deposit's proof and simulation took into the registrar's estimate. */
  recordProof(ms: number): void {
    this.#proofMs = boundEstimate(this.#proofMs, ms);
  }

  /** Restores a promise made before a restart (a prepared deposit still open). */
  restore(id: string, validUntil: number): void {
    if (validUntil > this.#d.clock()) this.#promises.set(id, validUntil);
  }

  /** The deposit under `id` no longer needs its root (sent, expired or failed). */
  release(id: string): void {
    this.#priority.delete(id);
    if (this.#promises.delete(id)) this.#insertEarly();
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
    this.#promises.set(id, validUntil);
    return { aspRoot: this.root, validUntil };
  }

  /** Inserts the earliest queued keys now if no promise, proof or send stands in the way. */
  #insertEarly(): void {
    if (this.#stopped || this.#inserting !== undefined || this.#holds.size > 0) return;
    const now = this.#d.clock();
    let latest = 0;
    for (const [id, until] of this.#promises) {
      if (until <= now) this.#promises.delete(id);
      else latest = Math.max(latest, until);
    }
    clearTimeout(this.#promiseTimer);
    if (latest > 0) {
      // Promises end by themselves at the latest at their time.
      this.#promiseTimer = setTimeout(() => this.#insertEarly(), latest - now + 5);
      this.#promiseTimer.unref();
      return;
    }
    let first: Slot | undefined;
    for (const slot of this.#slots.values())
      if (slot.leaves.size > 0 && !slot.retry && (first === undefined || slot.index < first.index))
        first = slot;
    if (first !== undefined) void this.#run(first.index);
  }

  #refuseIfStopped(): void {
    if (this.#stopped) throw new ProblemError('service_unavailable', 'the service is stopping; retry');
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
    const eta = this.#landsBy(slot);
    const seconds = Math.max(1, Math.ceil((eta - this.#d.clock()) / 1000));
    throw new ProblemError(
      'registration_pending',
      `${why}; the slot at ${new Date(this.#at(slot.index)).toISOString()} inserts them (expected within ${seconds} s); retry then`,
      { headers: { 'Retry-After': String(seconds) }, extra: { registrationAt: new Date(eta).toISOString() } },
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
        : inserting.endsBy + (inserting.slot.waiting.size > 0 ? this.#turnWindowMs() : 0);
    const turns = this.#turns.size > 0 || this.#priority.size > 0 ? this.#turnsEnd : 0;
    const start = Math.max(this.#at(slot.index), afterInsert, turns);
    return start + (slot.leaves.size + 1) * this.#insertMs;
  }

  /** A slot whose time has come and whose keys are not inserted yet (it may wait for the one before). */
  #dueSlot(now: number): Slot | undefined {
    for (const slot of this.#slots.values())
      if (this.#at(slot.index) <= now && slot.leaves.size > 0) return slot;
    return undefined;
  }

  #queuedIn(scoped: string): Slot | undefined {
    if (this.#inserting?.slot.leaves.has(scoped)) return this.#inserting.slot;
    for (const slot of this.#slots.values()) if (slot.leaves.has(scoped)) return slot;
    return undefined;
  }

  /** The first slot from `index` on that still takes keys. */
  #openSlotFrom(index: number): Slot {
    for (let i = index; ; i++) {
      const slot = this.#slots.get(i) ?? this.#newSlot(i);
      if (!slot.closed && slot.leaves.size < this.#s.perSlot) return slot;
    }
  }

  #newSlot(index: number): Slot {
    let settle!: (error?: unknown) => void;
    const landed = new Promise<void>((resolve, reject) => {
      settle = (error) => (error === undefined ? resolve() : reject(error));
    });
    landed.catch(() => {});
    const slot: Slot = {
      index,
      leaves: new Map(),
      closed: false,
      retry: false,
      landed,
      settle,
      waiting: new Set(),
      told: new Map(),
    };
    this.#slots.set(index, slot);
    return slot;
  }

  #at(index: number): number {
    return index * this.#s.slotMs;
  }

  /** The first slot strictly after `now`. */
  #nextIndex(now: number): number {
    return Math.floor(now / this.#s.slotMs) + 1;
  }

  #arm(): void {
    if (this.#stopped) return;
    const index = this.#nextIndex(this.#d.clock());
    this.#timer = setTimeout(
      () => {
        this.#arm();
        void this.#run(index);
      },
      this.#at(index) - this.#d.clock(),
    );
    this.#timer.unref();
  }

  async #run(index: number): Promise<void> {
    const slot = this.#slots.get(index);
    // Slots that passed without keys are forgotten.
    const now = this.#d.clock();
    for (const [i, passed] of this.#slots)
      if (this.#at(i) <= now && passed.leaves.size === 0) {
        this.#slots.delete(i);
        passed.settle();
      }
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
    const done = this.#insert(slot);
    this.#inserting = { slot, done, endsBy: started + (slot.leaves.size + 1) * this.#insertMs };
    try {
      await done;
      // The deposits that waited for it take their turns next; the following insert waits for them
      // (#turnsWait), those told to retry until a little after they were told to come back.
      const landedAt = this.#d.clock();
      this.#turnsEnd = landedAt + this.#turnWindowMs();
      this.#turns.clear();
      for (const scoped of slot.waiting)
        this.#turns.set(scoped, landedAt + 2 * this.#proofMs + TURN_MARGIN_MS);
      for (const [scoped, eta] of slot.told)
        this.#turns.set(scoped, Math.min(Math.max(landedAt, eta) + RETRY_SLACK_MS, this.#turnsEnd));
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
    let until = 0;
    for (const [scoped, end] of this.#turns) {
      if (end <= now) this.#turns.delete(scoped);
      else until = Math.max(until, end);
    }
    for (const [id, end] of this.#priority) {
      if (end <= now) this.#priority.delete(id);
      else until = Math.max(until, end);
    }
    return Math.max(0, Math.min(until, this.#turnsEnd) - now);
  }

  async #insert(slot: Slot): Promise<void> {
    // Deposits already being sent against the current root land first (each is bounded by its confirmation).
    await Promise.all([...this.#holds]);
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
      if (inserted > 0)
        this.#insertMs = boundEstimate(this.#insertMs, (this.#d.clock() - started) / inserted);
    }
    this.#d.logger.log('info', 'allowlist registrations inserted', { count: inserted, slot: slot.index });
    for (const leaf of slot.leaves.values()) {
      if (this.#indexOf(leaf) === undefined)
        throw new ProblemError('service_unavailable', 'the allowlist registration is not indexed yet; retry');
    }
  }

  /**
   * A slot whose insert failed (refused or failed on the ledger, or not confirmed in time): its keys not in
   * the allowlist yet go to the next open slot on the clock, which inserts them at its time and not earlier
   * (an early insert would retry at once, again and again while the cause lasts, each failure pushing the
   * keys one slot further). The requests waiting for them are answered `registration_pending` with the time
   * to retry, instead of the insert's error. Each failed insert thus adds at most one slot interval.
   */
  #requeue(failed: Slot, error: unknown): unknown {
    const missing = [...failed.leaves].filter(([, leaf]) => this.#indexOf(leaf) === undefined);
    if (missing.length === 0 || this.#stopped) return error;
    let next = this.#openSlotFrom(this.#nextIndex(this.#d.clock()));
    for (const [scoped, leaf] of missing) {
      if (next.leaves.size >= this.#s.perSlot) next = this.#openSlotFrom(next.index + 1);
      next.leaves.set(scoped, leaf);
      next.retry = true;
    }
    const reason = (error as Error).message;
    this.#d.logger.log('warn', 'allowlist insert failed; its keys are queued for the next slot', {
      slot: failed.index,
      error: reason,
    });
    const eta = this.#landsBy(next);
    const seconds = Math.max(1, Math.ceil((eta - this.#d.clock()) / 1000));
    return new ProblemError(
      'registration_pending',
      `the allowlist insert failed (${reason}); the key is queued again for the slot at ${new Date(this.#at(next.index)).toISOString()} (expected within ${seconds} s); retry then`,
      { headers: { 'Retry-After': String(seconds) }, extra: { registrationAt: new Date(eta).toISOString() } },
    );
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

/**
 * An estimate that a promised bound is built on: it rises at once to a slower observation (a loaded machine
 * must not break the promise) and comes down slowly, a quarter of the way to each faster one.
 */
function boundEstimate(estimate: number, observed: number): number {
  return Math.round(Math.max(observed, estimate - (estimate - observed) / 4));
}
