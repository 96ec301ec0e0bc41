// Messages between the witness pool (main thread) and its worker threads.
import type { CircuitInputs } from './inputs.ts';

export interface WorkerInit {
  /** circuit id -> path of its circom wasm */
  wasmPaths: Record<string, string>;
}

export interface WorkerTask {
  taskId: number;
  circuit: string;
  inputs: CircuitInputs;
}

/** Why a witness could not be computed: the circuit rejected the inputs, or something else went wrong. */
export interface WitnessFailure {
  kind: 'constraint' | 'input' | 'internal';
  message: string;
  template?: string;
  line?: number;
}

export type WorkerReply =
  { taskId: number; wtns: Uint8Array; ms: number } | { taskId: number; error: WitnessFailure };

export type WorkerStatus = { ready: true } | { fatal: string };
