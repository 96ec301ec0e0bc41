// Native prover vs snarkjs, side by side in one run on the same zkey and witness:
//  * policy_tx_2_2 (the product circuit) and `fullsize` (30,000 constraints, every witness value a
//    full-size field element): 1 warm-up + RUNS proofs per engine, each engine in a fresh process so
//    its peak memory over the loaded key can be attributed; medians and ratios;
//  * devSetup of policy_tx_2_2, and devSetup vs a complete snarkjs ceremony for chain1000 (2^10 domain;
//    snarkjs needs ~30 minutes for a 2^15 ceremony on this machine, so the comparison uses a smaller one).
// Usage: npx tsx bench/prover/run.ts [runs=5]
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import os from 'node:os';
import path from 'node:path';
import * as snarkjs from 'snarkjs';
import { getCurveFromName } from 'ffjavascript';
import { circuitArtifacts } from '../../src/circuit/index.ts';
import { devSetup } from '../../src/prover/index.ts';
import { policyWitness } from './inputs.ts';
import { ROOT, compileCircuit, witness } from '../../test/prover/helpers.ts';

const RUNS = Number(process.argv[2] ?? 5);
const OUT = path.join(ROOT, 'bench', 'out', 'prover');
await mkdir(OUT, { recursive: true });

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
const fmt = (ms: number) => `${ms.toFixed(0)} ms`;

async function timed<T>(fn: () => Promise<T>): Promise<[T, number]> {
  const t0 = performance.now();
  const r = await fn();
  return [r, performance.now() - t0];
}

interface Measurement {
  engine: string;
  times: number[];
  cpu: number[];
  baselineMb: number;
  peakMb: number;
}

function measure(engine: string, zkey: string, wtns: string): Measurement {
  const out = execFileSync(
    process.execPath,
    ['--import=tsx', path.join(ROOT, 'bench', 'prover', 'measure.ts'), engine, zkey, wtns, String(RUNS)],
    { cwd: ROOT, encoding: 'utf8', maxBuffer: 1 << 24 },
  );
  return JSON.parse(out.trim().split('\n').pop() as string) as Measurement;
}

const results: Record<string, unknown> = {
  machine: {
    cpu: os.cpus()[0]?.model,
    cores: os.cpus().length,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    loadavgAtStart: os.loadavg().map((x) => x.toFixed(2)),
    node: process.version,
  },
};

// --- development setup of policy_tx_2_2 -----------------------------------------------------------
const policy = circuitArtifacts('policy_tx_2_2');
const policyZkey = path.join(OUT, 'policy_tx_2_2.zkey');
const [, policySetupMs] = await timed(() =>
  devSetup(policy.r1cs, policyZkey, path.join(OUT, 'policy_vkey.json')),
);
console.log(`devSetup policy_tx_2_2: ${fmt(policySetupMs)}`);
results.devSetupPolicyMs = policySetupMs;

