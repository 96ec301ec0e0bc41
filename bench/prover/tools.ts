// What the prover benchmarks that run native processes share: building our C++ driver
// (native/tools/bench_prove.cpp with native/src, of this checkout or of an extracted earlier tree) and the
// page-fault probe, timing a fresh process from outside with /usr/bin/time, the SIMD paths of this CPU and
// the environment that selects each, and the median.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import path from 'node:path';
import { addon } from '../../src/prover/native-addon.ts';
import { ROOT } from '../../test/prover/helpers.ts';

export const median = (xs: number[]) => {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};

/** Compiles `binary` with g++ `args` unless it is newer than every one of `sources`. */
export function buildIfStale(binary: string, sources: string[], args: string[]): void {
  if (existsSync(binary) && sources.every((f) => statSync(f).mtimeMs <= statSync(binary).mtimeMs)) return;
  console.log(`building ${path.relative(ROOT, binary)} ...`);
  execFileSync('g++', [...args, '-o', binary], { stdio: 'inherit' });
}

/**
 * Our one-shot driver, compiled from `tree`'s `native/` (this checkout by default): bench_prove.cpp with every
 * translation unit of the prover (not the Node addon's).
 */
export function buildDriver(binary: string, tree = ROOT): string {
  const src = path.join(tree, 'native', 'src');
  const tool = path.join(tree, 'native', 'tools', 'bench_prove.cpp');
  const units = readdirSync(src)
    .filter((f) => f.endsWith('.cpp') && f !== 'addon.cpp' && f !== 'test_ops.cpp')
    .map((f) => path.join(src, f));
  const sources = [tool, ...readdirSync(src, { recursive: true }).map((f) => path.join(src, String(f)))];
  buildIfStale(
    binary,
    sources.filter((f) => statSync(f).isFile()),
    ['-O3', '-std=c++17', '-pthread', `-I${src}`, tool, ...units],
  );
  return binary;
}

export interface Probe {
  usPerFault: number;
  cpuUsPerFault: number;
  pageMs: number;
  mib: number;
  hugePages: { faults: number; ms: number; usPerFault: number };
}

/** Builds bench/prover/fault_probe.cpp into `dir`; the function measures this host's page-fault cost. */
export function faultProbe(dir: string): () => Probe {
  const binary = path.join(dir, 'fault_probe');
  const source = path.join(ROOT, 'bench', 'prover', 'fault_probe.cpp');
  buildIfStale(binary, [source], ['-O2', source]);
  return () => JSON.parse(execFileSync(binary, ['64', '5'], { encoding: 'utf8' }).trim()) as Probe;
}

export interface Run {
  wallMs: number;
  cpuMs: number;
  peakMb: number;
  faults: number;
  stdout: string;
}

/** One fresh process, timed from outside (wall, user + system CPU, peak RSS, minor faults). */
export function timedProcess(cmd: string, args: string[], env: NodeJS.ProcessEnv): Run {
  if (!existsSync('/usr/bin/time'))
    throw new Error('this benchmark needs /usr/bin/time (apt-get install time)');
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M %R', cmd, ...args], {
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const line = r.stderr.split('\n').find((l) => l.startsWith('TIME '));
  if (r.status !== 0 || !line) throw new Error(`${cmd} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const [, e, u, s, m, f] = line.split(' ').map(Number);
  return { wallMs: e * 1000, cpuMs: (u + s) * 1000, peakMb: m / 1024, faults: f, stdout: r.stdout };
}

/** The JSON object a driver prints as its last line. */
export const lastJson = <T>(stdout: string) => JSON.parse(stdout.trim().split('\n').pop() as string) as T;

/** The SIMD paths this CPU has: AVX-512 IFMA when present, and the AVX2-only scalar path. */
export const simdPaths = addon.testOps.avx512 ? ['avx512-ifma', 'avx2-only'] : ['avx2-only'];

/** The environment that selects path `p` in our prover (ZKPROVER_NO_AVX512 for the AVX2-only path). */
export const envFor = (p: string): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.ZKPROVER_NO_AVX512;
  return p === 'avx2-only' ? { ...env, ZKPROVER_NO_AVX512: '1' } : env;
};
