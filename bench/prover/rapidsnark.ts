// Our prover next to iden3's rapidsnark on the same zkey and witness, per SIMD path of this CPU.
//  * engines, each a fresh process per proof (interleaved rounds, so machine noise hits all alike):
//      rapidsnark  - its `prover` command line (RAPIDSNARK_PROVER=/path/to/prover; skipped when unset),
//      ours, C++   - native/tools/bench_prove.cpp compiled here from the addon's sources (one proof),
//    timed from outside with /usr/bin/time (wall, user+system CPU, peak RSS); our driver also reports
//    its key load, its prove-only time and the key's resident pages, and a load-only run of it splits
//    our process CPU into start + key load and the proof (both map their keys and use them in place:
//    the fixed part is a few ms, so the process CPU is the proof's). The key's prepared file is removed
//    first and the first load (full validation, prepared file written) timed once per circuit;
//  * ours through Node: `bench/prover/measure.ts native` (loadProver + prove, self-check included),
//    one process per path, 1 warm-up then `rounds` proofs in process;
//  * paths: AVX-512 IFMA when the CPU has it, and the AVX2-only scalar path (ZKPROVER_NO_AVX512=1);
//  * circuits: policy_tx_2_2 (the product key from `npm run build`) and `fullsize` (30k constraints,
//    every witness value full-size). Every proof is checked: rapidsnark's with snarkjs, ours by the driver.
// Usage: RAPIDSNARK_PROVER=/work/rapidsnark/build_prover/src/prover npx tsx bench/prover/rapidsnark.ts [rounds=7]
// How to build rapidsnark for this comparison: bench/prover/README.md.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, readdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { buildTransactionInputs, circuitArtifacts, loadWitnessCalculator } from '../../src/circuit/index.ts';
import { devSetup, exportVerificationKey, releaseVerifier } from '../../src/prover/index.ts';
import { addon } from '../../src/prover/native-addon.ts';
import { Scenario } from '../../test/circuit/scenario.ts';
import { ROOT, compileCircuit, witness } from '../../test/prover/helpers.ts';

const ROUNDS = Number(process.argv[2] ?? 7);
const RAPIDSNARK = process.env.RAPIDSNARK_PROVER;
const OUT = path.join(ROOT, 'bench', 'out', 'prover-rapidsnark');
await mkdir(OUT, { recursive: true });
if (!existsSync('/usr/bin/time'))
  throw new Error('this benchmark needs /usr/bin/time (apt-get install time)');
if (RAPIDSNARK && !existsSync(RAPIDSNARK)) throw new Error(`RAPIDSNARK_PROVER=${RAPIDSNARK} does not exist`);

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const ms = (x: number) => `${x.toFixed(0)} ms`;

// --- our C++ driver, rebuilt when a source is newer than the binary ----------------------------------
const DRIVER = path.join(OUT, 'bench_prove');
const srcDir = path.join(ROOT, 'native', 'src');
const sources = [
  'curve',
  'fft',
  'fft_avx512',
  'formats',
  'key_file',
  'msm_avx512',
  'pairing',
  'prover',
  'setup',
  'thread_pool',
  'verifier',
];
const allSources = [
  path.join(ROOT, 'native', 'tools', 'bench_prove.cpp'),
  ...(await readdir(srcDir, { recursive: true })).map((f) => path.join(srcDir, String(f))),
].filter((f) => statSync(f).isFile());
if (!existsSync(DRIVER) || allSources.some((f) => statSync(f).mtimeMs > statSync(DRIVER).mtimeMs)) {
  console.log('building native/tools/bench_prove.cpp ...');
  execFileSync(
    'g++',
    [
      '-O3',
      '-std=c++17',
      '-pthread',
      `-I${srcDir}`,
      path.join(ROOT, 'native', 'tools', 'bench_prove.cpp'),
      ...sources.map((s) => path.join(srcDir, `${s}.cpp`)),
      '-o',
      DRIVER,
    ],
    { stdio: 'inherit' },
  );
}

// --- keys and witnesses ------------------------------------------------------------------------------
async function policyWitness(): Promise<Uint8Array> {
  const s = new Scenario();
  s.allow(11n);
  s.allow(22n);
  const a = s.addNote(11n, 30n);
  const b = s.addNote(11n, 12n);
  const prepared = buildTransactionInputs(s.transaction([a, b], [s.output(40n, 22n), s.output(2n, 11n)], 0n));
  const calc = await loadWitnessCalculator(circuitArtifacts('policy_tx_2_2').wasm);
  return calc.calculateWtns(prepared.inputs);
}

const policyZkey = circuitArtifacts('policy_tx_2_2').zkey;
if (!existsSync(policyZkey)) throw new Error(`${policyZkey} missing: run \`npm run build\` first`);
const fullsize = await compileCircuit('fullsize');
const fullsizeZkey = path.join(OUT, 'fullsize.zkey');
if (!existsSync(fullsizeZkey))
  await devSetup(fullsize.r1cs, fullsizeZkey, path.join(OUT, 'fullsize_vkey.json'));
