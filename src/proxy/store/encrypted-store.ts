// Encrypted key-value store over a backend (backend.ts): LevelDB in a directory, or PostgreSQL shared by
// several proxy processes. Every value is AES-256-GCM with a fresh 96-bit nonce and its record key as
// associated data (a value moved to another key fails to decrypt). Record-key segments that name agents,
// wallets or notes are HMACs, so neither the files nor the database reveal identities.
import { createCipheriv, createDecipheriv, createHmac, randomBytes } from 'node:crypto';
import type { Mutex, StoreBackend } from './backend.ts';
import { LevelBackend } from './level-backend.ts';
import { isPostgresUrl, PostgresBackend } from './postgres-backend.ts';
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
  readonly #db: StoreBackend;
  readonly #encryptionKey: Uint8Array;
  readonly #recordKeyMac: Uint8Array;

  private constructor(db: StoreBackend, masterKey: Uint8Array) {
    this.#db = db;
    this.#encryptionKey = deriveKey(masterKey, 'store-encryption');
    this.#recordKeyMac = deriveKey(masterKey, 'store-record-key');
  }

  /**
   * Opens (or creates) the store at `location`: a `postgres://` URL, or else a LevelDB directory. Refuses a
   * master key other than the one the store was made with.
   */
  static async open(location: string, masterKey: Uint8Array): Promise<EncryptedStore> {
    const backend = isPostgresUrl(location)
      ? await PostgresBackend.open(location)
      : await LevelBackend.open(location);
    return EncryptedStore.on(backend, masterKey);
  }

  /** The store over an open backend (closed again if the master key is refused). */
  static async on(backend: StoreBackend, masterKey: Uint8Array): Promise<EncryptedStore> {
    const store = new EncryptedStore(backend, masterKey);
    try {
      const check = await store.get<string>(KEY_CHECK);
      if (check === undefined) await store.put(KEY_CHECK, 'privacy-pool-proxy');
    } catch (error) {
      await backend.close();
      throw error;
    }
    return store;
  }

  /**
   * Serialises read-check-write sections per key across every process on this store (backend.ts); on
   * PostgreSQL the section's writes commit together.
   */
  mutex(scope: string): Mutex {
    return this.#db.mutex(scope);
  }

  /** Serialises long sections (ledger or prover calls between writes) per key across processes. */
  lease(scope: string): Mutex {
    return this.#db.lease(scope);
  }

  /** Where the records live (LevelDB or PostgreSQL). */
  get backend(): StoreBackend {
    return this.#db;
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

  /** Applies every operation or none (a LevelDB write batch, a PostgreSQL transaction). */
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
    for await (const entry of this.iterate<T>(prefix)) out.push(entry);
    return out;
  }

  /** The records of `entries`, decrypted one at a time as they are read (a long scan holds one at a time). */
  async *iterate<T>(prefix: string): AsyncIterable<[string, T]> {
    for await (const [key, sealed] of this.#db.entries(prefix)) yield [key, this.#open<T>(key, sealed)];
  }

  async close(): Promise<void> {
    await this.#db.close();
  }

  /** `value` sealed for record key `key`, for a table of its own beside the records (cluster/payment-queue.ts). */
  seal(key: string, value: unknown): Uint8Array {
    return this.#seal(key, value);
  }

  /** A value sealed by `seal` for the same key (StoreTamperError if it was changed or moved). */
  open<T>(key: string, sealed: Uint8Array): T {
    return this.#open<T>(key, sealed);
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
