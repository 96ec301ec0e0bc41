// Our prover at this checkout against our prover at an earlier commit, with rapidsnark's process beside both
// as the common yardstick: "is it no worse than before on this host?" answered side by side in one
// interleaved run, not against figures recorded on another machine. policy_tx_2_2, every SIMD path this CPU
// has. Each commit's `native/tools/bench_prove.cpp` driver is compiled from that commit's `native/src` with
// the same flags (into bench/out/versus-commit/<commit>/), and each gets its own copy of the key, so the
// prepared files (`<zkey>.prep`) of the two builds never meet. Per round and path: rapidsnark's process,
// then each build's one-shot process (load + prove once, timed from outside) and `proofs` proofs in one
// process (first and warm, the median of the rest, timed inside). Faults are counted by /usr/bin/time for
// the processes; the host's page-fault cost is printed first (bench/prover/fault_probe.cpp).
// Usage: RAPIDSNARK_PROVER=/path/to/prover npx tsx bench/prover/versus-commit.ts <commit> [rounds=7] [proofs=5]
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { circuitArtifacts } from '../../src/circuit/index.ts';
import { addon } from '../../src/prover/native-addon.ts';
import { ROOT } from '../../test/prover/helpers.ts';
import { policyWitness } from './inputs.ts';

const [commitArg, roundsArg, proofsArg] = process.argv.slice(2);
if (!commitArg) throw new Error('usage: versus-commit.ts <commit> [rounds=7] [proofs=5]');
const ROUNDS = Number(roundsArg ?? 7);
const PROOFS = Math.max(2, Number(proofsArg ?? 5));
const RAPIDSNARK = process.env.RAPIDSNARK_PROVER;
if (!RAPIDSNARK || !existsSync(RAPIDSNARK)) throw new Error('set RAPIDSNARK_PROVER (bench/prover/README.md)');
const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const commits = { before: git('rev-parse', '--short', commitArg), now: git('rev-parse', '--short', 'HEAD') };
const OUT = path.join(ROOT, 'bench', 'out', 'versus-commit');

/** The driver of one build: this checkout's sources (`now`) or those of an earlier commit. */
function buildDriver(label: string, commit: string | undefined): string {
  const dir = path.join(OUT, label);
  mkdirSync(dir, { recursive: true });
  let tree = ROOT;
  if (commit !== undefined) {
    tree = path.join(dir, 'tree');
    mkdirSync(tree, { recursive: true });
    const archive = spawnSync('git', ['archive', commit, 'native'], { cwd: ROOT, maxBuffer: 1 << 28 });
    if (archive.status !== 0) throw new Error(`git archive ${commit} failed`);
    execFileSync('tar', ['-x', '-C', tree], { input: archive.stdout });
  }
  const src = path.join(tree, 'native', 'src');
  const units = readdirSync(src)
    .filter((f) => f.endsWith('.cpp') && f !== 'addon.cpp' && f !== 'test_ops.cpp')
    .map((f) => path.join(src, f));
  const driver = path.join(dir, 'bench_prove');
  const tool = path.join(tree, 'native', 'tools', 'bench_prove.cpp');
  console.log(`building ${label} (${commit ?? 'this checkout'}) ...`);
  execFileSync('g++', ['-O3', '-std=c++17', '-pthread', `-I${src}`, tool, ...units, '-o', driver], {
    stdio: 'inherit',
  });
  return driver;
}

const zkey = circuitArtifacts('policy_tx_2_2').zkey;
if (!existsSync(zkey)) throw new Error(`${zkey} missing: run \`npm run build\` first`);
mkdirSync(OUT, { recursive: true });
const wtns = path.join(OUT, 'policy_tx_2_2.wtns');
writeFileSync(wtns, await policyWitness());
const builds = (['before', 'now'] as const).map((label) => {
  const driver = buildDriver(label, label === 'before' ? commits.before : undefined);
  const key = path.join(OUT, label, 'policy_tx_2_2.zkey');
  copyFileSync(zkey, key); // a fresh copy: the build's own prepared file is written on its first load
  return { label, commit: commits[label], driver, key };
});

