// Log lines for the sandbox's ledger closes: one per closed ledger (debug when it is empty), one per
// failed transaction with the reason the host gave (e.g. "Error(Contract, #7)") or the result code, and
// one when a close itself fails.
// Pure: the caller (pool-proxy start / sandbox) hands them to its logger.
import { xdr } from '#stellar-sdk';
import type { LedgerMeta, TxRecord } from './ledger-state.ts';

export interface LedgerLogLine {
  level: 'debug' | 'info' | 'warn' | 'error';
  message: string;
  fields: Record<string, unknown>;
}

export function ledgerLogLines(meta: LedgerMeta, txs: readonly TxRecord[]): LedgerLogLine[] {
  const failed = txs.filter((tx) => tx.status === 'FAILED');
  const lines: LedgerLogLine[] = [
    {
      level: txs.length > 0 ? 'info' : 'debug',
      message: 'ledger closed',
      fields: { ledger: meta.sequence, transactions: txs.length, failed: failed.length },
    },
  ];
  for (const tx of failed) {
    lines.push({
      level: 'warn',
      message: 'transaction failed',
      fields: { ledger: meta.sequence, txHash: tx.hash, reason: failureReason(tx) },
    });
  }
  return lines;
}

/** The line for a ledger close that failed (nothing of it was committed). */
export function closeFailedLogLine(error: Error): LedgerLogLine {
  return { level: 'error', message: 'ledger close failed', fields: { error: error.message } };
}

/** The host's error message from the last diagnostic event, else the transaction result code. */
function failureReason(tx: TxRecord): string {
  try {
    const last = tx.diagnosticEvents.at(-1);
    if (last !== undefined) {
      const body = xdr.DiagnosticEvent.fromXdr(last, 'base64').event.body.value as xdr.ContractEventV0;
      if (body.data.type === 'scvString') return body.data.str.toString();
    }
    return String(xdr.TransactionResult.fromXdr(tx.resultXdr, 'base64').result.type);
  } catch {
    return 'unknown';
  }
}
