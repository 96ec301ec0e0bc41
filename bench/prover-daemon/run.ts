// Prover daemon benchmark, one run, side by side:
//   1. the addon called directly (witness in-process + loadProver().prove), sequentially: the baseline;
//   2. for each engine, a daemon started as operators run it (`pool-proxy prover`, a child process) and the
//      typed client: proofs/s and p50/p99 latency at concurrency 1, 4, 16 (inputs_json requests);
//   3. the daemon's overhead over the addon: daemon latency at concurrency 1 minus the direct time, for the
//      same witness (wtns requests) and for inputs (witness computed by the daemon), on policy_tx_2_2 and
//      on a 66-constraint test circuit where the proof takes milliseconds and the fixed cost shows.
// Usage: npx tsx bench/prover-daemon/run.ts [--circuit policy_tx_2_2] [--engines native,snarkjs]
//        [--levels 1,4,16] [--requests N] [--snarkjs-requests N] [--direct N] [--small N]
import { spawn } from 'node:child_process';
import { cpus, totalmem } from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import {
  buildTransactionInputs,
  circuitArtifacts,
  DEFAULT_CIRCUITS_DIR,
  loadWitnessCalculator,
} from '../../src/circuit/index.ts';
import { loadProver, releaseVerifier } from '../../src/prover/index.ts';
import { ProverClient, type ProveResult } from '../../src/prover/client.ts';
import { Scenario } from '../../test/circuit/scenario.ts';
import { chainInputs, ensureTestCircuits } from '../../test/daemon/helpers/test-circuits.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const { values: args } = parseArgs({
  options: {
    circuit: { type: 'string', default: 'policy_tx_2_2' },
    engines: { type: 'string', default: 'native,snarkjs' },
    levels: { type: 'string', default: '1,4,16' },
    requests: { type: 'string', default: '32' },
    'snarkjs-requests': { type: 'string', default: '4' },
    direct: { type: 'string', default: '8' },
    small: { type: 'string', default: '50' },
  },
});
const circuit = args.circuit!;
const levels = args.levels!.split(',').map(Number);
const engines = args.engines!.split(',');

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const fmt = (ms: number) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);

/** Distinct valid policy transactions (deposits and transfers), as circuit inputs. */
function transactions(count: number): Record<string, unknown>[] {
  const alice = 11n;
  const bob = 22n;
  const s = new Scenario();
  s.allow(alice);
  s.allow(bob);
  const notes = [s.addNote(alice, 30n), s.addNote(alice, 12n)];
  return Array.from({ length: count }, (_, i) =>
    i % 2 === 0
      ? buildTransactionInputs(s.deposit(alice, BigInt(100 + i))).inputs
      : buildTransactionInputs(s.transaction(notes, [s.output(40n, bob), s.output(2n, alice)], 0n)).inputs,
  );
}

async function direct(
  circuitId: string,
  circuitsDir: string,
  inputs: Record<string, unknown>[],
  runs: number,
) {
  const artifacts = circuitArtifacts(circuitId, circuitsDir);
  const calculator = await loadWitnessCalculator(artifacts.wasm);
  const prover = await loadProver(artifacts.zkey);
  const witnessMs: number[] = [];
  const proveMs: number[] = [];
  const wtnsList: Uint8Array[] = [];
  await prover.prove(await calculator.calculateWtns(inputs[0] as never)); // warm-up
  for (let i = 0; i < runs; i++) {
    let t = performance.now();
    const wtns = await calculator.calculateWtns(inputs[i % inputs.length] as never);
    witnessMs.push(performance.now() - t);
    t = performance.now();
    await prover.prove(wtns);
    proveMs.push(performance.now() - t);
    wtnsList.push(wtns);
  }
  await releaseVerifier();
  return { witnessMs, proveMs, wtns: wtnsList };
}

interface Daemon {
  address: string;
  stop(): Promise<void>;
}

async function startDaemon(engine: string, circuitsDir = DEFAULT_CIRCUITS_DIR): Promise<Daemon> {
  const child = spawn(
    process.execPath,
    [
      path.join(ROOT, 'bin/pool-proxy.js'),
      'prover',
      '--listen',
      '127.0.0.1:0',
      '--circuits',
      circuitsDir,
      '--engine',
      engine,
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'inherit'],
    },
  );
  let out = '';
  const address = await new Promise<string>((resolve, reject) => {
    child.stdout!.on('data', (chunk) => {
      out += chunk;
      const match = /listening on (\S+)/.exec(out);
      if (match) resolve(match[1]);
    });
    child.once('exit', (code) => reject(new Error(`daemon exited ${code}: ${out}`)));
  });
  const exited = new Promise((resolve) => child.once('exit', resolve));
  return {
    address,
    async stop() {
      child.kill('SIGTERM');
      await exited;
    },
  };
}

