// Worker thread: computes .wtns witnesses with each circuit's circom wasm (loaded once per circuit when the
// worker starts). The pool sends one task at a time.
import { parentPort, workerData } from 'node:worker_threads';
import { loadWitnessCalculator, type WitnessCalculator } from '../../../circuit/witness-calculator.ts';
import { WitnessError } from '../../../circuit/witness-error.ts';
import type { WitnessFailure, WorkerInit, WorkerReply, WorkerTask } from './protocol.ts';

const port = parentPort;
if (!port) throw new Error('witness-worker must run in a worker thread');

function failure(error: unknown): WitnessFailure {
  if (error instanceof WitnessError && error.code === 'constraint_failed') {
    return { kind: 'constraint', message: error.message, template: error.template, line: error.line };
  }
  if (error instanceof WitnessError) return { kind: 'input', message: error.message };
  return { kind: 'internal', message: error instanceof Error ? error.message : String(error) };
}

async function start(): Promise<void> {
  const { wasmPaths } = workerData as WorkerInit;
  const calculators = new Map<string, WitnessCalculator>();
  for (const [circuit, path] of Object.entries(wasmPaths))
    calculators.set(circuit, await loadWitnessCalculator(path));

  port!.on('message', async (task: WorkerTask) => {
    const calculator = calculators.get(task.circuit);
    try {
      if (!calculator) throw new Error(`circuit ${task.circuit} is not loaded in this worker`);
      const started = performance.now();
      const wtns = await calculator.calculateWtns(task.inputs);
      const reply: WorkerReply = { taskId: task.taskId, wtns, ms: performance.now() - started };
      port!.postMessage(reply, [wtns.buffer as ArrayBuffer]);
    } catch (error) {
      const reply: WorkerReply = { taskId: task.taskId, error: failure(error) };
      port!.postMessage(reply);
    }
  });
  port!.postMessage({ ready: true });
}

start().catch((error) => {
  port!.postMessage({ fatal: error instanceof Error ? error.message : String(error) });
});
