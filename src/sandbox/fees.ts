// The sandbox's Soroban resource fee model: the structure of stellar-core's (soroban-env-host `fees.rs`,
// protocol 23 and later: only classic entries are disk reads, a flat fee per 1 KB written, rent for the
// TTL of new entries) with the rates the Stellar testnet runs with, and an instruction estimate per call,
// since the sandbox runs contracts as TypeScript and does not meter CPU. Figures and sources: docs/SANDBOX.md.
import type { xdr } from '@stellar/stellar-sdk';

/**
 * Testnet's fee settings (stroops), as published in stellar/quickstart's
 * `local/core/etc/config-settings/p27/testnet.json` (kept equal to testnet's live settings by that
 * repository's config-settings workflow).
 */
export const FEE_SCHEDULE = {
  /** `fee_rate_per_instructions_increment`, per 10,000 instructions */
  instructions10k: 7n,
  /** `fee_disk_read_ledger_entry`: per classic entry (account, trustline) in the footprint */
  readEntry: 1_563n,
  /** `fee_write_ledger_entry`: per read-write entry */
  writeEntry: 2_500n,
  /** `fee_disk_read1_kb` */
  read1KB: 447n,
  /** `fee_write1_kb` (`contract_ledger_cost_ext_v0`) */
  write1KB: 875n,
  /** `fee_tx_size1_kb`: bandwidth */
  txSize1KB: 406n,
  /** `fee_historical1_kb`: history, for the envelope plus a 300-byte result */
  historical1KB: 4_059n,
  /** `fee_contract_events1_kb`: contract events and the return value (refundable) */
  events1KB: 5_000n,
  /**
   * rent per 1 KB: `rent_fee1_kb_soroban_state_size_high`, the rate once the state reaches its target size
   * (below it the rate is lower, so this is the most testnet charges)
   */
  rent1KB: 10_000n,
  /** `persistent_rent_rate_denominator` and `temp_rent_rate_denominator` */
  persistentRentDenominator: 1_215n,
  temporaryRentDenominator: 2_430n,
  /** `min_persistent_ttl` and `min_temporary_ttl`: the TTL, in ledgers, a new entry is given */
  minPersistentTtl: 120_960n,
  minTemporaryTtl: 720n,
} as const;

/** Bytes of transaction result history is charged for beside the envelope (`TX_BASE_RESULT_SIZE`). */
const TX_BASE_RESULT_SIZE = 300n;
/** Size of the TTL entry written for every new Soroban entry (`TTL_ENTRY_SIZE`). */
const TTL_ENTRY_SIZE = 48n;

/**
 * Instructions of one Ed25519 signature check of a 32-byte payload, from testnet's CPU cost parameters
 * (`VerifyEd25519Sig`: 377,551 + 4,059/128 per byte).
 */
export const ED25519_VERIFY_INSTRUCTIONS = 378_566;
/** Estimate for one call into a contract of the network (a cached module's instantiation and its run). */
export const CONTRACT_CALL_INSTRUCTIONS = 1_000_000;
/** Estimate for one call into the built-in Stellar Asset Contract (native code, no VM). */
export const STELLAR_ASSET_CALL_INSTRUCTIONS = 150_000;

const perKB = (bytes: bigint, rate: bigint) => (bytes * rate + 1023n) / 1024n;

export interface DeclaredResources {
  instructions: number;
  /** classic entries (accounts, trustlines) in the footprint: the disk reads since protocol 23 */
  readEntries: number;
  writeEntries: number;
  readBytes: number;
  writeBytes: number;
}

/** The part of the resource fee a transaction's declared resources cost (checked at admission). */
export function resourcesFee(r: DeclaredResources): bigint {
  const f = FEE_SCHEDULE;
  return (
    (BigInt(r.instructions) * f.instructions10k + 9_999n) / 10_000n +
    BigInt(r.readEntries) * f.readEntry +
    BigInt(r.writeEntries) * f.writeEntry +
    perKB(BigInt(r.readBytes), f.read1KB) +
    perKB(BigInt(r.writeBytes), f.write1KB)
  );
}

/** What the transaction's size costs (bandwidth and history). */
export function sizeFee(txBytes: number): bigint {
  const size = BigInt(txBytes);
  return perKB(size, FEE_SCHEDULE.txSize1KB) + perKB(size + TX_BASE_RESULT_SIZE, FEE_SCHEDULE.historical1KB);
}

/** The refundable part for contract events and the return value. */
export function eventsFee(eventBytes: number): bigint {
  return perKB(BigInt(eventBytes), FEE_SCHEDULE.events1KB);
}

/** A Soroban entry the transaction creates: it gets the minimum TTL of its durability, paid as rent. */
export interface CreatedEntry {
  persistent: boolean;
  bytes: number;
}

/**
 * Rent of new entries (refundable): their size for the minimum TTL at the rent rate, plus the write of each
 * one's TTL entry (a write entry and 48 bytes), as `compute_rent_fee` charges an extension from nothing.
 */
export function rentFee(created: readonly CreatedEntry[]): bigint {
  const f = FEE_SCHEDULE;
  let fee = 0n;
  for (const e of created) {
    const [ttl, denominator] = e.persistent
      ? [f.minPersistentTtl, f.persistentRentDenominator]
      : [f.minTemporaryTtl, f.temporaryRentDenominator];
    const num = BigInt(e.bytes) * f.rent1KB * ttl;
    const den = 1024n * denominator;
    fee += (num + den - 1n) / den + f.writeEntry;
  }
  return fee + perKB(BigInt(created.length) * TTL_ENTRY_SIZE, f.write1KB);
}

const isClassic = (k: xdr.LedgerKey) => k.type === 'account' || k.type === 'trustline';

/** The declared resources of a SorobanTransactionData's resources, in the fee model's terms. */
export function declaredResources(resources: xdr.SorobanResources): DeclaredResources {
  const fp = resources.footprint;
  return {
    instructions: Number(resources.instructions),
    // live Soroban state is read from memory: only classic entries are disk reads with a per-entry fee
    readEntries: [...fp.readOnly, ...fp.readWrite].filter(isClassic).length,
    writeEntries: fp.readWrite.length,
    readBytes: Number(resources.diskReadBytes),
    writeBytes: Number(resources.writeBytes),
  };
}

/** Whether a footprint key is a disk read (a classic entry) in the fee model. */
export const isDiskRead = isClassic;
