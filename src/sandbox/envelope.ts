// What a transaction envelope says: decoding (plain or fee bump), its Soroban data, the contract call it
// makes, and whether the required accounts signed it.
import {
  FeeBumpTransaction,
  Keypair,
  StrKey,
  type Transaction,
  TransactionBuilder,
  type xdr,
} from '#stellar-sdk';
import { verifyEd25519 } from '../ledger/ed25519.ts';
import { rawBytes } from './keys.ts';
import type { TxErrorCode } from './xdr-records.ts';

/** Thrown for requests the RPC must answer with a JSON-RPC "invalid params" error. */
export class InvalidRequest extends Error {}

export interface Decoded {
  /** the transaction that runs (the inner one of a fee bump) */
  tx: Transaction;
  feeBump?: FeeBumpTransaction;
}

export function decodeEnvelope(envelopeXdr: unknown, passphrase: string): Decoded {
  if (typeof envelopeXdr !== 'string' || envelopeXdr.length === 0)
    throw new InvalidRequest('transaction must be a base64 string');
  let tx: Transaction | FeeBumpTransaction;
  try {
    tx = TransactionBuilder.fromXDR(envelopeXdr, passphrase);
  } catch (e) {
    throw new InvalidRequest(`could not unmarshal transaction: ${(e as Error).message}`);
  }
  return tx instanceof FeeBumpTransaction ? { tx: tx.innerTransaction, feeBump: tx } : { tx };
}

const sorobanDataCache = new WeakMap<Transaction, xdr.SorobanTransactionData | undefined>();

export function sorobanData(tx: Transaction): xdr.SorobanTransactionData | undefined {
  // re-encoding the envelope is costly and the transaction never changes: remember the answer
  if (sorobanDataCache.has(tx)) return sorobanDataCache.get(tx);
  const env = tx.toEnvelope();
  const ext = env.type === 'envelopeTypeTx' ? (env.value as xdr.TransactionV1Envelope).tx.ext : undefined;
  const data = ext?.type === 'sorobanData' ? (ext.value as xdr.SorobanTransactionData) : undefined;
  sorobanDataCache.set(tx, data);
  return data;
}

/** Every signer must have exactly one valid signature (hint and ed25519); extra signatures are refused. */
export function checkSigners(
  txHash: Uint8Array,
  signatures: xdr.DecoratedSignature[],
  signers: string[],
): TxErrorCode | undefined {
  const used = new Set<number>();
  for (const signer of signers) {
    const kp = Keypair.fromPublicKey(signer);
    const hint = Buffer.from(rawBytes(kp.signatureHint()));
    const i = signatures.findIndex(
      (s, idx) =>
        !used.has(idx) &&
        Buffer.from(rawBytes(s.hint)).equals(hint) &&
        verifyEd25519(kp.rawPublicKey(), txHash, rawBytes(s.signature)),
    );
    if (i < 0) return 'txBadAuth';
    used.add(i);
  }
  return used.size === signatures.length ? undefined : 'txBadAuthExtra';
}

/** The transaction source and every other operation source must each have signed (master keys). */
export function checkTransactionSignatures(tx: Transaction): TxErrorCode | undefined {
  const signers = [tx.source];
  for (const op of tx.operations) {
    const opSource = op.source;
    if (!opSource || signers.includes(opSource)) continue;
    if (!StrKey.isValidEd25519PublicKey(opSource)) return 'txNotSupported';
    signers.push(opSource);
  }
  return checkSigners(tx.hash(), tx.signatures, signers);
}
