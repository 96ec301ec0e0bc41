// One daemon (snarkjs engine) on a free loopback port: health, ListCircuits, Prove from inputs and from a
// prepared witness, Verify, and every kind of bad input, after each of which the daemon keeps serving.
import { createHash } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { type Client, credentials, type ServiceError, status } from '@grpc/grpc-js';
import test from 'ava';
import * as snarkjs from 'snarkjs';
import { loadWitnessCalculator } from '../../src/circuit/witness-calculator.ts';
import { proofFromBytes, proofToBytes } from '../../src/crypto/index.ts';
import { ProverClient } from '../../src/prover/client.ts';
import { ProverService } from '../../src/prover/daemon/proto.ts';
import type { ProverDaemon } from '../../src/prover/daemon/server.ts';
import { metricValue, startTestDaemon } from './helpers/daemon.ts';
import { chainInputs, FIELD, ROOT, releaseCurve, TEST_CIRCUITS_DIR } from './helpers/test-circuits.ts';

let daemon: ProverDaemon;
let client: ProverClient;
const MAX_INPUTS_JSON = 4096;
const MAX_MESSAGE = 64 * 1024;

test.before(async () => {
  daemon = await startTestDaemon({
    witnessWorkers: 2,
    maxInputsJsonBytes: MAX_INPUTS_JSON,
    maxMessageBytes: MAX_MESSAGE,
  });
  await daemon.ready;
  client = await ProverClient.connect({ addresses: daemon.address, deadlineMs: 60_000 });
});

test.after.always(async () => {
  client?.close();
  await daemon?.stop();
  await releaseCurve();
});

async function verificationKey(id: string): Promise<Record<string, unknown>> {
  return JSON.parse(await readFile(path.join(TEST_CIRCUITS_DIR, id, 'verification_key.json'), 'utf8'));
}

async function wtnsFor(id: string, inputs: Record<string, unknown>): Promise<Uint8Array> {
  const calculator = await loadWitnessCalculator(path.join(TEST_CIRCUITS_DIR, id, `${id}_js`, `${id}.wasm`));
  return calculator.calculateWtns(inputs as never);
}

async function rejection(
  t: import('ava').ExecutionContext,
  promise: Promise<unknown>,
  code: status,
): Promise<ServiceError> {
  const error = (await t.throwsAsync(promise)) as ServiceError;
  t.is(error.code, code, `expected ${status[code]}, got ${status[error.code]}: ${error.details}`);
  return error;
}

/** Line of the `chain[n] === expected` check in the test circuit's source, as circom reports it. */
async function constraintLine(): Promise<number> {
  const source = await readFile(path.join(ROOT, 'test', 'daemon', 'circuits', 'power_chain.circom'), 'utf8');
  return source.split('\n').findIndex((line) => line.includes('chain[n] === expected')) + 1;
}

test('health reports SERVING for the server and the Prover service once keys are loaded', async (t) => {
  t.is(await client.health(''), 'SERVING');
  t.is(await client.health('poolproxy.prover.v1.Prover'), 'SERVING');
  await rejection(t, client.health('no.such.Service'), status.NOT_FOUND);
});

test('ListCircuits describes every circuit folder: constraints, public inputs, zkey hash, development key', async (t) => {
  const circuits = await client.listCircuits();
  t.deepEqual(
    circuits.map((c) => c.id),
    ['power_chain_64', 'power_chain_8'],
  );
  const byId = Object.fromEntries(circuits.map((c) => [c.id, c]));
  // PowerChain(n): n squarings + the tag product + spun^2 = n + 2 constraints; public: tag (output) + expected.
  t.is(byId.power_chain_8.constraints, 10);
  t.is(byId.power_chain_64.constraints, 66);
  t.is(byId.power_chain_8.publicInputs, 2);
  t.is(byId.power_chain_8.wires, 15);
  for (const c of circuits) {
    const zkey = await readFile(path.join(TEST_CIRCUITS_DIR, c.id, `${c.id}.zkey`));
    t.is(c.zkeySha256, createHash('sha256').update(zkey).digest('hex'));
  }
  // power_chain_8's key has a phase-2 contribution; power_chain_64's has none (no ceremony: development).
  t.false(byId.power_chain_8.developmentKey);
  t.true(byId.power_chain_64.developmentKey);
});

test('Prove from inputs returns a 256-byte proof that snarkjs verifies, with phase timings', async (t) => {
  const inputs = chainInputs(8, 7n);
  const result = await client.prove('power_chain_8', { inputs });
  t.is(result.proof.length, 256);
  t.is(result.engine, 'snarkjs');
  t.deepEqual(result.publicSignals, [String((3n * 5n + inputs.expected) % FIELD), String(inputs.expected)]);
  t.deepEqual(result.proof, proofToBytes(result.proofJson));
  t.deepEqual(proofFromBytes(result.proof).pi_a.slice(0, 2), result.proofJson.pi_a.slice(0, 2));
  t.true(
    await snarkjs.groth16.verify(
      await verificationKey('power_chain_8'),
      result.publicSignals,
      result.proofJson,
    ),
  );
  t.true(result.witnessMs > 0 && result.proveMs > 0 && result.verifyMs > 0);
  t.is(result.attempts, 1);
});

