// `pool-proxy keys dev-setup` and `pool-proxy keys import`, run as the real CLI in a child process.
import test from 'ava';
import { execFile } from 'node:child_process';
import { existsSync } from 'node:fs';
import { copyFile, mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { exportVerificationKey, loadProver, releaseVerifier, verify } from '../../src/prover/index.ts';
import { zkeyOrigin } from '../../src/prover/setup-info.ts';
import * as snarkjs from 'snarkjs';
import { ROOT, ceremonyPtau, ceremonyZkey, compileCircuit, devZkey, witness } from './helpers.ts';

const run = promisify(execFile);
const CLI = path.join(ROOT, 'bin', 'pool-proxy.js');

async function cli(...args: string[]): Promise<{ code: number; stdout: string; stderr: string }> {
  try {
    const { stdout, stderr } = await run(process.execPath, [CLI, ...args], { cwd: ROOT });
    return { code: 0, stdout, stderr };
  } catch (err) {
    const e = err as { code: number; stdout: string; stderr: string };
    return { code: e.code, stdout: e.stdout, stderr: e.stderr };
  }
}

let dir: string;
test.before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'keys-cli-'));
});
test.after.always(async () => {
  await rm(dir, { recursive: true, force: true });
  await releaseVerifier();
});

test('keys dev-setup writes a working development key and says so loudly', async (t) => {
  const small = await compileCircuit('small');
  const zkey = path.join(dir, 'dev', 'small.zkey');
  const vkey = path.join(dir, 'dev', 'vkey.json');
  const out = await cli('keys', 'dev-setup', small.r1cs, zkey, vkey);
  t.is(out.code, 0, out.stderr);
  t.regex(out.stdout, /DEVELOPMENT KEY/);
  t.regex(out.stdout, /development and tests only/);
  const bytes = await readFile(zkey);
  t.true(zkeyOrigin(bytes).isDevelopmentKey);
  const vk = JSON.parse(await readFile(vkey, 'utf8'));
  t.deepEqual(vk, await exportVerificationKey(bytes));
  const prover = await loadProver(bytes);
  const { proof, publicSignals } = await prover.prove(await witness(small, { a: 9, b: 2, pub: 4 }));
  t.true(await verify(vk, proof, publicSignals));
});

test('keys dev-setup fails cleanly on a missing or corrupt r1cs', async (t) => {
  const missing = await cli(
    'keys',
    'dev-setup',
    path.join(dir, 'nope.r1cs'),
    path.join(dir, 'x.zkey'),
    path.join(dir, 'x.json'),
  );
  t.is(missing.code, 1);
  t.regex(missing.stderr, /keys dev-setup failed: cannot read r1cs/);
  const small = await compileCircuit('small');
  const bytes = await readFile(small.r1cs);
  const broken = path.join(dir, 'broken.r1cs');
  await writeFile(broken, bytes.subarray(0, bytes.length - 40));
  const corrupt = await cli('keys', 'dev-setup', broken, path.join(dir, 'x.zkey'), path.join(dir, 'x.json'));
  t.is(corrupt.code, 1);
  t.regex(corrupt.stderr, /r1cs/);
  t.false(existsSync(path.join(dir, 'x.zkey')));
});

