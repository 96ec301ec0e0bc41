import { readFileSync } from 'node:fs';
import test from 'ava';
import {
  buildTransactionInputs,
  type CircuitInputs,
  circuitArtifacts,
  loadWitnessCalculator,
  POLICY_CIRCUIT,
  readR1csHeader,
  type WitnessCalculator,
  WitnessError,
} from '../../src/circuit/index.ts';
import {
  commitment,
  FIELD_MODULUS,
  hash,
  MerkleTree,
  notePublicKey,
  nullifier,
  publicAmount,
} from '../../src/crypto/index.ts';
import { Scenario } from './scenario.ts';

const artifacts = circuitArtifacts(POLICY_CIRCUIT.id);
let calculator: WitnessCalculator;
let symbols: Map<string, number>;

test.before(async () => {
  calculator = await loadWitnessCalculator(artifacts.wasm);
  // .sym lines: labelId,wireId,componentId,name — map each main signal name to its witness index.
  symbols = new Map();
  for (const line of readFileSync(artifacts.sym, 'utf8').split('\n')) {
    const [, wire, , name] = line.split(',');
    if (name?.startsWith('main.') && Number(wire) >= 0) symbols.set(name.slice(5), Number(wire));
  }
});

const ALICE = 11n;
const BOB = 22n;

function world(): Scenario {
  const s = new Scenario();
  s.allow(ALICE);
  s.allow(BOB);
  return s;
}

async function witnessOf(inputs: CircuitInputs): Promise<bigint[]> {
  return calculator.calculateWitness(inputs);
}

const signal = (w: bigint[], name: string) => {
  const wire = symbols.get(name);
  if (wire === undefined) throw new Error(`no signal ${name}`);
  return w[wire];
};

test('the r1cs fits a 2^15 domain and declares 11 public inputs', async (t) => {
  const { nPublicInputs, nPublicOutputs, nConstraints, prime } = await readR1csHeader(artifacts.r1cs);
  t.is(nPublicInputs, 11);
  t.is(nPublicOutputs, 0);
  t.is(prime, FIELD_MODULUS);
  t.true(nConstraints <= 32767, `${nConstraints} constraints`);
  t.true(nConstraints > 20000, `${nConstraints} constraints is suspiciously few`);
});

test('public signals come out in SPP order: wires 1..11 are the public inputs as declared', async (t) => {
  const s = world();
  const prepared = buildTransactionInputs(s.deposit(ALICE, 50n));
  const w = await witnessOf(prepared.inputs);
  t.deepEqual(w.slice(1, 12), prepared.publicSignals);
  const names = [
    'root',
    'publicAmount',
    'extDataHash',
    'inputNullifier[0]',
    'inputNullifier[1]',
    'outputCommitment[0]',
    'outputCommitment[1]',
    'membershipRoots[0]',
    'membershipRoots[1]',
    'nonMembershipRoots[0]',
    'nonMembershipRoots[1]',
  ];
  names.forEach((name, i) => t.is(symbols.get(name), i + 1, name));
});

test('a deposit with two zero-amount dummy inputs satisfies the circuit', async (t) => {
  const s = world();
  const tx = s.deposit(ALICE, 1_000_0000n);
  const prepared = buildTransactionInputs(tx);
  const w = await witnessOf(prepared.inputs);
  t.is(signal(w, 'publicAmount'), 1_000_0000n);
  t.is(
    signal(w, 'outputCommitment[0]'),
    commitment(1_000_0000n, notePublicKey(ALICE), tx.outputs[0].blinding),
  );
  t.is(signal(w, 'nonMembershipRoots[0]'), s.blocklist.root);
  t.is(signal(w, 'membershipRoots[1]'), s.allowlist.root);
  const wtns = await calculator.calculateWtns(prepared.inputs);
  t.is(Buffer.from(wtns.subarray(0, 4)).toString(), 'wtns');
});

test('a private transfer spends two notes; the circuit computes the TypeScript commitments and nullifiers', async (t) => {
  const s = world();
  const a = s.addNote(ALICE, 30n);
  const b = s.addNote(ALICE, 12n);
  const tx = s.transaction([a, b], [s.output(40n, BOB), s.output(2n, ALICE)], 0n);
  const prepared = buildTransactionInputs(tx);
  const w = await witnessOf(prepared.inputs);
  const expectedNullifier = nullifier(
    commitment(30n, notePublicKey(ALICE), a.blinding),
    a.path.pathIndex,
    ALICE,
  );
  t.is(signal(w, 'inputNullifier[0]'), expectedNullifier);
  t.is(signal(w, 'inputNullifier[1]'), prepared.nullifiers[1]);
  t.is(signal(w, 'root'), s.pool.root);
  t.is(signal(w, 'inTree[0].root'), s.pool.root);
  t.is(
    signal(w, 'inTree[1].root'),
    MerkleTree.rootFromPath(commitment(12n, notePublicKey(ALICE), b.blinding), b.path),
  );
});