test('Prove from a prepared .wtns gives a proof for the same public signals', async (t) => {
  const inputs = chainInputs(64, 11n);
  const result = await client.prove('power_chain_64', { wtns: await wtnsFor('power_chain_64', inputs) });
  t.is(result.witnessMs, 0);
  t.is(result.publicSignals[1], String(inputs.expected));
  t.true(
    await snarkjs.groth16.verify(
      await verificationKey('power_chain_64'),
      result.publicSignals,
      result.proofJson,
    ),
  );
});

test('inputs may be numbers, decimal strings and 0x-hex strings', async (t) => {
  const { expected } = chainInputs(8, 2n);
  const json = JSON.stringify({ x: 2, salt: ['3', '0x5'], expected: `0x${expected.toString(16)}`, work: 0 });
  const result = await client.prove('power_chain_8', { inputsJson: json });
  t.is(result.publicSignals[1], String(expected));
});

test('Verify accepts the daemon proof in both encodings and rejects altered public signals', async (t) => {
  const result = await client.prove('power_chain_8', { inputs: chainInputs(8, 5n) });
  t.true(await client.verify('power_chain_8', result.proof, result.publicSignals));
  t.true(await client.verify('power_chain_8', result.proofJson, result.publicSignals));
  const altered = [result.publicSignals[0], String(BigInt(result.publicSignals[1]) + 1n)];
  t.false(await client.verify('power_chain_8', result.proof, altered));
  // A proof for one circuit does not verify under another circuit's key.
  t.false(await client.verify('power_chain_64', result.proof, result.publicSignals));
});

test('Verify rejects malformed requests with INVALID_ARGUMENT and unknown circuits with NOT_FOUND', async (t) => {
  const result = await client.prove('power_chain_8', { inputs: chainInputs(8, 9n) });
  await rejection(
    t,
    client.verify('power_chain_8', result.proof.subarray(0, 255), result.publicSignals),
    status.INVALID_ARGUMENT,
  );
  const notOnField = new Uint8Array(result.proof);
  notOnField.fill(0xff, 0, 32);
  await rejection(
    t,
    client.verify('power_chain_8', notOnField, result.publicSignals),
    status.INVALID_ARGUMENT,
  );
  await rejection(
    t,
    client.verify('power_chain_8', result.proof, result.publicSignals.slice(1)),
    status.INVALID_ARGUMENT,
  );
  await rejection(t, client.verify('power_chain_8', result.proof, ['1', 'x']), status.INVALID_ARGUMENT);
  await rejection(
    t,
    client.verify('power_chain_8', result.proof, ['1', FIELD.toString()]),
    status.INVALID_ARGUMENT,
  );
  await rejection(
    t,
    client.verify('power_chain_8', { ...result.proofJson, pi_a: ['1'] }, result.publicSignals),
    status.INVALID_ARGUMENT,
  );
  await rejection(t, client.verify('missing', result.proof, result.publicSignals), status.NOT_FOUND);
});

test.serial(
  'a violated constraint is INVALID_ARGUMENT naming the template and line, and nothing is proven',
  async (t) => {
    const before = await metricValue(daemon, 'prover_proofs_total', { circuit: 'power_chain_8' });
    const error = await rejection(
      t,
      client.prove('power_chain_8', { inputs: chainInputs(8, 3n, { wrong: true }) }),
      status.INVALID_ARGUMENT,
    );
    const line = await constraintLine();
    t.regex(error.details, new RegExp(`template PowerChain_\\d+ line ${line}`));
    t.regex(String(error.metadata.get('failed-template')[0]), /^PowerChain_\d+$/);
    t.is(error.metadata.get('failed-line')[0], String(line));
    t.is(await metricValue(daemon, 'prover_proofs_total', { circuit: 'power_chain_8' }), before);
    t.true(
      (await metricValue(daemon, 'prover_failures_total', {
        circuit: 'power_chain_8',
        code: 'INVALID_ARGUMENT',
      })) >= 1,
    );
  },
);

