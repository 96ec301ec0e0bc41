// The pool circuit policy_tx_2_2 (built by `npm run build` with a development key) served by a daemon with
// the native engine: 20 concurrent Prove calls for real transactions all return proofs that snarkjs
// verifies with the circuit's verification key, with the public signals the transaction builder expects.
import { readFile } from 'node:fs/promises';
import { status, type ServiceError } from '@grpc/grpc-js';
import test from 'ava';
import * as snarkjs from 'snarkjs';
import {
  buildTransactionInputs,
  circuitArtifacts,
  DEFAULT_CIRCUITS_DIR,
  POLICY_CIRCUIT,
  readR1csHeader,
} from '../../src/circuit/index.ts';
import { proofToBytes } from '../../src/crypto/index.ts';
import { ProverClient } from '../../src/prover/client.ts';
import type { ProverDaemon } from '../../src/prover/daemon/server.ts';
import { Scenario } from '../circuit/scenario.ts';
import { startTestDaemon } from './helpers/daemon.ts';
import { releaseCurve } from './helpers/test-circuits.ts';

const ALICE = 11n;
const BOB = 22n;
const artifacts = circuitArtifacts(POLICY_CIRCUIT.id);

let daemon: ProverDaemon;
let client: ProverClient;

test.before(async () => {
  daemon = await startTestDaemon({ circuitsDir: DEFAULT_CIRCUITS_DIR, engine: 'native', witnessWorkers: 2 });
  await daemon.ready;
  client = await ProverClient.connect({ addresses: daemon.address, deadlineMs: 600_000 });
});

test.after.always(async () => {
  client?.close();
  await daemon?.stop();
  await releaseCurve();
});

function world(): Scenario {
  const s = new Scenario();
  s.allow(ALICE);
  s.allow(BOB);
  return s;
}

test.serial(
  'ListCircuits describes policy_tx_2_2 from its r1cs and marks the devSetup key as a development key',
  async (t) => {
    const circuits = await client.listCircuits();
    const policy = circuits.find((c) => c.id === POLICY_CIRCUIT.id);
    if (!policy) return t.fail(`policy_tx_2_2 is not served: ${circuits.map((c) => c.id).join(', ')}`);
    const header = await readR1csHeader(artifacts.r1cs);
    t.is(policy.constraints, header.nConstraints);
    t.is(policy.wires, header.nWires);
    t.is(policy.publicInputs, 11);
    t.true(policy.developmentKey);
    t.regex(policy.zkeySha256, /^[0-9a-f]{64}$/);
  },
);

test.serial(
  '20 concurrent Prove calls for policy_tx_2_2 all return proofs that snarkjs verifies',
  async (t) => {
    const s = world();
    const spendable = [s.addNote(ALICE, 30n), s.addNote(ALICE, 12n), s.addNote(BOB, 50n), s.addNote(BOB, 8n)];
    const prepared = Array.from({ length: 20 }, (_, i) => {
      if (i % 2 === 0) return buildTransactionInputs(s.deposit(i % 4 === 0 ? ALICE : BOB, BigInt(1_000 + i)));
      const [a, b] = i % 4 === 1 ? [spendable[0], spendable[1]] : [spendable[2], spendable[3]];
      const owner = i % 4 === 1 ? ALICE : BOB;
      const total = a.amount + b.amount;
      return buildTransactionInputs(
        s.transaction([a, b], [s.output(total - 2n, owner === ALICE ? BOB : ALICE), s.output(2n, owner)], 0n),
      );
    });
    const results = await Promise.all(
      prepared.map((p) => client.prove(POLICY_CIRCUIT.id, { inputs: p.inputs })),
    );
    const vkey = JSON.parse(await readFile(artifacts.vkey, 'utf8'));
    for (const [i, result] of results.entries()) {
      t.is(result.engine, 'native');
      t.deepEqual(
        result.publicSignals,
        prepared[i].publicSignals.map((v) => v.toString()),
      );
      t.deepEqual(result.proof, proofToBytes(result.proofJson));
      t.true(
        await snarkjs.groth16.verify(vkey, result.publicSignals, result.proofJson),
        `proof ${i} verifies`,
      );
    }
    t.log(
      `native policy_tx_2_2: prove ${median(results.map((r) => r.proveMs)).toFixed(0)} ms, witness ${median(results.map((r) => r.witnessMs)).toFixed(0)} ms (medians)`,
    );
  },
);

test.serial(
  'a policy transaction that breaks a constraint is INVALID_ARGUMENT naming the template',
  async (t) => {
    const s = world();
    // A transfer (not a deposit: zero-amount dummy inputs skip the pool-root check).
    const [a, b] = [s.addNote(ALICE, 30n), s.addNote(ALICE, 12n)];
    const prepared = buildTransactionInputs(
      s.transaction([a, b], [s.output(40n, BOB), s.output(2n, ALICE)], 0n),
    );
    const broken = { ...prepared.inputs, root: (BigInt(prepared.inputs.root as string) + 1n).toString() };
    const error = (await t.throwsAsync(client.prove(POLICY_CIRCUIT.id, { inputs: broken }))) as ServiceError;
    t.is(error.code, status.INVALID_ARGUMENT);
    t.regex(error.details, /constraint violated in template \S+ line \d+/);
    t.truthy(error.metadata.get('failed-template')[0]);
    // And the daemon goes on proving.
    const ok = await client.prove(POLICY_CIRCUIT.id, { inputs: prepared.inputs });
    t.true(await client.verify(POLICY_CIRCUIT.id, ok.proof, ok.publicSignals));
  },
);

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)];
}
