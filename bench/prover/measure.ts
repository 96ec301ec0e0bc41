// One engine, one circuit, in a fresh process (so peak memory is attributable): loads the key (native: from
// its path, mapped, timed), takes the peak RSS as the baseline, times the first proof, then `runs` more
// (warm); minor page faults are counted per proof.
// Usage: tsx bench/prover/measure.ts <native|snarkjs> <zkey> <wtns> <runs>
import { readFile } from 'node:fs/promises';
import * as snarkjs from 'snarkjs';
import { loadProver, releaseVerifier } from '../../src/prover/index.ts';

const [engine, zkeyPath, wtnsPath, runsArg] = process.argv.slice(2);
const runs = Number(runsArg);
const wtns = new Uint8Array(await readFile(wtnsPath));
const peakMb = () => process.resourceUsage().maxRSS / 1024;
const minorFaults = () => process.resourceUsage().minorPageFault;

let prove: () => Promise<unknown>;
let loadMs = NaN;
let prepared = '';
let workingMemory = 0;
if (engine === 'snarkjs') {
  const zkey = await readFile(zkeyPath);
  prove = () => snarkjs.groth16.prove(zkey, wtns);
} else if (engine === 'native') {
  const t0 = performance.now();
  const prover = await loadProver(zkeyPath);
  loadMs = performance.now() - t0;
  prepared = prover.prepared;
  workingMemory = prover.workingMemory;
  prove = () => prover.prove(wtns);
} else {
  throw new Error(`unknown engine ${engine}`);
}
const baselineMb = peakMb();
// Wall time, CPU time of the whole process (all threads; on a shared machine the steadier figure, since
// wall time also counts time spent waiting for a core) and minor page faults of one proof.
async function timed() {
  const c0 = process.cpuUsage();
  const f0 = minorFaults();
  const t0 = performance.now();
  await prove();
  const ms = performance.now() - t0;
  const c = process.cpuUsage(c0);
  return { ms, cpu: (c.user + c.system) / 1000, faults: minorFaults() - f0 };
}
const first = await timed();
const times: number[] = [];
const cpu: number[] = [];
const faults: number[] = [];
for (let i = 0; i < runs; i++) {
  const r = await timed();
  times.push(r.ms);
  cpu.push(r.cpu);
  faults.push(r.faults);
}
const peak = peakMb();
await releaseVerifier();
const g = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null };
if (g.curve_bn128) await g.curve_bn128.terminate();
process.stdout.write(
  `${JSON.stringify({ engine, loadMs, prepared, workingMemory, first, times, cpu, faults, baselineMb, peakMb: peak })}\n`,
);
