// Builds the Soroban host addon (soroban-host/, a Rust crate on napi-rs) into
// build/soroban-host/soroban_host.node, which src/sandbox/soroban-host.ts loads. The addon is a member of
// the project's Cargo workspace (Cargo.toml at the root): it is built with the workspace's native (dev)
// profile, together with the contracts' tests, so the two share one compiled soroban-env-host and
// `cargo test` later compiles nothing again. Rebuilds only when the crate's files, the workspace's
// Cargo.toml or Cargo.lock, or the toolchain changed (a stamp in build/soroban-host/), with the toolchain
// that builds the contracts. scripts/build.ts calls buildSorobanHost(); alone:
// `npx tsx scripts/build-soroban-host.ts [--force]`.
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  writeFileSync,
} from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { ensureToolchain } from './build-contracts.ts';

const root = fileURLToPath(new URL('..', import.meta.url));
const crateDir = join(root, 'soroban-host');
const outDir = join(root, 'build', 'soroban-host');
/** The addon src/sandbox/soroban-host.ts loads. */
export const SOROBAN_HOST_NODE = join(outDir, 'soroban_host.node');
const stampFile = join(outDir, '.source-hash');

/** A build that cannot run or failed; its message is the whole story. */
export class SorobanHostBuildError extends Error {}

function crateFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true })
    .filter((e) => e.name !== 'target' && !e.name.startsWith('.'))
    .flatMap((e) => (e.isDirectory() ? crateFiles(join(dir, e.name)) : [join(dir, e.name)]))
    .sort();
}

/** Hash of what the addon is built from: its files, the workspace's manifest and lock, the toolchain. */
function sourceHash(toolchain: string): string {
  const h = createHash('sha256').update(`${toolchain}\n`);
  for (const f of [...crateFiles(crateDir), join(root, 'Cargo.toml'), join(root, 'Cargo.lock')])
    h.update(relative(root, f)).update('\0').update(readFileSync(f));
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
  let tc;
  try {
    tc = ensureToolchain();
  } catch (e) {
    throw new SorobanHostBuildError((e as Error).message);
  }
  const hash = sourceHash(tc.version);
  if (
    !options.force &&
    existsSync(SOROBAN_HOST_NODE) &&
    existsSync(stampFile) &&
    readFileSync(stampFile, 'utf8') === hash
  ) {
    log('build: Soroban host addon is up to date');
    return { built: false, seconds: 0, addon: SOROBAN_HOST_NODE };
  }
  const jobs = process.env.CARGO_BUILD_JOBS ?? '2';
  log(`build: compiling the Soroban host addon and the contracts' tests (several minutes from clean)…`);
  const started = Date.now();
  mkdirSync(outDir, { recursive: true });
  try {
    execFileSync(tc.cargo, ['build', '--locked', '--all-targets', '-j', jobs], {
      cwd: root,
      stdio: ['ignore', 'inherit', 'inherit'],
      env: { ...process.env, RUSTC: tc.rustc },
    });
  } catch (e) {
    throw new SorobanHostBuildError(`build: cargo failed to build soroban-host/ (${(e as Error).message})`);
  }
  const library = join(root, 'target', 'debug', 'libsoroban_host.so');
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
