// Differential tests: the addon's field, curve, MSM and FFT primitives against @noble/curves and a
// direct bigint DFT, on random inputs and on the edge cases (0, 1, p-1, infinity, P+P, P+(-P)).
import test from 'ava';
import { randomBytes } from 'node:crypto';
import { bn254 } from '@noble/curves/bn254.js';
import { addon, type G1Json, type G2Json, type MsmPath } from '../../src/prover/native-addon.ts';

const ops = addon.testOps;
const Q = bn254.fields.Fp.ORDER;
const R = bn254.fields.Fr.ORDER;
const { G1, G2 } = bn254;
type P1 = ReturnType<typeof G1.Point.fromAffine>;
type P2 = ReturnType<typeof G2.Point.fromAffine>;

function rand(mod: bigint): bigint {
  return BigInt(`0x${randomBytes(40).toString('hex')}`) % mod;
}
const edges = (m: bigint) => [0n, 1n, 2n, m - 1n, m - 2n, (m - 1n) / 2n, (m + 1n) / 2n];

function modInv(a: bigint, m: bigint): bigint {
  let [r0, r1, s0, s1] = [a % m, m, 1n, 0n];
  while (r1 !== 0n) {
    const q = r0 / r1;
    [r0, r1] = [r1, r0 - q * r1];
    [s0, s1] = [s1, s0 - q * s1];
  }
  return ((s0 % m) + m) % m;
}

function checkField(t: import('ava').ExecutionContext, name: 'fq' | 'fr', m: bigint) {
  const values = [...edges(m), ...Array.from({ length: 40 }, () => rand(m))];
  for (const a of values) {
    for (const b of [values[0], values[1], values[3], rand(m), rand(m)]) {
      const A = a.toString();
      const B = b.toString();
      t.is(ops[name]('add', A, B), ((a + b) % m).toString());
      t.is(ops[name]('sub', A, B), ((((a - b) % m) + m) % m).toString());
      t.is(ops[name]('mul', A, B), ((a * b) % m).toString());
      t.is(ops[name]('lazy', A, B), ((a + b) ** 3n % m).toString(), `unreduced chain ${A} ${B}`);
    }
    t.is(ops[name]('neg', a.toString()), ((m - a) % m).toString());
    t.is(ops[name]('sqr', a.toString()), ((a * a) % m).toString());
    if (a !== 0n) {
      t.is(ops[name]('inv', a.toString()), modInv(a, m).toString());
      t.is(ops[name]('invVartime', a.toString()), modInv(a, m).toString());
    }
  }
  // Values with long runs of zero bits exercise the multi-bit halving of the binary inverse.
  for (const a of [1n << 200n, (1n << 253n) + 1n, 3n << 64n, m - (1n << 130n), 2n ** 128n - 1n]) {
    t.is(ops[name]('invVartime', (a % m).toString()), modInv(a % m, m).toString(), `invVartime ${a}`);
  }
  t.is(ops[name]('invVartime', '0'), '0', 'the inverse of zero is returned as zero');
  t.throws(() => ops[name]('add', m.toString(), '1'), { message: /out of range/ });
}

test('Fq arithmetic matches bigint arithmetic mod q on random and edge values', (t) =>
  checkField(t, 'fq', Q));
test('Fr arithmetic matches bigint arithmetic mod r on random and edge values', (t) =>
  checkField(t, 'fr', R));

const g1Json = (p: P1): G1Json => {
  const a = p.toAffine();
  return [a.x.toString(), a.y.toString()];
};
const g2Json = (p: P2): G2Json => {
  const a = p.toAffine();
  return [
    [a.x.c0.toString(), a.x.c1.toString()],
    [a.y.c0.toString(), a.y.c1.toString()],
  ];
};
const INF1: G1Json = ['0', '0'];
const INF2: G2Json = [
  ['0', '0'],
  ['0', '0'],
];

