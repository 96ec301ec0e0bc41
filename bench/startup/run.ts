// Start-up cost of a process of this project: CPU to import the Stellar SDK under tsx, as the service's modules
// import it ('#stellar-sdk': its CommonJS build, package.json "imports") against the package's default ESM
// entry, and to import the proxy itself. Each sample is a fresh `node --import tsx` process that reports its own
// CPU (all threads, tsx's hooks thread included) after the import; the variants alternate so a busy machine
// weighs on each alike. Usage: npx tsx bench/startup/run.ts [samples=8]
import { spawnSync } from 'node:child_process';
import { cpus } from 'node:os';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../..', import.meta.url));
const samples = Number(process.argv[2] ?? 8);

const variants: Record<string, string> = {
  'nothing (node + tsx)': '',
  "'#stellar-sdk' (CommonJS build)": "await import('#stellar-sdk');",
  "'@stellar/stellar-sdk' (ESM build)": "await import('@stellar/stellar-sdk');",
  'the proxy (src/proxy/server.ts)': "await import('./src/proxy/server.ts');",
};

function cpuMs(code: string): number {
  const script = `${code} const u = process.cpuUsage(); console.log((u.user + u.system) / 1000);`;
  const run = spawnSync(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
    cwd: root,
    encoding: 'utf8',
  });
  if (run.status !== 0) throw new Error(`${code}: ${run.stderr}`);
  return Number(run.stdout.trim().split('\n').at(-1));
}

const times: Record<string, number[]> = Object.fromEntries(Object.keys(variants).map((k) => [k, []]));
cpuMs(variants["'#stellar-sdk' (CommonJS build)"]!); // warm tsx's transform cache and the page cache
for (let i = 0; i < samples; i++)
  for (const [name, code] of Object.entries(variants)) times[name]!.push(cpuMs(code));

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
console.log(
  `${cpus()[0]?.model ?? 'cpu'} × ${cpus().length}, node ${process.version}, ${samples} samples each`,
);
for (const [name, xs] of Object.entries(times))
  console.log(
    `${name.padEnd(38)} median ${median(xs).toFixed(0).padStart(5)} ms CPU  (min ${Math.min(...xs).toFixed(0)}, max ${Math.max(...xs).toFixed(0)})`,
  );
const cjs = median(times["'#stellar-sdk' (CommonJS build)"]!);
const esm = median(times["'@stellar/stellar-sdk' (ESM build)"]!);
const base = median(times['nothing (node + tsx)']!);
console.log(
  `SDK import alone: ESM ${(esm - base).toFixed(0)} ms, CommonJS ${(cjs - base).toFixed(0)} ms: ${((esm - base) / (cjs - base)).toFixed(2)}×`,
);
