// The LevelDB integrity check on real LevelDB directories (classic-level): sound databases (tables,
// compressed or not, and a write-ahead log) pass; a flipped byte in a live log or table, a missing live
// table or MANIFEST is found and named; what a crash legitimately leaves (a log cut mid-record, an orphan
// half-written table, an old log already folded into tables) is not damage. A damaged store is refused
// by openLevel and left byte for byte as it was.
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import test from 'ava';
import { Level } from 'level';
import { findDamage } from '../../src/storage/leveldb-integrity.ts';
import { openLevel, StoreDamagedError } from '../../src/storage/open-level.ts';

const RECORDS = 1500;

/** A database with several tables (small write buffer) and a non-empty write-ahead log. */
async function makeDb(compression: boolean): Promise<string> {
  const dir = mkdtempSync(join(tmpdir(), 'pp-integrity-'));
  for (let round = 0; round < 2; round++) {
    const db = new Level<string, string>(dir, { compression, writeBufferSize: 64 * 1024 });
    await db.open();
    for (let i = 0; i < RECORDS; i++)
      await db.put(`r${round}-${String(i).padStart(5, '0')}`, randomBytes(120).toString('hex'));
    await db.close();
  }
  return dir;
}

const files = (dir: string, suffix: string) =>
  readdirSync(dir)
    .filter((f) => f.endsWith(suffix) && statSync(join(dir, f)).size > 0)
    .sort();

function flip(file: string, offset: number): void {
  const bytes = readFileSync(file);
  bytes[offset] ^= 0x10;
  writeFileSync(file, bytes);
}

async function count(dir: string): Promise<number> {
  const db = new Level<string, string>(dir);
  await db.open();
  let n = 0;
  for await (const _ of db.keys()) n++;
  await db.close();
  return n;
}

test('sound databases pass, compressed or not, and still hold every record', async (t) => {
  for (const compression of [false, true]) {
    const dir = await makeDb(compression);
    t.teardown(() => rmSync(dir, { recursive: true, force: true }));
    t.true(files(dir, '.ldb').length >= 2, 'several tables');
    t.true(files(dir, '.log').length >= 1, 'a write-ahead log with data');
    t.is(findDamage(dir), undefined);
    t.is(await count(dir), 2 * RECORDS);
    t.is(findDamage(dir), undefined, 'and after LevelDB reopened it');
  }
  t.is(findDamage(join(tmpdir(), 'no-such-dir-here')), undefined, 'no database yet');
});

test('a flipped byte in the live log or in a table is found, and openLevel refuses without changing a byte', async (t) => {
  const dir = await makeDb(false);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, files(dir, '.log').at(-1)!);
  flip(log, statSync(log).size >> 1);
  const before = Object.fromEntries(
    readdirSync(dir).map((f) => [f, readFileSync(join(dir, f)).toString('base64')]),
  );
  t.like(findDamage(dir), { file: log, reason: 'record checksum mismatch' });
  const error = await t.throwsAsync(openLevel(dir, {}), { instanceOf: StoreDamagedError });
  t.regex(
    error!.message,
    new RegExp(`the store in ${dir} is damaged: ${log} at byte \\d+: record checksum mismatch`),
  );
  const after = Object.fromEntries(
    readdirSync(dir).map((f) => [f, readFileSync(join(dir, f)).toString('base64')]),
  );
  t.deepEqual(after, before);
  flip(log, statSync(log).size >> 1);
  t.is(findDamage(dir), undefined);

  const table = join(dir, files(dir, '.ldb')[0]);
  flip(table, 100);
  t.like(findDamage(dir), { file: table, reason: 'data block checksum mismatch' });
  flip(table, 100);
  flip(table, statSync(table).size - 1);
  t.like(findDamage(dir), { file: table, reason: 'table footer has no LevelDB magic number' });
});

test('what a crash leaves is not damage; a missing live table or MANIFEST is', async (t) => {
  const dir = await makeDb(false);
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  const log = join(dir, files(dir, '.log').at(-1)!);
  const full = readFileSync(log);
  writeFileSync(log, full.subarray(0, full.length - 50));
  t.is(findDamage(dir), undefined, 'a log cut mid-record');
  writeFileSync(join(dir, '999999.ldb'), randomBytes(3000));
  writeFileSync(join(dir, '000001.log'), randomBytes(3000));
  t.is(findDamage(dir), undefined, 'an orphan table and an old log');
  t.is(await count(dir), 2 * RECORDS - 1, 'LevelDB agrees: the cut record alone is gone');

  const table = files(dir, '.ldb').find((f) => f !== '999999.ldb')!;
  rmSync(join(dir, table));
  t.regex(
    findDamage(dir)!.reason,
    new RegExp(`table ${table.replace('.ldb', '')}\\.ldb it lists is missing`),
  );
  const manifest = readFileSync(join(dir, 'CURRENT'), 'utf8').trim();
  rmSync(join(dir, manifest));
  t.regex(findDamage(dir)!.reason, new RegExp(`CURRENT names ${manifest}, which is missing`));
});