test('generators agree with @noble/curves', (t) => {
  const g = ops.generators();
  t.deepEqual(g.g1, g1Json(G1.Point.BASE));
  t.deepEqual(g.g2, g2Json(G2.Point.BASE));
});

function curveCases<P extends P1 | P2, J>(
  t: import('ava').ExecutionContext,
  base: P,
  zero: P,
  json: (p: P) => J,
  op: (o: 'add' | 'madd' | 'dbl' | 'neg' | 'mul', p: J, q?: J | string) => J,
  inf: J,
) {
  const mul = (p: P, k: bigint) => (k === 0n ? zero : (p.multiply(k) as P));
  const points = [
    base,
    mul(base, 2n),
    mul(base, R - 1n),
    ...Array.from({ length: 6 }, () => mul(base, rand(R - 1n) + 1n)),
  ];
  for (const p of points) {
    for (const q of [points[0], points[2], mul(base, rand(R - 1n) + 1n)]) {
      const sum = p.add(q as never) as P;
      t.deepEqual(op('madd', json(p), json(q)), json(sum), 'XYZZ + affine');
      t.deepEqual(op('add', json(p), json(q)), json(sum), 'XYZZ + XYZZ');
    }
    t.deepEqual(op('madd', json(p), json(p)), json(p.double() as P), 'P + P doubles');
    t.deepEqual(op('add', json(p), json(p)), json(p.double() as P), 'P + P doubles (XYZZ)');
    t.deepEqual(op('madd', json(p), json(p.negate() as P)), inf, 'P + (-P) is infinity');
    t.deepEqual(op('add', json(p), json(p.negate() as P)), inf, 'P + (-P) is infinity (XYZZ)');
    t.deepEqual(op('madd', inf, json(p)), json(p), 'infinity + P');
    t.deepEqual(op('madd', json(p), inf), json(p), 'P + infinity');
    t.deepEqual(op('dbl', json(p)), json(p.double() as P));
    t.deepEqual(op('neg', json(p)), json(p.negate() as P));
    for (const k of [0n, 1n, 2n, R - 1n, R - 2n, rand(R)]) {
      t.deepEqual(op('mul', json(p), k.toString()), json(mul(p, k)), `k = ${k}`);
    }
  }
  t.deepEqual(op('dbl', inf), inf);
  t.deepEqual(op('madd', inf, inf), inf);
}

test('G1 additions, doublings and scalar multiplications agree with @noble/curves, including special cases', (t) => {
  curveCases(t, G1.Point.BASE, G1.Point.ZERO, g1Json, ops.g1, INF1);
  t.throws(() => ops.g1('dbl', ['1', '3']), { message: /not on curve/ });
});

test('G2 additions, doublings and scalar multiplications agree with @noble/curves, including special cases', (t) => {
  curveCases(t, G2.Point.BASE, G2.Point.ZERO, g2Json, ops.g2, INF2);
});

function msmCase(n: number, scalarOf: (i: number) => bigint) {
  const scalars = Array.from({ length: n }, (_, i) => scalarOf(i));
  return scalars;
}

// Both bucket paths: the scalar one everywhere, the AVX-512 IFMA one where the CPU has it.
const msmPaths: MsmPath[] = ops.avx512 ? ['scalar', 'vector'] : ['scalar'];

