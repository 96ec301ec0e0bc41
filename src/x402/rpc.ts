// The ledger close time, measured on the network itself through its Soroban RPC (the retained ledger range
// and close times), which sets how many ledgers an x402 authorization stays valid for a given number of
// seconds. (The RPC client itself is src/ledger/rpc-server.ts.)

import type { rpc } from '#stellar-sdk';
import { rpcServer } from '../ledger/rpc-server.ts';
import { X402Error } from './errors.ts';

/**
 * Stellar's nominal ledger close time (`ledger_target_close_time_milliseconds` = 5000 on testnet and the
 * public network). Assumed when the RPC retains too few ledgers to measure it, and the shortest ledger time a
 * payer signs with: a facilitator that assumes it (the official one does when it cannot reach Horizon)
 * allows `ceil(maxTimeoutSeconds / 5)` ledgers, so an expiration computed with 5 s or more suits every
 * conforming facilitator, whatever the ledgers' real pace.
 */
export const DEFAULT_LEDGER_SECONDS = 5;

/** A hash no transaction has: asking for it returns only the RPC's ledger range and close times. */
const PROBE_HASH = '0'.repeat(64);

/** Bounds on the seconds per ledger: close times have whole-second resolution, so ±1 s over the range. */
export interface LedgerSecondsRange {
  /** the fastest the ledgers can have been closing (0 when the range fits in one second) */
  low: number;
  /** the slowest */
  high: number;
}

/**
 * Seconds per ledger over the ledgers the RPC retains, from the range fields every getTransaction answer
 * carries: (latest close − oldest close ± 1 s) / (latest − oldest). DEFAULT_LEDGER_SECONDS for both bounds
 * when the RPC keeps a single ledger. A payer signs with `high` (fewer ledgers: never longer than asked);
 * a facilitator bounds with `low` (more ledgers: never refuses an honest payer on the same network).
 */
export async function measureLedgerSeconds(server: rpc.Server): Promise<LedgerSecondsRange> {
  let res: rpc.Api.GetTransactionResponse;
  try {
    res = await server.getTransaction(PROBE_HASH);
  } catch (e) {
    throw new X402Error('rpc_failed', `getTransaction failed: ${(e as Error).message}`);
  }
  const span = res.latestLedger - res.oldestLedger;
  const seconds = Number(res.latestLedgerCloseTime) - Number(res.oldestLedgerCloseTime);
  if (!(span > 0) || !Number.isFinite(seconds) || seconds < 0)
    return { low: DEFAULT_LEDGER_SECONDS, high: DEFAULT_LEDGER_SECONDS };
  return { low: Math.max(seconds - 1, 0) / span, high: (seconds + 1) / span };
}

/** How long a measured ledger time is reused for the same RPC URL. */
const LEDGER_SECONDS_TTL_MS = 30_000;
const measured = new Map<string, { at: number; range: Promise<LedgerSecondsRange> }>();

/** measureLedgerSeconds, reused for LEDGER_SECONDS_TTL_MS per RPC URL once it is tight (the rate changes slowly). */
export function ledgerSecondsOf(
  url: string,
  server: rpc.Server = rpcServer(url),
): Promise<LedgerSecondsRange> {
  const hit = measured.get(url);
  if (hit && Date.now() - hit.at < LEDGER_SECONDS_TTL_MS) return hit.range;
  const range = measureLedgerSeconds(server);
  measured.set(url, { at: Date.now(), range });
  // only a tight measure is reused (a young network's retained range is too short to say much)
  range.then(
    (r) => {
      if (!(r.low > 0 && r.high / r.low < 1.2)) measured.delete(url);
    },
    () => measured.delete(url),
  );
  return range;
}

/**
 * The last ledger an authorization may be used in: latest + ceil(timeoutSeconds / ledgerSeconds), at least
 * latest + 1. A payer passes `payerLedgerSeconds(measured)`; a facilitator its lower bound.
 */
export function expirationLedger(latest: number, timeoutSeconds: number, ledgerSeconds: number): number {
  if (!(ledgerSeconds > 0)) return Number.MAX_SAFE_INTEGER;
  return latest + Math.max(1, Math.ceil(timeoutSeconds / ledgerSeconds));
}

/**
 * How long a latest-ledger answer is shared by the callers of the same RPC URL: well under a ledger, so a
 * shared answer is at most one ledger behind (an expiration computed from it is never later than asked).
 */
const LATEST_LEDGER_TTL_MS = 200;
const latest = new Map<string, { at: number; sequence: Promise<number> }>();

/** The RPC's latest ledger sequence, one request per LATEST_LEDGER_TTL_MS for all callers of `url`. */
export function latestLedgerOf(url: string, server: rpc.Server = rpcServer(url)): Promise<number> {
  const hit = latest.get(url);
  if (hit && Date.now() - hit.at < LATEST_LEDGER_TTL_MS) return hit.sequence;
  // the raw answer: the parsed one decodes the ledger's whole close metadata, which only the sequence is needed of
  const sequence = server._getLatestLedger().then(
    (l) => l.sequence,
    (e: unknown) => {
      latest.delete(url);
      throw new X402Error('rpc_failed', `getLatestLedger failed: ${(e as Error).message}`);
    },
  );
  latest.set(url, { at: Date.now(), sequence });
  return sequence;
}

/**
 * Seconds per ledger a payer signs with: the slower of the measured (or given) pace and the nominal 5 s, so
 * that the expiration is never further than a facilitator assuming either allows.
 */
export function payerLedgerSeconds(measuredOrGiven: number): number {
  return Math.max(DEFAULT_LEDGER_SECONDS, measuredOrGiven);
}
