// Payment records beside the journal: idempotency keys (owner + key → payment, with the request's
// fingerprint), an index of each owner's payments, the results returned to callers (content and receipt, so a
// retry with the same key gets the first answer), and services named by HMAC (for the public count of
// distinct services, which must not reveal them).
import { createHash } from 'node:crypto';
import type { Mutex } from '../store/backend.ts';
import type { EncryptedStore, StoreOp } from '../store/encrypted-store.ts';
import type { PaymentResult as PaymentOutcome } from '../../api/types.ts';
import { BUDGET_LOCK_SCOPE } from '../services/agent-policies.ts';

export interface KeyRecord {
  paymentId: string;
  fingerprint: string;
}

export class PaymentRecords {
  readonly #store: EncryptedStore;
  /** Serialises the binding of an idempotency key (owner + key), in every process on the store. */
  readonly keyLock: Mutex;
  /** Serialises an agent's budget checks and reservations (and its owner's policy changes). */
  readonly budgetLock: Mutex;

  constructor(store: EncryptedStore) {
    this.#store = store;
    this.keyLock = store.mutex('pay-key');
    this.budgetLock = store.mutex(BUDGET_LOCK_SCOPE);
  }

  async lookupKey(owner: string, key: string): Promise<KeyRecord | undefined> {
    return this.#store.get<KeyRecord>(this.#store.key('pay-key', owner, key));
  }

  /** Store operations that bind an idempotency key and index the payment under its owner. */
  newPaymentOps(
    owner: string,
    paymentId: string,
    idempotency?: { key: string; fingerprint: string },
  ): StoreOp[] {
    const ops: StoreOp[] = [
      { type: 'put', key: this.#store.key('pay-owner', owner, paymentId), value: { paymentId } },
    ];
    if (idempotency !== undefined) ops.push(...this.bindKeyOps(owner, paymentId, idempotency));
    return ops;
  }

  /** Store operations that bind an idempotency key to a payment. */
  bindKeyOps(owner: string, paymentId: string, idempotency: { key: string; fingerprint: string }): StoreOp[] {
    return [
      {
        type: 'put',
        key: this.#store.key('pay-key', owner, idempotency.key),
        value: { paymentId, fingerprint: idempotency.fingerprint } satisfies KeyRecord,
      },
    ];
  }

  async paymentsOf(owner: string): Promise<string[]> {
    return (await this.#store.entries<{ paymentId: string }>(this.#store.prefix('pay-owner', owner))).map(
      ([, r]) => r.paymentId,
    );
  }

  resultOp(outcome: PaymentOutcome): StoreOp {
    return { type: 'put', key: this.#store.key('pay-result', outcome.paymentId), value: outcome };
  }

  async result(paymentId: string): Promise<PaymentOutcome | undefined> {
    return this.#store.get<PaymentOutcome>(this.#store.key('pay-result', paymentId));
  }

  /** A stable, non-revealing name for a payee's address (the stats count distinct payees by it). */
  payeeKey(address: string): string {
    return this.#store.key('payee', address).split('/')[1] as string;
  }
}

/** Fingerprint of a payment request: the same idempotency key with another request is a conflict. */
export function fingerprint(request: Record<string, unknown>): string {
  return createHash('sha256').update(JSON.stringify(request)).digest('hex');
}