// --- proofs: policy_tx_2_2 and the full-size-witness circuit ----------------------------------------
const fullsize = await compileCircuit('fullsize');
const fullsizeZkey = path.join(OUT, 'fullsize.zkey');
await devSetup(fullsize.r1cs, fullsizeZkey, path.join(OUT, 'fullsize_vkey.json'));
const cases = [
  { name: 'policy_tx_2_2', zkey: policyZkey, wtns: await policyWitness() },
  {
    name: 'fullsize (30k constraints, full-size witness)',
    zkey: fullsizeZkey,
    wtns: await witness(fullsize, { x: 3, c: 5 }),
  },
];
const proofResults: unknown[] = [];
for (const c of cases) {
  const wtnsPath = path.join(OUT, `${c.name.split(' ')[0]}.wtns`);
  await writeFile(wtnsPath, c.wtns);
  const snark = measure('snarkjs', c.zkey, wtnsPath);
  const native = measure('native', c.zkey, wtnsPath);
  const row = {
    circuit: c.name,
    snarkjsMedianMs: median(snark.times),
    nativeMedianMs: median(native.times),
    ratio: median(snark.times) / median(native.times),
    snarkjsCpuMedianMs: median(snark.cpu),
    nativeCpuMedianMs: median(native.cpu),
    cpuRatio: median(snark.cpu) / median(native.cpu),
    snarkjsPeakOverKeyMb: snark.peakMb - snark.baselineMb,
    nativePeakOverKeyMb: native.peakMb - native.baselineMb,
    snarkjsPeakMb: snark.peakMb,
    nativePeakMb: native.peakMb,
    snarkjsTimes: snark.times,
    nativeTimes: native.times,
  };
  proofResults.push(row);
  console.log(
    `${c.name}: snarkjs ${fmt(row.snarkjsMedianMs)} | native ${fmt(row.nativeMedianMs)} (incl. its self-check) | ` +
      `ratio ${row.ratio.toFixed(1)}x | ` +
      `CPU time ${fmt(row.snarkjsCpuMedianMs)} vs ${fmt(row.nativeCpuMedianMs)} (${row.cpuRatio.toFixed(1)}x) | ` +
      `peak over key: snarkjs ${row.snarkjsPeakOverKeyMb.toFixed(0)} MB, native ${row.nativePeakOverKeyMb.toFixed(0)} MB`,
  );
}
results.proofs = proofResults;

// --- devSetup vs snarkjs ceremony on the same (smaller) circuit --------------------------------------
// (BENCH_SKIP_CEREMONY=1 skips this part: the ceremony alone takes minutes on the shared machine.)
if (!process.env.BENCH_SKIP_CEREMONY) {
  const chain = await compileCircuit('chain1000');
  const cdir = path.join(OUT, 'ceremony');
  await rm(cdir, { recursive: true, force: true });
  await mkdir(cdir, { recursive: true });
  const [, devMs] = await timed(() =>
    devSetup(chain.r1cs, path.join(cdir, 'dev.zkey'), path.join(cdir, 'dev_vkey.json')),
  );
  const curve = await getCurveFromName('bn128');
  const f = (n: string) => path.join(cdir, n);
  const [, ceremonyMs] = await timed(async () => {
    await snarkjs.powersOfTau.newAccumulator(curve, 11, f('pot0.ptau'));
    await snarkjs.powersOfTau.contribute(f('pot0.ptau'), f('pot1.ptau'), 'bench', 'bench entropy');
    await snarkjs.powersOfTau.preparePhase2(f('pot1.ptau'), f('potf.ptau'));
    await snarkjs.zKey.newZKey(chain.r1cs, f('potf.ptau'), f('z0.zkey'));
    await snarkjs.zKey.contribute(f('z0.zkey'), f('z1.zkey'), 'bench', 'bench entropy 2');
    await snarkjs.zKey.beacon(f('z1.zkey'), f('zf.zkey'), 'beacon', '0102030405060708090a0b0c0d0e0f', 10);
  });
  await curve.terminate();
  results.ceremony = {
    circuit: 'chain1000 (2^10 domain, ptau 2^11)',
    devSetupMs: devMs,
    snarkjsCeremonyMs: ceremonyMs,
    ratio: ceremonyMs / devMs,
  };
  console.log(
    `chain1000: devSetup ${fmt(devMs)} vs snarkjs ceremony ${fmt(ceremonyMs)} (${(ceremonyMs / devMs).toFixed(0)}x)`,
  );
}

results.loadavgAtEnd = os.loadavg().map((x) => x.toFixed(2));
await writeFile(path.join(OUT, 'results.json'), `${JSON.stringify(results, null, 1)}\n`);
console.log(`machine: ${JSON.stringify(results.machine)}; load at end ${results.loadavgAtEnd}`);
if (!existsSync(policy.r1cs)) console.log('note: policy_tx_2_2 r1cs missing; run `npm run build` first');
