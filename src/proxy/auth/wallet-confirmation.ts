// A fresh wallet signature for one money-out action, when the agent's owner asked for it in its policy: a
// withdrawal (amount, destination), a policy change that loosens what the agent may spend or where money may
// go, or an unfreeze. The proxy issues a message (SEP-53 text naming the service, the wallet, the action, the
// network, a single-use nonce and a short expiry) and keeps its nonce with the action; the wallet signs the message; the request that does the action
// sends the nonce and the signature. The nonce is consumed by the first attempt that names it, whether the
// signature verifies or not, so a signature is never accepted twice; an action other than the one signed is
// refused. A bearer token alone can no longer move the money elsewhere.
import { randomBytes } from 'node:crypto';
import { Keypair } from '#stellar-sdk';
import { formatAmount } from '../../api/amount.ts';
import { DomainError } from '../domain/errors.ts';
import type { AgentPolicy } from '../domain/agent-policy.ts';
import type { EncryptedStore } from '../store/encrypted-store.ts';
import type { Clock } from '../util/clock.ts';
import { decodeSignature } from './signature.ts';

/** How long a confirmation message may be signed and used. */
const TTL_MS = 5 * 60_000;
const SCOPE = 'wallet-confirm';

interface Pending {
  owner: string;
  action: string;
  message: string;
  expiresAt: number;
}

export interface Confirmation {
  message: string;
  nonce: string;
  expiresAt: string;
}

export class WalletConfirmations {
  readonly #store: EncryptedStore;
  readonly #settings: { domain: string; network: string };
  readonly #clock: Clock;
  readonly #mutex;

  constructor(store: EncryptedStore, settings: { domain: string; network: string }, clock: Clock) {
    this.#store = store;
    this.#settings = settings;
    this.#clock = clock;
    this.#mutex = store.mutex(SCOPE);
  }

  /** A message for `owner` (a G address) to sign for `action`; its nonce is kept until used or expired. */
  async issue(owner: string, action: string): Promise<Confirmation> {
    const nonce = randomBytes(24).toString('hex');
    const expiresAt = this.#clock() + TTL_MS;
    const message = [
      `${this.#settings.domain} asks you to confirm with your Stellar account:`,
      owner,
      '',
      action,
      '',
      `Chain ID: ${this.#settings.network}`,
      `Nonce: ${nonce}`,
      `Expiration Time: ${new Date(expiresAt).toISOString()}`,
    ].join('\n');
    await this.#store.put(this.#store.key(SCOPE, nonce), { owner, action, message, expiresAt } as Pending);
    return { message, nonce, expiresAt: new Date(expiresAt).toISOString() };
  }

  /**
   * Consumes `nonce` and checks that it was issued to `owner` for exactly `action`, unexpired, and that
   * `signature` is the owner's SEP-53 signature of its message. Every refusal is `wallet_signature_invalid`.
   */
  async consume(owner: string, action: string, nonce: string, signature: string): Promise<void> {
    const refuse = (why: string) =>
      new DomainError('wallet_signature_invalid', `the wallet confirmation is refused: ${why}`);
    const bytes = decodeSignature(signature);
    const pending = await this.#mutex.run(nonce, async () => {
      const key = this.#store.key(SCOPE, nonce);
      const found = await this.#store.get<Pending>(key);
      if (found !== undefined) await this.#store.del(key);
      return found;
    });
    if (pending === undefined || pending.owner !== owner)
      throw refuse('unknown or already used nonce; ask for a new message');
    if (this.#clock() > pending.expiresAt) throw refuse('the message expired; ask for a new one');
    if (pending.action !== action) throw refuse(`it was signed for another action ("${pending.action}")`);
    if (!Keypair.fromPublicKey(owner).verifyMessage(pending.message, Buffer.from(bytes)))
      throw refuse('the signature does not verify for this wallet and message (SEP-53)');
  }

  /** Forgets issued messages that expired unused. */
  async sweepExpired(): Promise<number> {
    const now = this.#clock();
    const expired = (await this.#store.entries<Pending>(this.#store.prefix(SCOPE))).filter(
      ([, p]) => p.expiresAt < now,
    );
    await this.#store.batch(expired.map(([key]) => ({ type: 'del' as const, key })));
    return expired.length;
  }
}

/** The action a withdrawal's confirmation names. */
export function withdrawalAction(agentId: string, amount: string, destination: string): string {
  return `Withdraw ${amount} USDC from agent ${agentId} to ${destination}.`;
}

/**
 * The action that changes a protected agent's policy in a way that loosens it: the whole policy it will have,
 * and which of its fields are looser than now, so the wallet signs exactly what the agent may do afterwards.
 */
export function policyChangeAction(agentId: string, next: AgentPolicy, loosened: readonly string[]): string {
  const amount = (v: bigint | undefined) => (v === undefined ? 'none' : `${formatAmount(v)} USDC`);
  const list = (items: readonly string[] | undefined, empty: string) =>
    items === undefined || items.length === 0 ? empty : items.join(', ');
  return [
    `Change the policy of agent ${agentId}, loosening ${loosened.join(', ')}, to:`,
    `per-payment cap ${amount(next.perPaymentCap)};`,
    `budgets: hour ${amount(next.budgets.hour)}, day ${amount(next.budgets.day)}, 30 days ${amount(next.budgets.days30)};`,
    `approval above ${amount(next.approvalThreshold)}, waiting ${next.approvalTimeoutSeconds ?? 'the default'} s;`,
    `allowed services: ${list(next.allowedServices, 'any')};`,
    `denied services: ${list(next.deniedServices, 'none')};`,
    `frozen: ${next.frozen ? 'yes' : 'no'};`,
    `wallet signature for withdrawals: ${next.requireWithdrawalSignature === true ? 'required' : 'not required'};`,
    `withdrawal destinations: ${list(next.withdrawalDestinations, 'any')}.`,
  ].join('\n');
}

/** The action that unfreezes a protected agent. */
export function unfreezeAction(agentId: string): string {
  return `Unfreeze agent ${agentId}: it may pay again within its policy.`;
}
