// The CLI runs compiled JavaScript (bin/compile.js: src/ → dist/) and loads only what its command line needs.
// Shown with real processes: `--version` and `--help` import no command module and no package but commander
// (every module a real Node resolves is recorded by a resolve hook); the top-level help's summaries are the
// commands' own descriptions; and the compiler, run on a small tree of its own, rewrites imports, keeps
// `import.meta.url` paths at their depth, recompiles after an edit and drops the output of a removed source.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import test from 'ava';
import { Command } from 'commander';
import { ensureCompiled } from '../../bin/compile.js';
import { COMMANDS } from '../../src/cli/program.ts';
import { VERSION } from '../../src/version.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const CLI = join(ROOT, 'bin', 'pool-proxy.js');

function scratch(t: { teardown(fn: () => void): void }): string {
  const dir = mkdtempSync(join(tmpdir(), 'compiled-'));
  t.teardown(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

/** Runs the CLI with `args`, recording every module URL Node resolves for it. */
function runRecorded(
  dir: string,
  args: string[],
): { stdout: string; status: number | null; loaded: string[] } {
  const log = join(dir, 'loaded.txt');
  const hooks = join(dir, 'hooks.mjs');
  writeFileSync(
    hooks,
    `import { appendFileSync } from 'node:fs';\n` +
      `export async function resolve(specifier, context, next) {\n` +
      `  const r = await next(specifier, context);\n` +
      `  appendFileSync(${JSON.stringify(log)}, r.url + '\\n');\n` +
      `  return r;\n}\n`,
  );
  const register = join(dir, 'register.mjs');
  writeFileSync(
    register,
    `import { register } from 'node:module';\nregister(${JSON.stringify(pathToFileURL(hooks).href)});\n`,
  );
  writeFileSync(log, '');
  const run = spawnSync(process.execPath, ['--import', register, CLI, ...args], { encoding: 'utf8' });
  const loaded = readFileSync(log, 'utf8').split('\n').filter(Boolean);
  return { stdout: run.stdout, status: run.status, loaded };
}

/** What a light start may load: the launcher, the compiler's stamp check, the program table, commander. */
function unexpected(loaded: string[]): string[] {
  const root = pathToFileURL(ROOT).href;
  const allowed = [
    'bin/pool-proxy.js',
    'bin/compile.js',
    'dist/cli/main.js',
    'dist/cli/program.js',
    'dist/version.js',
  ].map((f) => root + f);
  return loaded.filter(
    (url) =>
      !url.startsWith('node:') &&
      !allowed.includes(url) &&
      !url.includes('/node_modules/commander/') &&
      !url.startsWith(pathToFileURL(tmpdir()).href),
  );
}

test('--version prints the version and loads no command, no SDK, no prover', (t) => {
  const run = runRecorded(scratch(t), ['--version']);
  t.is(run.status, 0);
  t.is(run.stdout.trim(), VERSION);
  t.true(
    run.loaded.some((u) => u.endsWith('/dist/cli/main.js')),
    'the compiled CLI ran',
  );
  t.false(
    run.loaded.some((u) => u.endsWith('.ts')),
    'no TypeScript source is loaded',
  );
  t.deepEqual(unexpected(run.loaded), []);
});

test('--help lists every command by its summary and loads none of them', (t) => {
  const run = runRecorded(scratch(t), ['--help']);
  t.is(run.status, 0);
  const flat = run.stdout.replace(/\s+/g, ' ');
  for (const [name, entry] of Object.entries(COMMANDS)) {
    t.regex(run.stdout, new RegExp(`^  ${name} `, 'm'));
    t.true(flat.includes(entry.summary), `${name}'s summary is listed`);
  }
  t.deepEqual(unexpected(run.loaded), []);
});

test('help <command> and the command itself load that command in full', (t) => {
  const run = runRecorded(scratch(t), ['help', 'keys']);
  t.is(run.status, 0);
  t.regex(run.stdout, /dev-setup <r1cs> <zkeyOut> <vkeyOut>/);
  t.true(run.loaded.some((u) => u.endsWith('/dist/cli/commands/keys.js')));
  t.false(
    run.loaded.some((u) => u.endsWith('/dist/cli/commands/start.js')),
    'and no other command',
  );
});

test("each command's summary in the top-level help is the description the command sets", async (t) => {
  for (const [name, entry] of Object.entries(COMMANDS)) {
    const program = new Command();
    (await entry.load())(program);
    const command = program.commands.find((c) => c.name() === name);
    t.truthy(command, `${name} registers a command of that name`);
    t.is(command?.description(), entry.summary, `update COMMANDS.${name}.summary in src/cli/program.ts`);
  }
});

test('the compiler mirrors the sources, rewrites .ts imports, recompiles after an edit, drops removed sources', async (t) => {
  const dir = scratch(t);
  const dirs = { src: join(dir, 'src'), dist: join(dir, 'dist') };
  mkdirSync(join(dirs.src, 'deep'), { recursive: true });
  writeFileSync(
    join(dirs.src, 'main.ts'),
    `import { word } from './deep/word.ts';\n` +
      `const asset: string = new URL('../asset.txt', import.meta.url).pathname;\n` +
      `export const said = async (): Promise<string> => word + ':' + (await import('./deep/late.ts')).late + ':' + asset;\n`,
  );
  writeFileSync(join(dirs.src, 'deep', 'word.ts'), `export const word: string = 'first';\n`);
  writeFileSync(join(dirs.src, 'deep', 'late.ts'), `export const late = 'late' as const;\n`);
  writeFileSync(join(dir, 'asset.txt'), 'asset');

  t.deepEqual(await ensureCompiled(dirs), { files: 3, written: 3 });
  t.is(await ensureCompiled(dirs), undefined, 'nothing to do when the sources did not change');
  const main = join(dirs.dist, 'main.js');
  const run = async () => (await import(`${pathToFileURL(main).href}?${Math.random()}`)).said() as string;
  t.is(await run(), `first:late:${join(dir, 'asset.txt')}`, 'import.meta.url paths keep their depth');

  // an edit (a new size and modification time) is compiled before the next run
  const word = join(dirs.src, 'deep', 'word.ts');
  writeFileSync(word, `export const word: string = 'second';\n`);
  utimesSync(word, new Date(), new Date(Date.now() + 5_000));
  t.deepEqual(await ensureCompiled(dirs), { files: 3, written: 1 });
  t.regex(readFileSync(join(dirs.dist, 'deep', 'word.js'), 'utf8'), /second/);

  rmSync(join(dirs.src, 'deep', 'late.ts'));
  writeFileSync(join(dirs.src, 'main.ts'), `export const said = (): string => 'alone';\n`);
  await ensureCompiled(dirs);
  t.false(existsSync(join(dirs.dist, 'deep', 'late.js')), "a removed source's output is removed");
});

test('callers racing on stale sources compile once and all see the result', async (t) => {
  const dir = scratch(t);
  const dirs = { src: join(dir, 'src'), dist: join(dir, 'dist') };
  mkdirSync(dirs.src);
  for (let i = 0; i < 20; i++) writeFileSync(join(dirs.src, `m${i}.ts`), `export const n: number = ${i};\n`);
  const results = await Promise.all(Array.from({ length: 4 }, () => ensureCompiled(dirs)));
  t.is(results.filter((r) => r !== undefined).length, 1);
  t.false(existsSync(`${dirs.dist}.lock`), 'the lock is released');
  t.regex(readFileSync(join(dirs.dist, 'm19.js'), 'utf8'), /n = 19/);
});
