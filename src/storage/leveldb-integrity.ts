// Checks the files of a closed LevelDB directory against the checksums LevelDB writes, before it is opened.
// LevelDB as bundled by classic-level opens without `paranoid_checks`: a write-ahead log record whose
// checksum fails is skipped silently (the writes in it are lost) and the database opens "healthy". This
// reader follows the on-disk formats documented in the LevelDB repository (doc/log_format.md and
// doc/table_format.md, https://github.com/google/leveldb/tree/main/doc) and reports the first damaged file:
//   - the MANIFEST named by CURRENT and the write-ahead logs not yet in tables: every record's masked
//     CRC-32C, length and type; a record cut short at the very end of the file is what a crash mid-write
//     leaves, and is not damage;
//   - the tables the MANIFEST lists (*.ldb, *.sst): present, the footer's magic number, the index and
//     meta-index blocks' CRCs, and, when the index block is stored uncompressed, every data block's CRC.
import { closeSync, existsSync, openSync, readdirSync, readFileSync, readSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { crc32c } from '@node-rs/crc32';

export interface Damage {
  /** The damaged file, absolute. */
  file: string;
  /** Byte offset of the damage in the file. */
  offset: number;
  reason: string;
}

const LOG_BLOCK = 32 * 1024;
const LOG_HEADER = 7;
const RECORD_FULL = 1;
const RECORD_FIRST = 2;
const RECORD_MIDDLE = 3;
const RECORD_LAST = 4;
const TABLE_FOOTER = 48;
const TABLE_MAGIC = 0xdb4775248b80fb57n;
const BLOCK_TRAILER = 5;
const MASK_DELTA = 0xa282ead8;

/** LevelDB stores CRCs "masked" so that a CRC of data holding CRCs is not trivially related to them. */
function unmask(masked: number): number {
  const rot = (masked - MASK_DELTA) >>> 0;
  return ((rot >>> 17) | (rot << 15)) >>> 0;
}

/**
 * Returns the first damage found in the live files of the LevelDB in `dir`, or undefined when they are
 * sound. Live files are the ones LevelDB would read on open: the MANIFEST that CURRENT names, the tables
 * it lists, and the write-ahead logs it has not yet folded into tables. Leftovers a crash can leave behind
 * (a half-written table or log from before the MANIFEST's last edit) are ignored: LevelDB deletes them.
 */
export function findDamage(dir: string): Damage | undefined {
  const current = join(dir, 'CURRENT');
  if (!existsSync(current)) return undefined; // no database yet: LevelDB creates one
  const pointer = readFileSync(current, 'utf8');
  if (!/^MANIFEST-\d+\n$/.test(pointer)) {
    return { file: current, offset: 0, reason: 'CURRENT does not name a MANIFEST file' };
  }
  const manifest = join(dir, pointer.trim());
  if (!existsSync(manifest)) {
    return { file: current, offset: 0, reason: `CURRENT names ${pointer.trim()}, which is missing` };
  }
  const read = readLogFile(manifest);
  if ('reason' in read) return read;
  let state: ManifestState;
  try {
    state = replayManifest(read);
  } catch (error) {
    return { file: manifest, offset: 0, reason: `unreadable version edit: ${(error as Error).message}` };
  }
  const names = readdirSync(dir);
  for (const number of [...state.tables].sort((a, b) => a - b)) {
    const name = names.find((n) => n === `${tableName(number)}.ldb` || n === `${tableName(number)}.sst`);
    if (name === undefined) {
      return { file: manifest, offset: 0, reason: `table ${tableName(number)}.ldb it lists is missing` };
    }
    const damage = checkTableFile(join(dir, name));
    if (damage) return damage;
  }
  for (const name of names.filter((n) => /^\d+\.log$/.test(n)).sort()) {
    const number = Number(name.slice(0, -'.log'.length));
    if (number < state.logNumber && number !== state.prevLogNumber) continue; // already in tables
    const log = readLogFile(join(dir, name));
    if ('reason' in log) return log;
  }
  return undefined;
}

const tableName = (number: number) => String(number).padStart(6, '0');

interface ManifestState {
  /** Numbers of the live table files. */
  tables: Set<number>;
  /** Logs numbered below this (except prevLogNumber) are already in tables. */
  logNumber: number;
  prevLogNumber: number;
}

/** Applies the MANIFEST's version edits (LevelDB db/version_edit.cc encoding) and returns the live files. */
function replayManifest(records: Buffer[]): ManifestState {
  const state: ManifestState = { tables: new Set(), logNumber: 0, prevLogNumber: 0 };
  for (const edit of records) {
    let pos = 0;
    const varint = () => {
      const [value, next] = readVarint(edit, pos);
      pos = next;
      return value;
    };
    const skipSlice = () => {
      const length = varint();
      if (pos + length > edit.length) throw new RangeError('slice runs past the edit');
      pos += length;
    };
    while (pos < edit.length) {
      const tag = varint();
      switch (tag) {
        case 1: // comparator name
          skipSlice();
          break;
        case 2:
          state.logNumber = varint();
          break;
        case 3: // next file number
        case 4: // last sequence
          varint();
          break;
        case 5: // compaction pointer: level, internal key
          varint();
          skipSlice();
          break;
        case 6: // deleted file: level, number
          varint();
          state.tables.delete(varint());
          break;
        case 7: {
          // new file: level, number, size, smallest key, largest key
          varint();
          const number = varint();
          varint();
          skipSlice();
          skipSlice();
          state.tables.add(number);
          break;
        }
        case 9:
          state.prevLogNumber = varint();
          break;
        default:
          throw new RangeError(`unknown tag ${tag}`);
      }
    }
  }
  return state;
}

/** The records of a log-format file (fragments joined), or the first damage in it. */
function readLogFile(file: string): Buffer[] | Damage {
  const data = readFileSync(file);
  const damage = (offset: number, reason: string): Damage => ({ file, offset, reason });
  const records: Buffer[] = [];
  let fragments: Buffer[] | undefined;
  for (let blockStart = 0; blockStart < data.length; blockStart += LOG_BLOCK) {
    const blockEnd = Math.min(blockStart + LOG_BLOCK, data.length);
    const lastBlock = blockEnd === data.length;
    let pos = blockStart;
    while (blockEnd - pos >= LOG_HEADER) {
      const length = data.readUInt16LE(pos + 4);
      const type = data[pos + 6];
      if (pos + LOG_HEADER + length > blockEnd) {
        // A record cut short by the end of the file: the writer stopped mid-record (a crash). LevelDB
        // ignores it too; anywhere else a length that leaves the block is damage.
        if (lastBlock) return records;
        return damage(pos, `record length ${length} runs past its 32 KiB block`);
      }
      if (type === 0 && length === 0) {
        // Zero-filled space (preallocated or a zero-length record): LevelDB skips the rest of the block.
        break;
      }
      const stored = unmask(data.readUInt32LE(pos));
      const payload = data.subarray(pos + LOG_HEADER, pos + LOG_HEADER + length);
      if (crc32c(data.subarray(pos + 6, pos + LOG_HEADER + length)) !== stored) {
        return damage(pos, 'record checksum mismatch');
      }
      if (type === RECORD_FULL || type === RECORD_FIRST) {
        if (fragments) return damage(pos, 'a record starts inside an unfinished record');
        if (type === RECORD_FULL) records.push(payload);
        else fragments = [payload];
      } else if (type === RECORD_MIDDLE || type === RECORD_LAST) {
        if (!fragments) return damage(pos, 'a record fragment without its beginning');
        fragments.push(payload);
        if (type === RECORD_LAST) {
          records.push(Buffer.concat(fragments));
          fragments = undefined;
        }
      } else {
        return damage(pos, `unknown record type ${type}`);
      }
      pos += LOG_HEADER + length;
    }
  }
  return records;
}

interface Handle {
  offset: number;
  size: number;
}

function readVarint(buf: Buffer, pos: number): [value: number, next: number] {
  let value = 0;
  let factor = 1;
  for (let i = 0; i < 10 && pos < buf.length; i++) {
    const byte = buf[pos++];
    value += (byte & 0x7f) * factor;
    if ((byte & 0x80) === 0) return [value, pos];
    factor *= 128;
  }
  throw new RangeError('truncated varint');
}

function readHandle(buf: Buffer, pos: number): [Handle, number] {
  const [offset, p1] = readVarint(buf, pos);
  const [size, p2] = readVarint(buf, p1);
  return [{ offset, size }, p2];
}

function readAt(fd: number, offset: number, length: number): Buffer {
  const buf = Buffer.alloc(length);
  const got = readSync(fd, buf, 0, length, offset);
  return got === length ? buf : buf.subarray(0, got);
}

function checkTableFile(file: string): Damage | undefined {
  const size = statSync(file).size;
  const damage = (offset: number, reason: string): Damage => ({ file, offset, reason });
  if (size < TABLE_FOOTER) return damage(0, 'table file shorter than its footer');
  const fd = openSync(file, 'r');
  try {
    const footer = readAt(fd, size - TABLE_FOOTER, TABLE_FOOTER);
    if (footer.readBigUInt64LE(TABLE_FOOTER - 8) !== TABLE_MAGIC) {
      return damage(size - 8, 'table footer has no LevelDB magic number');
    }
    let metaIndex: Handle;
    let index: Handle;
    try {
      let pos: number;
      [metaIndex, pos] = readHandle(footer, 0);
      [index] = readHandle(footer, pos);
    } catch {
      return damage(size - TABLE_FOOTER, 'table footer holds malformed block handles');
    }
    const block = (handle: Handle, what: string): { contents: Buffer; type: number } | Damage => {
      if (handle.offset + handle.size + BLOCK_TRAILER > size - TABLE_FOOTER) {
        return damage(handle.offset, `${what} block lies outside the file`);
      }
      const raw = readAt(fd, handle.offset, handle.size + BLOCK_TRAILER);
      const stored = unmask(raw.readUInt32LE(handle.size + 1));
      if (crc32c(raw.subarray(0, handle.size + 1)) !== stored) {
        return damage(handle.offset, `${what} block checksum mismatch`);
      }
      return { contents: raw.subarray(0, handle.size), type: raw[handle.size] };
    };
    const meta = block(metaIndex, 'meta-index');
    if ('reason' in meta) return meta;
    const indexBlock = block(index, 'index');
    if ('reason' in indexBlock) return indexBlock;
    // Compressed (snappy) index blocks are checked by their CRC only; uncompressed ones list the data blocks.
    if (indexBlock.type !== 0) return undefined;
    let handles: Handle[];
    try {
      handles = blockValues(indexBlock.contents).map((value) => readHandle(value, 0)[0]);
    } catch {
      return damage(index.offset, 'index block entries are malformed');
    }
    for (const handle of handles) {
      const data = block(handle, 'data');
      if ('reason' in data) return data;
    }
    return undefined;
  } finally {
    closeSync(fd);
  }
}

/** The values of a block's entries (prefix-compressed keys, then a restart array and its length). */
function blockValues(contents: Buffer): Buffer[] {
  if (contents.length < 4) throw new RangeError('block too short');
  const restarts = contents.readUInt32LE(contents.length - 4);
  const end = contents.length - 4 * (restarts + 1);
  if (restarts < 1 || end < 0) throw new RangeError('bad restart count');
  const values: Buffer[] = [];
  let pos = 0;
  while (pos < end) {
    const [, p1] = readVarint(contents, pos);
    const [unshared, p2] = readVarint(contents, p1);
    const [valueLength, p3] = readVarint(contents, p2);
    const valueStart = p3 + unshared;
    if (valueStart + valueLength > end) throw new RangeError('entry runs past the block');
    values.push(contents.subarray(valueStart, valueStart + valueLength));
    pos = valueStart + valueLength;
  }
  return values;
}
