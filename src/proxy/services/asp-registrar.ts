// Registers agents' note keys in the ASP allowlist at a fixed cadence, so that no user can hold anyone's
// registration back and no registration breaks a deposit the proxy promised would stay valid.
//
// The allowlist contract keeps only its current root, and every proof commits to it: inserting a leaf makes
// every proof made before it stale. The service's own transactions (operator deposits, withdrawals) are
// simply proved again; a wallet-signed deposit cannot be. So new keys are inserted only in **registration
// slots**, at the multiples of `slotMs` on the clock, all the keys queued for a slot together (up to
// `perSlot`; more go to the next slot). Nothing a user does moves a slot, but for the bounded wait for the
// newcomers of the slot before it (below).
//
// A wallet deposit is proved against the current root and is promised valid until the next slot that may
// insert (its `validUntil`), never less than `windowMs` ahead:
//   - proved more than `windowMs` before the next slot: valid until that slot;
//   - proved within `windowMs` of a slot that has nothing queued: the slot is closed (it stays empty; keys
//     queued from then on go to the following slot) and the deposit is valid until the following slot;
//   - within `windowMs` of a slot that has keys queued, or while a slot's keys are being inserted: the
//     prepare waits for the insert to land, then proves against the new root — unless it is a new agent's
//     prepare whose own key just landed: that one is promised the signing window at once, and the next slot's
//     insert waits for it (at most the window and a proof; the next slot's own keys were queued after this
//     slot's time, so they still land within one slot interval and the window). A newcomer never waits
//     for two slots.
// Between slots, queued keys are inserted at once whenever that breaks no promise: no prepared deposit is
// within its promised validity, none is being proved or sent. So on a quiet pool a new agent waits only for
// its insert; the slots bound the wait when others keep deposits outstanding.
// A new key therefore lands by its slot — at the latest `slotMs + windowMs` (plus a proof's time) after it was
// queued, plus the time to insert the keys ahead of it in its slot; `waitBoundMs` is that bound with a full
// slot and the newcomer's own proof, as measured here, and /api/pool/info advertises it. No request is held longer than `holdMs` for a slot: it is
// answered `503 registration_pending` with `Retry-After` (the time its slot is expected to land) instead. A submit of a deposit
// proved against the current root takes a hold; a slot's insert first lets sends under way land (each is
// bounded by the ledger's confirmation timeout), and a deposit whose root moved is refused as stale
// without being sent. A slot whose insert fails (nothing applied) moves its keys to the next slot on the
// clock, inserted at that slot's time and never early, so a lasting cause costs one attempt per slot.
import type { RegistrationSchedule } from '../config.ts';
import type { AgentRef } from '../domain/agent-ref.ts';
import { scopedId } from '../domain/agent-ref.ts';
import { ProblemError } from '../../api/problem.ts';
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
  /** wallet prepares waiting for this slot that will ask for a proof window once it lands */
  newcomers: number;
  /** newcomers answered `registration_pending` while waiting for it → the landing time they were told */
  returning: Map<string, number>;
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
const NEWCOMER_MARGIN_MS = 500;
/** A client retrying after `registration_pending` asks again within this of its Retry-After (whole seconds). */
const RETRY_SLACK_MS = 1000;

