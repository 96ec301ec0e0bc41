// Prover daemon benchmark, one run, side by side:
//   1. for each engine, a daemon started as operators run it (`pool-proxy prover`, a child process) and the
//      typed client: proofs/s and p50/p99 latency at concurrency 1, 4, 16 (inputs_json requests);
//   2. the daemon's Prove against the same proof in process (native): the addon loaded in this process
//      (`loadProver().prove`, warm) proves witness i, then the daemon proves the same witness i (wtns
//      request), alternately, so both sides prove the same witnesses under the same machine load; likewise
//      from inputs (here: witness calculator + prove; the daemon: an inputs_json request). On
//      policy_tx_2_2 and on a 66-constraint test circuit where the proof takes milliseconds and the
//      daemon's fixed cost shows.
// Usage: npx tsx bench/prover-daemon/run.ts [--circuit policy_tx_2_2] [--engines native,snarkjs]
//        [--levels 1,4,16] [--requests N] [--snarkjs-requests N] [--direct N] [--small N]
import { cpus, totalmem } from 'node:os';
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
import { startDaemon, waitServing } from '../prover/daemon-process.ts';
import { chainInputs, ensureTestCircuits } from '../../test/daemon/helpers/test-circuits.ts';

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

/** The in-process side: this process's own warm prover and witness calculator, every witness computed up front. */
async function inProcess(circuitId: string, circuitsDir: string, inputs: Record<string, unknown>[]) {
  const artifacts = circuitArtifacts(circuitId, circuitsDir);
  const calculator = await loadWitnessCalculator(artifacts.wasm);
  const prover = await loadProver(artifacts.zkey);
  const wtns: Uint8Array[] = [];
  for (const input of inputs) wtns.push(await calculator.calculateWtns(input as never));
  await prover.prove(wtns[0]); // warm-up
  return { calculator, prover, wtns };
}

type InProcess = Awaited<ReturnType<typeof inProcess>>;

interface Pairs {
  /** In-process times and daemon latencies, request by request (same witness at the same index). */
  local: number[];
  daemon: number[];
  /** Daemon latency minus the witness, prove and verify time it reports: gRPC, JSON, queue, hand-offs. */
  outside: number[];
}

/**
 * `runs` alternations of an in-process proof and the daemon's Prove of the same witness (from the wtns,
 * and from inputs), one at a time.
 */
async function sideBySide(
  client: ProverClient,
  id: string,
  local: InProcess,
  inputs: Record<string, unknown>[],
  runs: number,
): Promise<{ wtns: Pairs; inputs: Pairs }> {
  const wtns: Pairs = { local: [], daemon: [], outside: [] };
  const fromInputs: Pairs = { local: [], daemon: [], outside: [] };
  const daemonSide = async (pairs: Pairs, request: () => Promise<ProveResult>) => {
    const t = performance.now();
    const result = await request();
    const latency = performance.now() - t;
    pairs.daemon.push(latency);
    pairs.outside.push(latency - result.witnessMs - result.proveMs - result.verifyMs);
  };
  for (let i = 0; i < runs; i++) {
    const k = i % inputs.length;
    let t = performance.now();
    await local.prover.prove(local.wtns[k]);
    wtns.local.push(performance.now() - t);
    await daemonSide(wtns, () => client.prove(id, { wtns: local.wtns[k] }));
    t = performance.now();
    await local.prover.prove(await local.calculator.calculateWtns(inputs[k] as never));
    fromInputs.local.push(performance.now() - t);
    await daemonSide(fromInputs, () => client.prove(id, { inputs: inputs[k] }));
  }
  return { wtns, inputs: fromInputs };
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

function overheadRows(id: string, pairs: { wtns: Pairs; inputs: Pairs }): string[] {
  const row = (what: string, p: Pairs) => {
    const local = percentile(p.local, 50);
    const daemon = percentile(p.daemon, 50);
    const ratios = p.daemon.map((d, i) => d / p.local[i]);
    return `| ${id} | ${what} | ${p.local.length} | ${fmt2(local)} | ${fmt2(daemon)} | ${fmt2(daemon - local)} | ${(daemon / local).toFixed(3)} | ${percentile(ratios, 50).toFixed(3)} | ${fmt2(percentile(p.outside, 50))} |`;
  };
  return [
    row('prepared witness (wtns)', pairs.wtns),
    row('inputs (witness computed by each side)', pairs.inputs),
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
  const local = await inProcess(id, dir, smallInputs);
  const daemon = await startDaemon('native', dir);
  const client = await ProverClient.connect({ addresses: daemon.address });
  try {
    await waitServing(client);
    await client.prove(id, { inputs: smallInputs[0] });
    return overheadRows(id, await sideBySide(client, id, local, smallInputs, runs));
  } finally {
    client.close();
    await daemon.stop();
  }
}

const inputs = transactions(16);
console.log(
  `# prover daemon bench: ${circuit}; ${cpus().length} × ${cpus()[0]?.model}, ${(totalmem() / 2 ** 30).toFixed(0)} GiB, Node ${process.version}`,
);

const local = engines.includes('native') ? await inProcess(circuit, DEFAULT_CIRCUITS_DIR, inputs) : undefined;

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
    if (engine === 'native' && local)
      overhead.push(
        ...overheadRows(circuit, await sideBySide(client, circuit, local, inputs, Number(args.direct))),
      );
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
    '\n| circuit | request (native, one at a time) | pairs | in-process p50 | daemon Prove p50 | difference | ratio of p50s | median of pair ratios | daemon-reported non-proving time p50 |\n| --- | --- | --- | --- | --- | --- | --- | --- | --- |',
  );
  for (const row of overhead) console.log(row);
}
await releaseVerifier();
