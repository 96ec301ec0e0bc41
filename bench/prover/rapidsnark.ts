// Our prover next to iden3's rapidsnark on the same zkey and witness, per SIMD path of this CPU, like with
// like, in interleaved rounds (so machine noise hits every engine alike), with minor page faults counted
// everywhere: on a VM a fault can cost 50-100x what it costs on bare metal, and the figure that decides
// whether a benchmark there says anything is printed first (bench/prover/fault_probe.cpp).
//  * rapidsnark's process: its `prover` command line, one proof per fresh process (RAPIDSNARK_PROVER=path;
//    skipped when unset), timed from outside with /usr/bin/time (wall, user+system CPU, peak RSS, faults);
//  * rapidsnark in its own process: bench/prover/rapidsnark_inprocess.cpp, linked against the same build's
//    library (librapidsnark.a beside the command line, prover.h in RAPIDSNARK_SRC, default ../../src from
//    it): one prover object, `proofs` proofs, first and warm (the median of the rest) timed inside;
//  * our one-shot process: native/tools/bench_prove.cpp (compiled here from the addon's sources) loading
//    the key, readying it (working memory pre-faulted) and proving once, timed from outside like rapidsnark's;
//  * our proof in process: the same driver proving `proofs` times: first and warm, faults per proof;
//  * our daemon's Prove (policy_tx_2_2 only: the circuits `npm run build` installs): `pool-proxy prover` per
//    path, started once, two wtns requests per round, latency at the client;
//  * through Node: `bench/prover/measure.ts native` (loadProver + prove, self-check included), one process
//    per path after the rounds.
// Paths: AVX-512 IFMA when the CPU has it, and the AVX2-only scalar path (ZKPROVER_NO_AVX512=1). Circuits:
// policy_tx_2_2 (the product key) and `fullsize` (30k constraints, every witness value full-size). Every
// proof is checked: rapidsnark's with snarkjs, ours by the driver's pairing check or the daemon's.
// Usage: RAPIDSNARK_PROVER=/path/rapidsnark/build_prover/src/prover npx tsx bench/prover/rapidsnark.ts [rounds=7] [proofs=5]
//        [circuits=policy_tx_2_2,fullsize]
// How to build rapidsnark for this comparison: bench/prover/README.md.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync, statSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { circuitArtifacts } from '../../src/circuit/index.ts';
import { ProverClient } from '../../src/prover/client.ts';
import { devSetup, exportVerificationKey, releaseVerifier } from '../../src/prover/index.ts';
import { policyWitness } from './inputs.ts';
import { ROOT, compileCircuit, witness } from '../../test/prover/helpers.ts';
import { type Daemon, startDaemon, waitServing } from './daemon-process.ts';
import {
  buildDriver,
  buildIfStale,
  envFor,
  faultProbe,
  lastJson,
  median,
  simdPaths as paths,
  timedProcess,
} from './tools.ts';

const ROUNDS = Number(process.argv[2] ?? 7);
const PROOFS = Math.max(2, Number(process.argv[3] ?? 5));
const ONLY = process.argv[4]?.split(','); // circuits to run (default: all)
const RAPIDSNARK = process.env.RAPIDSNARK_PROVER;
const OUT = path.join(ROOT, 'bench', 'out', 'prover-rapidsnark');
await mkdir(OUT, { recursive: true });
if (RAPIDSNARK && !existsSync(RAPIDSNARK)) throw new Error(`RAPIDSNARK_PROVER=${RAPIDSNARK} does not exist`);

const ms = (x: number) => (Number.isNaN(x) ? '—' : `${x.toFixed(0)} ms`);
const ratio = (a: number, b: number) => (Number.isNaN(a / b) ? '—' : `${(a / b).toFixed(2)}×`);
const loadavg = () => os.loadavg().map((x) => x.toFixed(2));

