// What an owner's policy asks of money out, checked before a withdrawal reserves anything: the destination must
// be in the policy's address book (when it has one), and, when the owner asked for it, the request must carry a
// fresh wallet signature of exactly this withdrawal (auth/wallet-confirmation.ts). While the owner asks for
// that, a policy change that loosens anything, and an unfreeze, need the wallet too: a bearer token alone
// cannot undo them.
import { formatAmount } from '../../api/amount.ts';
import { DomainError } from '../domain/errors.ts';
import {
  policyChangeAction,
  unfreezeAction,
  type WalletConfirmations,
  withdrawalAction,
} from '../auth/wallet-confirmation.ts';
import type { AgentPolicy } from '../domain/agent-policy.ts';
import { loosenedFields } from '../domain/policy-loosening.ts';
import type { AgentRef } from '../domain/agent-ref.ts';

export interface Confirmed {
  nonce: string;
  signature: string;
}

function required(what: string, agentId: string, loosened?: readonly string[]): DomainError {
  return new DomainError(
    'wallet_signature_required',
    `the owner's policy asks for a fresh wallet signature ${what}: POST /api/agents/${agentId}/wallet-confirmation, sign its message with the wallet, send its nonce and signature as "confirmation"`,
    loosened === undefined
      ? undefined
      : {
          issues: loosened.map((path) => ({
            path,
            message: 'looser than now: needs a fresh wallet signature',
          })),
        },
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

/** What a change from `current` to `next` needs signed: nothing, or the action naming the loosened policy. */
function policySignatureNeeded(
  current: AgentPolicy,
  next: AgentPolicy,
  agentId: string,
): { action: string; loosened: string[] } | undefined {
  if (current.requireWithdrawalSignature !== true) return undefined;
  const loosened = loosenedFields(current, next);
  if (loosened.length === 0) return undefined;
  return { action: policyChangeAction(agentId, next, loosened), loosened };
}

/**
 * While the owner requires wallet signatures, a policy change that loosens anything (domain/policy-loosening.ts)
 * needs a fresh signature of exactly the policy it makes; tightening never does. Consumes the confirmation
 * when one is needed and answers the action it confirmed (see stillConfirmed).
 */
export async function confirmPolicyChange(
  current: AgentPolicy,
  next: AgentPolicy,
  confirmations: WalletConfirmations,
  ref: AgentRef,
  confirmation: Confirmed | undefined,
): Promise<string | undefined> {
  const needed = policySignatureNeeded(current, next, ref.agentId);
  if (needed === undefined) return undefined;
  if (confirmation === undefined)
    throw required(`to loosen its policy (${needed.loosened.join(', ')})`, ref.agentId, needed.loosened);
  await confirmations.consume(ref.owner, needed.action, confirmation.nonce, confirmation.signature);
  return needed.action;
}

/** Unfreezing an agent whose owner requires wallet signatures needs one too; answers the action confirmed. */
export async function confirmUnfreeze(
  current: AgentPolicy,
  confirmations: WalletConfirmations,
  ref: AgentRef,
  confirmation: Confirmed | undefined,
): Promise<string | undefined> {
  if (current.requireWithdrawalSignature !== true || !current.frozen) return undefined;
  if (confirmation === undefined) throw required('to unfreeze it', ref.agentId, ['frozen']);
  const action = unfreezeAction(ref.agentId);
  await confirmations.consume(ref.owner, action, confirmation.nonce, confirmation.signature);
  return action;
}

/**
 * Under the agent's policy lock, with the policy as it is now: the change (or unfreeze, `next.frozen` false)
 * must need no signature, or exactly the one confirmed before the lock was taken (`confirmed`). A policy that
 * changed in between is refused rather than changed with a signature given for another.
 */
export function stillConfirmed(
  fresh: AgentPolicy,
  next: AgentPolicy,
  ref: AgentRef,
  confirmed: string | undefined,
): void {
  const needed = policySignatureNeeded(fresh, next, ref.agentId);
  if (needed === undefined || needed.action === confirmed) return;
  const unfreeze = unfreezeAction(ref.agentId);
  if (confirmed === unfreeze && needed.loosened.length === 1 && needed.loosened[0] === 'frozen') return;
  if (confirmed === undefined)
    throw required(`to loosen its policy (${needed.loosened.join(', ')})`, ref.agentId, needed.loosened);
  throw new DomainError(
    'wallet_signature_invalid',
    'the wallet confirmation is refused: the policy changed while it was signed; ask for a new message',
  );
}
