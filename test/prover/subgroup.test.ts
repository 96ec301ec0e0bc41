// G2 subgroup checks of imported keys: a zkey whose G2 point is on the twist curve but outside the
// prime-order subgroup loads (loading only checks curve membership) but is refused by checkKey and by
// `pool-proxy keys import`, which then installs nothing.
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { bn254 } from '@noble/curves/bn254.js';
import { addon } from '../../src/prover/native-addon.ts';
import { ROOT, compileCircuit, devZkey } from './helpers.ts';

const run = promisify(execFile);
const { Fp, Fp2 } = bn254.fields;
type Fp2Value = ReturnType<typeof Fp2.fromBigTuple>;

// A point of the twist y^2 = x^3 + b' with x = 1: the curve's order is r times a large cofactor, and
// this point is not in the order-r part (@noble/curves confirms it below).
function offSubgroupPoint(): { x: Fp2Value; y: Fp2Value } {
  const b = bn254.G2.Point.CURVE().b;
  const x = Fp2.fromBigTuple([1n, 0n]);
  const y = Fp2.sqrt(Fp2.add(Fp2.mul(Fp2.sqr(x), x), b));
  return { x, y };
}

// zkeys store coordinates in Montgomery form (x * 2^256 mod q), 32 bytes little-endian.
function writeMont(buf: Uint8Array, offset: number, v: bigint) {
  let m = (v << 256n) % Fp.ORDER;
  for (let i = 0; i < 32; i++, m >>= 8n) buf[offset + i] = Number(m & 0xffn);
}

function sectionOffset(bytes: Uint8Array, id: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  for (let pos = 12; pos < bytes.length; pos += 12 + Number(view.getBigUint64(pos + 4, true))) {
    if (view.getUint32(pos, true) === id) return pos + 12;
  }
  throw new Error(`section ${id} not found`);
}

// Replaces the G2 point at `offset` (x.c0, x.c1, y.c0, y.c1) with the off-subgroup point.
function plantPoint(bytes: Uint8Array, offset: number): Uint8Array {
  const out = new Uint8Array(bytes);
  const { x, y } = offSubgroupPoint();
  writeMont(out, offset, x.c0);
  writeMont(out, offset + 32, x.c1);
  writeMont(out, offset + 64, y.c0);
  writeMont(out, offset + 96, y.c1);
  return out;
}

let dir: string;
let good: Uint8Array;
let smallR1cs: string;
test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'subgroup-'));
  const small = await compileCircuit('small');
  smallR1cs = small.r1cs;
  good = new Uint8Array(await readFile((await devZkey(small)).zkey));
});
test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
});

test('the planted point is on the twist but outside the prime-order subgroup (@noble/curves agrees)', (t) => {
  const { x, y } = offSubgroupPoint();
  const b = bn254.G2.Point.CURVE().b;
  t.true(Fp2.eql(Fp2.sqr(y), Fp2.add(Fp2.mul(Fp2.sqr(x), x), b)), 'on the curve');
  t.throws(() => bn254.G2.Point.fromAffine({ x, y }).assertValidity(), { message: /subgroup/ });
});

test('checkKey accepts a valid key and counts its G2 points', async (t) => {
  const key = await addon.loadKey(good);
  t.is(await addon.checkKey(key.handle), key.nVars + 3);
  t.throws(() => addon.checkKey({} as unknown), { message: /key handle/ });
});

test('a B2 query point outside the subgroup loads but fails checkKey, which names it', async (t) => {
  // B2 is section 7, 128 bytes per point.
  const index = 2;
  const bad = plantPoint(good, sectionOffset(good, 7) + 128 * index);
  const key = await addon.loadKey(bad);
  await t.throwsAsync(() => addon.checkKey(key.handle), {
    message: `zkey B2[${index}]: G2 point not in the prime-order subgroup`,
  });
});

test('a header G2 point (delta2) outside the subgroup fails checkKey', async (t) => {
  // Header section 2: n8q(4) q(32) n8r(4) r(32) nVars nPublic domainSize (12) alpha1 beta1 (128)
  // beta2 gamma2 (256) delta1 (64), then delta2.
  const delta2 = sectionOffset(good, 2) + 4 + 32 + 4 + 32 + 12 + 128 + 256 + 64;
  const key = await addon.loadKey(plantPoint(good, delta2));
  await t.throwsAsync(() => addon.checkKey(key.handle), {
    message: /zkey delta2: G2 point not in the prime-order subgroup/,
  });
});

test('keys import refuses a key with a G2 point outside the subgroup and installs nothing', async (t) => {
  const circuits = path.join(dir, 'circuits');
  await mkdir(path.join(circuits, 'small'), { recursive: true });
  await copyFile(smallR1cs, path.join(circuits, 'small', 'small.r1cs'));
  const badFile = path.join(dir, 'bad.zkey');
  await writeFile(badFile, plantPoint(good, sectionOffset(good, 7) + 128 * 3));
  const cli = path.join(ROOT, 'bin', 'pool-proxy.js');
  const err = await run(
    process.execPath,
    [cli, 'keys', 'import', badFile, '--circuit', 'small', '--circuits-dir', circuits],
    {
      cwd: ROOT,
    },
  ).then(
    () => null,
    (e: { code: number; stderr: string }) => e,
  );
  t.truthy(err, 'the import must fail');
  t.is(err?.code, 1);
  t.regex(err?.stderr ?? '', /keys import failed: zkey B2\[3\]: G2 point not in the prime-order subgroup/);
  t.false(existsSync(path.join(circuits, 'small', 'small.zkey')));
  t.false(existsSync(path.join(circuits, 'small', 'verification_key.json')));
});