// --- native helpers, rebuilt when a source is newer than the binary -------------------------------------
const DRIVER = buildDriver(path.join(OUT, 'bench_prove'));
const probe = faultProbe(OUT);
// rapidsnark's library, when the build beside its command line has it.
let RAPID_LIB: string | undefined;
if (RAPIDSNARK) {
  const libDir = path.dirname(RAPIDSNARK);
  const srcRapid = process.env.RAPIDSNARK_SRC ?? path.resolve(libDir, '..', '..', 'src');
  const source = path.join(ROOT, 'bench', 'prover', 'rapidsnark_inprocess.cpp');
  if (existsSync(path.join(libDir, 'librapidsnark.a')) && existsSync(path.join(srcRapid, 'prover.h'))) {
    RAPID_LIB = path.join(OUT, 'rapidsnark_inprocess');
    buildIfStale(
      RAPID_LIB,
      [source, path.join(libDir, 'librapidsnark.a')],
      [
        '-O3',
        '-std=c++17',
        `-I${srcRapid}`,
        source,
        `-L${libDir}`,
        '-lrapidsnark',
        '-lfr',
        '-lfq',
        '-lgmp',
        '-fopenmp',
        '-pthread',
      ],
    );
  } else {
    console.log(`no librapidsnark.a / prover.h beside ${RAPIDSNARK}: rapidsnark in process is skipped`);
  }
}

const probeBefore = probe();
console.log(
  `page-fault cost: ${probeBefore.usPerFault.toFixed(1)} µs wall, ${probeBefore.cpuUsPerFault.toFixed(1)} µs CPU per 4 KiB minor fault (64 MiB touched: ${ms(probeBefore.pageMs)}; ` +
    `with huge pages ${probeBefore.hugePages.faults} faults, ${ms(probeBefore.hugePages.ms)}); load average ${loadavg().join(' ')}`,
);

// --- keys and witnesses ------------------------------------------------------------------------------

const policyZkey = circuitArtifacts('policy_tx_2_2').zkey;
if (!existsSync(policyZkey)) throw new Error(`${policyZkey} missing: run \`npm run build\` first`);
const fullsize = await compileCircuit('fullsize');
const fullsizeZkey = path.join(OUT, 'fullsize.zkey');
if (!existsSync(fullsizeZkey))
  await devSetup(fullsize.r1cs, fullsizeZkey, path.join(OUT, 'fullsize_vkey.json'));
const cases = [
  { name: 'policy_tx_2_2', zkey: policyZkey, wtns: path.join(OUT, 'policy_tx_2_2.wtns'), daemon: true },
  { name: 'fullsize', zkey: fullsizeZkey, wtns: path.join(OUT, 'fullsize.wtns'), daemon: false },
];
await writeFile(cases[0].wtns, await policyWitness());
await writeFile(cases[1].wtns, await witness(fullsize, { x: 3, c: 5 }));

interface DriverOut {
  path: string;
  prepared: string;
  loadMs: number;
  prepareMs: number;
  prove: number[];
  faults: number[];
  cpu: number[];
  verified: boolean;
  arena: { expectMb: number; highWaterMb: number; arenas: number };
  rssMb: { fileAfterLoad: number; anonAfterLoad: number; fileAfterProofs: number; anonAfterProofs: number };
}
interface InProcessOut {
  createMs: number;
  prove: number[];
  faults: number[];
  cpu: number[];
}

/** One engine's figures over the rounds. */
interface Series {
  processWall: number[];
  processCpu: number[];
  processPeak: number[];
  processFaults: number[];
  oneShotProve: number[];
  first: number[];
  warm: number[];
  firstFaults: number[];
  warmFaults: number[];
  firstCpu: number[];
  warmCpu: number[];
  daemon: number[];
  loadMs: number[];
  prepareMs: number[];
  arenaMb: number[];
  keyResidentMb: number[];
}
const empty = (): Series => ({
  processWall: [],
  processCpu: [],
  processPeak: [],
  processFaults: [],
  oneShotProve: [],
  first: [],
  warm: [],
  firstFaults: [],
  warmFaults: [],
  firstCpu: [],
  warmCpu: [],
  daemon: [],
  loadMs: [],
  prepareMs: [],
  arenaMb: [],
  keyResidentMb: [],
});
/** First proof and the median of the rest (wall, faults, process CPU), from one in-process run. */
function firstAndWarm(s: Series, run: { prove: number[]; faults: number[]; cpu: number[] }): void {
  s.first.push(run.prove[0]);
  s.warm.push(median(run.prove.slice(1)));
  s.firstFaults.push(run.faults[0]);
  s.warmFaults.push(median(run.faults.slice(1)));
  s.firstCpu.push(run.cpu[0]);
  s.warmCpu.push(median(run.cpu.slice(1)));
}

