// Typed client of the prover daemon. Given several daemon addresses it opens one channel balanced with
// grpc-js round_robin over all of them (how proving scales past one machine), puts a deadline on every
// call, and retries calls that fail with UNAVAILABLE (a daemon stopping, restarting or still loading its
// keys) on the next daemon. Nothing else is retried: other errors are the caller's answer.
import { lookup } from 'node:dns/promises';
import { isIPv4, isIPv6 } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import * as grpc from '@grpc/grpc-js';
import {
  type CircuitInfoMessage,
  HealthService,
  type ListCircuitsResponseMessage,
  PROVER_SERVICE_NAME,
  type ProveRequestMessage,
  type ProveResponseMessage,
  ProverService,
  type ServingStatus,
  type VerifyRequestMessage,
  type VerifyResponseMessage,
} from './daemon/proto.ts';

export interface ProverClientOptions {
  /** "host:port" or "host:port,host:port,…" (or an array of them). */
  addresses: string | string[];
  /** PEM CA certificate(s) trusted for the daemons' TLS certificates; without it the channel is plaintext. */
  tlsCa?: Buffer;
  /** Name the daemons' certificates are checked against, when it is not the address's host. */
  tlsServerName?: string;
  /** Default deadline per call (all retries included), in ms. Default 120 s. */
  deadlineMs?: number;
  /** Attempts per call when daemons answer UNAVAILABLE. Default 5. */
  maxAttempts?: number;
  /** First wait before a retry, doubled each time (with jitter). Default 100 ms. */
  retryBackoffMs?: number;
}

export interface CallOptions {
  deadlineMs?: number;
  signal?: AbortSignal;
}

export interface Groth16ProofJson {
  pi_a: string[];
  pi_b: string[][];
  pi_c: string[];
  protocol: string;
  curve: string;
}

export type ProveInput = { inputs: Record<string, unknown> } | { inputsJson: string } | { wtns: Uint8Array };

export interface ProveResult {
  /** 256-byte on-chain proof. */
  proof: Uint8Array;
  proofJson: Groth16ProofJson;
  publicSignals: string[];
  witnessMs: number;
  proveMs: number;
  verifyMs: number;
  queueMs: number;
  engine: string;
  /** Calls it took (more than 1 when a daemon was unavailable). */
  attempts: number;
}

export interface CircuitInfo {
  id: string;
  constraints: number;
  publicInputs: number;
  wires: number;
  zkeySha256: string;
  developmentKey: boolean;
}

type UnaryMethod<Req, Res> = (
  request: Req,
  metadata: grpc.Metadata,
  options: grpc.CallOptions,
  callback: (error: grpc.ServiceError | null, response?: Res) => void,
) => grpc.ClientUnaryCall;

/** A generated gRPC client: its unary methods by name. */
type ServiceClient = grpc.Client & Record<string, UnaryMethod<unknown, unknown>>;

const MiB = 1 << 20;

/** JSON with bigints written as decimal strings (the daemon's inputs_json format). */
function inputsToJson(inputs: Record<string, unknown>): string {
  return JSON.stringify(inputs, (_key, value) => (typeof value === 'bigint' ? value.toString() : value));
}

function splitHostPort(address: string): { host: string; port: string } {
  const match = /^\[?([^\]]+?)\]?:(\d{1,5})$/.exec(address.trim());
  if (!match) throw new Error(`prover address must be host:port, got "${address}"`);
  return { host: match[1], port: match[2] };
}

/** A grpc-js target naming every daemon: ipv4:/ipv6: static lists, or dns: for one host name. */
async function channelTarget(addresses: string[]): Promise<string> {
  const parsed = addresses.map(splitHostPort);
  if (parsed.length === 1 && !isIPv4(parsed[0].host) && !isIPv6(parsed[0].host))
    return `dns:${parsed[0].host}:${parsed[0].port}`;
  const resolved: { host: string; port: string }[] = [];
  for (const { host, port } of parsed) {
    if (isIPv4(host) || isIPv6(host)) resolved.push({ host, port });
    else for (const found of await lookup(host, { all: true })) resolved.push({ host: found.address, port });
  }
  if (resolved.every((a) => isIPv4(a.host)))
    return `ipv4:${resolved.map((a) => `${a.host}:${a.port}`).join(',')}`;
  if (resolved.every((a) => isIPv6(a.host)))
    return `ipv6:${resolved.map((a) => `[${a.host}]:${a.port}`).join(',')}`;
  throw new Error('prover addresses must be all IPv4 or all IPv6');
}

export class ProverClient {
  readonly #prover: ServiceClient;
  readonly #healthClient: ServiceClient;
  readonly #deadlineMs: number;
  readonly #maxAttempts: number;
  readonly #retryBackoffMs: number;

