// Start-up cost of this project's processes, each beside a bare `node -e 0` on the same machine:
// 1. the CLI (compiled, bin/pool-proxy.js): `--version` and `--help`, wall time, CPU and peak memory of the
//    whole process (GNU time); with BEFORE=<checkout of an older commit, its node_modules and build linked>,
//    that commit's CLI too, for a before/after;
// 2. what tests and development tools pay under tsx: CPU to import the Stellar SDK as the service's modules
//    import it ('#stellar-sdk': its CommonJS build) against the package's default ESM entry, and to import the
//    proxy itself, each a fresh `node --import tsx` process reporting its own CPU (tsx's hooks thread included).
// Variants alternate, so a busy machine weighs on each alike. Usage: npx tsx bench/startup/run.ts [samples=8]
import { spawnSync } from 'node:child_process';
import { cpus, loadavg } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const samples = Number(process.argv[2] ?? 8);
const before = process.env.BEFORE;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

interface Cost {
  wallMs: number;
  cpuMs: number;
  rssMb: number;
}

/** One process under GNU time: its wall time, user + system CPU and peak resident memory. */
function measured(args: string[]): Cost {
  const run = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', process.execPath, ...args], {
    cwd: root,
    encoding: 'utf8',
  });
  const line = /TIME (\S+) (\S+) (\S+) (\S+)\s*$/.exec(run.stderr);
  if (run.status !== 0 || !line) throw new Error(`${args.join(' ')}: ${run.stderr}`);
  const [, wall, user, sys, rss] = line.map(Number);
  return { wallMs: wall! * 1000, cpuMs: (user! + sys!) * 1000, rssMb: rss! / 1024 };
}

const cli: Record<string, string[]> = {
  'node -e 0': ['-e', '0'],
  'pool-proxy --version': [join(root, 'bin/pool-proxy.js'), '--version'],
  'pool-proxy --help': [join(root, 'bin/pool-proxy.js'), '--help'],
  ...(before
    ? {
        'before: pool-proxy --version': [join(before, 'bin/pool-proxy.js'), '--version'],
        'before: pool-proxy --help': [join(before, 'bin/pool-proxy.js'), '--help'],
      }
    : {}),
};

const tsx: Record<string, string> = {
  'nothing (node + tsx)': '',
  "'#stellar-sdk' (CommonJS build)": "await import('#stellar-sdk');",
  "'@stellar/stellar-sdk' (ESM build)": "await import('@stellar/stellar-sdk');",
  'the proxy (src/proxy/server.ts)': "await import('./src/proxy/server.ts');",
};

function tsxCpuMs(code: string): number {
  const script = `${code} const u = process.cpuUsage(); console.log((u.user + u.system) / 1000);`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`${code}: ${run.stderr}`);
  return Number(run.stdout.trim().split('\n').at(-1));
}

console.log(
  `${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, node ${process.version}, load ${loadavg()[0]!.toFixed(2)}, ${samples} samples each`,
);

// warm the page cache (and compile dist/ if it is stale) before any sample counts
for (const args of Object.values(cli)) measured(args);
const costs: Record<string, Cost[]> = Object.fromEntries(Object.keys(cli).map((k) => [k, []]));
for (let i = 0; i < samples; i++)
  for (const [name, args] of Object.entries(cli)) costs[name]!.push(measured(args));
const base = median(costs['node -e 0']!.map((c) => c.wallMs));
console.log('\nCLI processes (medians): wall, CPU (user + system), peak RSS; wall against node -e 0');
for (const [name, cs] of Object.entries(costs)) {
  const wall = median(cs.map((c) => c.wallMs));
  console.log(
    `${name.padEnd(30)} wall ${wall.toFixed(0).padStart(5)} ms (${(wall / base).toFixed(1)}×)  CPU ${median(
      cs.map((c) => c.cpuMs),
    )
      .toFixed(0)
      .padStart(5)} ms  RSS ${median(cs.map((c) => c.rssMb)).toFixed(0)} MB`,
  );
}

const times: Record<string, number[]> = Object.fromEntries(Object.keys(tsx).map((k) => [k, []]));
tsxCpuMs(tsx["'#stellar-sdk' (CommonJS build)"]!); // warm tsx's transform cache
for (let i = 0; i < samples; i++)
  for (const [name, code] of Object.entries(tsx)) times[name]!.push(tsxCpuMs(code));
console.log('\nImports under tsx (tests, development tools): CPU of the whole process');
for (const [name, xs] of Object.entries(times))
  console.log(
    `${name.padEnd(38)} median ${median(xs).toFixed(0).padStart(5)} ms CPU  (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`,
  );
const cjs = median(times["'#stellar-sdk' (CommonJS build)"]!);
const esm = median(times["'@stellar/stellar-sdk' (ESM build)"]!);
const tsxBase = median(times['nothing (node + tsx)']!);
console.log(
  `SDK import alone: ESM ${(esm - tsxBase).toFixed(0)} ms, CommonJS ${(cjs - tsxBase).toFixed(0)} ms: ${((esm - tsxBase) / (cjs - tsxBase)).toFixed(2)}×`,
);