const rows: Record<string, unknown>[] = [];
const table: string[] = [];
const loadSeen: string[][] = [loadavg()];

for (const c of cases.filter((k) => !ONLY || ONLY.includes(k.name))) {
  const vkey = await exportVerificationKey(c.zkey);
  const keyFileMb = statSync(c.zkey).size / 2 ** 20;
  const checkRapid = async (proofFile: string, publicFile: string) => {
    const ok = await snarkjs.groth16.verify(
      vkey,
      JSON.parse(readFileSync(publicFile, 'utf8')),
      JSON.parse(readFileSync(proofFile, 'utf8')),
    );
    if (!ok) throw new Error(`rapidsnark's proof for ${c.name} does not verify`);
  };
  // First load of the key: no prepared file yet, so it is validated in full and one is written (once per
  // circuit: both SIMD paths share the file). Every later load below reuses it.
  await rm(`${c.zkey}.prep`, { force: true });
  const first = lastJson<DriverOut>(timedProcess(DRIVER, [c.zkey, c.wtns, '0'], envFor(paths[0])).stdout);
  if (first.prepared !== 'written') throw new Error(`first load of ${c.name}: prepared ${first.prepared}`);

  const rapid = empty();
  const ours: Record<string, Series> = Object.fromEntries(paths.map((p) => [p, empty()]));
  const driverPath: Record<string, string> = {};
  const daemons: Record<string, { daemon: Daemon; client: ProverClient }> = {};
  const wtnsBytes = new Uint8Array(readFileSync(c.wtns));
  if (c.daemon)
    for (const p of paths) {
      const daemon = await startDaemon('native', undefined, envFor(p));
      const client = await ProverClient.connect({ addresses: daemon.address, deadlineMs: 600_000 });
      await waitServing(client);
      daemons[p] = { daemon, client };
    }
  try {
    for (let round = 0; round < ROUNDS + 1; round++) {
      const warmUp = round === 0; // the first round only warms the page cache and the daemons
      if (RAPIDSNARK) {
        const proofFile = path.join(OUT, `${c.name}_rapidsnark_proof.json`);
        const publicFile = path.join(OUT, `${c.name}_rapidsnark_public.json`);
        const r = timedProcess(RAPIDSNARK, [c.zkey, c.wtns, proofFile, publicFile], process.env);
        if (round === 0 || round === ROUNDS) await checkRapid(proofFile, publicFile);
        if (!warmUp) {
          rapid.processWall.push(r.wallMs);
          rapid.processCpu.push(r.cpuMs);
          rapid.processPeak.push(r.peakMb);
          rapid.processFaults.push(r.faults);
        }
        if (RAPID_LIB) {
          const lib = timedProcess(
            RAPID_LIB,
            [c.zkey, c.wtns, String(PROOFS), proofFile, publicFile],
            process.env,
          );
          if (round === 0 || round === ROUNDS) await checkRapid(proofFile, publicFile);
          const out = lastJson<InProcessOut>(lib.stdout);
          if (!warmUp) firstAndWarm(rapid, out);
        }
      }
      for (const p of paths) {
        const s = ours[p];
        const oneShot = timedProcess(DRIVER, [c.zkey, c.wtns, '1'], envFor(p));
        const one = lastJson<DriverOut>(oneShot.stdout);
        const many = lastJson<DriverOut>(
          timedProcess(DRIVER, [c.zkey, c.wtns, String(PROOFS)], envFor(p)).stdout,
        );
        for (const out of [one, many]) {
          if (!out.verified) throw new Error(`our proof for ${c.name} does not verify`);
          if (out.prepared !== 'reused') throw new Error(`${c.name}: the prepared key was not reused`);
        }
        driverPath[p] = one.path;
        const daemon = daemons[p];
        const latencies: number[] = [];
        if (daemon)
          for (let i = 0; i < 2; i++) {
            const t = performance.now();
            await daemon.client.prove(c.name, { wtns: wtnsBytes });
            latencies.push(performance.now() - t);
          }
        if (warmUp) continue;
        s.processWall.push(oneShot.wallMs);
        s.processCpu.push(oneShot.cpuMs);
        s.processPeak.push(oneShot.peakMb);
        s.processFaults.push(oneShot.faults);
        s.oneShotProve.push(one.prove[0]);
        s.loadMs.push(one.loadMs);
        s.prepareMs.push(one.prepareMs);
        s.keyResidentMb.push(one.rssMb.fileAfterProofs - one.rssMb.fileAfterLoad);
        s.arenaMb.push(many.arena.highWaterMb);
        firstAndWarm(s, many);
        s.daemon.push(...latencies);
      }
      loadSeen.push(loadavg());
    }
  } finally {
    for (const { daemon, client } of Object.values(daemons)) {
      client.close();
      await daemon.stop();
    }
  }
  // Through Node: the product API, one process per path.
  const node: Record<
    string,
    {
      first: { ms: number; faults: number };
      times: number[];
      faults: number[];
      peakMb: number;
      loadMs: number;
      workingMemory: number;
    }
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
    node[p] = lastJson(out);
  }

  const rw = median(rapid.processWall);
  const rapidWarm = median(rapid.warm);
  if (RAPIDSNARK)
    console.log(
      `${c.name} rapidsnark: process ${ms(rw)} wall, ${ms(median(rapid.processCpu))} CPU, peak ${median(rapid.processPeak).toFixed(0)} MB, ` +
        `${median(rapid.processFaults).toFixed(0)} minor faults` +
        (RAPID_LIB
          ? `; in its own process: first proof ${ms(median(rapid.first))} (${median(rapid.firstFaults).toFixed(0)} faults), ` +
            `warm ${ms(rapidWarm)} (${median(rapid.warmFaults).toFixed(0)} faults)`
          : ''),
    );
  for (const p of paths) {
    const s = ours[p];
    const warm = median(s.warm);
    const row = {
      circuit: c.name,
      path: p,
      driverPath: driverPath[p],
      keyFileMb,
      firstLoadMs: first.loadMs,
      rapidsnark: {
        processWallMs: rw,
        processCpuMs: median(rapid.processCpu),
        processPeakMb: median(rapid.processPeak),
        processFaults: median(rapid.processFaults),
        firstMs: median(rapid.first),
        warmMs: rapidWarm,
        firstFaults: median(rapid.firstFaults),
        warmFaults: median(rapid.warmFaults),
        warmCpuMs: median(rapid.warmCpu),
      },
      ours: {
        processWallMs: median(s.processWall),
        processCpuMs: median(s.processCpu),
        processPeakMb: median(s.processPeak),
        processFaults: median(s.processFaults),
        oneShotProveMs: median(s.oneShotProve),
        loadMs: median(s.loadMs),
        prepareMs: median(s.prepareMs),
        arenaMb: median(s.arenaMb),
        keyResidentMb: median(s.keyResidentMb),
        firstMs: median(s.first),
        warmMs: warm,
        firstFaults: median(s.firstFaults),
        warmFaults: median(s.warmFaults),
        warmCpuMs: median(s.warmCpu),
        daemonMs: median(s.daemon),
        nodeFirstMs: node[p].first.ms,
        nodeWarmMs: median(node[p].times),
        nodeWarmFaults: median(node[p].faults),
        nodeLoadMs: node[p].loadMs,
        nodePeakMb: node[p].peakMb,
      },
      ratios: {
        processToProcess: rw / median(s.processWall),
        processToDaemon: rw / median(s.daemon),
        processToWarm: rw / warm,
        processToWarmCpu: median(rapid.processCpu) / median(s.warmCpu),
        warmToWarm: rapidWarm / warm,
        warmToWarmCpu: median(rapid.warmCpu) / median(s.warmCpu),
        oursFirstOverWarm: median(s.first) / warm,
        rapidFirstOverWarm: median(rapid.first) / rapidWarm,
        daemonOverWarm: median(s.daemon) / warm,
      },
      raw: { rapidsnark: rapid, ours: s, node: node[p] },
    };
    rows.push(row);
    const o = row.ours;
    console.log(
      `${c.name} ours [${p} -> ${driverPath[p]}]: one-shot process ${ms(o.processWallMs)} wall, ${ms(o.processCpuMs)} CPU, ` +
        `${o.processFaults.toFixed(0)} faults (load ${o.loadMs.toFixed(2)} ms + ready ${ms(o.prepareMs)}, working memory ${o.arenaMb.toFixed(1)} MiB); ` +
        `in process: first ${ms(o.firstMs)} (${o.firstFaults.toFixed(0)} faults), warm ${ms(o.warmMs)} (${o.warmFaults.toFixed(0)} faults); ` +
        `daemon Prove ${ms(o.daemonMs)}; through Node first ${ms(o.nodeFirstMs)}, warm ${ms(o.nodeWarmMs)} (${o.nodeWarmFaults.toFixed(0)} faults)`,
    );
    const r = row.ratios;
    table.push(
      `| ${c.name} | ${p} | ${ms(rw)} (${row.rapidsnark.processFaults.toFixed(0)}) | ${ms(row.rapidsnark.firstMs)} / ${ms(rapidWarm)} (${row.rapidsnark.warmFaults.toFixed(0)}) | ` +
        `${ms(o.processWallMs)} (${o.processFaults.toFixed(0)}) | ${ms(o.firstMs)} / ${ms(warm)} (${o.firstFaults.toFixed(0)} / ${o.warmFaults.toFixed(0)}) | ` +
        `${ms(o.daemonMs)} | ${ratio(rw, o.processWallMs)} | ${ratio(rw, o.daemonMs)} | **${ratio(rw, warm)}** / ${ratio(row.rapidsnark.processCpuMs, o.warmCpuMs)} | ` +
        `${ratio(rapidWarm, warm)} / ${ratio(row.rapidsnark.warmCpuMs, o.warmCpuMs)} | ` +
        `${r.oursFirstOverWarm.toFixed(2)} / ${r.rapidFirstOverWarm.toFixed(2)} | ${Number.isNaN(r.daemonOverWarm) ? '—' : r.daemonOverWarm.toFixed(2)} |`,
    );
  }
}
await releaseVerifier();

