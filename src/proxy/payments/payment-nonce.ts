// The nonce of a payment's authorization (the pool wallet's signed `transfer`), derived from the master key,
// the agent, the caller's idempotency key and an attempt index instead of drawn at random. The chain keeps
// every used nonce, so the payment a key paid for can be found again after any loss of the store: a replay
// derives the nonces of attempts 0..MAX_NONCE_ATTEMPT and looks for them, and a rebuilt store attributes the
// pool wallet's past transfers to their agents. Signing the same (agent, key, attempt) twice gives the same
// nonce, which the chain accepts at most once: two signatures for one attempt can never both pay.
//
// The nonce is a 64-bit block `agentTag (32) | keyTag (24) | attempt (8)` encrypted with a keyed
// permutation (a balanced Feistel network, HMAC-SHA256 rounds): on chain every nonce looks random, so nonces
// link neither payments of one agent nor payments with one key; only the master key opens them. The tags are
// HMACs truncated to 32 and 24 bits: a recovered store may attribute a transfer to the wrong agent only when
// two agents' tags collide (checked: such transfers are left unattributed), and a replay can mistake another
// payment of the same agent for its own with probability 2^-24 per payment of that agent kept on chain.
import { createHmac, randomBytes } from 'node:crypto';
import { deriveKey } from '../store/derived-keys.ts';

/** Attempts are numbered 0..MAX_NONCE_ATTEMPT; a retry re-signs with the next attempt's nonce. */
export const MAX_NONCE_ATTEMPT = 255;

const ROUNDS = 8;
const MASK32 = 0xffff_ffffn;

export interface OpenedNonce {
  agentTag: number;
  keyTag: number;
  attempt: number;
}

/** Keys for deriving and opening payment nonces, from the master key. */
export class PaymentNonces {
  readonly #key: Uint8Array;

  constructor(masterKey: Uint8Array) {
    this.#key = deriveKey(masterKey, 'payment-nonce');
  }

  /**
   * The nonce (signed i64) for the agent's payment under `idempotencyKey`, attempt `attempt` (0 first). A
   * payment without a key gets a random key tag: it cannot be found again by a replay.
   */
  derive(agent: string, idempotencyKey: string | undefined, attempt = 0): bigint {
    if (!Number.isInteger(attempt) || attempt < 0 || attempt > MAX_NONCE_ATTEMPT)
      throw new RangeError(`attempt must be an integer 0..${MAX_NONCE_ATTEMPT}`);
    const keyTag =
      idempotencyKey === undefined
        ? randomBytes(3).readUIntBE(0, 3)
        : this.#tag('key', agent, idempotencyKey) >>> 8;
    const block = (BigInt(this.agentTag(agent)) << 32n) | (BigInt(keyTag) << 8n) | BigInt(attempt);
    return BigInt.asIntN(64, this.#permute(block, false));
  }

  /** Opens a nonce made by `derive` under this master key (any other i64 opens to meaningless tags). */
  open(nonce: bigint): OpenedNonce {
    const block = this.#permute(BigInt.asUintN(64, nonce), true);
    const low = Number(block & MASK32);
    return { agentTag: Number(block >> 32n), keyTag: low >>> 8, attempt: low & 0xff };
  }

  /** The attempt whose nonce this is, when it is `agent`'s payment under `idempotencyKey`. */
  attemptOf(nonce: bigint, agent: string, idempotencyKey: string): number | undefined {
    const opened = this.open(nonce);
    if (opened.agentTag !== this.agentTag(agent)) return undefined;
    if (opened.keyTag !== this.#tag('key', agent, idempotencyKey) >>> 8) return undefined;
    return opened.attempt;
  }

  /** The 32-bit tag that names the agent (scoped id) inside its nonces. */
  agentTag(agent: string): number {
    return this.#tag('agent', agent);
  }

  #tag(kind: string, ...parts: string[]): number {
    const mac = createHmac('sha256', this.#key).update(kind);
    for (const part of parts) mac.update('\u0000').update(part);
    return mac.digest().readUInt32BE(0);
  }

  /** The keyed 64-bit permutation (forward, or inverse when `inverse`). */
  #permute(block: bigint, inverse: boolean): bigint {
    let left = Number(block >> 32n);
    let right = Number(block & MASK32);
    if (!inverse) {
      for (let round = 0; round < ROUNDS; round++)
        [left, right] = [right, (left ^ this.#round(round, right)) >>> 0];
    } else {
      for (let round = ROUNDS - 1; round >= 0; round--)
        [left, right] = [(right ^ this.#round(round, left)) >>> 0, left];
    }
    return (BigInt(left) << 32n) | BigInt(right);
  }

  #round(round: number, half: number): number {
    const input = Buffer.alloc(5);
    input.writeUInt8(round, 0);
    input.writeUInt32BE(half, 1);
    return createHmac('sha256', this.#key).update('round').update(input).digest().readUInt32BE(0);
  }
}

/**
 * The nonce of attempt `attempt` (0 by default) of the agent's payment under `idempotencyKey`: the one
 * derivation every signer and every recovery check goes through.
 */
export function paymentNonce(
  masterKey: Uint8Array,
  agent: string,
  idempotencyKey: string | undefined,
  attempt = 0,
): bigint {
  return new PaymentNonces(masterKey).derive(agent, idempotencyKey, attempt);
}
