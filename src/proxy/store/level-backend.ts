// The LevelDB store backend: one directory, one process (LevelDB's own lock). Opening checks the files first
// (src/storage): a damaged store or one another process holds is refused with StoreDamagedError /
// StoreLockedError rather than opened with writes silently dropped.
import { mkdirSync } from 'node:fs';
import type { Level } from 'level';
import { openLevel } from '../../storage/open-level.ts';
import { KeyedMutex } from '../util/keyed-mutex.ts';
import type { Mutex, RawOp, StoreBackend } from './backend.ts';

export class LevelBackend implements StoreBackend {
  readonly kind = 'leveldb';
  readonly location: string;
  readonly #db: Level<string, Uint8Array>;
  readonly #mutexes = new Map<string, KeyedMutex>();

  private constructor(dir: string, db: Level<string, Uint8Array>) {
    this.location = dir;
    this.#db = db;
  }

  static async open(dir: string): Promise<LevelBackend> {
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    // Values are AES-GCM ciphertext and keys HMACs: compression gains nothing, and uncompressed tables
    // let the integrity check verify every block.
    const db = await openLevel<string, Uint8Array>(dir, {
      keyEncoding: 'utf8',
      valueEncoding: 'view',
      compression: false,
    });
    return new LevelBackend(dir, db);
  }

  get(key: string): Promise<Uint8Array | undefined> {
    return this.#db.get(key);
  }

  put(key: string, value: Uint8Array): Promise<void> {
    return this.#db.put(key, value);
  }

  del(key: string): Promise<void> {
    return this.#db.del(key);
  }

  batch(ops: RawOp[]): Promise<void> {
    return this.#db.batch(ops);
  }

  async *entries(prefix: string): AsyncIterable<[string, Uint8Array]> {
    yield* this.#db.iterator({ gte: prefix, lt: `${prefix}\uffff` });
  }

  /** In-process: LevelDB admits one process, so a mutex in it is enough. */
  mutex(scope: string): Mutex {
    let mutex = this.#mutexes.get(scope);
    if (mutex === undefined) this.#mutexes.set(scope, (mutex = new KeyedMutex()));
    return mutex;
  }

  lease(scope: string): Mutex {
    return this.mutex(`lease:${scope}`);
  }

  close(): Promise<void> {
    return this.#db.close();
  }
}
