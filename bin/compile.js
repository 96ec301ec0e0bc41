// Compiles the service's TypeScript (src/) into JavaScript under dist/, file for file, so the CLI, the daemon
// and `npm start` run plain JavaScript on Node, without tsx. dist/ mirrors src/ at the same depth (src/a/b.ts →
// dist/a/b.js), so every `new URL('../..', import.meta.url)` path (proto files, circuits, contracts, the wallet
// page, package.json) resolves as it does from the sources; relative imports of `.ts` files become `.js`;
// packages, `node:` modules and `#stellar-sdk` (package.json "imports") stay imports.
//
// `ensureCompiled()` is what bin/pool-proxy.js calls first: it compares a stamp of the sources (each file's
// path, size and modification time, and this compiler's own) with the one the last compile wrote, and compiles
// again only when they differ (about a second), so an edit to src/ is never run as stale JavaScript. Concurrent
// callers (tests start many CLIs at once) take a lock; each output file is replaced by a rename, so a running
// process never reads a half-written one. `node bin/compile.js` compiles when needed and says what it did
// (`npm run build` runs it).
import {
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join, relative, sep } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** This project's sources and their compiled form: the defaults of every function below. */
const PROJECT = { src: join(ROOT, 'src'), dist: join(ROOT, 'dist') };
const stampFile = (dirs) => join(dirs.dist, '.source-stamp');
const lockDir = (dirs) => `${dirs.dist}.lock`;
/** A lock older than this was left by a compile that died: it is taken over. */
const STALE_LOCK_MS = 120_000;

/** Every file under `dir`, as paths relative to it ('/'-separated), sorted. */
function filesUnder(dir) {
  return readdirSync(dir, { recursive: true, withFileTypes: true })
    .filter((e) => e.isFile())
    .map((e) =>
      relative(dir, join(e.parentPath ?? e.path, e.name))
        .split(sep)
        .join('/'),
    )
    .sort();
}

/** The stamp of the sources as they are now: changes when a file is added, removed or written. */
export function sourceStamp(dirs = PROJECT) {
  const self = statSync(fileURLToPath(import.meta.url));
  const lines = [`compiler ${self.size} ${self.mtimeMs}`];
  for (const file of filesUnder(dirs.src)) {
    const s = statSync(join(dirs.src, file));
    lines.push(`${file} ${s.size} ${s.mtimeMs}`);
  }
  return `${lines.join('\n')}\n`;
}

function readStamp(dirs) {
  try {
    return readFileSync(stampFile(dirs), 'utf8');
  } catch {
    return undefined;
  }
}

/** Writes `content` to `file` through a rename (readers see the old file or the new one, never a part). */
function replaceFile(file, content) {
  mkdirSync(dirname(file), { recursive: true });
  const scratch = `${file}.${process.pid}.tmp`;
  writeFileSync(scratch, content);
  renameSync(scratch, file);
}

/** esbuild: relative `.ts` imports are rewritten to `.js` and left to Node, as is every other import. */
const keepImports = {
  name: 'keep-imports',
  setup(build) {
    build.onResolve({ filter: /.*/ }, (args) => {
      if (args.kind === 'entry-point') return undefined;
      const relativeTs = /^\.\.?\//.test(args.path) && args.path.endsWith('.ts');
      return { path: relativeTs ? `${args.path.slice(0, -3)}.js` : args.path, external: true };
    });
  },
};

async function compile(dirs) {
  const { build } = await import('esbuild');
  const sources = filesUnder(dirs.src).filter((f) => f.endsWith('.ts'));
  const result = await build({
    entryPoints: sources.map((f) => join(dirs.src, f)),
    outdir: dirs.dist,
    outbase: dirs.src,
    bundle: true,
    plugins: [keepImports],
    format: 'esm',
    platform: 'node',
    target: 'node20',
    sourcemap: false,
    write: false,
    logLevel: 'error',
    absWorkingDir: ROOT,
  });
  const wanted = new Set();
  let written = 0;
  for (const out of result.outputFiles) {
    wanted.add(relative(dirs.dist, out.path).split(sep).join('/'));
    let current;
    try {
      current = readFileSync(out.path);
    } catch {
      current = undefined;
    }
    if (current && Buffer.compare(current, out.contents) === 0) continue;
    replaceFile(out.path, out.contents);
    written++;
  }
  // a module whose source is gone must not stay importable
  for (const file of filesUnder(dirs.dist))
    if (file.endsWith('.js') && !wanted.has(file)) unlinkSync(join(dirs.dist, file));
  return { files: sources.length, written };
}

function tryLock(lock) {
  try {
    mkdirSync(lock);
    return true;
  } catch (e) {
    if (e.code !== 'EEXIST') throw e;
    try {
      if (Date.now() - statSync(lock).mtimeMs > STALE_LOCK_MS) rmSync(lock, { recursive: true, force: true });
    } catch {
      // another caller took it over first
    }
    return false;
  }
}

/**
 * Compiles src/ into dist/ (or `dirs.src` into `dirs.dist`) unless it was compiled from the sources as they
 * are now. Resolves to what it did: undefined when up to date, else the number of sources and of files written.
 */
export async function ensureCompiled(dirs = PROJECT) {
  if (readStamp(dirs) === sourceStamp(dirs)) return undefined;
  const lock = lockDir(dirs);
  mkdirSync(dirname(lock), { recursive: true });
  while (!tryLock(lock)) await new Promise((r) => setTimeout(r, 50));
  try {
    // another caller may have compiled while this one waited
    const now = sourceStamp(dirs);
    if (readStamp(dirs) === now) return undefined;
    const done = await compile(dirs);
    replaceFile(stampFile(dirs), now);
    return done;
  } finally {
    rmSync(lock, { recursive: true, force: true });
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  const started = performance.now();
  const done = await ensureCompiled();
  console.log(
    done
      ? `build: compiled ${done.files} sources (src/ → dist/, ${done.written} files written) in ${((performance.now() - started) / 1000).toFixed(1)} s`
      : 'build: dist/ is up to date',
  );
}
