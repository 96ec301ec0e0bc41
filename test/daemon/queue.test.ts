// Queue behaviour of a real daemon with one witness worker: a request whose witness spins (the test
// circuit's `work` input) holds the worker, so other requests provably wait behind it. Covers the full
// queue (RESOURCE_EXHAUSTED), deadlines (DEADLINE_EXCEEDED, work dropped), cancellation (the request
// leaves the queue) and that the daemon keeps serving after each.
import { status, type ServiceError } from '@grpc/grpc-js';
import test from 'ava';
import { ProverClient } from '../../src/prover/client.ts';
import type { ProverDaemon } from '../../src/prover/daemon/server.ts';
import { metricValue, startTestDaemon, until } from './helpers/daemon.ts';
import { chainInputs, releaseCurve } from './helpers/test-circuits.ts';

// Enough steps that the witness never finishes on its own during a test (it is always cancelled).
const FOREVER = 4_000_000_000;
const CAPACITY = 3;
// Long enough for a request to reach the daemon on a loaded machine; the work it waits for never ends.
const DEADLINE_MS = 5_000;

let daemon: ProverDaemon;
let client: ProverClient;

test.before(async () => {
  daemon = await startTestDaemon({ witnessWorkers: 1, queueCapacity: CAPACITY });
  await daemon.ready;
  client = await ProverClient.connect({ addresses: daemon.address, deadlineMs: 120_000 });
});

test.after.always(async () => {
  client?.close();
  await daemon?.stop({ force: true });
  await releaseCurve();
});

/** Nothing admitted and the witness worker ready. */
function idle(): boolean {
  const stats = daemon.stats();
  return stats.inFlight === 0 && stats.witnessWorkers === 1 && stats.computingWitness === 0;
}

/** Starts a request that occupies the only witness worker until `controller` cancels it. */
async function occupyWorker(controller: AbortController): Promise<{ blocked: Promise<unknown> }> {
  const blocked = client.prove(
    'power_chain_8',
    { inputs: chainInputs(8, 2n, { work: FOREVER }) },
    { signal: controller.signal },
  );
  blocked.catch(() => undefined);
  await until(() => daemon.stats().computingWitness === 1, 'the blocking request to reach the worker');
  return { blocked };
}

async function codeOf(promise: Promise<unknown>): Promise<status> {
  try {
    await promise;
    return status.OK;
  } catch (error) {
    return (error as ServiceError).code;
  }
}

test.serial('a full queue answers RESOURCE_EXHAUSTED; admitted requests still complete', async (t) => {
  const controller = new AbortController();
  const { blocked } = await occupyWorker(controller);
  const waiting = [
    client.prove('power_chain_8', { inputs: chainInputs(8, 4n) }),
    client.prove('power_chain_8', { inputs: chainInputs(8, 5n) }),
  ];
  await until(() => daemon.stats().inFlight === CAPACITY, 'the queue to fill');
  const before = await metricValue(daemon, 'prover_failures_total', {
    circuit: 'power_chain_8',
    code: 'RESOURCE_EXHAUSTED',
  });
  const refused = (await t.throwsAsync(
    client.prove('power_chain_8', { inputs: chainInputs(8, 6n) }),
  )) as ServiceError;
  t.is(refused.code, status.RESOURCE_EXHAUSTED);
  t.regex(refused.details, /queue is full/);
  t.is(
    await metricValue(daemon, 'prover_failures_total', {
      circuit: 'power_chain_8',
      code: 'RESOURCE_EXHAUSTED',
    }),
    before + 1,
  );

  controller.abort();
  t.is(await codeOf(blocked), status.CANCELLED);
  const done = await Promise.all(waiting);
  t.deepEqual(
    done.map((r) => r.proof.length),
    [256, 256],
  );
  const after = await client.prove('power_chain_8', { inputs: chainInputs(8, 6n) });
  t.is(after.proof.length, 256);
});

