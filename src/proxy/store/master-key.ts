// The one 32-byte master key every proxy secret is derived from (store encryption, record-key HMACs,
// JWT signing key, agents' note keys). Given in POOL_PROXY_MASTER_KEY or kept in a 0600 key file. A key
// file is created only beside no store: a store never meets a new key by accident.
import { randomBytes } from 'node:crypto';
import {
  chmodSync,
  closeSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  statSync,
  writeSync,
} from 'node:fs';
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

/** Whether `dir` holds a store (anything at all: a new key must not meet it). */
function holdsStore(dir: string): boolean {
  return existsSync(dir) && readdirSync(dir).length > 0;
}

/**
 * Returns the master key: from `hex` when given, otherwise from `file`, creating the file (mode 0600,
 * exclusive create so two starting processes cannot both write one) with a fresh random key on first start
 * — but never while `storeDir` holds a store: that store was made with a key, and only that key opens it.
 */
export function loadMasterKey(hex: string, file: string, storeDir?: string): Uint8Array {
  if (hex !== '') return decodeHex(hex, 'POOL_PROXY_MASTER_KEY');
  if (storeDir !== undefined && !existsSync(file) && holdsStore(storeDir)) {
    throw new MasterKeyError(
      `the master key file ${file} is missing, but ${storeDir} holds a store made with a master key. ` +
        `Put the key file back from your backup (or give the key in POOL_PROXY_MASTER_KEY); no new key is ` +
        `created beside an existing store. To start over with a new key, move ${storeDir} aside first.`,
    );
  }
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
