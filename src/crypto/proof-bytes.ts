// snarkjs proof JSON ⇄ the 256-byte on-chain layout A(64) ‖ B(128) ‖ C(64), G2 limbs imaginary part first.
import { bigintToBytes32, bytesToBigint } from './field.ts';

export const PROOF_BYTES = 256;
/** BN254 base field modulus q (coordinates live here, not in Fr). */
export const BASE_FIELD_MODULUS =
  21888242871839275222246405745257275088696311157297823662689037894645226208583n;

export interface SnarkjsProof {
  pi_a: string[];
  pi_b: string[][];
  pi_c: string[];
  protocol: string;
  curve: string;
}

function coordinate(value: unknown, name: string): bigint {
  if (typeof value !== 'string' || !/^[0-9]+$/.test(value))
    throw new TypeError(`${name} must be a decimal string`);
  const v = BigInt(value);
  if (v >= BASE_FIELD_MODULUS) throw new RangeError(`${name} is not a canonical base-field element`);
  return v;
}

export function proofToBytes(proof: SnarkjsProof): Uint8Array {
  if (!proof || !Array.isArray(proof.pi_a) || !Array.isArray(proof.pi_b) || !Array.isArray(proof.pi_c)) {
    throw new TypeError('proof must be a snarkjs Groth16 proof with pi_a, pi_b and pi_c');
  }
  if (proof.pi_b.length < 2 || !proof.pi_b.every((row) => Array.isArray(row) && row.length >= 2)) {
    throw new TypeError('proof.pi_b must hold two Fq2 coordinates');
  }
  const limbs = [
    coordinate(proof.pi_a[0], 'pi_a[0]'),
    coordinate(proof.pi_a[1], 'pi_a[1]'),
    coordinate(proof.pi_b[0][1], 'pi_b[0][1]'),
    coordinate(proof.pi_b[0][0], 'pi_b[0][0]'),
    coordinate(proof.pi_b[1][1], 'pi_b[1][1]'),
    coordinate(proof.pi_b[1][0], 'pi_b[1][0]'),
    coordinate(proof.pi_c[0], 'pi_c[0]'),
    coordinate(proof.pi_c[1], 'pi_c[1]'),
  ];
  const out = new Uint8Array(PROOF_BYTES);
  limbs.forEach((v, i) => out.set(bigintToBytes32(v), i * 32));
  return out;
}

export function proofFromBytes(bytes: Uint8Array): SnarkjsProof {
  if (!(bytes instanceof Uint8Array) || bytes.length !== PROOF_BYTES) {
    throw new RangeError(`a proof is exactly ${PROOF_BYTES} bytes`);
  }
  const limb = (i: number) => {
    const v = bytesToBigint(bytes.subarray(i * 32, i * 32 + 32));
    if (v >= BASE_FIELD_MODULUS)
      throw new RangeError(`proof limb ${i} is not a canonical base-field element`);
    return v.toString();
  };
  return {
    pi_a: [limb(0), limb(1), '1'],
    pi_b: [
      [limb(3), limb(2)],
      [limb(5), limb(4)],
      ['1', '0'],
    ],
    pi_c: [limb(6), limb(7), '1'],
    protocol: 'groth16',
    curve: 'bn128',
  };
}