test('G1 and G2 MSMs match a naive sum for mixed scalars (0, 1, r-1, small, small negative, full) and infinity bases', (t) => {
  const kinds = (i: number): bigint => {
    switch (i % 7) {
      case 0:
        return 0n;
      case 1:
        return 1n;
      case 2:
        return R - 1n;
      case 3:
        return BigInt(i * 37 + 5);
      case 4:
        return R - BigInt(i + 3);
      default:
        return rand(R);
    }
  };
  // Base i is G * (i * step + 3), built by running additions, so the expected sum is one multiplication
  // by sum k_i * (i * step + 3) mod r (infinity bases left out): no per-point scalar multiplications.
  function bases<P extends P1 | P2>(
    base: P,
    zero: P,
    n: number,
    step: bigint,
    isInf: (i: number) => boolean,
  ) {
    const pts: P[] = [];
    const stride = base.multiply(step) as P;
    let p = base.multiply(3n) as P;
    for (let i = 0; i < n; i++, p = p.add(stride as never) as P) pts.push(isInf(i) ? zero : p);
    return pts;
  }
  const expectedSum = <P extends P1 | P2>(
    base: P,
    zero: P,
    scalars: bigint[],
    step: bigint,
    isInf: (i: number) => boolean,
  ) => {
    let e = 0n;
    scalars.forEach((k, i) => {
      if (!isInf(i)) e = (e + k * (BigInt(i) * step + 3n)) % R;
    });
    return e === 0n ? zero : (base.multiply(e) as P);
  };
  const inf1 = (i: number) => i % 11 === 5;
  const inf2 = (i: number) => i % 13 === 4;
  for (const n of [1, 2, 7, 64, 300, 2000]) {
    const scalars = msmCase(n, kinds);
    const pts1 = bases(G1.Point.BASE, G1.Point.ZERO, n, 7919n, inf1);
    const expected1 = expectedSum(G1.Point.BASE, G1.Point.ZERO, scalars, 7919n, inf1);
    for (const path of msmPaths) {
      t.deepEqual(
        ops.g1Msm(pts1.map(g1Json), scalars.map(String), path),
        g1Json(expected1),
        `G1 n=${n} ${path}`,
      );
    }
    if (n <= 2000) {
      const pts2 = bases(G2.Point.BASE, G2.Point.ZERO, n, 104729n, inf2);
      const expected2 = expectedSum(G2.Point.BASE, G2.Point.ZERO, scalars, 104729n, inf2);
      for (const path of msmPaths) {
        t.deepEqual(
          ops.g2Msm(pts2.map(g2Json), scalars.map(String), path),
          g2Json(expected2),
          `G2 n=${n} ${path}`,
        );
      }
    }
  }
});

test('MSM with many equal points and equal scalars (bucket collisions, P+P and P+(-P) inside buckets)', (t) => {
  const P = G1.Point.BASE.multiply(12345n);
  const n = 1500;
  const points = Array.from({ length: n }, (_, i) => (i % 2 === 0 ? P : P.negate()));
  const scalars = Array.from({ length: n }, (_, i) => (i % 3 === 0 ? 5n : 1n));
  let expected = G1.Point.ZERO;
  points.forEach((p, i) => {
    expected = expected.add(p.multiply(scalars[i]));
  });
  const same = Array.from({ length: n }, () => P);
  const ones = Array.from({ length: n }, () => '1');
  // Equal scalars are merged before the bucket phase (their bases summed, cancelling pairs dropped), so
  // the cases above test the merge. Distinct full-size scalars that share their low 200 bits keep equal
  // points meeting in the same buckets of many windows at once: doublings and cancellations inside the
  // bucket batches (scalar and vector).
  const base = rand(R);
  const shared = Array.from({ length: 64 }, (_, i) => (base + (BigInt(i + 1) << 200n)) % R);
  const sharedPoints = shared.map((_, i) => (i % 3 === 0 ? P.negate() : P));
  let expectedShared = G1.Point.ZERO;
  shared.forEach((k, i) => {
    expectedShared = expectedShared.add(sharedPoints[i].multiply(k));
  });
  for (const path of msmPaths) {
    t.deepEqual(ops.g1Msm(points.map(g1Json), scalars.map(String), path), g1Json(expected), path);
    t.deepEqual(ops.g1Msm(same.map(g1Json), ones, path), g1Json(P.multiply(BigInt(n))), path);
    t.deepEqual(ops.g1Msm(sharedPoints.map(g1Json), shared.map(String), path), g1Json(expectedShared), path);
  }
  const Q2 = G2.Point.BASE.multiply(777n);
  const points2 = Array.from({ length: 200 }, (_, i) => (i % 2 === 0 ? Q2 : Q2.negate()));
  const scalars2 = Array.from({ length: 200 }, (_, i) =>
    i % 4 === 0 ? (base + (BigInt(i) << 200n)) % R : 1n,
  );
  let expected2 = G2.Point.ZERO;
  points2.forEach((p, i) => {
    expected2 = expected2.add(p.multiply(scalars2[i]));
  });
  for (const path of msmPaths) {
    t.deepEqual(ops.g2Msm(points2.map(g2Json), scalars2.map(String), path), g2Json(expected2), `G2 ${path}`);
  }
});