test.serial('an expired deadline is DEADLINE_EXCEEDED and the running witness is dropped', async (t) => {
  await until(() => idle(), 'an idle daemon');
  const proofsBefore = await metricValue(daemon, 'prover_proofs_total', { circuit: 'power_chain_8' });
  const droppedBefore = await metricValue(daemon, 'prover_dropped_total', { reason: 'deadline' });
  const replacedBefore = daemon.stats().witnessWorkersReplaced;
  // The witness never ends by itself; the deadline leaves ample time for the request to reach the worker.
  const code = await codeOf(
    client.prove(
      'power_chain_8',
      { inputs: chainInputs(8, 2n, { work: FOREVER }) },
      { deadlineMs: DEADLINE_MS },
    ),
  );
  t.is(code, status.DEADLINE_EXCEEDED);
  await until(
    async () =>
      (await metricValue(daemon, 'prover_dropped_total', { reason: 'deadline' })) === droppedBefore + 1,
    'the daemon to drop the work',
  );
  // The worker spinning on it was stopped and replaced.
  t.is(daemon.stats().witnessWorkersReplaced, replacedBefore + 1);
  await until(() => idle(), 'the slot to be released and the worker replaced');
  t.is(await metricValue(daemon, 'prover_proofs_total', { circuit: 'power_chain_8' }), proofsBefore);
  const next = await client.prove('power_chain_8', { inputs: chainInputs(8, 8n) });
  t.is(next.proof.length, 256);
  t.is(await metricValue(daemon, 'prover_proofs_total', { circuit: 'power_chain_8' }), proofsBefore + 1);
});

test.serial('a request whose deadline passes while it waits leaves the queue', async (t) => {
  const controller = new AbortController();
  const { blocked } = await occupyWorker(controller);
  const droppedBefore = await metricValue(daemon, 'prover_dropped_total', { reason: 'deadline' });
  const queued = codeOf(
    client.prove('power_chain_8', { inputs: chainInputs(8, 3n) }, { deadlineMs: DEADLINE_MS }),
  );
  await until(() => daemon.stats().waitingForWitness === 1, 'the request to queue behind the busy worker');
  t.is(await queued, status.DEADLINE_EXCEEDED);
  await until(
    () => daemon.stats().waitingForWitness === 0 && daemon.stats().inFlight === 1,
    'the expired request to leave the queue',
  );
  await until(
    async () =>
      (await metricValue(daemon, 'prover_dropped_total', { reason: 'deadline' })) === droppedBefore + 1,
    'the drop to be counted',
  );
  // The blocking request is still computing: the expired one left without waiting for it.
  t.is(daemon.stats().computingWitness, 1);
  controller.abort();
  t.is(await codeOf(blocked), status.CANCELLED);
  // The client sees CANCELLED at once; wait until the daemon has also let go of the request.
  await until(() => daemon.stats().inFlight === 0, 'the daemon to drop the cancelled request');
});

test.serial('a cancelled request leaves the queue at once and the daemon keeps serving', async (t) => {
  const blockController = new AbortController();
  const { blocked } = await occupyWorker(blockController);
  const cancelledBefore = await metricValue(daemon, 'prover_dropped_total', { reason: 'cancelled' });
  const controller = new AbortController();
  const queued = client.prove('power_chain_8', { inputs: chainInputs(8, 3n) }, { signal: controller.signal });
  await until(() => daemon.stats().waitingForWitness === 1, 'the request to queue');
  controller.abort();
  t.is(await codeOf(queued), status.CANCELLED);
  await until(() => daemon.stats().waitingForWitness === 0, 'the cancelled request to leave the queue');
  t.is(daemon.stats().inFlight, 1);
  t.is(daemon.stats().computingWitness, 1);
  await until(
    async () =>
      (await metricValue(daemon, 'prover_dropped_total', { reason: 'cancelled' })) === cancelledBefore + 1,
    'the drop to be counted',
  );

  blockController.abort();
  t.is(await codeOf(blocked), status.CANCELLED);
  await until(() => daemon.stats().inFlight === 0, 'all slots to be free');
  const next = await client.prove('power_chain_8', { inputs: chainInputs(8, 10n) });
  t.is(next.proof.length, 256);
  t.is(await client.health(), 'SERVING');
});