function timed(cmd: string, args: string[], env: NodeJS.ProcessEnv) {
  const r = spawnSync('/usr/bin/time', ['-f', 'TIME %e %R', cmd, ...args], { env, encoding: 'utf8' });
  const line = r.stderr.split('\n').find((l) => l.startsWith('TIME '));
  if (r.status !== 0 || !line) throw new Error(`${cmd} failed (${r.status}): ${r.stderr.slice(-2000)}`);
  const [, wall, faults] = line.split(' ').map(Number);
  return { wallMs: wall * 1000, faults, stdout: r.stdout };
}
const proofsOf = (stdout: string) => {
  const out = JSON.parse(stdout.trim().split('\n').pop() as string) as { prove: number[]; verified: boolean };
  if (!out.verified) throw new Error('a proof does not verify');
  return out.prove;
};
const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const paths = addon.testOps.avx512 ? ['avx512-ifma', 'avx2-only'] : ['avx2-only'];
const envFor = (p: string): NodeJS.ProcessEnv => {
  const env = { ...process.env };
  delete env.ZKPROVER_NO_AVX512;
  return p === 'avx2-only' ? { ...env, ZKPROVER_NO_AVX512: '1' } : env;
};
const probe = () =>
  JSON.parse(
    execFileSync(path.join(ROOT, 'bench', 'out', 'fault_probe'), ['64', '5'], { encoding: 'utf8' }).trim(),
  ) as { usPerFault: number };
execFileSync('g++', [
  '-O2',
  path.join(ROOT, 'bench', 'prover', 'fault_probe.cpp'),
  '-o',
  path.join(ROOT, 'bench', 'out', 'fault_probe'),
]);
const faultBefore = probe().usPerFault;
console.log(
  `${os.cpus()[0]?.model}, ${os.cpus().length} CPUs; page fault ${faultBefore.toFixed(1)} µs; load ${os.loadavg()[0].toFixed(2)}; ` +
    `${commits.before} (before) vs ${commits.now} (now); ${ROUNDS} rounds, ${PROOFS} proofs in process`,
);

type Series = { process: number[]; faults: number[]; first: number[]; warm: number[] };
const series = () => ({ process: [], faults: [], first: [], warm: [] }) as Series;
const rapid: Record<string, Series> = Object.fromEntries(paths.map((p) => [p, series()]));
const ours: Record<string, Record<string, Series>> = Object.fromEntries(
  paths.map((p) => [p, { before: series(), now: series() }]),
);
for (const b of builds) timed(b.driver, [b.key, wtns, '1'], envFor(paths[0])); // writes each prepared file
for (let round = 0; round <= ROUNDS; round++) {
  for (const p of paths) {
    const proofFile = path.join(OUT, 'rapidsnark_proof.json');
    const r = timed(RAPIDSNARK, [zkey, wtns, proofFile, path.join(OUT, 'rapidsnark_public.json')], envFor(p));
    // alternate which build goes first, so neither always follows rapidsnark
    const order = round % 2 ? [...builds].reverse() : builds;
    const runs = order.map((b) => ({
      b,
      one: timed(b.driver, [b.key, wtns, '1'], envFor(p)),
      many: proofsOf(timed(b.driver, [b.key, wtns, String(PROOFS)], envFor(p)).stdout),
    }));
    if (round === 0) continue; // warms the page cache
    rapid[p].process.push(r.wallMs);
    rapid[p].faults.push(r.faults);
    for (const { b, one, many } of runs) {
      proofsOf(one.stdout);
      const s = ours[p][b.label];
      s.process.push(one.wallMs);
      s.faults.push(one.faults);
      s.first.push(many[0]);
      s.warm.push(median(many.slice(1)));
    }
  }
}
const ms = (x: number) => `${x.toFixed(0)} ms`;
console.log(
  `page fault after the rounds ${probe().usPerFault.toFixed(1)} µs; load ${os.loadavg()[0].toFixed(2)}\n\n` +
    '| path | rapidsnark process (faults) | build | our one-shot process (faults) | ours in process: first / warm | rapidsnark process ÷ our process | ÷ our warm proof | first ÷ warm |\n' +
    '| --- | --- | --- | --- | --- | --- | --- | --- |',
);
for (const p of paths) {
  const rw = median(rapid[p].process);
  for (const b of builds) {
    const s = ours[p][b.label];
    const warm = median(s.warm);
    console.log(
      `| ${p} | ${ms(rw)} (${median(rapid[p].faults).toFixed(0)}) | ${b.label}, ${b.commit} | ${ms(median(s.process))} (${median(s.faults).toFixed(0)}) | ` +
        `${ms(median(s.first))} / ${ms(warm)} | ${(rw / median(s.process)).toFixed(2)}× | ${(rw / warm).toFixed(2)}× | ${(median(s.first) / warm).toFixed(2)} |`,
    );
  }
}
