// Agent keys are derived from the master key, never stored: with the master key and the chain's events alone
// every agent's notes can be found again (disaster recovery).

import { x25519 } from '@noble/curves/ed25519.js';
import { hkdf } from '@noble/hashes/hkdf.js';
import { sha256 } from '@noble/hashes/sha2.js';
import { bytesToBigint, FIELD_MODULUS } from './field.ts';
import { notePublicKey } from './note.ts';

export const AGENT_ID_PATTERN = /^[A-Za-z0-9._:-]{1,64}$/;
const SALT = new TextEncoder().encode('privacy-pool-proxy');

export interface AgentKeys {
  noteSecretKey: bigint;
  notePublicKey: bigint;
  encryptionSecretKey: Uint8Array;
  encryptionPublicKey: Uint8Array;
}

export function assertAgentId(agentId: unknown): asserts agentId is string {
  if (typeof agentId !== 'string' || !AGENT_ID_PATTERN.test(agentId)) {
    throw new TypeError('agentId must be 1–64 characters of [A-Za-z0-9._:-]');
  }
}

/**
 * The agent's keys. With `owner` (a wallet address or the operator), agents of different owners that share a
 * name get unrelated keys: an agent is (owner, agentId).
 */
export function deriveAgentKeys(masterKey: Uint8Array, agentId: string, owner?: string): AgentKeys {
  if (!(masterKey instanceof Uint8Array) || masterKey.length !== 32)
    throw new TypeError('master key must be 32 bytes');
  assertAgentId(agentId);
  if (owner !== undefined) assertAgentId(owner);
  const scope = owner === undefined ? agentId : `${owner}\u0000${agentId}`;
  const info = (label: string) => new TextEncoder().encode(`${label}\u0000${scope}`);
  // 64 bytes reduced mod r keeps the note key's bias below 2^-250.
  const noteSecretKey = bytesToBigint(hkdf(sha256, masterKey, SALT, info('note-key/v1'), 64)) % FIELD_MODULUS;
  const encryptionSecretKey = hkdf(sha256, masterKey, SALT, info('encryption-key/v1'), 32);
  return {
    noteSecretKey,
    notePublicKey: notePublicKey(noteSecretKey),
    encryptionSecretKey,
    encryptionPublicKey: x25519.getPublicKey(encryptionSecretKey),
  };
}