const probeAfter = probe();
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
  loadavg: loadSeen,
  faultProbe: { before: probeBefore, after: probeAfter },
  node: process.version,
};
console.log(
  `\npage-fault cost (wall / CPU per minor fault): ${probeBefore.usPerFault.toFixed(1)} / ${probeBefore.cpuUsPerFault.toFixed(1)} µs before the rounds, ` +
    `${probeAfter.usPerFault.toFixed(1)} / ${probeAfter.cpuUsPerFault.toFixed(1)} µs after; ` +
    `load average (1/5/15 min) from ${loadSeen[0].join(' ')} to ${loadSeen[loadSeen.length - 1].join(' ')}`,
);
console.log(
  '\n| circuit | path | rapidsnark process (faults) | rapidsnark in process: first / warm (faults) | our one-shot process (faults) | ' +
    'ours in process: first / warm (faults first / warm) | our daemon Prove | rapidsnark process ÷ our process | ÷ our daemon Prove | ' +
    '÷ our warm proof (wall / CPU) | rapidsnark warm ÷ our warm (wall / CPU) | first ÷ warm, ours / rapidsnark | daemon ÷ our warm |\n' +
    '| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |',
);
for (const line of table) console.log(line);
console.log(`machine: ${JSON.stringify({ ...machine, loadavg: undefined, faultProbe: undefined })}`);
await writeFile(
  path.join(OUT, 'results.json'),
  `${JSON.stringify({ machine, rounds: ROUNDS, proofs: PROOFS, rows }, null, 1)}\n`,
);
