// The agent registry is written to the chain too, so that the master key and the pool's events alone
// rebuild every agent (disaster recovery): each pool transaction's zero-value second output carries,
// instead of an encrypted zero note, the agent's id and owner sealed to the proxy's recovery key
// (X25519 + XSalsa20-Poly1305, the note encryption's construction). All registrations have one fixed
// length, so they reveal nothing about the id; only this proxy's master key opens them.
import { randomBytes } from 'node:crypto';
import { xsalsa20poly1305 } from '@noble/ciphers/salsa.js';
import { x25519 } from '@noble/curves/ed25519.js';
import { StrKey } from '#stellar-sdk';
import { deriveKey } from '../store/derived-keys.ts';
import { OPERATOR_OWNER } from './agents.ts';

const VERSION = 1;
const ID_BYTES = 64;
const PLAINTEXT_BYTES = 1 + 1 + 32 + 1 + ID_BYTES;
export const REGISTRATION_BYTES = 32 + 24 + PLAINTEXT_BYTES + 16;

export interface Registration {
  agentId: string;
  owner: string;
}

export class RecoveryKey {
  readonly #secret: Uint8Array;
  readonly publicKey: Uint8Array;

  constructor(masterKey: Uint8Array) {
    this.#secret = deriveKey(masterKey, 'agent-recovery');
    this.publicKey = x25519.getPublicKey(this.#secret);
  }

  seal(registration: Registration): Uint8Array {
    const plain = new Uint8Array(PLAINTEXT_BYTES);
    plain[0] = VERSION;
    if (registration.owner === OPERATOR_OWNER) {
      plain[1] = 0;
    } else {
      plain[1] = 1;
      plain.set(StrKey.decodeEd25519PublicKey(registration.owner), 2);
    }
    const id = new TextEncoder().encode(registration.agentId);
    if (id.length > ID_BYTES) throw new RangeError('agentId too long');
    plain[34] = id.length;
    plain.set(id, 35);
    const ephemeral = x25519.utils.randomSecretKey();
    const nonce = randomBytes(24);
    const sealed = xsalsa20poly1305(x25519.getSharedSecret(ephemeral, this.publicKey), nonce).encrypt(plain);
    const out = new Uint8Array(REGISTRATION_BYTES);
    out.set(x25519.getPublicKey(ephemeral), 0);
    out.set(nonce, 32);
    out.set(sealed, 56);
    return out;
  }

  /** The registration, or undefined when the bytes were not sealed by this proxy. */
  open(data: Uint8Array): Registration | undefined {
    if (data.length !== REGISTRATION_BYTES) return undefined;
    let plain: Uint8Array;
    try {
      plain = xsalsa20poly1305(
        x25519.getSharedSecret(this.#secret, data.subarray(0, 32)),
        data.subarray(32, 56),
      ).decrypt(data.subarray(56));
    } catch {
      return undefined;
    }
    if (plain[0] !== VERSION || plain[34] > ID_BYTES) return undefined;
    const agentId = new TextDecoder().decode(plain.subarray(35, 35 + plain[34]));
    const owner =
      plain[1] === 0 ? OPERATOR_OWNER : StrKey.encodeEd25519PublicKey(Buffer.from(plain.subarray(2, 34)));
    return { agentId, owner };
  }
}