  private constructor(target: string, options: ProverClientOptions) {
    const credentials = options.tlsCa
      ? grpc.credentials.createSsl(options.tlsCa)
      : grpc.credentials.createInsecure();
    const channelOptions: grpc.ChannelOptions = {
      'grpc.service_config': JSON.stringify({ loadBalancingConfig: [{ round_robin: {} }] }),
      'grpc.max_send_message_length': 64 * MiB,
      'grpc.max_receive_message_length': 16 * MiB,
      // The client's own loop retries UNAVAILABLE with knowledge of the deadline; no hidden second layer.
      'grpc.enable_retries': 0,
    };
    if (options.tlsServerName) channelOptions['grpc.ssl_target_name_override'] = options.tlsServerName;
    this.#prover = new ProverService(target, credentials, channelOptions) as unknown as ServiceClient;
    // The health client shares the prover client's channel, so a health check tests the same connections.
    this.#healthClient = new HealthService(target, credentials, {
      channelOverride: this.#prover.getChannel(),
    }) as unknown as ServiceClient;
    this.#deadlineMs = options.deadlineMs ?? 120_000;
    this.#maxAttempts = Math.max(1, options.maxAttempts ?? 5);
    this.#retryBackoffMs = options.retryBackoffMs ?? 100;
  }

  static async connect(options: ProverClientOptions): Promise<ProverClient> {
    const list = (Array.isArray(options.addresses) ? options.addresses : options.addresses.split(','))
      .map((a) => a.trim())
      .filter(Boolean);
    if (list.length === 0) throw new Error('at least one prover address is required');
    return new ProverClient(await channelTarget(list), options);
  }

  async #call<Req, Res>(
    client: grpc.Client & Record<string, UnaryMethod<unknown, unknown>>,
    method: string,
    request: Req,
    options: CallOptions = {},
  ): Promise<{ response: Res; attempts: number }> {
    const deadline = Date.now() + (options.deadlineMs ?? this.#deadlineMs);
    let backoff = this.#retryBackoffMs;
    for (let attempt = 1; ; attempt++) {
      options.signal?.throwIfAborted();
      try {
        const response = await new Promise<Res>((resolve, reject) => {
          const call = client[method](request, new grpc.Metadata(), { deadline }, (error, response) =>
            error ? reject(error) : resolve(response as Res),
          );
          const onAbort = () => call.cancel();
          options.signal?.addEventListener('abort', onAbort, { once: true });
          call.on('status', () => options.signal?.removeEventListener('abort', onAbort));
        });
        return { response, attempts: attempt };
      } catch (error) {
        const code = (error as grpc.ServiceError).code;
        const wait = backoff * (0.5 + Math.random());
        if (
          code !== grpc.status.UNAVAILABLE ||
          attempt >= this.#maxAttempts ||
          Date.now() + wait >= deadline ||
          options.signal?.aborted
        )
          throw error;
        await sleep(wait);
        backoff *= 2;
      }
    }
  }

  async prove(circuit: string, input: ProveInput, options?: CallOptions): Promise<ProveResult> {
    const request: ProveRequestMessage = { circuit };
    if ('inputs' in input) request.inputs_json = inputsToJson(input.inputs);
    else if ('inputsJson' in input) request.inputs_json = input.inputsJson;
    else request.wtns = Buffer.from(input.wtns);
    const { response, attempts } = await this.#call<ProveRequestMessage, ProveResponseMessage>(
      this.#prover,
      'Prove',
      request,
      options,
    );
    return {
      proof: new Uint8Array(response.proof),
      proofJson: JSON.parse(response.proof_json) as Groth16ProofJson,
      publicSignals: response.public_signals,
      witnessMs: response.witness_ms,
      proveMs: response.prove_ms,
      verifyMs: response.verify_ms,
      queueMs: response.queue_ms,
      engine: response.engine,
      attempts,
    };
  }

  async verify(
    circuit: string,
    proof: Uint8Array | Groth16ProofJson,
    publicSignals: string[],
    options?: CallOptions,
  ): Promise<boolean> {
    const request: VerifyRequestMessage =
      proof instanceof Uint8Array
        ? { circuit, proof: Buffer.from(proof), public_signals: publicSignals }
        : { circuit, proof_json: JSON.stringify(proof), public_signals: publicSignals };
    const { response } = await this.#call<VerifyRequestMessage, VerifyResponseMessage>(
      this.#prover,
      'Verify',
      request,
      options,
    );
    return response.valid;
  }

  async listCircuits(options?: CallOptions): Promise<CircuitInfo[]> {
    const { response } = await this.#call<object, ListCircuitsResponseMessage>(
      this.#prover,
      'ListCircuits',
      {},
      options,
    );
    return response.circuits.map((c: CircuitInfoMessage) => ({
      id: c.id,
      constraints: c.constraints,
      publicInputs: c.public_inputs,
      wires: c.wires,
      zkeySha256: c.zkey_sha256,
      developmentKey: c.development_key,
    }));
  }

  /** Health of the prover service on one of the daemons (not retried: it is the thing being probed). */
  async health(service = PROVER_SERVICE_NAME, options: CallOptions = {}): Promise<ServingStatus> {
    const deadline = Date.now() + (options.deadlineMs ?? 5_000);
    return new Promise((resolve, reject) => {
      this.#healthClient.Check({ service }, new grpc.Metadata(), { deadline }, (error, response) =>
        error ? reject(error) : resolve((response as { status: ServingStatus }).status),
      );
    });
  }

  close(): void {
    this.#prover.close();
  }
}
