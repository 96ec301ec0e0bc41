// The seal on each event of the proxy's event archive: an HMAC-SHA256 under a key derived from the master key
// (its own HKDF label), over every field of the event. The archive seals what it keeps and checks the seal of
// every event it gives back, and an import checks every line's seal before writing anything, so an edited
// event (a nullifier replaced, a ciphertext byte flipped, a commitment inserted) or a line sealed by another
// deployment's master key is refused instead of being replayed into the store.
import { createHmac, timingSafeEqual } from 'node:crypto';
import { deriveKey } from '../store/derived-keys.ts';

/** The fields of an archived event the seal covers (event-archive.ts `ArchivedEvent`). */
export interface SealedFields {
  id: string;
  ledger: number;
  txHash: string;
  contractId: string;
  topic: string[];
  value: string;
}

/** An event's seal did not verify: it was edited, or sealed under another master key. */
export class ArchiveSealError extends Error {
  readonly eventId: string;

  constructor(eventId: string, where: string) {
    super(
      `${where}: the seal of pool event ${eventId} does not verify under this master key (the event was ` +
        'edited, or the archive is another deployment’s): refused, nothing was written',
    );
    this.eventId = eventId;
  }
}

const MAC_HEX = /^[0-9a-f]{64}$/;

export class ArchiveSeal {
  readonly #key: Uint8Array;

  constructor(masterKey: Uint8Array) {
    this.#key = deriveKey(masterKey, 'event-archive-mac');
  }

  /** The seal of `e` (hex). */
  mac(e: SealedFields): string {
    // One JSON array of the fields in a fixed order: no two different events serialise alike.
    const text = JSON.stringify([e.id, e.ledger, e.txHash, e.contractId, e.topic, e.value]);
    return createHmac('sha256', this.#key).update(text).digest('hex');
  }

  /** Whether `mac` is the seal of `e` (compared in constant time). */
  verifies(e: SealedFields, mac: unknown): boolean {
    if (typeof mac !== 'string' || !MAC_HEX.test(mac)) return false;
    return timingSafeEqual(Buffer.from(this.mac(e), 'hex'), Buffer.from(mac, 'hex'));
  }

  /** Throws `ArchiveSealError` (naming `where` and the event) unless `mac` is the seal of `e`. */
  check(e: SealedFields, mac: unknown, where: string): void {
    if (!this.verifies(e, mac)) throw new ArchiveSealError(e.id, where);
  }
}
