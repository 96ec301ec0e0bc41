// The one 32-byte master key every proxy secret is derived from (store encryption, record-key HMACs,
// JWT signing key, agents' note keys). Given in POOL_PROXY_MASTER_KEY or kept in a 0600 key file.
import { randomBytes } from 'node:crypto';
import { chmodSync, closeSync, mkdirSync, openSync, readFileSync, statSync, writeSync } from 'node:fs';
import { dirname } from 'node:path';

export const MASTER_KEY_BYTES = 32;

export class MasterKeyError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'MasterKeyError';
  }
}

function decodeHex(hex: string, source: string): Uint8Array {
  const clean = hex.trim();
  if (!/^[0-9a-fA-F]{64}$/.test(clean))
    throw new MasterKeyError(`${source} must hold 64 hex characters (32 bytes)`);
  return new Uint8Array(Buffer.from(clean, 'hex'));
}

/**
 * Returns the master key: from `hex` when given, otherwise from `file`, creating the file (mode 0600,
 * exclusive create so two starting processes cannot both write one) with a fresh random key on first start.
 */
export function loadMasterKey(hex: string, file: string): Uint8Array {
  if (hex !== '') return decodeHex(hex, 'POOL_PROXY_MASTER_KEY');
  mkdirSync(dirname(file), { recursive: true, mode: 0o700 });
  try {
    const fd = openSync(file, 'wx', 0o600);
    try {
      writeSync(fd, `${Buffer.from(randomBytes(MASTER_KEY_BYTES)).toString('hex')}\n`);
    } finally {
      closeSync(fd);
    }
    chmodSync(file, 0o600);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error;
  }
  const mode = statSync(file).mode & 0o777;
  if ((mode & 0o077) !== 0) {
    throw new MasterKeyError(
      `master key file ${file} is readable by others (mode ${mode.toString(8)}); chmod 600 it`,
    );
  }
  return decodeHex(readFileSync(file, 'utf8'), `master key file ${file}`);
}
