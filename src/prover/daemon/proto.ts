// Loads the prover and health service definitions from proto/ (shared by the daemon and the client).
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import * as protoLoader from '@grpc/proto-loader';

const PROTO_DIR = fileURLToPath(new URL('../../../proto/', import.meta.url));

// bytes as Buffer, 64-bit ints as strings, enums as names, defaults filled in, oneofs reported by name.
const LOADER_OPTIONS: protoLoader.Options = {
  keepCase: true,
  longs: String,
  enums: String,
  defaults: true,
  oneofs: true,
};

function load(file: string): grpc.GrpcObject {
  return grpc.loadPackageDefinition(protoLoader.loadSync(PROTO_DIR + file, LOADER_OPTIONS));
}

const prover = load('prover.proto') as unknown as {
  poolproxy: { prover: { v1: { Prover: grpc.ServiceClientConstructor } } };
};
const health = load('health.proto') as unknown as {
  grpc: { health: { v1: { Health: grpc.ServiceClientConstructor } } };
};

export const ProverService = prover.poolproxy.prover.v1.Prover;
export const HealthService = health.grpc.health.v1.Health;
/** Fully qualified name, as used by health checks and service configs. */
export const PROVER_SERVICE_NAME = 'poolproxy.prover.v1.Prover';

export interface ProveRequestMessage {
  circuit: string;
  inputs_json?: string;
  wtns?: Buffer;
  witness?: 'inputs_json' | 'wtns';
}

export interface ProveResponseMessage {
  proof: Buffer;
  proof_json: string;
  public_signals: string[];
  witness_ms: number;
  prove_ms: number;
  verify_ms: number;
  queue_ms: number;
  engine: string;
}

export interface VerifyRequestMessage {
  circuit: string;
  proof?: Buffer;
  proof_json?: string;
  encoding?: 'proof' | 'proof_json';
  public_signals: string[];
}

export interface VerifyResponseMessage {
  valid: boolean;
  verify_ms: number;
}

export interface CircuitInfoMessage {
  id: string;
  constraints: number;
  public_inputs: number;
  wires: number;
  zkey_sha256: string;
  development_key: boolean;
}

export interface ListCircuitsResponseMessage {
  circuits: CircuitInfoMessage[];
}

export type ServingStatus = 'UNKNOWN' | 'SERVING' | 'NOT_SERVING' | 'SERVICE_UNKNOWN';
