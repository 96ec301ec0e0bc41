// stellar-core's validity checks for an envelope against the current state: sources exist, sequence
// numbers, time bounds, fees and balances, signatures; fee bumps check the sponsor, then the inner transaction.
import type { FeeBumpTransaction, Transaction, xdr } from '#stellar-sdk';
import { checkSigners, checkTransactionSignatures, sorobanData } from './envelope.ts';
import { minBalance, readAccount } from './accounts.ts';
import { isClassic, unsupportedOperations } from './classic.ts';
import { Overlay } from './overlay.ts';
import type { LedgerState } from './ledger-state.ts';
import { BASE_FEE, BASE_RESERVE, errorResult, feeBumpInnerError, type TxErrorCode } from './xdr-records.ts';

/** The non-refundable resource fee of a Soroban transaction's declared resources (the host's fee model). */
export type SorobanFees = (data: xdr.SorobanTransactionData, transactionSizeBytes: number) => bigint;

/** Validity of one transaction; `feeBumped`: its own fee is not charged; `signed`: signatures already checked. */
export function validate(
  tx: Transaction,
  state: LedgerState | Overlay,
  now: number,
  fees: SorobanFees,
  feeBumped = false,
  signed = false,
): TxErrorCode | undefined {
  if (tx.operations.length === 0) return 'txMissingOperation';
  if (unsupportedOperations(tx)) return 'txNotSupported';
  const account = readAccount(state, tx.source);
  if (!account) return 'txNoAccount';
  const tb = tx.timeBounds;
  if (tb) {
    if (BigInt(tb.minTime) > BigInt(now)) return 'txTooEarly';
    if (BigInt(tb.maxTime) !== 0n && BigInt(tb.maxTime) < BigInt(now)) return 'txTooLate';
  }
  if (BigInt(tx.sequence) !== account.seqNum + 1n) return 'txBadSeq';
  if (isClassic(tx)) {
    // the inclusion fee: at least the base fee per operation, paid from lumens above the reserve
    const fee = BASE_FEE * BigInt(tx.operations.length);
    if (!feeBumped && BigInt(tx.fee) < fee) return 'txInsufficientFee';
    const sig = signed ? undefined : checkTransactionSignatures(tx);
    if (sig) return sig;
    if (!feeBumped && account.balance - minBalance(account.numSubEntries) < fee)
      return 'txInsufficientBalance';
    return undefined;
  }
  const data = sorobanData(tx);
  if (!data) return 'txMalformed';
  const resourceFee = BigInt(data.resourceFee as unknown as bigint);
  // the declared resource fee must cover what the declared resources cost, refundable part aside
  if (resourceFee < fees(data, tx.toEnvelope().toXdr().length)) return 'txSorobanInvalid';
  // a fee-bumped transaction's own fee is not charged; the fee source pays
  if (!feeBumped && BigInt(tx.fee) < resourceFee + BASE_FEE) return 'txInsufficientFee';
  const sigCode = signed ? undefined : checkTransactionSignatures(tx);
  if (sigCode) return sigCode;
  if (!feeBumped && account.balance - BigInt(2 * BASE_RESERVE) < resourceFee + BASE_FEE)
    return 'txInsufficientBalance';
  return undefined;
}

/**
 * Checks a (possibly fee-bumped) transaction; returns the result that refuses it, or undefined.
 * `signed`: signatures were already verified at admission (envelopes are immutable, keys never rotate here).
 */
export function admissible(
  tx: Transaction,
  feeBump: FeeBumpTransaction | undefined,
  state: LedgerState | Overlay,
  time: number,
  fees: SorobanFees,
  signed = false,
): xdr.TransactionResult | undefined {
  if (!feeBump) {
    const code = validate(tx, state, time, fees, false, signed);
    return code ? errorResult(code) : undefined;
  }
  const payer = readAccount(state, feeBump.feeSource);
  if (!payer) return errorResult('txNoAccount');
  const sig = signed ? undefined : checkSigners(feeBump.hash(), feeBump.signatures, [feeBump.feeSource]);
  if (sig) return errorResult(sig);
  const data = sorobanData(tx);
  const resourceFee = data ? BigInt(data.resourceFee as unknown as bigint) : 0n;
  // the outer fee covers the resource fee and the inclusion fee of both envelopes (operations + 1)
  if (BigInt(feeBump.fee) < resourceFee + 2n * BASE_FEE) return errorResult('txInsufficientFee');
  if (payer.balance - BigInt(2 * BASE_RESERVE) < BigInt(feeBump.fee))
    return errorResult('txInsufficientBalance');
  const inner = validate(tx, state, time, fees, true, signed);
  return inner ? feeBumpInnerError(tx.hash(), inner) : undefined;
}
