// Registers agents' note keys in the ASP allowlist without breaking deposits in flight.
//
// The allowlist contract keeps only its current root, and every proof commits to it: inserting a leaf makes
// every proof made before it stale. A wallet-signed deposit cannot be proved again by the proxy (the wallet
// signed that exact transaction), so registrations are queued and inserted together ("flushed") only when no
// prepared wallet deposit is outstanding — or at the latest when the last of them expires. Deposits prepared
// while registrations wait get an expiry capped at that deadline, so the deadline never moves and a waiting
// agent waits at most one prepare TTL. The service's own transactions (operator deposits, withdrawals) are
// simply proved again when a root moved.
import type { AgentRef } from '../domain/agent-ref.ts';
import { scopedId } from '../domain/agent-ref.ts';
import { ProblemError } from '../../api/problem.ts';
import type { Logger } from '../util/logger.ts';
import type { AgentKeyring } from './agent-keyring.ts';
import type { Deployment } from './deployment.ts';
import type { LedgerClient } from './ledger-client.ts';
import type { PoolIndexer } from './pool-indexer.ts';
import { nativeToScVal } from '@stellar/stellar-sdk';

export interface AspRegistrarDeps {
  ledger: LedgerClient;
  deployment: Deployment;
  indexer: PoolIndexer;
  keyring: AgentKeyring;
  logger: Logger;
  /** Expiry (ms) of the last outstanding wallet deposit proved against the current roots, or 0 if none. */
  outstandingUntil: () => number;
}

interface Waiter {
  resolve: () => void;
  reject: (error: unknown) => void;
}

export class AspRegistrar {
  readonly #d: AspRegistrarDeps;
  readonly #pending = new Map<string, { leaf: bigint; waiters: Waiter[] }>();
  #deadline = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> | undefined;
  #stopped = false;

  constructor(deps: AspRegistrarDeps) {
    this.#d = deps;
  }

  /** Whether the agent's key is in the allowlist (as indexed). */
  isRegistered(agent: AgentRef): boolean {
    return this.#indexOf(this.#d.keyring.crypto(scopedId(agent)).membershipLeaf) !== undefined;
  }

  /**
   * Resolves once the agent's key is in the allowlist: at once if it is, else after the next flush. Call
   * `nudge()` when a prepared deposit is submitted or expires.
   */
  async ensure(agent: AgentRef): Promise<void> {
    if (this.isRegistered(agent)) return;
    if (this.#stopped) throw new ProblemError('service_unavailable', 'the service is stopping; retry');
    const scoped = scopedId(agent);
    return new Promise<void>((resolve, reject) => {
      const entry = this.#pending.get(scoped);
      if (entry !== undefined) {
        entry.waiters.push({ resolve, reject });
      } else {
        if (this.#pending.size === 0) this.#deadline = Math.max(Date.now(), this.#d.outstandingUntil());
        this.#pending.set(scoped, {
          leaf: this.#d.keyring.crypto(scoped).membershipLeaf,
          waiters: [{ resolve, reject }],
        });
      }
      this.nudge();
    });
  }

  /**
   * When registrations are waiting: the time (ms) by which they will be inserted. A deposit prepared now
   * must expire by then (or wait for the flush and be proved after it).
   */
  get deadline(): number | undefined {
    return this.#pending.size > 0 || this.#flushing !== undefined ? this.#deadline : undefined;
  }

  /** Resolves once inserts under way (if any) have landed; registrations still held back are not waited for. */
  async inserting(): Promise<void> {
    await this.#flushing?.catch(() => {});
  }

  /** Resolves after the current or next flush (at once if nothing waits). */
  async flushed(): Promise<void> {
    while (this.#pending.size > 0 || this.#flushing !== undefined) {
      if (this.#flushing !== undefined) await this.#flushing.catch(() => {});
      else await new Promise((r) => setTimeout(r, 100));
    }
  }

  /** Re-checks whether waiting registrations may be inserted now. */
  nudge(): void {
    if (this.#stopped || this.#pending.size === 0 || this.#flushing !== undefined) return;
    const now = Date.now();
    const until = this.#d.outstandingUntil();
    if (until > now && now < this.#deadline) {
      clearTimeout(this.#timer);
      this.#timer = setTimeout(() => this.nudge(), Math.min(this.#deadline, until) - now + 10);
      this.#timer.unref();
      return;
    }
    this.#flushing = this.#flush().finally(() => {
      this.#flushing = undefined;
      this.nudge();
    });
  }

  stop(): void {
    this.#stopped = true;
    clearTimeout(this.#timer);
    for (const entry of this.#pending.values())
      for (const w of entry.waiters)
        w.reject(new ProblemError('service_unavailable', 'the service is stopping; retry'));
    this.#pending.clear();
  }

  async #flush(): Promise<void> {
    const batch = [...this.#pending.entries()];
    this.#pending.clear();
    let lastLedger = 0;
    let failure: unknown;
    for (const [, { leaf }] of batch) {
      if (this.#indexOf(leaf) !== undefined) continue;
      try {
        const confirmed = await this.#d.ledger.invokeAndConfirm(
          this.#d.deployment.aspAdmin,
          this.#d.deployment.contracts.aspMembership,
          'insert_leaf',
          [nativeToScVal(leaf, { type: 'u256' })],
        );
        lastLedger = Math.max(lastLedger, confirmed.ledger);
      } catch (error) {
        failure = error;
        break;
      }
    }
    if (lastLedger > 0) await this.#d.indexer.waitForLedger(lastLedger);
    this.#d.logger.log('info', 'allowlist registrations inserted', { count: batch.length });
    for (const [, { leaf, waiters }] of batch) {
      const ok = this.#indexOf(leaf) !== undefined;
      for (const w of waiters) {
        if (ok) w.resolve();
        else
          w.reject(
            failure ??
              new ProblemError('service_unavailable', 'the allowlist registration is not indexed yet; retry'),
          );
      }
    }
  }

  #indexOf(leaf: bigint): number | undefined {
    const tree = this.#d.indexer.aspTree;
    for (let i = tree.nextIndex - 1; i >= 0; i--) if (tree.leaf(i) === leaf) return i;
    return undefined;
  }
}
