// A Soroban RPC and how to wait for it: what sends transactions to a network outside the proxy (a deployment)
// needs to know about the network.
import type { rpc } from '#stellar-sdk';

export interface LedgerAccess {
  server: rpc.Server;
  networkPassphrase: string;
  /** between two getTransaction polls (default 1 s) */
  pollMs?: number;
  /** how long a sent transaction may stay undecided (default 120 s) */
  timeoutMs?: number;
  /** the inclusion fee bid, in stroops (default the base fee, 100; raise it when the network surges) */
  inclusionFee?: number;
}