export class AspRegistrar {
  readonly #d: AspRegistrarDeps;
  readonly #s: RegistrationSchedule;
  readonly #slots = new Map<number, Slot>();
  /** wallet deposit sends under way, proved against the current root */
  readonly #holds = new Set<Promise<unknown>>();
  /** deposits proved or being proved against the current root → until when they were promised it (ms) */
  readonly #promises = new Map<string, number>();
  /** newcomers' promises made after their slot landed, which the next slot's insert waits for (ms) */
  readonly #priority = new Map<string, number>();
  /** after a slot with newcomers landed: how many have yet to ask for their window, and until when to wait */
  #grace: { pending: number; until: number } | undefined;
  /** keys of newcomers that were told to retry, landed: until when their retry still gets its window first */
  readonly #reserved = new Map<string, number>();
  /** the latest an insert waits for the newcomers of the slot before it (ms): a slot is deferred once, boundedly */
  #deferCap = 0;
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
      slot = this.#openSlotFrom(this.#nextIndex(Date.now()));
      slot.leaves.set(scoped, this.#leafOf(agent));
      this.#insertEarly();
    }
    // A wallet's prepare asks for its proof window (`proofWindow(…, newcomer)`) as soon as its key lands; one
    // told to retry keeps that turn for its retry (`awaitsWindow`).
    if (newcomer) slot.newcomers++;
    try {
      await this.#waitFor(slot, 'the agent’s key is queued for the allowlist', holdUntil);
    } catch (error) {
      if (newcomer) {
        slot.newcomers--;
        if (error instanceof ProblemError && error.code === 'registration_pending')
          slot.returning.set(scoped, this.#landsBy(slot));
      }
      throw error;
    }
  }

