// A fixed pool of worker threads computing witnesses, so witness generation (single-threaded wasm)
// overlaps with the proof running on all cores. Tasks wait in a FIFO; a task whose AbortSignal fires
// while it waits leaves the queue at once. The wasm of a running task cannot be interrupted, so when a
// running task is abandoned its worker is terminated and replaced: the work really stops.
import { Worker } from 'node:worker_threads';
import { internal, invalidArgument, type ProverError, unavailable } from '../errors.ts';
import type { CircuitInputs } from './inputs.ts';
import type { WitnessFailure, WorkerInit, WorkerReply, WorkerStatus, WorkerTask } from './protocol.ts';
import { importInWorker, siblingModule } from '../../../worker-module.ts';

export interface WitnessResult {
  wtns: Uint8Array;
  /** Time the worker spent computing, without the wait for a free worker. */
  ms: number;
}

interface PendingTask {
  task: WorkerTask;
  signal?: AbortSignal;
  onAbort?: () => void;
  resolve(result: WitnessResult): void;
  reject(error: unknown): void;
}

interface PoolWorker {
  worker: Worker;
  busy?: PendingTask;
}

/**
 * Turns a failed witness computation into a status: the inputs were wrong (unknown or missing signals,
 * wrong array sizes, a violated constraint) -> INVALID_ARGUMENT; anything else -> INTERNAL. A violated
 * constraint names its circom template and line, in the message and as trailing metadata
 * (failed-template, failed-line).
 */
function witnessError(failure: WitnessFailure): ProverError {
  if (failure.kind === 'constraint' && failure.template) {
    return invalidArgument(`constraint violated in template ${failure.template} line ${failure.line}`, {
      'failed-template': failure.template,
      'failed-line': String(failure.line),
    });
  }
  if (failure.kind === 'internal') return internal(`witness generation failed: ${failure.message}`);
  return invalidArgument(`inputs rejected by the circuit: ${failure.message}`);
}

// The worker's module: witness-worker.js beside the compiled pool, witness-worker.ts (through tsx) beside the source.
const BOOTSTRAP = importInWorker(siblingModule('./witness-worker', import.meta.url));

export class WitnessPool {
  readonly #workers: PoolWorker[] = [];
  readonly #waiting: PendingTask[] = [];
  #nextTaskId = 1;
  #closed = false;
  /** Workers replaced after a crash or an abandoned task. */
  replacements = 0;

  readonly #init: WorkerInit;

  private constructor(init: WorkerInit) {
    this.#init = init;
  }

  /** Starts `size` workers, each with every circuit's wasm compiled, and resolves once all are ready. */
  static async start(wasmPaths: Record<string, string>, size: number): Promise<WitnessPool> {
    const pool = new WitnessPool({ wasmPaths });
    try {
      await Promise.all(Array.from({ length: Math.max(1, size) }, () => pool.#spawn()));
    } catch (error) {
      await pool.close();
      throw error;
    }
    return pool;
  }

  get size(): number {
    return this.#workers.length;
  }

  /** Tasks waiting for a free worker. */
  get queued(): number {
    return this.#waiting.length;
  }

  /** Tasks currently computing. */
  get running(): number {
    return this.#workers.filter((w) => w.busy).length;
  }

  #spawn(): Promise<void> {
    return new Promise((resolve, reject) => {
      const worker = new Worker(BOOTSTRAP, { eval: true, workerData: this.#init });
      const entry: PoolWorker = { worker };
      const onStartup = (message: WorkerStatus) => {
        worker.off('message', onStartup);
        if ('fatal' in message) {
          void worker.terminate();
          reject(new Error(`witness worker failed to start: ${message.fatal}`));
          return;
        }
        if (this.#closed) {
          // The pool shut down while this replacement was starting.
          void worker.terminate();
          resolve();
          return;
        }
        worker.on('message', (reply: WorkerReply) => this.#finish(entry, reply));
        this.#workers.push(entry);
        resolve();
        this.#dispatch();
      };
      worker.on('message', onStartup);
      // `on`, not `once`: an error event without a listener would be rethrown in the main thread.
      worker.on('error', (error) => {
        reject(error);
        this.#crashed(entry, error);
      });
    });
  }

  /** A worker died (out of memory, a bug): fail its task, replace it, keep serving. */
  #crashed(entry: PoolWorker, error: Error): void {
    const task = entry.busy;
    if (!this.#replace(entry)) return;
    if (task) this.#settle(task, () => task.reject(internal(`witness worker crashed: ${error.message}`)));
  }

  /** Stops a worker (whatever it is computing is dropped) and starts a fresh one in its place. */
  #replace(entry: PoolWorker): boolean {
    const index = this.#workers.indexOf(entry);
    if (index < 0) return false;
    this.#workers.splice(index, 1);
    entry.busy = undefined;
    void entry.worker.terminate();
    this.replacements += 1;
    if (!this.#closed) this.#spawn().catch(() => undefined);
    return true;
  }

  compute(circuit: string, inputs: CircuitInputs, signal?: AbortSignal): Promise<WitnessResult> {
    if (this.#closed) return Promise.reject(unavailable('witness pool is shut down'));
    signal?.throwIfAborted();
    return new Promise((resolve, reject) => {
      const pending: PendingTask = {
        task: { taskId: this.#nextTaskId++, circuit, inputs },
        signal,
        resolve,
        reject,
      };
      if (signal) {
        pending.onAbort = () => {
          const at = this.#waiting.indexOf(pending);
          if (at >= 0) this.#waiting.splice(at, 1);
          const running = this.#workers.find((w) => w.busy === pending);
          if (running) this.#replace(running);
          reject(signal.reason);
        };
        signal.addEventListener('abort', pending.onAbort, { once: true });
      }
      this.#waiting.push(pending);
      this.#dispatch();
    });
  }

  #dispatch(): void {
    for (const entry of this.#workers) {
      if (this.#waiting.length === 0) return;
      if (entry.busy) continue;
      const next = this.#waiting.shift()!;
      entry.busy = next;
      entry.worker.postMessage(next.task);
    }
  }

  #settle(task: PendingTask, action: () => void): void {
    if (task.onAbort) task.signal?.removeEventListener('abort', task.onAbort);
    if (!task.signal?.aborted) action();
  }

  #finish(entry: PoolWorker, reply: WorkerReply): void {
    const task = entry.busy;
    entry.busy = undefined;
    if (task && task.task.taskId === reply.taskId) {
      if ('wtns' in reply) this.#settle(task, () => task.resolve({ wtns: reply.wtns, ms: reply.ms }));
      else this.#settle(task, () => task.reject(witnessError(reply.error)));
    }
    this.#dispatch();
  }

  async close(): Promise<void> {
    this.#closed = true;
    for (const task of this.#waiting.splice(0))
      this.#settle(task, () => task.reject(unavailable('witness pool is shut down')));
    await Promise.all(this.#workers.splice(0).map((entry) => entry.worker.terminate()));
  }
}
