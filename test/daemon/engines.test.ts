// Both engines behind the same daemon code, on the same keys and witnesses: each proof verifies with
// snarkjs, both give the same public signals, and a witness that does not satisfy the circuit is refused
// by both (INVALID_ARGUMENT) rather than returned as a proof.
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { status, type ServiceError } from '@grpc/grpc-js';
import test from 'ava';
import * as snarkjs from 'snarkjs';
import { loadWitnessCalculator } from '../../src/circuit/witness-calculator.ts';
import { ProverClient } from '../../src/prover/client.ts';
import type { EngineName } from '../../src/prover/daemon/engines/index.ts';
import type { ProverDaemon } from '../../src/prover/daemon/server.ts';
import { startTestDaemon } from './helpers/daemon.ts';
import { chainInputs, ensureTestCircuits, releaseCurve } from './helpers/test-circuits.ts';

const engines: EngineName[] = ['native', 'snarkjs'];
const daemons = new Map<EngineName, ProverDaemon>();
const clients = new Map<EngineName, ProverClient>();

test.before(async () => {
  for (const engine of engines) {
    const daemon = await startTestDaemon({ engine });
    await daemon.ready;
    daemons.set(engine, daemon);
    clients.set(engine, await ProverClient.connect({ addresses: daemon.address, deadlineMs: 120_000 }));
  }
});

test.after.always(async () => {
  for (const client of clients.values()) client.close();
  for (const daemon of daemons.values()) await daemon.stop();
  await releaseCurve();
});

async function wtnsFor(id: string, inputs: Record<string, unknown>): Promise<Uint8Array> {
  const dir = path.join(await ensureTestCircuits(), id);
  return (await loadWitnessCalculator(path.join(dir, `${id}_js`, `${id}.wasm`))).calculateWtns(
    inputs as never,
  );
}

test.serial(
  'both engines prove the same witness; every proof verifies and the public signals agree',
  async (t) => {
    for (const id of ['power_chain_8', 'power_chain_64']) {
      const squarings = id === 'power_chain_8' ? 8 : 64;
      const wtns = await wtnsFor(id, chainInputs(squarings, 13n));
      const vkey = JSON.parse(
        await readFile(path.join(await ensureTestCircuits(), id, 'verification_key.json'), 'utf8'),
      );
      const signals: string[][] = [];
      for (const engine of engines) {
        const result = await clients.get(engine)!.prove(id, { wtns });
        t.is(result.engine, engine);
        t.true(
          await snarkjs.groth16.verify(vkey, result.publicSignals, result.proofJson),
          `${engine} proof for ${id} verifies`,
        );
        // Each engine's Verify accepts the other engine's proof.
        for (const other of engines)
          t.true(await clients.get(other)!.verify(id, result.proof, result.publicSignals));
        signals.push(result.publicSignals);
      }
      t.deepEqual(signals[0], signals[1]);
    }
  },
);

test.serial('both engines refuse a witness that does not satisfy the circuit', async (t) => {
  const tampered = await wtnsFor('power_chain_8', chainInputs(8, 3n));
  tampered[tampered.length - 32] ^= 1;
  for (const engine of engines) {
    const error = (await t.throwsAsync(
      clients.get(engine)!.prove('power_chain_8', { wtns: tampered }),
    )) as ServiceError;
    t.is(error.code, status.INVALID_ARGUMENT, `${engine}: ${error.details}`);
    t.regex(error.details, /does not satisfy the circuit/);
  }
});