const cases = [
  { name: 'policy_tx_2_2', zkey: policyZkey, wtns: path.join(OUT, 'policy_tx_2_2.wtns') },
  { name: 'fullsize', zkey: fullsizeZkey, wtns: path.join(OUT, 'fullsize.wtns') },
];
await writeFile(cases[0].wtns, await policyWitness());
await writeFile(cases[1].wtns, await witness(fullsize, { x: 3, c: 5 }));

// --- one fresh process, timed from outside ------------------------------------------------------------
interface Run {
  wallMs: number;
  cpuMs: number;
  peakMb: number;
  stdout: string;
}
function timedProcess(cmd: string, args: string[], env: NodeJS.ProcessEnv): Run {
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %U %S %M', cmd, ...args], {
    env,
    encoding: 'utf8',
    maxBuffer: 1 << 26,
  });
  const line = r.stderr.split('\n').find((l) => l.startsWith('TIME '));
  if (r.status !== 0 || !line) throw new Error(`${cmd} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const [, e, u, s, m] = line.split(' ').map(Number);
  return { wallMs: e * 1000, cpuMs: (u + s) * 1000, peakMb: m / 1024, stdout: r.stdout };
}

const avx512 = addon.testOps.avx512;
const paths = avx512 ? ['avx512-ifma', 'avx2-only'] : ['avx2-only'];
const envFor = (p: string): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.ZKPROVER_NO_AVX512;
  return p === 'avx2-only' ? { ...env, ZKPROVER_NO_AVX512: '1' } : env;
};

interface Series {
  wall: number[];
  cpu: number[];
  peak: number[];
  prove: number[];
  load: number[];
  /** CPU of a process that only loads the key (start + load), to split our process CPU. */
  loadOnlyCpu: number[];
  /** Resident file-backed memory the proof added over the load (the mapped key's pages), MB. */
  keyResident: number[];
}
const empty = (): Series => ({
  wall: [],
  cpu: [],
  peak: [],
  prove: [],
  load: [],
  loadOnlyCpu: [],
  keyResident: [],
});
interface DriverOut {
  path: string;
  prepared: string;
  loadMs: number;
  prove: number[];
  verified: boolean;
  rssMb: { fileAfterLoad: number; anonAfterLoad: number; fileAfterProofs: number; anonAfterProofs: number };
}
const driverOut = (r: Run) => JSON.parse(r.stdout.trim().split('\n').pop() as string) as DriverOut;
const rows: Record<string, unknown>[] = [];

for (const c of cases) {
  const vkey = await exportVerificationKey(c.zkey);
  const keyFileMb = statSync(c.zkey).size / 2 ** 20;
  // First load of the key: no prepared file yet, so it is validated in full and one is written (once per
  // circuit: both SIMD paths share the file). Every later load below reuses it.
  await rm(`${c.zkey}.prep`, { force: true });
  const first = driverOut(timedProcess(DRIVER, [c.zkey, c.wtns, '0'], envFor(paths[0])));
  if (first.prepared !== 'written') throw new Error(`first load of ${c.name}: prepared ${first.prepared}`);
  const rapid = empty();
  const ours: Record<string, Series> = Object.fromEntries(paths.map((p) => [p, empty()]));
  const driverPath: Record<string, string> = {};
  for (let round = 0; round < ROUNDS + 1; round++) {
    const warm = round === 0; // the first round only warms the page cache
    if (RAPIDSNARK) {
      const proofFile = path.join(OUT, `${c.name}_rapidsnark_proof.json`);
      const publicFile = path.join(OUT, `${c.name}_rapidsnark_public.json`);
      const r = timedProcess(RAPIDSNARK, [c.zkey, c.wtns, proofFile, publicFile], process.env);
      if (round === 0 || round === ROUNDS) {
        const ok = await snarkjs.groth16.verify(
          vkey,
          JSON.parse(readFileSync(publicFile, 'utf8')),
          JSON.parse(readFileSync(proofFile, 'utf8')),
        );
        if (!ok) throw new Error(`rapidsnark's proof for ${c.name} does not verify`);
      }
      if (!warm) {
        rapid.wall.push(r.wallMs);
        rapid.cpu.push(r.cpuMs);
        rapid.peak.push(r.peakMb);
      }
    }
    for (const p of paths) {
      const r = timedProcess(DRIVER, [c.zkey, c.wtns, '1'], envFor(p));
      const out = driverOut(r);
      if (!out.verified) throw new Error(`our proof for ${c.name} does not verify`);
      if (out.prepared !== 'reused') throw new Error(`${c.name}: the prepared key was not reused`);
      driverPath[p] = out.path;
      const loadOnly = timedProcess(DRIVER, [c.zkey, c.wtns, '0'], envFor(p));
      if (warm) continue;
      ours[p].loadOnlyCpu.push(loadOnly.cpuMs);
      const s = ours[p];
      s.wall.push(r.wallMs);
      s.cpu.push(r.cpuMs);
      s.peak.push(r.peakMb);
      s.prove.push(out.prove[0]);
      s.load.push(out.loadMs);
      s.keyResident.push(out.rssMb.fileAfterProofs - out.rssMb.fileAfterLoad);
    }
  }
  // Through Node: the product API, one process per path.
  const node: Record<
    string,
    { loadMs: number; prepared: string; times: number[]; cpu: number[]; baselineMb: number; peakMb: number }
  > = {};
  for (const p of paths) {
    const out = execFileSync(
      process.execPath,
      [
        '--import=tsx',
        path.join(ROOT, 'bench', 'prover', 'measure.ts'),
        'native',
        c.zkey,
        c.wtns,
        String(ROUNDS),
      ],
      { cwd: ROOT, encoding: 'utf8', env: envFor(p), maxBuffer: 1 << 24 },
    );
    node[p] = JSON.parse(out.trim().split('\n').pop() as string);
  }

  const rapidWall = RAPIDSNARK ? median(rapid.wall) : NaN;
  const rapidCpu = RAPIDSNARK ? median(rapid.cpu) : NaN;
  if (RAPIDSNARK)
    console.log(
      `${c.name} rapidsnark: process ${ms(rapidWall)} wall, ${ms(rapidCpu)} CPU, peak ${median(rapid.peak).toFixed(0)} MB`,
    );
  for (const p of paths) {
    const s = ours[p];
    const row = {
      circuit: c.name,
      path: p,
      driverPath: driverPath[p],
      rapidsnarkProcessMs: rapidWall,
      rapidsnarkCpuMs: rapidCpu,
      rapidsnarkPeakMb: RAPIDSNARK ? median(rapid.peak) : NaN,
      oursProcessMs: median(s.wall),
      oursCpuMs: median(s.cpu),
      oursPeakMb: median(s.peak),
      keyFileMb,
      firstLoadMs: first.loadMs,
      oursLoadMs: median(s.load),
      oursKeyResidentMb: median(s.keyResident),
      oursProveMs: median(s.prove),
      oursLoadOnlyCpuMs: median(s.loadOnlyCpu),
      // Our proof's own CPU: the process CPU minus that of a load-only process.
      oursProveCpuMs: median(s.cpu) - median(s.loadOnlyCpu),
      nodeProveMs: median(node[p].times),
      nodeProveCpuMs: median(node[p].cpu),
      nodePeakMb: node[p].peakMb,
      nodeLoadMs: node[p].loadMs,
      processRatio: rapidWall / median(s.wall),
      cpuRatio: rapidCpu / median(s.cpu),
      proveCpuRatio: rapidCpu / (median(s.cpu) - median(s.loadOnlyCpu)),
      proveOnlyRatio: rapidWall / median(s.prove),
      raw: { rapidsnark: rapid, ours: s, node: node[p] },
    };
    rows.push(row);
    console.log(
      `${c.name} ours [${p} -> ${driverPath[p]}]: process ${ms(row.oursProcessMs)} wall, ${ms(row.oursCpuMs)} CPU, ` +
        `peak ${row.oursPeakMb.toFixed(0)} MB, key load ${row.oursLoadMs.toFixed(2)} ms ` +
        `(first ${ms(row.firstLoadMs)}; key ${keyFileMb.toFixed(1)} MB, resident ${row.oursKeyResidentMb.toFixed(1)} MB), ` +
        `prove-only ${ms(row.oursProveMs)} ` +
        `(${ms(row.oursProveCpuMs)} CPU); ` +
        `through Node ${ms(row.nodeProveMs)} (self-check incl.; loadProver ${row.nodeLoadMs.toFixed(1)} ms, ` +
        `peak ${row.nodePeakMb.toFixed(0)} MB)` +
        (RAPIDSNARK
          ? ` | rapidsnark/ours: process ${row.processRatio.toFixed(2)}x, CPU ${row.cpuRatio.toFixed(2)}x, ` +
            `rapidsnark process / our prove-only ${row.proveOnlyRatio.toFixed(2)}x wall, ` +
            `${row.proveCpuRatio.toFixed(2)}x CPU`
          : ''),
    );
  }
}
await releaseVerifier();

const cpuModel = os.cpus()[0]?.model;
const flags =
  readFileSync('/proc/cpuinfo', 'utf8')
    .match(/^flags\s*:(.*)$/m)?.[1]
    .split(' ') ?? [];
const machine = {
  cpu: cpuModel,
  cores: os.cpus().length,
  avx2: flags.includes('avx2'),
  adx: flags.includes('adx'),
  avx512ifma: flags.includes('avx512ifma'),
  loadavg: os.loadavg().map((x) => x.toFixed(2)),
  node: process.version,
};
console.log(`machine: ${JSON.stringify(machine)}`);
await writeFile(
  path.join(OUT, 'results.json'),
  `${JSON.stringify({ machine, rounds: ROUNDS, rows }, null, 1)}\n`,
);
