// The session epoch of a store: the token signing key and the login-challenge MAC key derive from the master
// key and this epoch (store/derived-keys.ts, deriveEpochKey). Logging out records a token as revoked in the
// store; `store recover` replaces the store, and with it those records, so it starts a new epoch in the empty
// store instead: every token and every login challenge issued before the recovery ends at once (whether it was
// logged out or not), and none can come back. A store without an epoch record is in the first epoch ('').
import { randomBytes } from 'node:crypto';
import type { EncryptedStore } from '../store/encrypted-store.ts';

interface EpochRecord {
  epoch: string;
}

const key = (store: EncryptedStore) => store.fixedKey('meta', 'session-epoch');

/** The store's session epoch ('' for the first). */
export async function sessionEpoch(store: EncryptedStore): Promise<string> {
  return (await store.get<EpochRecord>(key(store)))?.epoch ?? '';
}

/** Starts a new session epoch in `store` (a store rebuilt by `store recover`); returns it. */
export async function startSessionEpoch(store: EncryptedStore): Promise<string> {
  const epoch = randomBytes(16).toString('hex');
  await store.put(key(store), { epoch } satisfies EpochRecord);
  return epoch;
}
