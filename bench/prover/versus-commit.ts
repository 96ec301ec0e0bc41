// Our prover at this checkout against our prover at an earlier commit, with rapidsnark's process beside both
// as the common yardstick: "is it no worse than before on this host?" answered side by side in one
// interleaved run, not against figures recorded on another machine. policy_tx_2_2, every SIMD path this CPU
// has. Each commit's `native/tools/bench_prove.cpp` driver is compiled from that commit's `native/src` with
// the same flags (into bench/out/versus-commit/<commit>/), and each gets its own copy of the key there, so the
// prepared files (`<zkey>.prep`) of the two builds never meet. Per round and path: rapidsnark's process,
// then each build's one-shot process (load + prove once, timed from outside) and `proofs` proofs in one
// process (first and warm, the median of the rest, timed inside). Faults are counted by /usr/bin/time for
// the processes; the host's page-fault cost is printed first (bench/prover/fault_probe.cpp).
// Usage: RAPIDSNARK_PROVER=/path/to/prover npx tsx bench/prover/versus-commit.ts <commit> [rounds=7] [proofs=5]
import { execFileSync, spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { circuitArtifacts } from '../../src/circuit/index.ts';
import { exportVerificationKey, releaseVerifier } from '../../src/prover/index.ts';
import { ROOT } from '../../test/prover/helpers.ts';
import { policyWitness } from './inputs.ts';
import {
  buildDriver,
  envFor,
  faultProbe,
  lastJson,
  median,
  simdPaths as paths,
  timedProcess,
} from './tools.ts';

const [commitArg, roundsArg, proofsArg] = process.argv.slice(2);
if (!commitArg) throw new Error('usage: versus-commit.ts <commit> [rounds=7] [proofs=5]');
const ROUNDS = Number(roundsArg ?? 7);
const PROOFS = Math.max(2, Number(proofsArg ?? 5));
const RAPIDSNARK = process.env.RAPIDSNARK_PROVER;
if (!RAPIDSNARK || !existsSync(RAPIDSNARK)) throw new Error('set RAPIDSNARK_PROVER (bench/prover/README.md)');
const git = (...args: string[]) => execFileSync('git', args, { cwd: ROOT, encoding: 'utf8' }).trim();
const commits = { before: git('rev-parse', '--short', commitArg), now: git('rev-parse', '--short', 'HEAD') };
const OUT = path.join(ROOT, 'bench', 'out', 'versus-commit');

/** The driver of one build: this checkout's sources (`now`) or those of an earlier commit, extracted. */
function driverOf(commit: string | undefined): string {
  // one folder per commit: an extracted tree keeps the commit's file times, so a binary built from another
  // commit in the same folder would look up to date
  const dir = path.join(OUT, commit ?? 'this-checkout');
  mkdirSync(dir, { recursive: true });
  if (commit === undefined) return buildDriver(path.join(dir, 'bench_prove'));
  const tree = path.join(dir, 'tree');
  mkdirSync(tree, { recursive: true });
  const archive = spawnSync('git', ['archive', commit, 'native'], { cwd: ROOT, maxBuffer: 1 << 28 });
  if (archive.status !== 0) throw new Error(`git archive ${commit} failed`);
  execFileSync('tar', ['-x', '-C', tree], { input: archive.stdout });
  return buildDriver(path.join(dir, 'bench_prove'), tree);
}

const zkey = circuitArtifacts('policy_tx_2_2').zkey;
if (!existsSync(zkey)) throw new Error(`${zkey} missing: run \`npm run build\` first`);
mkdirSync(OUT, { recursive: true });
const wtns = path.join(OUT, 'policy_tx_2_2.wtns');
writeFileSync(wtns, await policyWitness());
const builds = (['before', 'now'] as const).map((label) => {
  const driver = driverOf(label === 'before' ? commits.before : undefined);
  const key = path.join(path.dirname(driver), 'policy_tx_2_2.zkey');
  copyFileSync(zkey, key); // a fresh copy: the build's own prepared file is written on its first load
  return { label, commit: commits[label], driver, key };
});

const proofsOf = (stdout: string) => {
  const out = lastJson<{ prove: number[]; verified: boolean }>(stdout);
  if (!out.verified) throw new Error('a proof does not verify');
  return out.prove;
};
const probe = faultProbe(OUT);
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
for (const b of builds) timedProcess(b.driver, [b.key, wtns, '1'], envFor(paths[0])); // writes each prepared file
for (let round = 0; round <= ROUNDS; round++) {
  for (const p of paths) {
    const proofFile = path.join(OUT, 'rapidsnark_proof.json');
    const r = timedProcess(
      RAPIDSNARK,
      [zkey, wtns, proofFile, path.join(OUT, 'rapidsnark_public.json')],
      envFor(p),
    );
    // alternate which build goes first, so neither always follows rapidsnark
    const order = round % 2 ? [...builds].reverse() : builds;
    const runs = order.map((b) => ({
      b,
      one: timedProcess(b.driver, [b.key, wtns, '1'], envFor(p)),
      many: proofsOf(timedProcess(b.driver, [b.key, wtns, String(PROOFS)], envFor(p)).stdout),
    }));
    if (round === 0) {
      // the yardstick's proof is checked once (snarkjs), then the round only warmed the page cache
      const ok = await snarkjs.groth16.verify(
        await exportVerificationKey(zkey),
        JSON.parse(readFileSync(path.join(OUT, 'rapidsnark_public.json'), 'utf8')),
        JSON.parse(readFileSync(proofFile, 'utf8')),
      );
      if (!ok) throw new Error("rapidsnark's proof does not verify");
      continue;
    }
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
await releaseVerifier();