const good = chainInputs(8, 3n);
const goodJson = JSON.stringify(good, (_k, v) => (typeof v === 'bigint' ? v.toString() : v));
const badInputs: [string, string, RegExp][] = [
  ['malformed JSON', '{"x": 3, "salt": [1,', /not valid JSON/],
  ['a JSON array', '[1, 2]', /must be a JSON object/],
  ['JSON null', 'null', /must be a JSON object/],
  ['an empty object', '{}', /no signals/],
  ['a boolean value', goodJson.replace('"x":"3"', '"x":true'), /input x: .*got boolean/],
  ['an object value', goodJson.replace('"x":"3"', '"x":{"v":3}'), /input x: .*got object/],
  [
    'a fractional number',
    goodJson.replace('"x":"3"', '"x":1.5'),
    /input x: .*not a non-negative exact integer/,
  ],
  ['a negative number', goodJson.replace('"x":"3"', '"x":-1'), /input x: .*not a non-negative exact integer/],
  [
    'a non-numeric string',
    goodJson.replace('"x":"3"', '"x":"three"'),
    /input x: .*not a non-negative decimal/,
  ],
  [
    'a value outside the field',
    goodJson.replace('"x":"3"', `"x":"${FIELD}"`),
    /input x: .*outside the BN254 scalar field/,
  ],
  ['an empty array', goodJson.replace('"salt":["3","5"]', '"salt":[]'), /input salt: empty array/],
  ['an unknown signal', goodJson.replace('"x":"3"', '"x":"3","y":"1"'), /y is not an input/],
  [
    'a missing signal',
    JSON.stringify({ x: '3', salt: ['3', '5'], expected: String(good.expected) }),
    /missing inputs/,
  ],
  ['a short array', goodJson.replace('"salt":["3","5"]', '"salt":["3"]'), /salt needs 2 values, got 1/],
  [
    'a long array',
    goodJson.replace('"salt":["3","5"]', '"salt":["3","5","7"]'),
    /salt needs 2 values, got 3/,
  ],
  [
    'inputs_json over the size limit',
    JSON.stringify({ ...JSON.parse(goodJson), pad: 'x'.repeat(MAX_INPUTS_JSON) }),
    /limit is 4096/,
  ],
];

for (const [what, json, message] of badInputs) {
  test(`Prove with ${what} is INVALID_ARGUMENT`, async (t) => {
    const error = await rejection(
      t,
      client.prove('power_chain_8', { inputsJson: json }),
      status.INVALID_ARGUMENT,
    );
    t.regex(error.details, message);
  });
}

test('unknown and malformed circuit ids: NOT_FOUND and INVALID_ARGUMENT', async (t) => {
  await rejection(t, client.prove('policy_tx_9_9', { inputs: good }), status.NOT_FOUND);
  await rejection(t, client.prove('', { inputs: good }), status.INVALID_ARGUMENT);
  await rejection(t, client.prove('../power_chain_8', { inputs: good }), status.INVALID_ARGUMENT);
});

test('bad prepared witnesses are INVALID_ARGUMENT, including one that does not satisfy the circuit', async (t) => {
  await rejection(
    t,
    client.prove('power_chain_8', { wtns: new Uint8Array([1, 2, 3]) }),
    status.INVALID_ARGUMENT,
  );
  const other = await wtnsFor('power_chain_64', chainInputs(64, 3n));
  const wrongSize = await rejection(
    t,
    client.prove('power_chain_8', { wtns: other }),
    status.INVALID_ARGUMENT,
  );
  t.regex(wrongSize.details, /71 values; circuit power_chain_8 has 15 wires/);
  // Change the last witness value (a private chain element): a well-formed file that satisfies nothing.
  const tampered = await wtnsFor('power_chain_8', chainInputs(8, 3n));
  tampered[tampered.length - 32] ^= 1;
  const unsatisfied = await rejection(
    t,
    client.prove('power_chain_8', { wtns: tampered }),
    status.INVALID_ARGUMENT,
  );
  t.regex(unsatisfied.details, /does not satisfy the circuit/);
});

test('a request with neither inputs nor witness, or empty inputs, is INVALID_ARGUMENT', async (t) => {
  // The typed client always sets one of the two; a raw client can send neither.
  const raw = new ProverService(daemon.address, credentials.createInsecure()) as unknown as Client & {
    Prove(request: object, callback: (error: ServiceError | null) => void): void;
  };
  const error = await new Promise<ServiceError | null>((resolve) =>
    raw.Prove({ circuit: 'power_chain_8' }, resolve),
  );
  raw.close();
  t.is(error?.code, status.INVALID_ARGUMENT);
  t.regex(error?.details ?? '', /one of inputs_json or wtns is required/);
  await rejection(t, client.prove('power_chain_8', { inputsJson: '' }), status.INVALID_ARGUMENT);
});

test('a message over the transport limit is refused by gRPC itself (RESOURCE_EXHAUSTED), before any work', async (t) => {
  const error = await rejection(
    t,
    client.prove('power_chain_8', { wtns: new Uint8Array(MAX_MESSAGE + 1) }),
    status.RESOURCE_EXHAUSTED,
  );
  t.regex(error.details, /larger than/);
});

test.after('after every kind of bad input the daemon still proves', async (t) => {
  const result = await client.prove('power_chain_8', { inputs: chainInputs(8, 12345n) });
  t.true(
    await snarkjs.groth16.verify(
      await verificationKey('power_chain_8'),
      result.publicSignals,
      result.proofJson,
    ),
  );
  t.is(await client.health(), 'SERVING');
});
