// `pool-proxy prover` as an operator runs it: a child process with TLS and a metrics port. A client trusting
// the CA proves; a plaintext client is refused; /metrics counts the work; SIGTERM drains an in-flight proof
// before the process exits 0; bad flags exit with a clear message.
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { promisify } from 'node:util';
import { status, type ServiceError } from '@grpc/grpc-js';
import test from 'ava';
import * as snarkjs from 'snarkjs';
import { ProverClient } from '../../src/prover/client.ts';
import { until } from './helpers/daemon.ts';
import { chainInputs, ensureTestCircuits, releaseCurve, ROOT } from './helpers/test-circuits.ts';

const run = promisify(execFile);
const CLI = path.join(ROOT, 'bin', 'pool-proxy.js');

interface RunningDaemon {
  child: ChildProcess;
  address: string;
  metricsUrl: string;
  output(): string;
  exited: Promise<number | null>;
}

let certDir: string;
let ca: Buffer;

async function startCli(extra: string[] = []): Promise<RunningDaemon> {
  const circuits = await ensureTestCircuits();
  const child = spawn(
    process.execPath,
    [
      CLI,
      'prover',
      '--listen',
      '127.0.0.1:0',
      '--circuits',
      circuits,
      '--engine',
      'snarkjs',
      '--witness-workers',
      '1',
      '--metrics-port',
      '0',
      '--tls-cert',
      path.join(certDir, 'cert.pem'),
      '--tls-key',
      path.join(certDir, 'key.pem'),
      ...extra,
    ],
    { cwd: ROOT, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  let text = '';
  child.stdout!.on('data', (chunk) => {
    text += chunk;
  });
  child.stderr!.on('data', (chunk) => {
    text += chunk;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  await until(
    () => /listening on \S+/.test(text) || child.exitCode !== null,
    'the daemon to print its address',
  );
  const match = /listening on (\S+) .*metrics (http:\/\/\S+\/metrics)/.exec(text);
  if (!match) throw new Error(`daemon did not start: ${text}`);
  return { child, address: match[1], metricsUrl: match[2].replace(/\)$/, ''), output: () => text, exited };
}

async function metric(url: string, series: string): Promise<number> {
  const body = await (await fetch(url)).text();
  const line = body.split('\n').find((l) => l.startsWith(`${series} `));
  return line ? Number(line.split(' ')[1]) : 0;
}

test.before(async () => {
  certDir = await mkdtemp(path.join(tmpdir(), 'prover-tls-'));
  await run('openssl', [
    'req',
    '-x509',
    '-newkey',
    'ec',
    '-pkeyopt',
    'ec_paramgen_curve:prime256v1',
    '-nodes',
    '-keyout',
    path.join(certDir, 'key.pem'),
    '-out',
    path.join(certDir, 'cert.pem'),
    '-days',
    '2',
    '-subj',
    '/CN=prover-daemon-test',
    '-addext',
    'subjectAltName=IP:127.0.0.1',
  ]);
  ca = await readFile(path.join(certDir, 'cert.pem'));
});

test.after.always(async () => {
  if (certDir) await rm(certDir, { recursive: true, force: true });
  await releaseCurve();
});

test.serial(
  'over TLS: SERVING once loaded, proofs verify, plaintext is refused, metrics count the work',
  async (t) => {
    const daemon = await startCli();
    t.teardown(() => daemon.child.kill('SIGKILL'));
    const client = await ProverClient.connect({ addresses: daemon.address, tlsCa: ca, deadlineMs: 60_000 });
    t.teardown(() => client.close());
    await until(async () => (await client.health().catch(() => 'UNKNOWN')) === 'SERVING', 'SERVING over TLS');
    t.regex(daemon.output(), /SERVING power_chain_64, power_chain_8/);

    const result = await client.prove('power_chain_8', { inputs: chainInputs(8, 21n) });
    const vkey = JSON.parse(
      await readFile(path.join(await ensureTestCircuits(), 'power_chain_8', 'verification_key.json'), 'utf8'),
    );
    t.true(await snarkjs.groth16.verify(vkey, result.publicSignals, result.proofJson));

    const plaintext = await ProverClient.connect({
      addresses: daemon.address,
      maxAttempts: 1,
      deadlineMs: 5_000,
    });
    t.teardown(() => plaintext.close());
    const refused = (await t.throwsAsync(
      plaintext.prove('power_chain_8', { inputs: chainInputs(8, 21n) }),
    )) as ServiceError;
    t.true(
      [status.UNAVAILABLE, status.DEADLINE_EXCEEDED].includes(refused.code),
      `got ${status[refused.code]}`,
    );

    t.is(await metric(daemon.metricsUrl, 'prover_proofs_total{circuit="power_chain_8",engine="snarkjs"}'), 1);
    t.true((await metric(daemon.metricsUrl, 'prover_witness_seconds_count{circuit="power_chain_8"}')) === 1);
    t.true(
      (await metric(
        daemon.metricsUrl,
        'prover_prove_seconds_count{circuit="power_chain_8",engine="snarkjs"}',
      )) === 1,
    );
    t.true(
      (await metric(
        daemon.metricsUrl,
        'prover_verify_seconds_count{circuit="power_chain_8",engine="snarkjs"}',
      )) === 1,
    );
    t.is(await metric(daemon.metricsUrl, 'prover_queue_depth{stage="witness"}'), 0);
    const body = await (await fetch(daemon.metricsUrl)).text();
    t.regex(body, /process_cpu_seconds_total/);
    t.is((await fetch(daemon.metricsUrl.replace('/metrics', '/other'))).status, 404);
  },
);

test.serial('SIGTERM drains the in-flight proof, refuses new work, then exits 0', async (t) => {
  const daemon = await startCli();
  t.teardown(() => daemon.child.kill('SIGKILL'));
  const client = await ProverClient.connect({
    addresses: daemon.address,
    tlsCa: ca,
    deadlineMs: 120_000,
    maxAttempts: 1,
  });
  t.teardown(() => client.close());
  await until(async () => (await client.health().catch(() => 'UNKNOWN')) === 'SERVING', 'SERVING');

  // A witness that spins for a while keeps the proof in flight when the signal arrives.
  const inFlight = client.prove('power_chain_8', { inputs: chainInputs(8, 33n, { work: 3_000_000 }) });
  await until(
    async () => (await metric(daemon.metricsUrl, 'prover_in_flight')) === 1,
    'the proof to be in flight',
  );
  daemon.child.kill('SIGTERM');
  await until(() => /draining/.test(daemon.output()), 'the daemon to start draining');

  const result = await inFlight;
  t.is(result.proof.length, 256);
  t.is(result.publicSignals[1], String(chainInputs(8, 33n).expected));
  t.is(await daemon.exited, 0);
  t.regex(daemon.output(), /SIGTERM: draining in-flight proofs[\s\S]*stopped/);
  const after = (await t.throwsAsync(
    client.prove('power_chain_8', { inputs: chainInputs(8, 1n) }),
  )) as ServiceError;
  t.is(after.code, status.UNAVAILABLE);
});

const badFlags: [string, string[], RegExp, number][] = [
  ['an unknown engine', ['--engine', 'gpu'], /--engine must be one of native, snarkjs/, 2],
  ['a TLS certificate without its key', ['--tls-cert', 'x.pem'], /--tls-cert and --tls-key go together/, 2],
  ['a malformed listen address', ['--listen', 'nowhere'], /--listen must be HOST:PORT, got nowhere/, 2],
  ['a non-numeric metrics port', ['--metrics-port', 'abc'], /--metrics-port must be an integer/, 2],
  [
    'a circuits folder that does not exist',
    ['--circuits', '/nonexistent/circuits'],
    /ENOENT|no such file/,
    1,
  ],
];

for (const [what, flags, message, code] of badFlags) {
  test(`the prover command rejects ${what}`, async (t) => {
    const error = (await t.throwsAsync(
      run(process.execPath, [CLI, 'prover', '--listen', '127.0.0.1:0', ...flags], { cwd: ROOT }),
    )) as Error & {
      code: number;
      stderr: string;
    };
    t.is(error.code, code);
    t.regex(error.stderr, message);
  });
}
