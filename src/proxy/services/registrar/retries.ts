// What happens when a registration cannot land in time (../asp-registrar.ts). A slot whose insert failed
// (refused or failed on the ledger, or not confirmed in time) moves its keys not in the allowlist yet to the
// next open slot on the clock, which inserts them at its time and not earlier: an early insert would retry at
// once, again and again while the cause lasts, each failure pushing the keys one slot further. So a lasting
// cause costs one attempt per slot. A request waiting for them — or one whose hold limit passed before its slot
// landed — is answered `503 registration_pending` with Retry-After, the whole seconds until its slot is
// expected to land.
import { DomainError, messageOf } from '../../domain/errors.ts';
import type { Logger } from '../../util/logger.ts';
import type { Slot, Slots } from './slots.ts';

/** `detail` is given the seconds until `eta` (ms), at least one. */
export function registrationPending(
  eta: number,
  now: number,
  detail: (seconds: number) => string,
): DomainError {
  const seconds = Math.max(1, Math.ceil((eta - now) / 1000));
  return new DomainError('registration_pending', detail(seconds), {
    retryAfterSeconds: seconds,
    extra: { registrationAt: new Date(eta).toISOString() },
  });
}

/**
 * Queues the keys of slot `failed` that are not in the allowlist (`missing`) for the next open slots, as
 * retries; returns what the requests waiting for them are answered instead of the insert's error.
 */
export function retryAtNextSlot(
  failed: Slot,
  missing: Array<[string, bigint]>,
  error: unknown,
  at: { slots: Slots; now: number; logger: Logger; landsBy: (slot: Slot) => number },
): DomainError {
  const { slots, now } = at;
  const next = slots.requeue(missing, slots.nextIndex(now));
  const reason = messageOf(error);
  at.logger.log('warn', 'allowlist insert failed; its keys are queued for the next slot', {
    slot: failed.index,
    error: reason,
  });
  const slotAt = new Date(slots.at(next.index)).toISOString();
  return registrationPending(
    at.landsBy(next),
    now,
    (seconds) =>
      `the allowlist insert failed (${reason}); the key is queued again for the slot at ${slotAt} (expected within ${seconds} s); retry then`,
  );
}