test('an unknown or non-string MSM path is an error', (t) => {
  t.throws(() => ops.g1Msm([g1Json(G1.Point.BASE)], ['1'], 'fast' as MsmPath), {
    message: /unknown MSM path/,
  });
  t.throws(() => ops.g1Msm([g1Json(G1.Point.BASE)], ['1'], 42 as unknown as MsmPath), {
    message: /must be a string/,
  });
});

test('roots of unity are the snarkjs ones and the NTT matches a direct DFT', (t) => {
  t.is(ops.rootOfUnity(28), '19103219067921713944291392827692070036145651957329286315305642004821462161904');
  const pow = (b: bigint, e: bigint) => {
    let r = 1n;
    let x = b % R;
    for (let k = e; k > 0n; k >>= 1n) {
      if (k & 1n) r = (r * x) % R;
      x = (x * x) % R;
    }
    return r;
  };
  for (const k of [1, 3, 5]) {
    const n = 1 << k;
    const w = BigInt(ops.rootOfUnity(k));
    t.is(pow(w, BigInt(n)), 1n);
    t.not(pow(w, BigInt(n / 2)), 1n);
    const values = Array.from({ length: n }, () => rand(R));
    const dft = values.map((_, i) => values.reduce((acc, v, j) => (acc + v * pow(w, BigInt(i * j))) % R, 0n));
    t.deepEqual(ops.fft(values.map(String), false), dft.map(String));
    const back = ops.fft(dft.map(String), true).map((v) => (BigInt(v) * modInv(BigInt(n), R)) % R);
    t.deepEqual(back, values);
  }
});

test('the portable (non-ADX) multiplication gives the same results as the ADX one, unreduced chains included', async (t) => {
  const { execFile } = await import('node:child_process');
  const { promisify } = await import('node:util');
  const pairs = [
    ...edges(Q).map((a) => [a, Q - 1n]),
    ...Array.from({ length: 50 }, () => [rand(Q), rand(Q)]),
  ];
  const script = `
    import { addon } from ${JSON.stringify(new URL('../../src/prover/native-addon.ts', import.meta.url).href)};
    const pairs = JSON.parse(process.argv[1]);
    console.log(JSON.stringify(pairs.map(([a, b]) => [addon.testOps.fq('mul', a, b), addon.testOps.fr('mul', String(BigInt(a) % ${R}n), String(BigInt(b) % ${R}n)), addon.testOps.fq('lazy', a, b)])));
  `;
  const { stdout } = await promisify(execFile)(
    process.execPath,
    ['--import=tsx', '--input-type=module', '-e', script, JSON.stringify(pairs.map((p) => p.map(String)))],
    { env: { ...process.env, ZKPROVER_PORTABLE: '1' } },
  );
  const portable = JSON.parse(stdout) as [string, string, string][];
  pairs.forEach(([a, b], i) => {
    t.is(portable[i][2], ((a + b) ** 3n % Q).toString(), 'unreduced chain, portable');
    t.is(portable[i][0], ((a * b) % Q).toString());
    t.is(portable[i][0], ops.fq('mul', a.toString(), b.toString()));
    t.is(portable[i][1], (((a % R) * (b % R)) % R).toString());
  });
});
