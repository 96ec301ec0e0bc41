// Whether a master key is the one the pool's notes were made with: every pool transaction of this proxy
// carries its agent's registration sealed to the recovery key derived from the master key (the zero-value
// output), so the key opens at least one registration among the pool's commitments — unless the proxy
// never made a transaction there. `pool-proxy store recover` refuses a key that opens none while the pool
// holds notes: rebuilding under the wrong key would show every balance as empty.
import { scValToNative, type xdr } from '@stellar/stellar-sdk';
import type { LedgerConfig } from '../config.ts';
import { rpcServer } from '../../ledger/rpc-server.ts';
import { RecoveryKey } from './agent-registration.ts';
import { resolveContracts } from './deployment.ts';

export interface KeyOnChain {
  /** the pool's commitments read (stops at the first one the key opens) */
  commitments: number;
  /** whether the key opened one of them */
  opens: boolean;
}

const PAGE = 200;

/** Reads the pool's commitments from `startLedger` (0: the oldest the RPC keeps) and tries the key on each. */
export async function findKeyOnChain(
  ledger: LedgerConfig,
  startLedger: number,
  masterKey: Uint8Array,
): Promise<KeyOnChain> {
  const { contracts } = await resolveContracts(ledger);
  const server = rpcServer(ledger.rpcUrl);
  const recovery = new RecoveryKey(masterKey);
  const first = startLedger > 0 ? startLedger : Math.max(1, (await server.getHealth()).oldestLedger ?? 1);
  const filters = [{ type: 'contract' as const, contractIds: [contracts.pool] }];
  let page = await server.getEvents({ startLedger: first, filters, limit: PAGE });
  let commitments = 0;
  for (;;) {
    for (const event of page.events) {
      if (!event.inSuccessfulContractCall) continue;
      if (scValToNative(event.topic[0] as xdr.ScVal) !== 'new_commitment_event') continue;
      commitments++;
      const data = scValToNative(event.value) as { encrypted_output: Uint8Array };
      if (recovery.open(new Uint8Array(data.encrypted_output)) !== undefined)
        return { commitments, opens: true };
    }
    if (page.events.length < PAGE) return { commitments, opens: false };
    page = await server.getEvents({ cursor: page.cursor, filters, limit: PAGE });
  }
}
