// Opens a LevelDB directory so that damage and a second user are reported, not papered over: the files
// are checked first (leveldb-integrity.ts), and LevelDB's own lock and corruption errors become typed
// errors that name the directory, the damaged file and, for a lock, the process holding it.
import { existsSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { type Damage, findDamage } from './leveldb-integrity.ts';

export class StoreDamagedError extends Error {
  readonly dir: string;
  readonly damage: Damage;
  /** `advice`: what the operator can do about it (e.g. the recovery command), appended to the message. */
  constructor(dir: string, damage: Damage, advice?: string) {
    super(
      `the store in ${dir} is damaged: ${damage.file} at byte ${damage.offset}: ${damage.reason}. ` +
        `Nothing was opened or changed.${advice ? ` ${advice}` : ''}`,
    );
    this.name = 'StoreDamagedError';
    this.dir = dir;
    this.damage = damage;
  }
}

export class StoreLockedError extends Error {
  readonly dir: string;
  /** The process holding the lock, when the system tells (Linux /proc/locks). */
  readonly pid: number | undefined;
  constructor(dir: string, pid: number | undefined) {
    super(
      `the store in ${dir} is locked by another process${pid === undefined ? '' : ` (pid ${pid})`}: ` +
        'stop it, or give this one another data directory',
    );
    this.name = 'StoreLockedError';
    this.dir = dir;
    this.pid = pid;
  }
}

export type LevelOptions<K, V> = ConstructorParameters<typeof Level<K, V>>[1];

/** Checks and opens the LevelDB in `dir` (created when missing). */
export async function openLevel<K, V>(dir: string, options: LevelOptions<K, V>): Promise<Level<K, V>> {
  const damage = findDamage(dir);
  if (damage) throw new StoreDamagedError(dir, damage);
  const db = new Level<K, V>(dir, options);
  try {
    await db.open();
  } catch (error) {
    const code = (error as { cause?: { code?: string } }).cause?.code;
    if (code === 'LEVEL_LOCKED') throw new StoreLockedError(dir, lockingProcess(dir));
    if (code === 'LEVEL_CORRUPTION') {
      const reason = (error as { cause?: Error }).cause?.message ?? 'corruption';
      throw new StoreDamagedError(dir, { file: dir, offset: 0, reason });
    }
    throw error;
  }
  return db;
}

/**
 * The pid holding the LevelDB lock of `dir` (a POSIX lock on its LOCK file), from /proc/locks (Linux);
 * undefined when no process holds it, or the system does not tell.
 */
export function lockingProcess(dir: string): number | undefined {
  try {
    const inode = statSync(join(dir, 'LOCK')).ino;
    if (!existsSync('/proc/locks')) return undefined;
    for (const line of readFileSync('/proc/locks', 'utf8').split('\n')) {
      // "1: POSIX  ADVISORY  WRITE 2345 fe:00:2155059 0 EOF"
      const fields = line.trim().split(/\s+/);
      const [pid, device] = [fields[4], fields[5]];
      if (device !== undefined && device.split(':')[2] === String(inode) && /^\d+$/.test(pid)) {
        return Number(pid);
      }
    }
  } catch {
    // no lock file or no /proc: the pid is unknown
  }
  return undefined;
}
