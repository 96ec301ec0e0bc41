// Reads the header of a circom .r1cs file (iden3 binary container, section 1) without loading the constraints.
import { open } from 'node:fs/promises';

export interface R1csHeader {
  prime: bigint;
  nWires: number;
  nPublicOutputs: number;
  nPublicInputs: number;
  nPrivateInputs: number;
  nLabels: bigint;
  nConstraints: number;
}

export async function readR1csHeader(path: string): Promise<R1csHeader> {
  const file = await open(path, 'r');
  try {
    const read = async (position: number, length: number) => {
      const buf = Buffer.alloc(length);
      const { bytesRead } = await file.read(buf, 0, length, position);
      if (bytesRead !== length) throw new Error(`${path}: truncated r1cs file`);
      return buf;
    };
    const head = await read(0, 12);
    if (head.toString('latin1', 0, 4) !== 'r1cs') throw new Error(`${path}: not an r1cs file`);
    const nSections = head.readUInt32LE(8);
    let pos = 12;
    for (let i = 0; i < nSections; i++) {
      const sec = await read(pos, 12);
      const type = sec.readUInt32LE(0);
      const size = Number(sec.readBigUInt64LE(4));
      pos += 12;
      if (type === 1) {
        const n8 = (await read(pos, 4)).readUInt32LE(0);
        const body = await read(pos + 4, n8 + 28);
        let prime = 0n;
        for (let j = n8 - 1; j >= 0; j--) prime = (prime << 8n) | BigInt(body[j]);
        return {
          prime,
          nWires: body.readUInt32LE(n8),
          nPublicOutputs: body.readUInt32LE(n8 + 4),
          nPublicInputs: body.readUInt32LE(n8 + 8),
          nPrivateInputs: body.readUInt32LE(n8 + 12),
          nLabels: body.readBigUInt64LE(n8 + 16),
          nConstraints: body.readUInt32LE(n8 + 24),
        };
      }
      pos += size;
    }
    throw new Error(`${path}: r1cs file has no header section`);
  } finally {
    await file.close();
  }
}
