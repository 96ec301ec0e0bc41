// Reads what a zkey says about its own origin: the names of its phase-2 contributions (section 10),
// which is where devSetup marks a development key.
import { DEV_KEY_NAME } from './index.ts';

export interface ZkeyOrigin {
  contributions: string[];
  isDevelopmentKey: boolean;
}

export function zkeyOrigin(zkey: Uint8Array): ZkeyOrigin {
  const view = new DataView(zkey.buffer, zkey.byteOffset, zkey.byteLength);
  let pos = 12;
  let section10: { start: number; end: number } | undefined;
  while (pos + 12 <= zkey.length) {
    const id = view.getUint32(pos, true);
    const size = Number(view.getBigUint64(pos + 4, true));
    if (id === 10) section10 = { start: pos + 12, end: Math.min(zkey.length, pos + 12 + size) };
    pos += 12 + size;
  }
  const contributions: string[] = [];
  if (section10) {
    // csHash(64) n(u32), then per contribution: 3 G1 (192) + G2 (128) + transcript (64) + type (4) + params.
    let p = section10.start + 64;
    const n = view.getUint32(p, true);
    p += 4;
    for (let i = 0; i < n && p < section10.end; i++) {
      p += 192 + 128 + 64 + 4;
      const paramLength = view.getUint32(p, true);
      p += 4;
      const end = p + paramLength;
      let name = '';
      while (p < end) {
        const type = zkey[p++];
        if (type === 1) {
          const len = zkey[p++];
          name = new TextDecoder().decode(zkey.subarray(p, p + len));
          p += len;
        } else if (type === 2) {
          p += 1;
        } else if (type === 3) {
          p += 1 + zkey[p];
        } else {
          break;
        }
      }
      p = end;
      contributions.push(name);
    }
  }
  return { contributions, isDevelopmentKey: contributions.includes(DEV_KEY_NAME) };
}
