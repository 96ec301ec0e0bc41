// Soroban RPC access shared by the x402 layer: an rpc.Server that accepts http:// on loopback sandboxes, and
// the ledger close time measured on the network itself (the RPC's retained ledger range and close times),
// which sets how many ledgers an authorization stays valid for a given number of seconds.

import { rpc } from '@stellar/stellar-sdk';
import { X402Error } from './errors.ts';

/** Ledger close time assumed when the RPC retains too few ledgers to measure it (Stellar's target is 5 s). */
export const DEFAULT_LEDGER_SECONDS = 5;

/** An rpc.Server for `url`; plain http is allowed (sandboxes and local RPC nodes). */
export function rpcServer(url: string): rpc.Server {
  return new rpc.Server(url, { allowHttp: url.startsWith('http:') });
}

/** A hash no transaction has: asking for it returns only the RPC's ledger range and close times. */
const PROBE_HASH = '0'.repeat(64);

/**
 * Average seconds per ledger over the ledgers the RPC retains: (latest close − oldest close) / (latest −
 * oldest), from the range fields every getTransaction answer carries. DEFAULT_LEDGER_SECONDS when the range
 * is a single ledger or the close times are missing.
 */
export async function measureLedgerSeconds(server: rpc.Server): Promise<number> {
  let res: rpc.Api.GetTransactionResponse;
  try {
    res = await server.getTransaction(PROBE_HASH);
  } catch (e) {
    throw new X402Error('rpc_failed', `getTransaction failed: ${(e as Error).message}`);
  }
  const span = res.latestLedger - res.oldestLedger;
  const seconds = Number(res.latestLedgerCloseTime) - Number(res.oldestLedgerCloseTime);
  if (!(span > 0) || !Number.isFinite(seconds) || seconds <= 0) return DEFAULT_LEDGER_SECONDS;
  return seconds / span;
}

/** The last ledger an authorization may be used in: latest + ceil(timeoutSeconds / ledgerSeconds), at least latest + 1. */
export function expirationLedger(latest: number, timeoutSeconds: number, ledgerSeconds: number): number {
  return latest + Math.max(1, Math.ceil(timeoutSeconds / ledgerSeconds));
}
