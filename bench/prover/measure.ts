// One engine, one circuit, in a fresh process (so peak memory is attributable): loads the key, takes
// the peak RSS as the baseline, warms up once, then times `runs` proofs.
// Usage: tsx bench/prover/measure.ts <native|native-raw|snarkjs> <zkey> <wtns> <runs>
import { readFile } from 'node:fs/promises';
import * as snarkjs from 'snarkjs';
import { loadProver, releaseVerifier } from '../../src/prover/index.ts';
import { addon } from '../../src/prover/native-addon.ts';

const [engine, zkeyPath, wtnsPath, runsArg] = process.argv.slice(2);
const runs = Number(runsArg);
const zkey = await readFile(zkeyPath);
const wtns = new Uint8Array(await readFile(wtnsPath));
const peakMb = () => process.resourceUsage().maxRSS / 1024;

let prove: () => Promise<unknown>;
if (engine === 'snarkjs') {
  prove = () => snarkjs.groth16.prove(zkey, wtns);
} else if (engine === 'native') {
  const prover = await loadProver(zkey);
  prove = () => prover.prove(wtns);
} else if (engine === 'native-raw') {
  // The addon alone: no proof self-check, so this isolates the native proving time.
  const key = await addon.loadKey(zkey);
  prove = () => addon.prove(key.handle, wtns);
} else {
  throw new Error(`unknown engine ${engine}`);
}
const baselineMb = peakMb();
await prove();
const times: number[] = [];
for (let i = 0; i < runs; i++) {
  const t0 = performance.now();
  await prove();
  times.push(performance.now() - t0);
}
const peak = peakMb();
await releaseVerifier();
const g = globalThis as { curve_bn128?: { terminate(): Promise<void> } | null };
if (g.curve_bn128) await g.curve_bn128.terminate();
process.stdout.write(`${JSON.stringify({ engine, times, baselineMb, peakMb: peak })}\n`);
