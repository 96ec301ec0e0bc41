// What the empty store made by `pool-proxy store recover` starts with (LevelDB and PostgreSQL alike): a new
// session epoch, so every token and login challenge of the replaced store ends (logged out or not: the
// revocations were in the store that is gone), and the flag that has the next start rebuild the payment
// history from the chain. Agents, notes and balances come back from the chain on their own (docs/CONFIG.md,
// "What a recover keeps and loses").
import { startSessionEpoch } from '../../proxy/auth/session-epoch.ts';
import { historyToRecoverKey } from '../../proxy/payments/recover-history.ts';
import type { EncryptedStore } from '../../proxy/store/encrypted-store.ts';

export async function prepareRecoveredStore(store: EncryptedStore): Promise<void> {
  await startSessionEpoch(store);
  await store.put(historyToRecoverKey(store), true);
}