test('a withdrawal has publicAmount r − amount and balances', async (t) => {
  const s = world();
  const a = s.addNote(ALICE, 100n);
  const tx = s.transaction([a, s.addNote(ALICE, 0n)], [s.output(25n, ALICE), s.output(0n, ALICE)], -75n);
  const prepared = buildTransactionInputs(tx);
  const w = await witnessOf(prepared.inputs);
  t.is(signal(w, 'publicAmount'), FIELD_MODULUS - 75n);
  t.is(prepared.publicAmount, publicAmount(-75n));
});

// Each invalid case starts from a valid transfer's inputs and breaks one thing after the TypeScript checks.
async function validTransfer() {
  const s = world();
  const a = s.addNote(ALICE, 30n);
  const b = s.addNote(ALICE, 12n);
  return {
    s,
    a,
    b,
    prepared: buildTransactionInputs(s.transaction([a, b], [s.output(40n, BOB), s.output(2n, ALICE)], 0n)),
  };
}

async function rejects(t: import('ava').ExecutionContext, inputs: CircuitInputs, template?: RegExp) {
  const err = await t.throwsAsync(witnessOf(inputs), { instanceOf: WitnessError, code: 'constraint_failed' });
  if (template) t.regex(err!.message, template);
}

test('a wrong Merkle root fails', async (t) => {
  const { prepared } = await validTransfer();
  await rejects(
    t,
    { ...prepared.inputs, root: (BigInt(prepared.inputs.root as string) + 1n).toString() },
    /ForceEqualIfEnabled/,
  );
});

test('a reused or swapped nullifier fails', async (t) => {
  const { prepared } = await validTransfer();
  const [n0, n1] = prepared.inputs.inputNullifier as string[];
  await rejects(t, { ...prepared.inputs, inputNullifier: [n0, n0] }, /PolicyTransaction/);
  await rejects(t, { ...prepared.inputs, inputNullifier: [n1, n0] }, /PolicyTransaction/);
});

test('two inputs spending the same note (same nullifier) fail even with consistent signals', async (t) => {
  const s = world();
  const a = s.addNote(ALICE, 30n);
  const tx = s.transaction([a, a], [s.output(60n, BOB), s.output(0n, ALICE)], 0n);
  t.throws(() => buildTransactionInputs(tx), { message: /same nullifier/ });
  const ok = buildTransactionInputs(
    s.transaction([a, s.addNote(ALICE, 30n)], [s.output(60n, BOB), s.output(0n, ALICE)], 0n),
  );
  const n0 = (ok.inputs.inputNullifier as string[])[0];
  const dup: CircuitInputs = {
    ...ok.inputs,
    inputNullifier: [n0, n0],
    inBlinding: [(ok.inputs.inBlinding as string[])[0], (ok.inputs.inBlinding as string[])[0]],
    inPathIndices: [(ok.inputs.inPathIndices as string[])[0], (ok.inputs.inPathIndices as string[])[0]],
    inPathElements: [
      (ok.inputs.inPathElements as string[][])[0],
      (ok.inputs.inPathElements as string[][])[0],
    ],
  };
  await rejects(t, dup, /PolicyTransaction/);
});

test('sums that do not balance fail', async (t) => {
  const { prepared } = await validTransfer();
  await rejects(t, { ...prepared.inputs, publicAmount: '1' }, /PolicyTransaction/);
  const s = world();
  const a = s.addNote(ALICE, 30n);
  const tx = s.transaction([a, s.addNote(ALICE, 0n)], [s.output(31n, BOB), s.output(0n, ALICE)], 0n);
  t.throws(() => buildTransactionInputs(tx), { message: /do not balance/ });
});

test('an output above 2^248 fails the range check even when the sums balance in the field', async (t) => {
  const s = world();
  const a = s.addNote(ALICE, 30n);
  const b = s.addNote(ALICE, 0n);
  const prepared = buildTransactionInputs(
    s.transaction([a, b], [s.output(30n, BOB), s.output(0n, ALICE)], 0n),
  );
  // out0 = 2^248 + 30, out1 = r − 2^248: the field sum is still 30.
  const big = (1n << 248n) + 30n;
  const negative = FIELD_MODULUS - (1n << 248n);
  const pk = notePublicKey(BOB);
  const outBlinding = prepared.inputs.outBlinding as string[];
  const tampered: CircuitInputs = {
    ...prepared.inputs,
    outAmount: [big.toString(), negative.toString()],
    outPubkey: [pk.toString(), pk.toString()],
    outputCommitment: [
      hash([big, pk, BigInt(outBlinding[0])], 1n).toString(),
      hash([negative, pk, BigInt(outBlinding[1])], 1n).toString(),
    ],
  };
  await rejects(t, tampered, /Num2Bits/);
  t.throws(
    () =>
      buildTransactionInputs(
        s.transaction([a, b], [{ amount: 1n << 248n, publicKey: pk, blinding: 1n }, s.output(0n, ALICE)], 0n),
      ),
    { message: /below 2\^248/ },
  );
});

