// One engine, one circuit, in a fresh process (so peak memory is attributable): loads the key (native: from
// its path, mapped, timed), takes the peak RSS as the baseline, warms up once, then times `runs` proofs.
// Usage: tsx bench/prover/measure.ts <native|snarkjs> <zkey> <wtns> <runs>
import { readFile } from 'node:fs/promises';
import * as snarkjs from 'snarkjs';
import { loadProver, releaseVerifier } from '../../src/prover/index.ts';

const [engine, zkeyPath, wtnsPath, runsArg] = process.argv.slice(2);
const runs = Number(runsArg);
const wtns = new Uint8Array(await readFile(wtnsPath));
const peakMb = () => process.resourceUsage().maxRSS / 1024;

let prove: () => Promise<unknown>;
let loadMs = NaN;
let prepared = '';
if (engine === 'snarkjs') {
  const zkey = await readFile(zkeyPath);
  prove = () => snarkjs.groth16.prove(zkey, wtns);
} else if (engine === 'native') {
  const t0 = performance.now();
  const prover = await loadProver(zkeyPath);
  loadMs = performance.now() - t0;
  prepared = prover.prepared;
  prove = () => prover.prove(wtns);
} else {
  throw new Error(`unknown engine ${engine}`);
}
const baselineMb = peakMb();
await prove();
// Wall time, and CPU time of the whole process (all threads): on a shared machine the CPU time is the
// steadier figure, since wall time also counts time spent waiting for a core.
const times: number[] = [];
const cpu: number[] = [];
for (let i = 0; i < runs; i++) {
  const c0 = process.cpuUsage();
  const t0 = performance.now();
  await prove();
  times.push(performance.now() - t0);
  const c = process.cpuUsage(c0);
  cpu.push((c.user + c.system) / 1000);
}
const peak = peakMb();
await releaseVerifier();
const g = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null };
if (g.curve_bn128) await g.curve_bn128.terminate();
process.stdout.write(
  `${JSON.stringify({ engine, loadMs, prepared, times, cpu, baselineMb, peakMb: peak })}\n`,
);
