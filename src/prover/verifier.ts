// Groth16 verification and verification-key export on a private single-threaded ffjavascript curve.
// snarkjs's own helpers share one process-wide curve with worker threads that must be terminated
// explicitly; terminating it under another user hangs that user, so the prover never touches it.
import { Worker } from 'node:worker_threads';
import { addon, type G1Json, type G2Json, type NativeVerifyingKey } from './native-addon.ts';

const R = 21888242871839275222246405745257275088548364400416034343698204186575808495617n;
const Q = 21888242871839275222246405745257275088696311157297823662689037894645226208583n;
const R_INV_Q = modPow(2n ** 256n % Q, Q - 2n, Q); // undoes the zkey's Montgomery encoding

export interface VerificationKey {
  protocol: string;
  curve: string;
  nPublic: number;
  vk_alpha_1: string[];
  vk_beta_2: string[][];
  vk_gamma_2: string[][];
  vk_delta_2: string[][];
  vk_alphabeta_12: unknown;
  IC: string[][];
}

export interface ProofJson {
  pi_a: string[];
  pi_b: string[][];
  pi_c: string[];
}

// Proof checks use the addon's native pairing. The one pairing snarkjs's key format needs as data
// (vk_alphabeta_12, in ffjavascript's Fq12 layout) is computed with ffjavascript's wasm, single-threaded,
// in one worker thread so it never blocks the event loop. The worker is plain JavaScript evaluated from this string, so it needs no
// TypeScript loader; it is unref'd while idle so it never keeps the process alive.
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
let curveP;
const curve = () => (curveP ??= import(workerData.ffjavascript).then((m) => m.buildBn128(true)));
const str = (v) => (Array.isArray(v) ? v.map(str) : String(v));
parentPort.on('message', async ({ id, op, args }) => {
  try {
    const c = await curve();
    const g1 = (p) => c.G1.fromObject(p.map(BigInt));
    const g2 = (p) => c.G2.fromObject(p.map((x) => x.map(BigInt)));
    const result = str(c.Gt.toObject(await c.pairing(g1(args.p), g2(args.q))));
    parentPort.postMessage({ id, result });
  } catch (err) {
    parentPort.postMessage({ id, error: String(err && err.message || err) });
  }
});
`;

type Pending = { resolve: (v: unknown) => void; reject: (e: Error) => void };
let worker: Worker | undefined;
const pending = new Map<number, Pending>();
let nextId = 1;

function curveWorker(): Worker {
  if (worker) return worker;
  // ffjavascript's web-worker shim treats any worker thread as one of its own and imports workerData.mod:
  // give it an empty module so it stays inert.
  const w = new Worker(WORKER_SOURCE, {
    eval: true,
    workerData: {
      ffjavascript: import.meta.resolve('ffjavascript'),
      mod: 'data:text/javascript,',
      type: 'module',
    },
  });
  w.on('message', ({ id, result, error }: { id: number; result?: unknown; error?: string }) => {
    const p = pending.get(id);
    if (!p) return;
    pending.delete(id);
    if (pending.size === 0) w.unref();
    if (error !== undefined) p.reject(new Error(`verifier: ${error}`));
    else p.resolve(result);
  });
  const fail = (err: Error) => {
    worker = undefined;
    for (const p of pending.values()) p.reject(new Error(`verifier worker failed: ${err.message}`));
    pending.clear();
  };
  w.on('error', fail);
  w.on('exit', (code) => fail(new Error(`exited with code ${code}`)));
  w.unref();
  worker = w;
  return w;
}

function call<T>(op: 'pairing', args: unknown): Promise<T> {
  const w = curveWorker();
  const id = nextId++;
  if (pending.size === 0) w.ref(); // keep the process alive until the answer arrives
  return new Promise<T>((resolve, reject) => {
    pending.set(id, { resolve: resolve as (v: unknown) => void, reject });
    w.postMessage({ id, op, args });
  });
}

function modPow(b: bigint, e: bigint, m: bigint): bigint {
  let r = 1n;
  let x = b % m;
  for (let k = e; k > 0n; k >>= 1n) {
    if (k & 1n) r = (r * x) % m;
    x = (x * x) % m;
  }
  return r;
}

function readLE(bytes: Uint8Array, offset: number): bigint {
  let v = 0n;
  for (let i = 31; i >= 0; i--) v = (v << 8n) | BigInt(bytes[offset + i]);
  return v;
}

// A zkey coordinate (Montgomery, little-endian) as a decimal string.
const coord = (bytes: Uint8Array, offset: number) => ((readLE(bytes, offset) * R_INV_Q) % Q).toString();
const g1At = (b: Uint8Array, o: number) => {
  const x = coord(b, o);
  const y = coord(b, o + 32);
  return x === '0' && y === '0' ? ['0', '1', '0'] : [x, y, '1'];
};
const g2At = (b: Uint8Array, o: number) => [
  [coord(b, o), coord(b, o + 32)],
  [coord(b, o + 64), coord(b, o + 96)],
  ['1', '0'],
];

/** The snarkjs verification_key.json of a Groth16 zkey (same content as `snarkjs zkey export verificationkey`). */
export async function verificationKeyFromZkey(zkey: Uint8Array): Promise<VerificationKey> {
  const view = new DataView(zkey.buffer, zkey.byteOffset, zkey.byteLength);
  const sections = new Map<number, { start: number; size: number }>();
  if (zkey.length < 12 || new TextDecoder().decode(zkey.subarray(0, 4)) !== 'zkey')
    throw new Error('zkey: bad magic');
  let pos = 12;
  while (pos + 12 <= zkey.length) {
    const id = view.getUint32(pos, true);
    const size = Number(view.getBigUint64(pos + 4, true));
    if (pos + 12 + size > zkey.length) throw new Error(`zkey: section ${id} is truncated`);
    sections.set(id, { start: pos + 12, size });
    pos += 12 + size;
  }
  const header = sections.get(2);
  const ic = sections.get(3);
  if (!header || !ic) throw new Error('zkey: missing Groth16 header or IC section');
  // n8q q n8r r nVars nPublic domainSize alpha1 beta1 beta2 gamma2 delta1 delta2
  const h = header.start;
  const nPublic = view.getUint32(h + 4 + 32 + 4 + 32 + 4, true);
  const pts = h + 4 + 32 + 4 + 32 + 12;
  if (header.size < pts - h + 64 * 3 + 128 * 3 || ic.size !== (nPublic + 1) * 64)
    throw new Error('zkey: header size mismatch');
  return withAlphaBeta({
    protocol: 'groth16',
    curve: 'bn128',
    nPublic,
    vk_alpha_1: g1At(zkey, pts),
    vk_beta_2: g2At(zkey, pts + 128),
    vk_gamma_2: g2At(zkey, pts + 256),
    vk_delta_2: g2At(zkey, pts + 448),
    IC: Array.from({ length: nPublic + 1 }, (_, i) => g1At(zkey, ic.start + 64 * i)),
  });
}

const g1Of = ([x, y]: G1Json) => (x === '0' && y === '0' ? ['0', '1', '0'] : [x, y, '1']);
const g2Of = ([x, y]: G2Json) => [x, y, ['1', '0']];

/** The same verification key from the points a loaded key reports (the addon's `KeyInfo.vk`). */
export function verificationKeyFromPoints(vk: NativeVerifyingKey): Promise<VerificationKey> {
  return withAlphaBeta({
    protocol: 'groth16',
    curve: 'bn128',
    nPublic: vk.IC.length - 1,
    vk_alpha_1: g1Of(vk.alpha1),
    vk_beta_2: g2Of(vk.beta2),
    vk_gamma_2: g2Of(vk.gamma2),
    vk_delta_2: g2Of(vk.delta2),
    IC: vk.IC.map(g1Of),
  });
}

async function withAlphaBeta(vk: Omit<VerificationKey, 'vk_alphabeta_12'>): Promise<VerificationKey> {
  const alphabeta = await call<unknown>('pairing', { p: vk.vk_alpha_1, q: vk.vk_beta_2 });
  const { IC, ...rest } = vk;
  return { ...rest, vk_alphabeta_12: alphabeta, IC };
}

const isDecimal = (v: unknown): v is string => typeof v === 'string' && /^[0-9]{1,78}$/.test(v);

const isPoint = (p: unknown, coords: number): boolean =>
  Array.isArray(p) && p.length >= 2 && p.slice(0, 2).flat().length === coords;

function wellFormed(vkey: VerificationKey, proof: ProofJson, publicSignals: string[]): boolean {
  try {
    if (!vkey || !Array.isArray(vkey.IC) || !Array.isArray(publicSignals)) return false;
    if (publicSignals.length !== vkey.nPublic || vkey.IC.length !== vkey.nPublic + 1) return false;
    if (!publicSignals.every((s) => isDecimal(s) && BigInt(s) < R)) return false;
    if (!proof || !isPoint(proof.pi_a, 2) || !isPoint(proof.pi_b, 4) || !isPoint(proof.pi_c, 2)) return false;
    const coords = [...proof.pi_a.slice(0, 2), ...proof.pi_c.slice(0, 2), ...proof.pi_b.slice(0, 2).flat()];
    return coords.every((x) => isDecimal(x) && BigInt(x) < Q);
  } catch {
    return false;
  }
}

/**
 * Groth16 check e(A,B) = e(alpha,beta)·e(IC(pub),gamma)·e(C,delta) (snarkjs semantics). Malformed input
 * gives false; only a failure of the verifier itself is thrown.
 */
export async function verifyProof(
  vkey: VerificationKey,
  proof: ProofJson,
  publicSignals: string[],
): Promise<boolean> {
  if (!wellFormed(vkey, proof, publicSignals)) return false;
  const g1 = (p: string[]): G1Json => (p[2] === '0' ? ['0', '0'] : [p[0], p[1]]);
  const g2 = (p: string[][]): G2Json => [
    [p[0][0], p[0][1]],
    [p[1][0], p[1][1]],
  ];
  try {
    const vk = {
      alpha1: g1(vkey.vk_alpha_1),
      beta2: g2(vkey.vk_beta_2),
      gamma2: g2(vkey.vk_gamma_2),
      delta2: g2(vkey.vk_delta_2),
      IC: vkey.IC.map(g1),
    };
    return await addon.verify(vk, { a: g1(proof.pi_a), b: g2(proof.pi_b), c: g1(proof.pi_c) }, publicSignals);
  } catch {
    return false; // a key whose fields are not point-shaped
  }
}