test('an input key not in the ASP allowlist fails', async (t) => {
  const s = world();
  const carol = 33n; // never allowed
  const tx = s.deposit(carol, 5n);
  await rejects(t, buildTransactionInputs(tx).inputs, /PolicyTransaction/);
});

test('an input key in the blocklist fails', async (t) => {
  const s = world();
  s.block(ALICE);
  const tx = s.deposit(ALICE, 5n);
  await rejects(t, buildTransactionInputs(tx).inputs, /SmtNonMembership/);
  // Claiming an unrelated leaf in the blocked key's slot is refused too.
  const honest = new Scenario();
  honest.allow(ALICE);
  const before = buildTransactionInputs(honest.deposit(ALICE, 5n));
  honest.block(ALICE);
  const stale = {
    ...before.inputs,
    nonMembershipRoots: [honest.blocklist.root, honest.blocklist.root].map(String),
    membershipRoots: before.inputs.membershipRoots,
  };
  await rejects(t, stale, /SmtNonMembership/);
});

test('a public input tampered after the fact fails', async (t) => {
  const { prepared } = await validTransfer();
  const bump = (v: string) => ((BigInt(v) + 1n) % FIELD_MODULUS).toString();
  const commitments = prepared.inputs.outputCommitment as string[];
  await rejects(
    t,
    { ...prepared.inputs, outputCommitment: [bump(commitments[0]), commitments[1]] },
    /PolicyTransaction/,
  );
  const roots = prepared.inputs.membershipRoots as string[];
  await rejects(t, { ...prepared.inputs, membershipRoots: [roots[0], bump(roots[1])] }, /PolicyTransaction/);
  const nm = prepared.inputs.nonMembershipRoots as string[];
  await rejects(t, { ...prepared.inputs, nonMembershipRoots: [bump(nm[0]), nm[1]] }, /SmtNonMembership/);
});

test('malformed inputs are refused with a clear error', async (t) => {
  const { prepared } = await validTransfer();
  await t.throwsAsync(witnessOf({ ...prepared.inputs, inAmount: ['1'] }), {
    instanceOf: WitnessError,
    code: 'input_rejected',
    message: /inAmount needs 2 values, got 1/,
  });
  await t.throwsAsync(calculator.calculateWitness(null as unknown as CircuitInputs), {
    message: /must be an object/,
  });
  const { root: _drop, ...missingRoot } = prepared.inputs;
  await t.throwsAsync(witnessOf(missingRoot), {
    instanceOf: WitnessError,
    code: 'input_rejected',
    message: /missing inputs/,
  });
  await t.throwsAsync(witnessOf({ ...prepared.inputs, bogus: '1' }), { message: /bogus is not an input/ });
  await t.throwsAsync(witnessOf({ ...prepared.inputs, root: FIELD_MODULUS.toString() }), {
    message: /outside the field/,
  });
  await t.throwsAsync(witnessOf({ ...prepared.inputs, root: '-5' }), {
    message: /not a non-negative integer/,
  });
  await t.throwsAsync(witnessOf({ ...prepared.inputs, root: '1e3' }), {
    message: /not a non-negative integer/,
  });
  // The calculator keeps working after errors, and reports only the current call's failure.
  const ok = await witnessOf(prepared.inputs);
  t.is(ok[1], BigInt(prepared.inputs.root as string));
});

test('the witness builder rejects bad descriptions', (t) => {
  const s = world();
  const good = s.deposit(ALICE, 5n);
  t.throws(() => buildTransactionInputs({ ...good, inputs: good.inputs.slice(0, 1) }), {
    message: /exactly 2 inputs/,
  });
  t.throws(() => buildTransactionInputs({ ...good, outputs: [] }), { message: /exactly 2 outputs/ });
  t.throws(() => buildTransactionInputs({ ...good, root: -1n }), { message: /root/ });
  const shortPath = { ...good.inputs[0], path: { pathElements: [0n], pathIndex: 0n } };
  t.throws(() => buildTransactionInputs({ ...good, inputs: [shortPath, good.inputs[1]] }), {
    message: /exactly 20 path elements/,
  });
  const farIndex = { ...good.inputs[0], path: { ...good.inputs[0].path, pathIndex: 1n << 20n } };
  t.throws(() => buildTransactionInputs({ ...good, inputs: [farIndex, good.inputs[1]] }), {
    message: /index/,
  });
  t.throws(
    () =>
      buildTransactionInputs({ ...good, outputs: [{ ...good.outputs[0], amount: -1n }, good.outputs[1]] }),
    { message: /negative/ },
  );
  t.throws(
    () =>
      buildTransactionInputs({
        ...good,
        nonMembership: [{ ...good.nonMembership[0], siblings: [] }, good.nonMembership[1]],
      }),
    { message: /10 siblings/ },
  );
  t.throws(() => buildTransactionInputs({ ...good, extData: { ...good.extData, extAmount: 1n << 248n } }), {
    message: /2\^248/,
  });
});
