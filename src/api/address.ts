// Stellar account addresses. The checksum check (StrKey) catches typos that would send USDC nowhere.
import { StrKey } from '#stellar-sdk';

export class AddressError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AddressError';
  }
}

/** True when `value` is a G… ed25519 account address with a valid checksum. */
export function isAccountAddress(value: unknown): value is string {
  return typeof value === 'string' && value.length === 56 && StrKey.isValidEd25519PublicKey(value);
}

/** Returns the address or throws an AddressError naming the field. */
export function parseAccountAddress(value: unknown, field: string): string {
  if (typeof value !== 'string') throw new AddressError(`${field} must be a string (a G… Stellar address)`);
  if (!isAccountAddress(value)) {
    throw new AddressError(
      `${field} is not a valid Stellar account address (G…, 56 characters, valid checksum)`,
    );
  }
  return value;
}
