// Several daemons behind one client: round_robin spreads calls, and a daemon that stops (gracefully or
// by force) or cannot serve (keys failed to load) loses no request, because the client retries
// UNAVAILABLE on another daemon. Also: health stays NOT_SERVING when keys never load.
import { cp, mkdtemp, readFile, rm, truncate } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import * as snarkjs from 'snarkjs';
import { ProverClient, type ProveResult } from '../../src/prover/client.ts';
import { HealthService } from '../../src/prover/daemon/proto.ts';
import type { ProverDaemon } from '../../src/prover/daemon/server.ts';
import { metricValue, startTestDaemon, until } from './helpers/daemon.ts';
import { chainInputs, ensureTestCircuits, releaseCurve } from './helpers/test-circuits.ts';

const started: ProverDaemon[] = [];
const clients: ProverClient[] = [];
let brokenDir: string;

async function daemonPair(): Promise<[ProverDaemon, ProverDaemon]> {
  const pair = (await Promise.all([startTestDaemon(), startTestDaemon()])) as [ProverDaemon, ProverDaemon];
  started.push(...pair);
  await Promise.all(pair.map((d) => d.ready));
  return pair;
}

async function connect(
  daemons: ProverDaemon[],
  options: { maxAttempts?: number } = {},
): Promise<ProverClient> {
  const client = await ProverClient.connect({
    addresses: daemons.map((d) => d.address).join(','),
    deadlineMs: 120_000,
    maxAttempts: options.maxAttempts ?? 8,
    retryBackoffMs: 20,
  });
  clients.push(client);
  return client;
}

const served = (d: ProverDaemon) =>
  metricValue(d, 'prover_proofs_total', { circuit: 'power_chain_8', engine: 'snarkjs' });

/** Runs `count` proofs, `concurrency` at a time; `afterEach(done)` runs after each completion. */
async function runProofs(
  client: ProverClient,
  count: number,
  concurrency: number,
  afterEach?: (done: number) => Promise<void> | void,
): Promise<ProveResult[]> {
  const results: ProveResult[] = [];
  let next = 0;
  let done = 0;
  const lane = async () => {
    while (next < count) {
      const x = BigInt(100 + next++);
      results.push(await client.prove('power_chain_8', { inputs: chainInputs(8, x) }));
      done += 1;
      await afterEach?.(done);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  return results;
}

test.before(async () => {
  // A circuit folder whose zkey is cut short: the daemon binds its port but can never load its keys.
  const source = await ensureTestCircuits();
  brokenDir = await mkdtemp(path.join(tmpdir(), 'prover-broken-'));
  await cp(path.join(source, 'power_chain_8'), path.join(brokenDir, 'power_chain_8'), { recursive: true });
  await truncate(path.join(brokenDir, 'power_chain_8', 'power_chain_8.zkey'), 100);
});

test.after.always(async () => {
  for (const client of clients) client.close();
  await Promise.all(started.map((d) => d.stop({ force: true })));
  if (brokenDir) await rm(brokenDir, { recursive: true, force: true });
  await releaseCurve();
});

test.serial('one client given two addresses spreads calls over both daemons', async (t) => {
  const [a, b] = await daemonPair();
  const client = await connect([a, b]);
  const results = await runProofs(client, 16, 4);
  t.is(results.length, 16);
  const [onA, onB] = [await served(a), await served(b)];
  t.is(onA + onB, 16);
  t.true(onA > 0, `daemon A served ${onA}`);
  t.true(onB > 0, `daemon B served ${onB}`);
  const vkey = JSON.parse(
    await readFile(path.join(await ensureTestCircuits(), 'power_chain_8', 'verification_key.json'), 'utf8'),
  );
  for (const result of results)
    t.true(await snarkjs.groth16.verify(vkey, result.publicSignals, result.proofJson));
});

test.serial('stopping one daemon (drain) mid-run loses no request', async (t) => {
  const [a, b] = await daemonPair();
  const client = await connect([a, b]);
  let stopped: Promise<void> | undefined;
  const results = await runProofs(client, 24, 6, (done) => {
    if (done === 4) stopped = a.stop();
  });
  await stopped;
  t.is(results.length, 24);
  t.true(results.every((r) => r.proof.length === 256));
  t.is((await served(a)) + (await served(b)), 24);
  t.true((await served(b)) > 12, 'the surviving daemon took over');
});

test.serial(
  'a daemon stopped by force mid-run answers UNAVAILABLE, and the client retries elsewhere',
  async (t) => {
    const [a, b] = await daemonPair();
    const client = await connect([a, b]);
    let stopped: Promise<void> | undefined;
    const results = await runProofs(client, 24, 6, async (done) => {
      if (done === 2) {
        await until(() => a.stats().inFlight > 0, 'work in flight on the daemon about to stop');
        stopped = a.stop({ force: true });
      }
    });
    await stopped;
    t.is(results.length, 24);
    t.is((await served(a)) + (await served(b)), 24);
    // The calls that were on A when it stopped were answered UNAVAILABLE and proven again on B.
    t.true(results.some((r) => r.attempts > 1));
    t.true((await metricValue(a, 'prover_dropped_total', { reason: 'shutdown' })) > 0);
  },
);

test.serial(
  'a daemon whose keys fail to load stays NOT_SERVING, answers UNAVAILABLE, and is routed around',
  async (t) => {
    const broken = await startTestDaemon({ circuitsDir: brokenDir });
    started.push(broken);
    const error = (await t.throwsAsync(broken.ready)) as Error;
    t.regex(error.message, /cannot load circuit power_chain_8: .*runs past the end/);

    // Health over the standard protocol, with a plain grpc-js client.
    const health = new HealthService(
      broken.address,
      grpc.credentials.createInsecure(),
    ) as unknown as grpc.Client & {
      Check(
        request: object,
        callback: (error: grpc.ServiceError | null, response?: { status: string }) => void,
      ): void;
    };
    const checked = await new Promise<{ status: string } | undefined>((resolve, reject) =>
      health.Check({ service: '' }, (e, response) => (e ? reject(e) : resolve(response))),
    );
    health.close();
    t.is(checked?.status, 'NOT_SERVING');

    const alone = await connect([broken], { maxAttempts: 2 });
    const refused = (await t.throwsAsync(
      alone.prove('power_chain_8', { inputs: chainInputs(8, 3n) }),
    )) as grpc.ServiceError;
    t.is(refused.code, grpc.status.UNAVAILABLE);
    t.regex(refused.details, /loading/);

    const [good] = await daemonPair();
    const both = await connect([broken, good]);
    const results = await runProofs(both, 8, 2);
    t.is(results.length, 8);
    t.is(await served(good), 8);
    t.true(
      results.some((r) => r.attempts > 1),
      'some calls first went to the broken daemon and were retried',
    );
    t.true(
      (await metricValue(broken, 'prover_failures_total', { circuit: 'unknown', code: 'UNAVAILABLE' })) > 0,
    );
  },
);

test.serial('non-retryable errors are returned at once, not retried on the other daemon', async (t) => {
  const [a, b] = await daemonPair();
  const client = await connect([a, b]);
  const error = (await t.throwsAsync(
    client.prove('power_chain_8', { inputs: chainInputs(8, 3n, { wrong: true }) }),
  )) as grpc.ServiceError;
  t.is(error.code, grpc.status.INVALID_ARGUMENT);
  const failures = async (d: ProverDaemon) =>
    metricValue(d, 'prover_failures_total', { circuit: 'power_chain_8', code: 'INVALID_ARGUMENT' });
  t.is((await failures(a)) + (await failures(b)), 1);
});
