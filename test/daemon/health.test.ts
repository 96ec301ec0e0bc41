// grpc.health.v1 over the standard protocol with a plain grpc-js client. Loading is held open
// deterministically: the circuit's verification_key.json is a named pipe, and the daemon's load blocks
// reading it until the test writes the key. Until then the daemon must say NOT_SERVING and refuse work.
import { execFile } from 'node:child_process';
import { cp, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import * as grpc from '@grpc/grpc-js';
import test from 'ava';
import { ProverClient } from '../../src/prover/client.ts';
import { HealthService } from '../../src/prover/daemon/proto.ts';
import { startTestDaemon, until } from './helpers/daemon.ts';
import { chainInputs, ensureTestCircuits, releaseCurve } from './helpers/test-circuits.ts';

const run = promisify(execFile);
type HealthClient = grpc.Client & {
  Check(
    request: object,
    callback: (error: grpc.ServiceError | null, response?: { status: string }) => void,
  ): void;
  Watch(request: object): grpc.ClientReadableStream<{ status: string }>;
};

let dir: string;
let vkey: string;

test.before(async () => {
  const source = path.join(await ensureTestCircuits(), 'power_chain_8');
  dir = await mkdtemp(path.join(tmpdir(), 'prover-health-'));
  await cp(source, path.join(dir, 'power_chain_8'), { recursive: true });
  vkey = await readFile(path.join(source, 'verification_key.json'), 'utf8');
  const pipe = path.join(dir, 'power_chain_8', 'verification_key.json');
  await rm(pipe);
  await run('mkfifo', [pipe]);
});

test.after.always(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
  await releaseCurve();
});

test('NOT_SERVING and UNAVAILABLE while keys load; SERVING only after; Watch follows; drain ends with NOT_SERVING', async (t) => {
  const daemon = await startTestDaemon({ circuitsDir: dir });
  t.teardown(() => daemon.stop({ force: true }));
  const health = new HealthService(
    daemon.address,
    grpc.credentials.createInsecure(),
  ) as unknown as HealthClient;
  t.teardown(() => health.close());
  const check = (service: string) =>
    new Promise<string>((resolve, reject) =>
      health.Check({ service }, (e, r) => (e ? reject(e) : resolve(r!.status))),
    );

  const seen: string[] = [];
  const watch = health.Watch({ service: 'poolproxy.prover.v1.Prover' });
  watch.on('data', (message: { status: string }) => seen.push(message.status));
  const watchEnded = new Promise<void>((resolve) => watch.on('status', () => resolve()));
  watch.on('error', () => undefined);

  t.is(await check(''), 'NOT_SERVING');
  t.is(await check('poolproxy.prover.v1.Prover'), 'NOT_SERVING');
  const client = await ProverClient.connect({ addresses: daemon.address, maxAttempts: 1 });
  t.teardown(() => client.close());
  const early = (await t.throwsAsync(
    client.prove('power_chain_8', { inputs: chainInputs(8, 3n) }),
  )) as grpc.ServiceError;
  t.is(early.code, grpc.status.UNAVAILABLE);
  t.regex(early.details, /still loading/);
  await until(() => seen.length === 1, 'the first Watch message');
  t.deepEqual(seen, ['NOT_SERVING']);

  // Hand the daemon its verification key: loading completes.
  await writeFile(path.join(dir, 'power_chain_8', 'verification_key.json'), vkey);
  await daemon.ready;
  t.is(await check(''), 'SERVING');
  await until(() => seen.length === 2, 'the Watch update');
  t.deepEqual(seen, ['NOT_SERVING', 'SERVING']);
  const proof = await client.prove('power_chain_8', { inputs: chainInputs(8, 3n) });
  t.is(proof.proof.length, 256);

  await daemon.stop();
  await watchEnded;
  t.deepEqual(seen, ['NOT_SERVING', 'SERVING', 'NOT_SERVING']);
});