async function waitServing(client: ProverClient): Promise<void> {
  for (;;) {
    if ((await client.health().catch(() => 'UNKNOWN')) === 'SERVING') return;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

/** `count` requests, `concurrency` at a time; per-request latency and the run's wall time. */
async function load(
  client: ProverClient,
  concurrency: number,
  count: number,
  request: (i: number) => Promise<ProveResult>,
) {
  const latencies: number[] = [];
  /** Latency minus the witness, prove and verify time the daemon reports: gRPC, JSON, queue, hand-offs. */
  const outside: number[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        const i = next++;
        const t = performance.now();
        const result = await request(i);
        const latency = performance.now() - t;
        latencies.push(latency);
        outside.push(latency - result.witnessMs - result.proveMs - result.verifyMs);
      }
    }),
  );
  return { latencies, outside, wallMs: performance.now() - started };
}

type Run = Awaited<ReturnType<typeof load>>;

function overheadRows(id: string, witnessMs: number, proveMs: number, wtns: Run, inputs: Run): string[] {
  const row = (what: string, directMs: number, run: Run) => {
    const p50 = percentile(run.latencies, 50);
    return `| ${id} | ${what} | ${fmt2(directMs)} | ${fmt2(p50)} | ${fmt2(p50 - directMs)} | ${(p50 / directMs).toFixed(3)} | ${fmt2(percentile(run.outside, 50))} |`;
  };
  return [
    row('prepared witness (wtns)', proveMs, wtns),
    row('inputs (witness in the daemon)', witnessMs + proveMs, inputs),
  ];
}

const fmt2 = (ms: number) => `${ms.toFixed(1)} ms`;

/** Fixed cost of the daemon (gRPC, JSON, queue, worker hand-off) on a circuit whose proof takes milliseconds. */
async function smallCircuitOverhead(runs: number): Promise<string[]> {
  const id = 'power_chain_64';
  const dir = await ensureTestCircuits();
  const smallInputs = Array.from(
    { length: 8 },
    (_, i) => chainInputs(64, BigInt(i + 2)) as Record<string, unknown>,
  );
  const base = await direct(id, dir, smallInputs, runs);
  const daemon = await startDaemon('native', dir);
  const client = await ProverClient.connect({ addresses: daemon.address });
  try {
    await waitServing(client);
    await client.prove(id, { inputs: smallInputs[0] });
    const sameWitness = await load(client, 1, runs, (i) => client.prove(id, { wtns: base.wtns[i] }));
    const fromInputs = await load(client, 1, runs, (i) =>
      client.prove(id, { inputs: smallInputs[i % smallInputs.length] }),
    );
    return overheadRows(
      id,
      percentile(base.witnessMs, 50),
      percentile(base.proveMs, 50),
      sameWitness,
      fromInputs,
    );
  } finally {
    client.close();
    await daemon.stop();
  }
}

const inputs = transactions(16);
console.log(
  `# prover daemon bench: ${circuit}; ${cpus().length} × ${cpus()[0]?.model}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
);

const baseline = await direct(circuit, DEFAULT_CIRCUITS_DIR, inputs, Number(args.direct));
const directWitness = percentile(baseline.witnessMs, 50);
const directProve = percentile(baseline.proveMs, 50);
console.log(
  `\ndirect addon (sequential, ${baseline.proveMs.length} proofs): witness p50 ${fmt(directWitness)}, prove+verify p50 ${fmt(directProve)}`,
);

const rows: string[] = [];
const overhead: string[] = [];
for (const engine of engines) {
  const daemon = await startDaemon(engine);
  const client = await ProverClient.connect({ addresses: daemon.address, deadlineMs: 3_600_000 });
  try {
    await waitServing(client);
    await client.prove(circuit, { inputs: inputs[0] }); // warm-up
    const requests = Number(engine === 'snarkjs' ? args['snarkjs-requests'] : args.requests);
    for (const concurrency of levels) {
      const count = Math.max(requests, concurrency);
      const { latencies, wallMs } = await load(client, concurrency, count, (i) =>
        client.prove(circuit, { inputs: inputs[i % inputs.length] }),
      );
      const row = `| ${engine} | ${concurrency} | ${count} | ${((count * 1000) / wallMs).toFixed(2)} | ${fmt(percentile(latencies, 50))} | ${fmt(percentile(latencies, 99))} |`;
      rows.push(row);
      console.log(row);
    }
    if (engine === 'native') {
      const sameWitness = await load(client, 1, baseline.wtns.length, (i) =>
        client.prove(circuit, { wtns: baseline.wtns[i] }),
      );
      const fromInputs = await load(client, 1, baseline.wtns.length, (i) =>
        client.prove(circuit, { inputs: inputs[i % inputs.length] }),
      );
      overhead.push(...overheadRows(circuit, directWitness, directProve, sameWitness, fromInputs));
    }
  } finally {
    client.close();
    await daemon.stop();
  }
}

console.log(
  '\n| engine | concurrency | requests | proofs/s | p50 latency | p99 latency |\n| --- | --- | --- | --- | --- | --- |',
);
for (const row of rows) console.log(row);
if (engines.includes('native')) overhead.push(...(await smallCircuitOverhead(Number(args.small))));
if (overhead.length > 0) {
  console.log(
    '\n| circuit | native, concurrency 1 | direct addon p50 | daemon p50 | difference | ratio | daemon-reported non-proving time p50 |\n| --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const row of overhead) console.log(row);
}