  /** Whether the agent is a newcomer told to retry whose key has landed: its retry gets its window first. */
  awaitsWindow(agent: AgentRef): boolean {
    return (this.#reserved.get(scopedId(agent)) ?? 0) > Date.now();
  }

  /**
   * The longest a new agent's first prepare may take from its first request, as measured here: a slot
   * interval, the signing window and a proof (a slot closed just before it was queued), inserting a full
   * slot's keys, its own proof, and a retry after `registration_pending`. Holds while no more than
   * `perSlot` new agents arrive per slot.
   */
  waitBoundMs(): number {
    const { slotMs, windowMs, perSlot } = this.#s;
    return (
      slotMs +
      windowMs +
      NEWCOMER_MARGIN_MS +
      2 * this.#proofMs +
      (perSlot + 1) * this.#insertMs +
      RETRY_SLACK_MS
    );
  }

  /**
   * Waits (bounded by the hold limit) until a wallet deposit proved now stays valid for at least the signing
   * window, and returns the root to prove against and the time until which it is promised to stay current.
   * The promise is kept under `id` (no early insert breaks it) until `release(id)` or its time passes.
   */
  async proofWindow(id: string, holdUntil = this.holdUntil(), newcomer?: AgentRef): Promise<ProofWindow> {
    const returning = newcomer !== undefined && this.awaitsWindow(newcomer);
    const waited = newcomer !== undefined && !returning && this.#grace !== undefined;
    // A newcomer whose key just landed does not wait for the next slot: that slot waits for it (once).
    let priority = returning || waited;
    try {
      for (;;) {
        this.#refuseIfStopped();
        const now = Date.now();
        const due = this.#inserting?.slot ?? this.#dueSlot(now);
        const until = now + this.#proofMs + this.#s.windowMs + NEWCOMER_MARGIN_MS;
        if (priority && this.#inserting === undefined && until <= this.#deferCap) {
          this.#priority.set(id, until);
          if (returning) this.#reserved.delete(scopedId(newcomer));
          return this.#promise(id, until);
        }
        if (due !== undefined) {
          priority = false;
          await this.#waitFor(due, 'allowlist registrations are being inserted', holdUntil);
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
        priority = false;
        await this.#waitFor(slot, 'allowlist registrations are about to be inserted', holdUntil);
      }
    } finally {
      if (waited && this.#grace !== undefined) this.#grace.pending--;
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
    this.#proofMs = Math.round((this.#proofMs + ms) / 2);
  }

  /** Restores a promise made before a restart (a prepared deposit still open). */
  restore(id: string, validUntil: number): void {
    if (validUntil > Date.now()) this.#promises.set(id, validUntil);
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
    const now = Date.now();
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
      timer = setTimeout(() => resolve('timeout'), Math.max(0, holdUntil - Date.now()));
    });
    try {
      if ((await Promise.race([slot.landed.then(() => 'landed' as const), timeout])) === 'landed') return;
    } finally {
      clearTimeout(timer);
    }
    const eta = this.#landsBy(slot);
    const seconds = Math.max(1, Math.ceil((eta - Date.now()) / 1000));
    throw new ProblemError(
      'registration_pending',
      `${why}; the slot at ${new Date(this.#at(slot.index)).toISOString()} inserts them (expected within ${seconds} s); retry then`,
      { headers: { 'Retry-After': String(seconds) }, extra: { registrationAt: new Date(eta).toISOString() } },
    );
  }

  /** The latest time (ms) a request arriving now may be held for a slot. */
  holdUntil(now = Date.now()): number {
    return now + this.#s.holdMs;
  }

  /** When the slot's keys are expected to be inserted and indexed (ms). */
  #landsBy(slot: Slot): number {
    if (this.#inserting?.slot === slot) return this.#inserting.endsBy;
    const start = Math.max(this.#at(slot.index), this.#inserting?.endsBy ?? 0);
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
      newcomers: 0,
      returning: new Map(),
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
    const index = this.#nextIndex(Date.now());
    this.#timer = setTimeout(
      () => {
        this.#arm();
        void this.#run(index);
      },
      this.#at(index) - Date.now(),
    );
    this.#timer.unref();
  }

  async #run(index: number): Promise<void> {
    const slot = this.#slots.get(index);
    // Slots that passed without keys are forgotten.
    const now = Date.now();
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
    // One insert at a time: a slot whose predecessor is still inserting follows it, and after the newcomers
    // of the slot before it got their windows.
    for (;;) {
      while (this.#inserting !== undefined) await this.#inserting.done.catch(() => {});
      const wait = this.#newcomersWait();
      if (wait === 0) break;
      await new Promise((resolve) => setTimeout(resolve, Math.min(wait, 50)));
    }
    if (this.#slots.get(index) !== slot) return; // run meanwhile (early and by its timer)
    this.#slots.delete(index);
    const started = Date.now();
    const done = this.#insert(slot);
    this.#inserting = { slot, done, endsBy: started + (slot.leaves.size + 1) * this.#insertMs };
    try {
      await done;
      // Its newcomers ask for their windows next; the following insert waits for them (#newcomersWait).
      // Those told to retry get their turn when they were told to come back (and a little more). The next
      // insert waits for them at most until a retry's window would end.
      const landedAt = Date.now();
      this.#deferCap = landedAt + RETRY_SLACK_MS + this.#proofMs + this.#s.windowMs + 2 * NEWCOMER_MARGIN_MS;
      if (slot.newcomers > 0)
        this.#grace = { pending: slot.newcomers, until: landedAt + 2 * this.#proofMs + NEWCOMER_MARGIN_MS };
      for (const [scoped, eta] of slot.returning)
        this.#reserved.set(scoped, Math.min(Math.max(landedAt, eta) + RETRY_SLACK_MS, this.#deferCap));
      slot.settle();
    } catch (error) {
      slot.settle(this.#requeue(slot, error));
    } finally {
      this.#inserting = undefined;
      this.#insertEarly();
    }
  }

  /** How long an insert must still wait for the newcomers of the slot before it (0: not at all), at most. */
  #newcomersWait(): number {
    const now = Date.now();
    if (this.#grace !== undefined && (this.#grace.pending <= 0 || this.#grace.until <= now))
      this.#grace = undefined;
    let until = this.#grace?.until ?? 0;
    for (const [scoped, end] of this.#reserved) {
      if (end <= now) this.#reserved.delete(scoped);
      else until = Math.max(until, end);
    }
    for (const [id, end] of this.#priority) {
      if (end <= now) this.#priority.delete(id);
      else until = Math.max(until, end);
    }
    return Math.max(0, Math.min(until, this.#deferCap) - now);
  }

  async #insert(slot: Slot): Promise<void> {
    // Deposits already being sent against the current root land first (each is bounded by its confirmation).
    await Promise.all([...this.#holds]);
    let lastLedger = 0;
    let inserted = 0;
    const started = Date.now();
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
      if (inserted > 0) this.#insertMs = Math.round((this.#insertMs + (Date.now() - started) / inserted) / 2);
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
    let next = this.#openSlotFrom(this.#nextIndex(Date.now()));
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
    const seconds = Math.max(1, Math.ceil((eta - Date.now()) / 1000));
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
