// Builds the Soroban host addon (soroban-host/, a Rust crate on napi-rs) into
// build/soroban-host/soroban_host.node, which src/sandbox/soroban-host.ts loads. Rebuilds only when the
// crate's sources, its Cargo.lock or the cargo version changed (a stamp in build/soroban-host/), with cargo
// from PATH, ~/.cargo/bin or /usr/bin. scripts/build.ts calls buildSorobanHost(); alone:
// `npx tsx scripts/build-soroban-host.ts [--force]`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  accessSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  statSync,
  writeFileSync,
} from 'node:fs';
import { homedir } from 'node:os';
import { delimiter, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = fileURLToPath(new URL('..', import.meta.url));
const crateDir = join(root, 'soroban-host');
const outDir = join(root, 'build', 'soroban-host');
/** The addon src/sandbox/soroban-host.ts loads. */
export const SOROBAN_HOST_NODE = join(outDir, 'soroban_host.node');
const stampFile = join(outDir, '.source-hash');
const targetDir = join(outDir, 'target');

/** A build that cannot run or failed; its message is the whole story. */
export class SorobanHostBuildError extends Error {}

function executable(file: string): boolean {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** cargo from PATH, else rustup's ~/.cargo/bin, else Debian's /usr/bin. */
export function findCargo(): string | undefined {
  const onPath = (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((dir) => join(dir, 'cargo'));
  return [...onPath, join(homedir(), '.cargo', 'bin', 'cargo'), '/usr/bin/cargo'].find(executable);
}

function crateFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.name !== 'target' && e.name !== 'testdata' && !e.name.startsWith('.'))
    .flatMap((e) => (e.isDirectory() ? crateFiles(join(dir, e.name)) : [join(dir, e.name)]))
    .sort();
}

/** Hash of what the addon is built from: the crate's files (sources, Cargo.lock, config) and cargo's version. */
function sourceHash(cargoVersion: string): string {
  const h = createHash('sha256').update(`${cargoVersion}\n`);
  for (const f of crateFiles(crateDir)) h.update(relative(crateDir, f)).update('\0').update(readFileSync(f));
  return h.digest('hex');
}

export interface SorobanHostBuild {
  built: boolean;
  seconds: number;
  addon: string;
}

/** Builds the addon unless it is up to date (or `force`). Throws SorobanHostBuildError. */
export function buildSorobanHost(
  options: { force?: boolean; log?: (line: string) => void } = {},
): SorobanHostBuild {
  const log = options.log ?? ((line: string) => console.log(line));
  const cargo = findCargo();
  if (!cargo) {
    throw new SorobanHostBuildError(
      'build: the Soroban host addon needs Rust, and no cargo was found (on PATH, in ~/.cargo/bin or /usr/bin): ' +
        'install it (`apt-get install cargo` or rustup) and run `npm run build` again',
    );
  }
  const cargoVersion = execFileSync(cargo, ['--version'], { encoding: 'utf8' }).trim();
  const hash = sourceHash(cargoVersion);
  if (
    !options.force &&
    existsSync(SOROBAN_HOST_NODE) &&
    existsSync(stampFile) &&
    readFileSync(stampFile, 'utf8') === hash
  ) {
    log('build: Soroban host addon is up to date');
    return { built: false, seconds: 0, addon: SOROBAN_HOST_NODE };
  }
  log(`build: compiling the Soroban host addon with ${cargoVersion} (several minutes from clean)…`);
  const started = Date.now();
  mkdirSync(outDir, { recursive: true });
  try {
    execFileSync(
      cargo,
      ['build', '--release', '--locked', '-j', '2', '--manifest-path', join(crateDir, 'Cargo.toml')],
      { stdio: ['ignore', 'inherit', 'inherit'], env: { ...process.env, CARGO_TARGET_DIR: targetDir } },
    );
  } catch (e) {
    throw new SorobanHostBuildError(`build: cargo failed to build soroban-host/ (${(e as Error).message})`);
  }
  const library = join(targetDir, 'release', 'libsoroban_host.so');
  if (!existsSync(library)) throw new SorobanHostBuildError(`build: cargo left no ${library}`);
  // Copy, then rename: a process that has the addon loaded keeps its file, a new one gets the whole new one.
  const scratch = `${SOROBAN_HOST_NODE}.${process.pid}.tmp`;
  copyFileSync(library, scratch);
  renameSync(scratch, SOROBAN_HOST_NODE);
  writeFileSync(stampFile, hash);
  const seconds = (Date.now() - started) / 1000;
  log(`build: Soroban host addon → ${relative(root, SOROBAN_HOST_NODE)} in ${seconds.toFixed(1)} s`);
  return { built: true, seconds, addon: SOROBAN_HOST_NODE };
}

if (process.argv[1] && import.meta.url === pathToFileURL(process.argv[1]).href) {
  try {
    buildSorobanHost({ force: process.argv.includes('--force') });
  } catch (e) {
    console.error(e instanceof SorobanHostBuildError ? e.message : e);
    process.exit(1);
  }
}