test('keys import installs a ceremony zkey with its verification key, and refuses keys of other circuits', async (t) => {
  const small = await compileCircuit('small');
  const tiny = await compileCircuit('tiny');
  const circuits = path.join(dir, 'circuits');
  await mkdir(path.join(circuits, 'small'), { recursive: true });
  await copyFile(small.r1cs, path.join(circuits, 'small', 'small.r1cs'));
  const ceremony = await ceremonyZkey(small);

  const ok = await cli('keys', 'import', ceremony, '--circuit', 'small', '--circuits-dir', circuits);
  t.is(ok.code, 0, ok.stderr);
  t.regex(ok.stdout, /contributions: "test phase2", "final beacon"/);
  t.notRegex(ok.stdout, /DEVELOPMENT/);
  const installed = path.join(circuits, 'small', 'small.zkey');
  t.deepEqual(await readFile(installed), await readFile(ceremony));
  t.true(existsSync(`${installed}.prep`), 'the installed key is prepared for mapping');
  const vk = JSON.parse(await readFile(path.join(circuits, 'small', 'verification_key.json'), 'utf8'));
  t.deepEqual(vk, await exportVerificationKey(ceremony));

  const { zkey: tinyKey } = await devZkey(tiny);
  const wrong = await cli('keys', 'import', tinyKey, '--circuit', 'small', '--circuits-dir', circuits);
  t.is(wrong.code, 1);
  t.regex(wrong.stderr, /does not belong to circuit small/);
  t.deepEqual(await readFile(installed), await readFile(ceremony), 'the installed key is untouched');

  const corruptPath = path.join(dir, 'corrupt.zkey');
  const bytes = await readFile(ceremony);
  await writeFile(corruptPath, bytes.subarray(0, 1000));
  const corrupt = await cli('keys', 'import', corruptPath, '--circuit', 'small', '--circuits-dir', circuits);
  t.is(corrupt.code, 1);
  t.regex(corrupt.stderr, /keys import failed: zkey/);

  const dev = await cli(
    'keys',
    'import',
    (await devZkey(small)).zkey,
    '--circuit',
    'small',
    '--circuits-dir',
    circuits,
  );
  t.is(dev.code, 0);
  t.regex(dev.stdout, /WARNING: this is a DEVELOPMENT key/);

  const noCircuit = await cli('keys', 'import', ceremony, '--circuit', 'nosuch', '--circuits-dir', circuits);
  t.is(noCircuit.code, 1);
  t.regex(noCircuit.stderr, /cannot read the circuit's r1cs/);
  const badId = await cli('keys', 'import', ceremony, '--circuit', '../etc', '--circuits-dir', circuits);
  t.is(badId.code, 1);
  t.regex(badId.stderr, /invalid circuit id/);
});

test('keys dev-setup rejects an r1cs whose header claims impossible sizes, without trying to allocate them', async (t) => {
  const small = await compileCircuit('small');
  const bytes = new Uint8Array(await readFile(small.r1cs));
  // Header section (id 1): n8(4) prime(32) nWires(4) nPubOut nPubIn nPrvIn nLabels(8) nConstraints(4).
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let header = -1;
  for (let pos = 12; pos < bytes.length; pos += 12 + Number(view.getBigUint64(pos + 4, true))) {
    if (view.getUint32(pos, true) === 1) header = pos + 12;
  }
  const huge = new Uint8Array(bytes);
  new DataView(huge.buffer).setUint32(header + 4 + 32 + 4 + 12 + 8, 0xfffffff0, true);
  t.is(view.getUint32(header, true), 32);
  const file = path.join(dir, 'huge.r1cs');
  await writeFile(file, huge);
  const out = await cli('keys', 'dev-setup', file, path.join(dir, 'h.zkey'), path.join(dir, 'h.json'));
  t.is(out.code, 1);
  t.regex(out.stderr, /r1cs: constraint section is truncated/);
});

// `snarkjs zkey verify` rebuilds a key from the r1cs, the powers of tau and the recorded contributions.
// A development key has no powers of tau behind it (its tau is drawn and discarded in one process, with
// no ceremony transcript), so no ptau can make it verify; the ceremony key made from the same ptau does.
test('snarkjs zkey verify accepts a ceremony key and not a development key (none has a ptau)', async (t) => {
  const small = await compileCircuit('small');
  const ceremony = await ceremonyZkey(small);
  const ptau = ceremonyPtau();
  t.true(await snarkjs.zKey.verifyFromR1cs(small.r1cs, ptau, ceremony));
  const dev = (await devZkey(small)).zkey;
  t.true(zkeyOrigin(await readFile(dev)).isDevelopmentKey);
  t.false(await snarkjs.zKey.verifyFromR1cs(small.r1cs, ptau, dev));
});
