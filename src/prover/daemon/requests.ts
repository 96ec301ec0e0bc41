// Request parsing: a Prove request becomes one typed witness source (inputs to compute the witness
// from, or a prepared .wtns checked against the circuit), a Verify request a checked proof and public
// signals. Everything malformed is an INVALID_ARGUMENT ProverError, before any work is admitted.
import { PROOF_BYTES, proofFromBytes } from '../../crypto/index.ts';
import { BN254_R, parseWtnsHeader, type WtnsHeader } from './binfile.ts';
import type { CircuitDescription } from './circuits.ts';
import type { Groth16Proof } from './engines/index.ts';
import { invalidArgument } from './errors.ts';
import type { ProveRequestMessage, VerifyRequestMessage } from './proto.ts';
import { type CircuitInputs, type InputLimits, parseCircuitInputs } from './witness/inputs.ts';

/** Where a proof's witness comes from. */
export type WitnessSource = { kind: 'inputs'; inputs: CircuitInputs } | { kind: 'wtns'; wtns: Uint8Array };

export function parseProveRequest(
  request: ProveRequestMessage,
  circuit: CircuitDescription,
  limits: InputLimits,
): WitnessSource {
  if (request.witness === 'inputs_json') {
    return { kind: 'inputs', inputs: parseCircuitInputs(request.inputs_json ?? '', limits) };
  }
  if (request.witness === 'wtns') {
    const wtns = request.wtns ?? Buffer.alloc(0);
    let header: WtnsHeader;
    try {
      header = parseWtnsHeader(wtns);
    } catch (error) {
      throw invalidArgument(`wtns is not a valid witness file: ${(error as Error).message}`);
    }
    if (header.prime !== BN254_R) throw invalidArgument('wtns is not over the BN254 scalar field');
    if (header.witnessCount !== circuit.wires) {
      throw invalidArgument(
        `wtns holds ${header.witnessCount} values; circuit ${circuit.id} has ${circuit.wires} wires`,
      );
    }
    return { kind: 'wtns', wtns: new Uint8Array(wtns) };
  }
  throw invalidArgument('one of inputs_json or wtns is required');
}

function checkProofJson(text: string): Groth16Proof {
  let proof: unknown;
  try {
    proof = JSON.parse(text);
  } catch (error) {
    throw invalidArgument(`proof_json is not valid JSON: ${(error as Error).message}`);
  }
  const decimal = (v: unknown) => typeof v === 'string' && /^[0-9]{1,80}$/.test(v);
  const p = proof as Partial<Groth16Proof> | null;
  const ok =
    p !== null &&
    typeof p === 'object' &&
    Array.isArray(p.pi_a) &&
    p.pi_a.length === 3 &&
    p.pi_a.every(decimal) &&
    Array.isArray(p.pi_c) &&
    p.pi_c.length === 3 &&
    p.pi_c.every(decimal) &&
    Array.isArray(p.pi_b) &&
    p.pi_b.length === 3 &&
    p.pi_b.every((row) => Array.isArray(row) && row.length === 2 && row.every(decimal));
  if (!ok)
    throw invalidArgument(
      'proof_json must be a snarkjs Groth16 proof: pi_a and pi_c of 3, pi_b of 3x2 decimal strings',
    );
  return { ...(p as Groth16Proof), protocol: 'groth16', curve: 'bn128' };
}

function checkPublicSignals(circuit: CircuitDescription, signals: string[]): void {
  if (signals.length !== circuit.publicSignals) {
    throw invalidArgument(
      `circuit ${circuit.id} has ${circuit.publicSignals} public signals, got ${signals.length}`,
    );
  }
  signals.forEach((value, i) => {
    if (!/^[0-9]{1,80}$/.test(value) || BigInt(value) >= BN254_R)
      throw invalidArgument(`public_signals[${i}] is not a decimal field element`);
  });
}

export function parseVerifyRequest(
  request: VerifyRequestMessage,
  circuit: CircuitDescription,
): { proof: Groth16Proof; publicSignals: string[] } {
  let proof: Groth16Proof;
  if (request.encoding === 'proof') {
    const bytes = request.proof ?? Buffer.alloc(0);
    if (bytes.length !== PROOF_BYTES)
      throw invalidArgument(`proof must be ${PROOF_BYTES} bytes, got ${bytes.length}`);
    try {
      proof = proofFromBytes(new Uint8Array(bytes)) as Groth16Proof;
    } catch (error) {
      throw invalidArgument(`proof bytes are malformed: ${(error as Error).message}`);
    }
  } else if (request.encoding === 'proof_json') {
    proof = checkProofJson(request.proof_json ?? '');
  } else {
    throw invalidArgument('one of proof or proof_json is required');
  }
  checkPublicSignals(circuit, request.public_signals);
  return { proof, publicSignals: request.public_signals };
}
