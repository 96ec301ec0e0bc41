// Checks the files of a closed LevelDB directory against the checksums LevelDB writes, before it is opened.
// LevelDB as bundled by classic-level opens without `paranoid_checks`: a write-ahead log record whose
// checksum fails is skipped silently (the writes in it are lost) and the database opens "healthy". This
// reader follows the on-disk formats documented in the LevelDB repository (doc/log_format.md and
// doc/table_format.md, https://github.com/google/leveldb/tree/main/doc) and reports the first damaged file:
//   - write-ahead logs (*.log) and MANIFEST-*: every record's masked CRC-32C, length and type; a record cut
//     short at the very end of the file is what a crash mid-write leaves, and is not damage;
//   - tables (*.ldb, *.sst): the footer's magic number, the index and meta-index blocks' CRCs, and, when
//     the index block is stored uncompressed, every data block's CRC.
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

/** Returns the first damage found in the LevelDB files of `dir`, or undefined when every checked file is sound. */
export function findDamage(dir: string): Damage | undefined {
  if (!existsSync(dir)) return undefined;
  const names = readdirSync(dir).sort();
  for (const name of names) {
    const file = join(dir, name);
    let damage: Damage | undefined;
    if (/^\d+\.log$/.test(name) || /^MANIFEST-\d+$/.test(name)) damage = checkLogFile(file);
    else if (/^\d+\.(ldb|sst)$/.test(name)) damage = checkTableFile(file);
    if (damage) return damage;
  }
  const current = join(dir, 'CURRENT');
  if (existsSync(current)) {
    const manifest = readFileSync(current, 'utf8');
    if (!/^MANIFEST-\d+\n$/.test(manifest)) {
      return { file: current, offset: 0, reason: 'CURRENT does not name a MANIFEST file' };
    }
    if (!names.includes(manifest.trim())) {
      return { file: current, offset: 0, reason: `CURRENT names ${manifest.trim()}, which is missing` };
    }
  }
  return undefined;
}

function checkLogFile(file: string): Damage | undefined {
  const data = readFileSync(file);
  const damage = (offset: number, reason: string): Damage => ({ file, offset, reason });
  let inRecord = false;
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
        if (lastBlock) return undefined;
        return damage(pos, `record length ${length} runs past its 32 KiB block`);
      }
      if (type === 0 && length === 0) {
        // Zero-filled space (preallocated or a zero-length record): LevelDB skips the rest of the block.
        break;
      }
      const stored = unmask(data.readUInt32LE(pos));
      const actual = crc32c(data.subarray(pos + 6, pos + LOG_HEADER + length));
      if (stored !== actual) return damage(pos, 'record checksum mismatch');
      if (type === RECORD_FULL || type === RECORD_FIRST) {
        if (inRecord) return damage(pos, 'a record starts inside an unfinished record');
        inRecord = type === RECORD_FIRST;
      } else if (type === RECORD_MIDDLE || type === RECORD_LAST) {
        if (!inRecord) return damage(pos, 'a record fragment without its beginning');
        inRecord = type === RECORD_MIDDLE;
      } else {
        return damage(pos, `unknown record type ${type}`);
      }
      pos += LOG_HEADER + length;
    }
  }
  return undefined;
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
