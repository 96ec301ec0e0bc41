// ExtData, its on-chain hash (keccak256 of the contracttype's XDR, mod r) and the public amount.

import { keccak_256 } from '@noble/hashes/sha3.js';
import { Address, nativeToScVal, xdr } from '#stellar-sdk';
import { bytesToBigint, FIELD_MODULUS } from './field.ts';

export const MAX_EXT_AMOUNT_BITS = 248n;

export interface ExtData {
  /** G… account or C… contract that receives a withdrawal (any address for deposits and transfers). */
  recipient: string;
  /** Positive: deposit; negative: withdrawal; zero: private transfer (stroops). */
  extAmount: bigint;
  encryptedOutput0: Uint8Array;
  encryptedOutput1: Uint8Array;
}

function assertExtData(ext: ExtData): void {
  if (!ext || typeof ext !== 'object') throw new TypeError('extData must be an object');
  if (typeof ext.recipient !== 'string') throw new TypeError('extData.recipient must be a G… or C… address');
  assertExtAmount(ext.extAmount);
  for (const k of ['encryptedOutput0', 'encryptedOutput1'] as const) {
    if (!(ext[k] instanceof Uint8Array)) throw new TypeError(`extData.${k} must be a Uint8Array`);
  }
}

function assertExtAmount(extAmount: unknown): asserts extAmount is bigint {
  if (typeof extAmount !== 'bigint') throw new TypeError('ext amount must be a bigint');
  const abs = extAmount < 0n ? -extAmount : extAmount;
  if (abs >= 1n << MAX_EXT_AMOUNT_BITS) throw new RangeError('|ext amount| must be below 2^248');
}

/** The ScVal the contract serialises: a map with Symbol keys in sorted order. */
export function extDataToScVal(ext: ExtData): xdr.ScVal {
  assertExtData(ext);
  let recipient: Address;
  try {
    recipient = new Address(ext.recipient);
  } catch {
    throw new TypeError(`extData.recipient is not a valid Stellar address: ${ext.recipient}`);
  }
  const entry = (key: string, val: xdr.ScVal) => new xdr.ScMapEntry({ key: xdr.ScVal.scvSymbol(key), val });
  return xdr.ScVal.scvMap([
    entry('encrypted_output0', xdr.ScVal.scvBytes(Buffer.from(ext.encryptedOutput0))),
    entry('encrypted_output1', xdr.ScVal.scvBytes(Buffer.from(ext.encryptedOutput1))),
    entry('ext_amount', nativeToScVal(ext.extAmount, { type: 'i256' })),
    entry('recipient', recipient.toScVal()),
  ]);
}

export function extDataHashOfScVal(scVal: xdr.ScVal): bigint {
  return bytesToBigint(keccak_256(scVal.toXDR())) % FIELD_MODULUS;
}

export function extDataHash(ext: ExtData): bigint {
  return extDataHashOfScVal(extDataToScVal(ext));
}

/** The field element the circuit sees: ext_amount, or r − |ext_amount| for withdrawals. */
export function publicAmount(extAmount: bigint): bigint {
  assertExtAmount(extAmount);
  return extAmount >= 0n ? extAmount : FIELD_MODULUS + extAmount;
}
