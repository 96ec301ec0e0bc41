// What the encrypted store needs from the place its records live: opaque string keys (a namespace and HMAC
// segments) mapped to sealed bytes (AES-256-GCM), read and written one at a time or as an all-or-nothing batch,
// and listed by prefix in key order. Two backends: LevelDB in a directory (one process, the default) and
// PostgreSQL (several processes on one database). The backend never sees a plain value or identifier.
//
// The backend also decides who may run a read-check-write section: `mutex(scope)` serialises sections per
// key across every process that shares the store (in-process on LevelDB; a transaction holding an advisory
// lock on PostgreSQL, whose reads and writes go through that transaction). `lease(scope)` serialises long
// sections that talk to the ledger or the prover between their writes: each write commits at once, so what
// a section journaled before sending stays journaled whatever happens next.
export type RawOp = { type: 'put'; key: string; value: Uint8Array } | { type: 'del'; key: string };

export type BackendKind = 'leveldb' | 'postgres';

/** Runs async sections one at a time per key. */
export interface Mutex {
  run<T>(key: string, section: () => Promise<T>): Promise<T>;
}

export interface StoreBackend {
  readonly kind: BackendKind;
  /** Where the records are, for messages: a directory, or the database URL without its password. */
  readonly location: string;
  get(key: string): Promise<Uint8Array | undefined>;
  put(key: string, value: Uint8Array): Promise<void>;
  del(key: string): Promise<void>;
  /** Applies every operation or none. */
  batch(ops: RawOp[]): Promise<void>;
  /** Every record whose key starts with `prefix`, in key order (bytewise). */
  entries(prefix: string): AsyncIterable<[string, Uint8Array]>;
  /**
   * One section at a time per (scope, key), in every process on this store. The section's reads see the
   * latest writes, and on PostgreSQL its writes commit together when it returns (none if it throws); it may
   * run again after a conflict with another process, so it must not talk to the outside world.
   */
  mutex(scope: string): Mutex;
  /** One section at a time per (scope, key), in every process; its writes commit one by one, as they are made. */
  lease(scope: string): Mutex;
  close(): Promise<void>;
}
