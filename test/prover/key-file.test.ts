// Keys loaded from their files: the first load validates the key and writes its prepared file, later
// loads reuse it; any change to the key (content rewritten in place even with its old modification time,
// a replacement by rename, a touch) makes it validated again, so a tampered key is rejected, never used;
// a damaged, foreign or unwritable prepared file only costs the cache; a key rewritten in place under a
// loaded prover gives an error, never a proof.
import test from 'ava';
import { copyFile, mkdir, mkdtemp, readFile, rename, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { exportVerificationKey, loadProver, releaseVerifier, verify } from '../../src/prover/index.ts';
import {
  ceremonyZkey,
  compileCircuit,
  devZkey,
  useSingleThreadSnarkjsCurve,
  witness,
  type CompiledCircuit,
} from './helpers.ts';

let small: CompiledCircuit;
let devKey: string;
let wtns: Uint8Array;
let root: string;

test.before(async () => {
  await useSingleThreadSnarkjsCurve(); // the ceremony key below uses snarkjs: no worker threads left behind
  small = await compileCircuit('small');
  devKey = (await devZkey(small)).zkey;
  wtns = await witness(small, { a: 40000, b: 3, pub: 77 });
  root = await mkdtemp(path.join(tmpdir(), 'zkey-file-test-'));
});
test.after.always(async () => {
  await releaseVerifier();
  if (root) await rm(root, { recursive: true, force: true });
});

/** A private copy of a key in its own directory (tests run concurrently). */
async function keyCopy(name: string, source = devKey): Promise<string> {
  const dir = path.join(root, name);
  await mkdir(dir, { recursive: true });
  const file = path.join(dir, 'small.zkey');
  await copyFile(source, file);
  return file;
}

/** Offset of a section's data in a zkey (sections by id). */
function sectionStart(bytes: Uint8Array, id: number): { start: number; size: number } {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let pos = 12; pos < bytes.length;) {
    const sid = view.getUint32(pos, true);
    const size = Number(view.getBigUint64(pos + 4, true));
    if (sid === id) return { start: pos + 12, size };
    pos += 12 + size;
  }
  throw new Error(`no section ${id}`);
}

async function provesAndVerifies(t: { true(v: boolean): void }, file: string) {
  const prover = await loadProver(file);
  const { proof, publicSignals } = await prover.prove(wtns);
  t.true(await verify(await prover.verificationKey(), proof, publicSignals));
  return prover;
}

test('the first load validates and writes the prepared file; the next one reuses it, with the same key', async (t) => {
  const file = await keyCopy('reuse');
  const first = await provesAndVerifies(t, file);
  t.is(first.prepared, 'written');
  t.true((await stat(`${file}.prep`)).isFile());
  const second = await provesAndVerifies(t, file);
  t.is(second.prepared, 'reused');
  // The verification key comes from the loaded key's points, not from reading the file again.
  t.deepEqual(await second.verificationKey(), await exportVerificationKey(file));
  t.deepEqual(await first.verificationKey(), await second.verificationKey());
  t.is(second.nVars, first.nVars);
  // Bytes are validated in full every time, never cached.
  t.is((await loadProver(await readFile(file))).prepared, 'none');
});

test('a key changed in place, even with its modification time put back, is validated again and rejected', async (t) => {
  const file = await keyCopy('tampered');
  const when = 1_700_000_000; // whole seconds, so it can be put back to the nanosecond
  await utimes(file, when, when);
  t.is((await loadProver(file)).prepared, 'written');
  const before = await stat(file, { bigint: true });
  const bytes = new Uint8Array(await readFile(file));
  const b2 = sectionStart(bytes, 7);
  bytes[b2.start + b2.size - 128 + 5] ^= 0x40; // a coordinate of the last B2 point: off the curve
  await writeFile(file, bytes); // same inode, same size
  await utimes(file, when, when);
  const after = await stat(file, { bigint: true });
  t.is(after.mtimeNs, before.mtimeNs);
  t.is(after.size, before.size);
  t.is(after.ino, before.ino);
  await t.throwsAsync(loadProver(file), { message: /not on the curve|out of range/ });
});

test('a key rewritten with the same content, touched, or replaced by rename is validated again', async (t) => {
  const file = await keyCopy('changed');
  t.is((await loadProver(file)).prepared, 'written');
  t.is((await loadProver(file)).prepared, 'reused');
  await writeFile(file, await readFile(file));
  t.is((await provesAndVerifies(t, file)).prepared, 'written');
  const now = new Date();
  await utimes(file, now, now);
  t.is((await loadProver(file)).prepared, 'written');
  // Replaced by another key of the same circuit (a ceremony key): its own points are used.
  const other = path.join(path.dirname(file), 'incoming.zkey');
  await copyFile(await ceremonyZkey(small), other);
  await rename(other, file);
  const replaced = await provesAndVerifies(t, file);
  t.is(replaced.prepared, 'written');
  t.deepEqual(await replaced.verificationKey(), await exportVerificationKey(file));
});

test('a damaged or foreign prepared file is not used: the key is validated and the file rewritten', async (t) => {
  const file = await keyCopy('damaged');
  t.is((await loadProver(file)).prepared, 'written');
  const prep = `${file}.prep`;
  const good = await readFile(prep);
  // Header damaged.
  const broken = new Uint8Array(good);
  broken[20] ^= 1;
  await writeFile(prep, broken);
  t.is((await provesAndVerifies(t, file)).prepared, 'written');
  // Truncated.
  await writeFile(prep, good.subarray(0, good.length - 64));
  t.is((await provesAndVerifies(t, file)).prepared, 'written');
  // Empty.
  await writeFile(prep, new Uint8Array(0));
  t.is((await provesAndVerifies(t, file)).prepared, 'written');
  // The prepared file of another copy of the same key (another inode).
  const twin = await keyCopy('damaged-twin');
  await loadProver(twin);
  await copyFile(`${twin}.prep`, prep);
  t.is((await provesAndVerifies(t, file)).prepared, 'written');
  t.is((await loadProver(file)).prepared, 'reused');
});

test('when the prepared file cannot be written the key is still served, validated from memory', async (t) => {
  const file = await keyCopy('unwritable');
  await mkdir(`${file}.prep`); // a directory where the file would go: the rename fails (even as root)
  const prover = await provesAndVerifies(t, file);
  t.is(prover.prepared, 'unsaved');
  t.is((await loadProver(file)).prepared, 'unsaved');
});

test('a key file rewritten in place under a loaded prover gives an error, never an out-of-range access', async (t) => {
  const file = await keyCopy('rewritten');
  await loadProver(file);
  const prover = await loadProver(file);
  t.is(prover.prepared, 'reused');
  const bytes = new Uint8Array(await readFile(file));
  const coefs = sectionStart(bytes, 4);
  // Every coefficient's signal index (u32 at offset 8 of each 44-byte record) out of range.
  const view = new DataView(bytes.buffer);
  const n = view.getUint32(coefs.start, true);
  for (let i = 0; i < n; i++) view.setUint32(coefs.start + 4 + 44 * i + 8, 0x7fffffff, true);
  await writeFile(file, bytes); // same inode: the mapping sees the new content
  await t.throwsAsync(prover.prove(wtns), { message: /coefficients changed/ });
  // And a fresh load of the damaged file rejects it.
  await t.throwsAsync(loadProver(file), { message: /coefficient \d+ is out of range/ });
});
