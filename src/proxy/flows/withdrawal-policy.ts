// What an owner's policy asks of money out, checked before a withdrawal reserves anything: the destination must
// be in the policy's address book (when it has one), and, when the owner asked for it, the request must carry a
// fresh wallet signature of exactly this withdrawal (auth/wallet-confirmation.ts). And which policy changes
// loosen those settings, so that they too need the wallet: a bearer token alone cannot undo them.
import { formatAmount } from '../../api/amount.ts';
import { DomainError } from '../domain/errors.ts';
import {
  type WalletConfirmations,
  withdrawalAction,
  withdrawalSettingsAction,
} from '../auth/wallet-confirmation.ts';
import type { AgentPolicy } from '../domain/agent-policy.ts';
import type { AgentRef } from '../domain/agent-ref.ts';

export interface Confirmed {
  nonce: string;
  signature: string;
}

function required(what: string, agentId: string): DomainError {
  return new DomainError(
    'wallet_signature_required',
    `the owner's policy asks for a fresh wallet signature ${what}: POST /api/agents/${agentId}/wallet-confirmation, sign its message with the wallet, send its nonce and signature as "confirmation"`,
  );
}

/** Refuses a destination outside the policy's address book (when it has one). */
export function checkDestination(policy: AgentPolicy | undefined, destination: string): void {
  const book = policy?.withdrawalDestinations ?? [];
  if (book.length > 0 && !book.includes(destination))
    throw new DomainError(
      'policy_destination_not_allowed',
      `the owner's policy allows withdrawals only to ${book.join(', ')}`,
    );
}

export async function checkWithdrawal(
  policy: AgentPolicy | undefined,
  confirmations: WalletConfirmations,
  ref: AgentRef,
  amount: bigint,
  destination: string,
  confirmation: Confirmed | undefined,
): Promise<void> {
  checkDestination(policy, destination);
  if (policy?.requireWithdrawalSignature !== true) return;
  if (confirmation === undefined) throw required('for each withdrawal', ref.agentId);
  const action = withdrawalAction(ref.agentId, formatAmount(amount), destination);
  await confirmations.consume(ref.owner, action, confirmation.nonce, confirmation.signature);
}

/** Whether `next` loosens the withdrawal settings of `current` (signature turned off, a destination added). */
function loosensWithdrawals(current: AgentPolicy, next: AgentPolicy): boolean {
  if (current.requireWithdrawalSignature !== true) return false;
  if (next.requireWithdrawalSignature !== true) return true;
  const before = current.withdrawalDestinations ?? [];
  const after = next.withdrawalDestinations ?? [];
  if (before.length === 0) return false;
  return after.length === 0 || after.some((d) => !before.includes(d));
}

/** A policy change that loosens the withdrawal settings needs the owner's wallet too. */
export async function checkSettingsChange(
  current: AgentPolicy,
  next: AgentPolicy,
  confirmations: WalletConfirmations,
  ref: AgentRef,
  confirmation: Confirmed | undefined,
): Promise<void> {
  if (!loosensWithdrawals(current, next)) return;
  if (confirmation === undefined) throw required('to loosen the withdrawal settings', ref.agentId);
  const action = withdrawalSettingsAction(
    ref.agentId,
    next.requireWithdrawalSignature === true,
    next.withdrawalDestinations ?? [],
  );
  await confirmations.consume(ref.owner, action, confirmation.nonce, confirmation.signature);
}
