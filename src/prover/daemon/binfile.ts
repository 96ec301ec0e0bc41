// Readers for the iden3 binary container of .zkey and .wtns files (the .r1cs header reader lives in
// src/circuit/r1cs.ts): a magic, a version and a table of (section id, size) pairs. Only the small header
// sections are read, by id, with positional reads, so describing a circuit never loads its (possibly
// large) proving key into memory.
import { type FileHandle, open } from 'node:fs/promises';

/** BN254 scalar field modulus r: every circuit this daemon serves is over this field. */
export const BN254_R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;

interface Section {
  offset: number;
  size: number;
}

async function readAt(file: FileHandle, offset: number, length: number): Promise<Buffer> {
  const buffer = Buffer.alloc(length);
  const { bytesRead } = await file.read(buffer, 0, length, offset);
  if (bytesRead !== length) throw new Error(`file truncated at offset ${offset}`);
  return buffer;
}

async function readSectionTable(file: FileHandle, magic: string): Promise<Map<number, Section>> {
  const { size: fileSize } = await file.stat();
  const head = await readAt(file, 0, 12);
  const found = head.toString('latin1', 0, 4);
  if (found !== magic) throw new Error(`not a ${magic} file (magic "${found}")`);
  const count = head.readUInt32LE(8);
  const sections = new Map<number, Section>();
  let offset = 12;
  for (let i = 0; i < count; i++) {
    const entry = await readAt(file, offset, 12);
    const id = entry.readUInt32LE(0);
    const size = Number(entry.readBigUInt64LE(4));
    offset += 12;
    if (offset + size > fileSize) throw new Error(`${magic} section ${id} runs past the end of the file`);
    if (!sections.has(id)) sections.set(id, { offset, size });
    offset += size;
  }
  return sections;
}

async function readSection(
  file: FileHandle,
  sections: Map<number, Section>,
  id: number,
  maxBytes: number,
): Promise<Buffer> {
  const section = sections.get(id);
  if (!section) throw new Error(`missing section ${id}`);
  return readAt(file, section.offset, Math.min(section.size, maxBytes));
}

function readFieldPrime(buffer: Buffer, offset: number, n8: number): bigint {
  let value = 0n;
  for (let i = n8 - 1; i >= 0; i--) value = (value << 8n) | BigInt(buffer[offset + i]);
  return value;
}

export interface ZkeyHeader {
  protocol: number;
  prime: bigint;
  nVars: number;
  nPublic: number;
  domainSize: number;
  /** Phase-2 (circuit-specific) MPC contributions recorded in section 10. */
  contributions: number;
  /** Raw bytes of the contributions section (for development-key markers). */
  contributionSection: Buffer;
}

export async function readZkeyHeader(path: string): Promise<ZkeyHeader> {
  const file = await open(path, 'r');
  try {
    const sections = await readSectionTable(file, 'zkey');
    const protocol = (await readSection(file, sections, 1, 4)).readUInt32LE(0);
    if (protocol !== 1) throw new Error(`zkey protocol ${protocol} is not Groth16`);
    const groth = await readSection(file, sections, 2, 4096);
    const n8q = groth.readUInt32LE(0);
    const n8r = groth.readUInt32LE(4 + n8q);
    const prime = readFieldPrime(groth, 8 + n8q, n8r);
    let at = 8 + n8q + n8r;
    const nVars = groth.readUInt32LE(at);
    const nPublic = groth.readUInt32LE(at + 4);
    const domainSize = groth.readUInt32LE(at + 8);
    at += 12;
    // Section 10: csHash (64 bytes), u32 number of contributions, then the contributions.
    const contributionSection = sections.has(10)
      ? await readSection(file, sections, 10, 1 << 20)
      : Buffer.alloc(0);
    const contributions = contributionSection.length >= 68 ? contributionSection.readUInt32LE(64) : 0;
    return { protocol, prime, nVars, nPublic, domainSize, contributions, contributionSection };
  } finally {
    await file.close();
  }
}

export interface WtnsHeader {
  prime: bigint;
  witnessCount: number;
}

/** Validates an in-memory .wtns (as sent by a client) and returns its header. */
export function parseWtnsHeader(bytes: Uint8Array): WtnsHeader {
  const buffer = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (buffer.length < 12 || buffer.toString('latin1', 0, 4) !== 'wtns') throw new Error('wtns: bad magic');
  const count = buffer.readUInt32LE(8);
  let offset = 12;
  let header: Buffer | undefined;
  let data: { offset: number; size: number } | undefined;
  for (let i = 0; i < count; i++) {
    if (offset + 12 > buffer.length) throw new Error('wtns: truncated section table');
    const id = buffer.readUInt32LE(offset);
    const size = Number(buffer.readBigUInt64LE(offset + 4));
    offset += 12;
    if (offset + size > buffer.length) throw new Error(`wtns: section ${id} runs past the end`);
    if (id === 1) header = buffer.subarray(offset, offset + size);
    if (id === 2) data = { offset, size };
    offset += size;
  }
  if (!header || !data) throw new Error('wtns: missing header or data section');
  if (header.length < 8) throw new Error('wtns: short header');
  const n8 = header.readUInt32LE(0);
  if (n8 !== 32 || header.length < 4 + n8 + 4) throw new Error(`wtns: unsupported field size ${n8}`);
  const prime = readFieldPrime(header, 4, n8);
  const witnessCount = header.readUInt32LE(4 + n8);
  if (data.size !== witnessCount * n8)
    throw new Error('wtns: data section size does not match the witness count');
  return { prime, witnessCount };
}
