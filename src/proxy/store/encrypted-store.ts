// Encrypted key-value store over LevelDB (`level`). Every value is AES-256-GCM with a fresh 96-bit
// nonce and its record key as associated data (a value moved to another key fails to decrypt).
// Record-key segments that name agents, wallets or notes are HMACs, so the files reveal no identities.
// Opening checks the LevelDB files first (src/storage): a damaged store or one another process holds is
// refused with StoreDamagedError / StoreLockedError rather than opened with writes silently dropped.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import { mkdirSync } from 'node:fs';
import type { Level } from 'level';
import { openLevel } from '../../storage/open-level.ts';
import { deriveKey } from './derived-keys.ts';
import { decodeValue, encodeValue } from './value-codec.ts';

const FORMAT_VERSION = 1;
const NONCE_BYTES = 12;
const TAG_BYTES = 16;
const NAME_PATTERN = /^[a-z][a-z0-9-]{0,31}$/;
const KEY_CHECK = 'meta/key-check';

export class StoreTamperError extends Error {
  constructor(key: string, reason: string) {
    super(
      `encrypted store record "${key}" failed authentication (${reason}): the store was modified or the master key is wrong`,
    );
    this.name = 'StoreTamperError';
  }
}

export type StoreOp = { type: 'put'; key: string; value: unknown } | { type: 'del'; key: string };

export class EncryptedStore {
  readonly #db: Level<string, Uint8Array>;
  readonly #encryptionKey: Uint8Array;
  readonly #recordKeyMac: Uint8Array;

  private constructor(db: Level<string, Uint8Array>, masterKey: Uint8Array) {
    this.#db = db;
    this.#encryptionKey = deriveKey(masterKey, 'store-encryption');
    this.#recordKeyMac = deriveKey(masterKey, 'store-record-key');
  }

  /** Opens (or creates) the store in `dir`; refuses a master key other than the one the store was made with. */
  static async open(dir: string, masterKey: Uint8Array): Promise<EncryptedStore> {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Values are AES-GCM ciphertext and keys HMACs: compression gains nothing, and uncompressed tables
    // let the integrity check verify every block. Damage or a second process is a typed error.
    const db = await openLevel<string, Uint8Array>(dir, {
      keyEncoding: 'utf8',
      valueEncoding: 'view',
      compression: false,
    });
    const store = new EncryptedStore(db, masterKey);
    try {
      const check = await store.get<string>(KEY_CHECK);
      if (check === undefined) await store.put(KEY_CHECK, 'privacy-pool-proxy');
    } catch (error) {
      await db.close();
      throw error;
    }
    return store;
  }

  /**
   * A record key: a plain namespace, then one HMAC segment per identifier (agent id, wallet, commitment…).
   * The same identifiers always give the same key; the key does not reveal them.
   */
  key(namespace: string, ...identifiers: string[]): string {
    return [checkName(namespace), ...identifiers.map((id) => this.#mac(namespace, id))].join('/');
  }

  /** A record key for a non-identifying singleton (`meta/indexer-cursor`). */
  fixedKey(namespace: string, name: string): string {
    return `${checkName(namespace)}/${checkName(name)}`;
  }

  /** Prefix covering every key made by `key(namespace, ...identifiers, …more)`. */
  prefix(namespace: string, ...identifiers: string[]): string {
    return `${this.key(namespace, ...identifiers)}/`;
  }

  async get<T>(key: string): Promise<T | undefined> {
    const sealed = await this.#db.get(key);
    return sealed === undefined ? undefined : this.#open<T>(key, sealed);
  }

  async put(key: string, value: unknown): Promise<void> {
    await this.#db.put(key, this.#seal(key, value));
  }

  async del(key: string): Promise<void> {
    await this.#db.del(key);
  }

  /** Applies every operation or none (LevelDB write batch). */
  async batch(ops: StoreOp[]): Promise<void> {
    await this.#db.batch(
      ops.map((op) =>
        op.type === 'put'
          ? { type: 'put', key: op.key, value: this.#seal(op.key, op.value) }
          : { type: 'del', key: op.key },
      ),
    );
  }

  /** Every record whose key starts with `prefix`, in key order, decrypted. */
  async entries<T>(prefix: string): Promise<Array<[string, T]>> {
    const out: Array<[string, T]> = [];
    for await (const [key, sealed] of this.#db.iterator({ gte: prefix, lt: `${prefix}\uffff` })) {
      out.push([key, this.#open<T>(key, sealed)]);
    }
    return out;
  }

  async close(): Promise<void> {
    await this.#db.close();
  }

  #mac(namespace: string, identifier: string): string {
    return createHmac('sha256', this.#recordKeyMac)
      .update(`${namespace}\0${identifier}`)
      .digest()
      .subarray(0, 24)
      .toString('base64url');
  }

  #seal(key: string, value: unknown): Uint8Array {
    const nonce = randomBytes(NONCE_BYTES);
    const cipher = createCipheriv('aes-256-gcm', this.#encryptionKey, nonce);
    cipher.setAAD(Buffer.from(key, 'utf8'));
    const body = Buffer.concat([cipher.update(encodeValue(value)), cipher.final()]);
    return new Uint8Array(Buffer.concat([Buffer.of(FORMAT_VERSION), nonce, body, cipher.getAuthTag()]));
  }

  #open<T>(key: string, sealed: Uint8Array): T {
    if (sealed.length < 1 + NONCE_BYTES + TAG_BYTES) throw new StoreTamperError(key, 'record too short');
    if (sealed[0] !== FORMAT_VERSION) throw new StoreTamperError(key, `unknown format version ${sealed[0]}`);
    const nonce = sealed.subarray(1, 1 + NONCE_BYTES);
    const body = sealed.subarray(1 + NONCE_BYTES, sealed.length - TAG_BYTES);
    const tag = sealed.subarray(sealed.length - TAG_BYTES);
    const decipher = createDecipheriv('aes-256-gcm', this.#encryptionKey, nonce);
    decipher.setAAD(Buffer.from(key, 'utf8'));
    decipher.setAuthTag(tag);
    let plain: Buffer;
    try {
      plain = Buffer.concat([decipher.update(body), decipher.final()]);
    } catch {
      throw new StoreTamperError(key, 'AES-GCM tag mismatch');
    }
    return decodeValue<T>(plain);
  }
}

function checkName(name: string): string {
  if (!NAME_PATTERN.test(name)) throw new Error(`invalid store namespace "${name}"`);
  return name;
}
