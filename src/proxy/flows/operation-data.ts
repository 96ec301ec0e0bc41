// What a wallet deposit's and a withdrawal's journal records keep beside the common fields (the journal stores
// each operation's own data as a plain object). A wallet deposit records its wallet when it begins, then at
// prepare its proof time, the promised validity, the submit deadline and the allowlist root it proved
// against; the flows read it back typed through these functions, never as untyped journal data.
import type { OperationRecord } from '../journal/journal.ts';

export interface WalletDepositData {
  /** the G account that signs and pays the deposit */
  wallet: string;
  proveMs?: number;
  /** until when the deposit was promised not to go stale (ms, the proxy's clock) */
  expiresAt?: number;
  /** after when a submit is refused (ms: the prepare TTL, capped by the transaction's time bound) */
  deadline?: number;
  /** the allowlist root the proof was made against (decimal) */
  aspRoot?: string;
}

export interface WithdrawalData {
  /** where the USDC goes */
  destination: string;
}

/** A wallet deposit record's own data, typed; undefined for a record of another kind. */
export function walletDepositData(record: OperationRecord): Partial<WalletDepositData> | undefined {
  return record.kind === 'wallet_deposit' ? ((record.data ?? {}) as Partial<WalletDepositData>) : undefined;
}

/** A prepared deposit record's data: its wallet's own, or undefined (unknown, another kind, another wallet). */
export function ownDeposit(
  record: OperationRecord | undefined,
  wallet: string,
): Partial<WalletDepositData> | undefined {
  if (record === undefined) return undefined;
  const data = walletDepositData(record);
  return data?.wallet === wallet ? data : undefined;
}

/** The last moment the prepared deposit may be submitted (ms). */
export function deadlineOf(record: OperationRecord): number {
  const data = walletDepositData(record);
  return data?.deadline ?? data?.expiresAt ?? 0;
}
