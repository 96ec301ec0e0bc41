// Whether a master key is the one the pool's notes were made with: every pool transaction of this proxy
// carries its agent's registration sealed to the recovery key derived from the master key (the zero-value
// output), so the key opens at least one registration among the pool's commitments — unless the proxy
// never made a transaction there. `pool-proxy store recover` refuses a key that opens none while the pool
// holds notes: rebuilding under the wrong key would show every balance as empty. The proxy's event archive is
// read first: the RPC may no longer keep the pool's first events.
import { scValToNative, type xdr } from '#stellar-sdk';
import type { LedgerConfig } from '../config.ts';
import { rpcServer } from '../../ledger/rpc-server.ts';
import { RecoveryKey } from './agent-registration.ts';
import { resolveContracts } from './deployment.ts';
import { type EventArchive, fromArchived, type PoolEvent } from './event-archive.ts';

export interface KeyOnChain {
  /** the pool's commitments read (stops at the first one the key opens) */
  commitments: number;
  /** whether the key opened one of them */
  opens: boolean;
}

const PAGE = 200;

/**
 * Reads the pool's commitments — first from the proxy's event archive (when given), then from the RPC from
 * `startLedger` (0: the oldest it keeps) — and tries the key on each.
 */
export async function findKeyOnChain(
  ledger: LedgerConfig,
  startLedger: number,
  masterKey: Uint8Array,
  archive?: EventArchive,
): Promise<KeyOnChain> {
  const { contracts } = await resolveContracts(ledger);
  const recovery = new RecoveryKey(masterKey);
  let commitments = 0;
  /** Whether the key opens the commitment event `e` of the pool (counting the pool's commitments). */
  const opens = (e: PoolEvent) => {
    if (e.contractId !== contracts.pool) return false;
    if (scValToNative(e.topic[0] as xdr.ScVal) !== 'new_commitment_event') return false;
    commitments++;
    const data = scValToNative(e.value) as { encrypted_output: Uint8Array };
    return recovery.open(new Uint8Array(data.encrypted_output)) !== undefined;
  };
  for (let after: string | undefined; archive !== undefined;) {
    const page = await archive.page(after, PAGE);
    if (page.length === 0) break;
    if (page.map(fromArchived).some(opens)) return { commitments, opens: true };
    after = page.at(-1)!.id;
  }
  const server = rpcServer(ledger.rpcUrl);
  const first = startLedger > 0 ? startLedger : Math.max(1, (await server.getHealth()).oldestLedger ?? 1);
  const filters = [{ type: 'contract' as const, contractIds: [contracts.pool] }];
  let page = await server.getEvents({ startLedger: first, filters, limit: PAGE });
  for (;;) {
    for (const event of page.events) {
      if (!event.inSuccessfulContractCall) continue;
      const e = { contractId: contracts.pool, topic: event.topic, value: event.value };
      if (opens(e as PoolEvent)) return { commitments, opens: true };
    }
    if (page.events.length < PAGE) return { commitments, opens: false };
    page = await server.getEvents({ cursor: page.cursor, filters, limit: PAGE });
  }
}
