// Sandbox throughput: how many USDC transfers and pool `transact`s a ledger close applies per second.
// Transactions are prepared and signed first (through rpc.Server, as clients do), queued with
// sendTransaction, then one ledger close applies them all and is timed. Side by side in one run:
//   transfers   — in-memory state vs LevelDB-backed state (ratio = cost of persistence)
//   transacts   — whole pool transact (one per ledger, see below) vs the bare 4-pair pairing check it contains
// Usage: npx tsx bench/sandbox/run.ts [transfers=200] [transacts=8]
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Address, Contract, Keypair, nativeToScVal, rpc, TransactionBuilder } from '#stellar-sdk';
import * as snarkjs from 'snarkjs';
import {
  buildTransactionInputs,
  circuitArtifacts,
  dummyInput,
  loadWitnessCalculator,
  POLICY_CIRCUIT,
  randomFieldElement,
} from '../../src/circuit/index.ts';
import {
  encryptNote,
  MerkleTree,
  membershipLeaf,
  notePublicKey,
  SparseMerkleTree,
  deriveAgentKeys,
} from '../../src/crypto/index.ts';
import { poolCallArgs, poolProofFromSignals } from '../../src/ledger/pool-args.ts';
import { loadProver, releaseVerifier } from '../../src/prover/index.ts';
import { type PoolSandbox as Sandbox, startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { fundMany } from './fund.ts';

const nTransfers = Number(process.argv[2] ?? 200);
const nTransacts = Number(process.argv[3] ?? 8);
const artifacts = circuitArtifacts(POLICY_CIRCUIT.id);
const USDC = 10_000_000n;

const addr = (a: string) => new Address(a).toScVal();
const i128 = (n: bigint) => nativeToScVal(n, { type: 'i128' });
const u256 = (n: bigint) => nativeToScVal(n, { type: 'u256' });

async function open(dataDir?: string) {
  // a long ledger interval: the bench closes ledgers itself
  const sandbox = await startPoolSandbox({ port: 0, ledgerMs: 3_600_000, dataDir, vkey: artifacts.vkey });
  await sandbox.chain.stop();
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  return { sandbox, server };
}

async function signedCall(
  server: rpc.Server,
  kp: Keypair,
  contract: string,
  fn: string,
  args: ReturnType<typeof addr>[],
) {
  const account = await server.getAccount(kp.publicKey());
  const raw = new TransactionBuilder(account, { fee: '100', networkPassphrase: STANDALONE_PASSPHRASE })
    .addOperation(new Contract(contract).call(fn, ...args))
    .setTimeout(600)
    .build();
  const tx = await server.prepareTransaction(raw);
  tx.sign(kp);
  return tx;
}

/** Queues all transactions, closes one ledger, returns applied-per-second and the success count. */
async function applyInOneLedger(
  sandbox: Sandbox,
  server: rpc.Server,
  txs: Awaited<ReturnType<typeof signedCall>>[],
) {
  const sent = await Promise.all(txs.map((tx) => server.sendTransaction(tx)));
  const notPending = sent.filter((s) => s.status !== 'PENDING');
  if (notPending.length)
    throw new Error(`${notPending.length} transactions were not accepted: ${notPending[0]?.status}`);
  const t0 = performance.now();
  await sandbox.chain.closeLedger();
  const ms = performance.now() - t0;
  const results = await Promise.all(sent.map((s) => server.getTransaction(s.hash)));
  const ok = results.filter((r) => r.status === rpc.Api.GetTransactionStatus.SUCCESS).length;
  if (ok !== txs.length) throw new Error(`${txs.length - ok} transactions failed`);
  return { perSecond: (txs.length * 1000) / ms, ms };
}

async function transfers(dataDir?: string, n = nTransfers) {
  const { sandbox, server } = await open(dataDir);
  try {
    const { token } = sandbox.info.contracts;
    const senders = await fundMany(sandbox, () => sandbox.chain.closeLedger(), n, '100');
    // each sender pays the next one: every recipient is a funded account that holds USDC
    const txs = await Promise.all(
      senders.map((kp, i) =>
        signedCall(server, kp, token, 'transfer', [
          addr(kp.publicKey()),
          addr((senders[(i + 1) % senders.length] as Keypair).publicKey()),
          i128(USDC),
        ]),
      ),
    );
    return await applyInOneLedger(sandbox, server, txs);
  } finally {
    await sandbox.close();
  }
}

async function transacts() {
  const { sandbox, server } = await open();
  const prover = await loadProver(artifacts.zkey);
  const witness = await loadWitnessCalculator(artifacts.wasm);
  try {
    const { pool, asp_membership } = sandbox.info.contracts;
    const admin = Keypair.fromSecret(sandbox.secrets().admin);
    const depositors = await fundMany(sandbox, () => sandbox.chain.closeLedger(), nTransacts, '100');
    // every depositor's note key on the allowlist, one admin transaction per ledger
    const sks = depositors.map(() => randomFieldElement());
    const blindings = depositors.map(() => randomFieldElement());
    const aspTree = new MerkleTree(POLICY_CIRCUIT.aspLevels);
    for (let i = 0; i < depositors.length; i++) {
      const leaf = membershipLeaf(notePublicKey(sks[i] as bigint), blindings[i] as bigint);
      const tx = await signedCall(server, admin, asp_membership, 'insert_leaf', [u256(leaf)]);
      await applyInOneLedger(sandbox, server, [tx]);
      aspTree.insert(leaf);
    }
    const poolTree = new MerkleTree(POLICY_CIRCUIT.levels);
    const blocklist = new SparseMerkleTree();
    const keys = deriveAgentKeys(randomBytes(32), 'bench');
    const proveStart = performance.now();
    const calls: { kp: Keypair; args: ReturnType<typeof poolCallArgs> }[] = [];
    for (let i = 0; i < depositors.length; i++) {
      const sk = sks[i] as bigint;
      const pk = notePublicKey(sk);
      const kp = depositors[i] as Keypair;
      const outputs = [
        { amount: USDC, publicKey: pk, blinding: randomFieldElement() },
        { amount: 0n, publicKey: pk, blinding: randomFieldElement() },
      ];
      const extData = {
        recipient: kp.publicKey(),
        extAmount: USDC,
        encryptedOutput0: encryptNote(
          { amount: USDC, blinding: outputs[0]!.blinding },
          keys.encryptionPublicKey,
        ),
        encryptedOutput1: encryptNote(
          { amount: 0n, blinding: outputs[1]!.blinding },
          keys.encryptionPublicKey,
        ),
      };
      const membership = { root: aspTree.root, blinding: blindings[i] as bigint, path: aspTree.path(i) };
      const nonMembership = blocklist.nonMembershipProof(pk, POLICY_CIRCUIT.smtLevels);
      const prepared = buildTransactionInputs({
        root: poolTree.root,
        inputs: [dummyInput(sk), dummyInput(sk)],
        outputs,
        extData,
        membership: [membership, membership],
        nonMembership: [nonMembership, nonMembership],
      });
      const proof = await prover.prove(await witness.calculateWtns(prepared.inputs));
      calls.push({
        kp,
        args: poolCallArgs(poolProofFromSignals(proof.bytes, proof.publicSignals), extData, kp.publicKey()),
      });
    }
    const proveMs = performance.now() - proveStart;
    // each transact writes the next root slot and tree nodes, so (as on a real network) its footprint is
    // only right against the state it was simulated on: one transact per ledger, close times summed
    let ms = 0;
    for (const c of calls) {
      const tx = await signedCall(server, c.kp, pool, 'transact', c.args);
      ms += (await applyInOneLedger(sandbox, server, [tx])).ms;
    }
    return { perSecond: (calls.length * 1000) / ms, ms, proveMsEach: proveMs / depositors.length };
  } finally {
    await sandbox.close();
    await releaseVerifier();
  }
}

/** The 4-pair pairing check alone, on the same WASM curve the verifier uses: the floor of a transact's cost. */
async function pairingsPerSecond(n: number): Promise<number> {
  const c = await snarkjs.curves.getCurveFromName('bn128', { singleThread: true });
  const g1 = (k: bigint) => c.G1.timesScalar(c.G1.g, k);
  const g2 = (k: bigint) => c.G2.timesScalar(c.G2.g, k);
  // e(-3P, 5Q)·e(5P, 3Q)·e(7P, 11Q)·e(-11P, 7Q) = 1
  const args = [c.G1.neg(g1(3n)), g2(5n), g1(5n), g2(3n), g1(7n), g2(11n), c.G1.neg(g1(11n)), g2(7n)];
  if (!(await c.pairingEq(...args))) throw new Error('pairing identity does not hold');
  const t0 = performance.now();
  for (let i = 0; i < n; i++) await c.pairingEq(...args);
  return (n * 1000) / (performance.now() - t0);
}

const dir = mkdtempSync(join(tmpdir(), 'sandbox-bench-'));
try {
  await transfers(undefined, 20); // warm-up (JIT), not reported
  // alternate the two stores and keep each one's best run, so machine noise hits both alike
  const memoryRuns = [];
  const leveldbRuns = [];
  for (let round = 0; round < 2; round++) {
    memoryRuns.push(await transfers());
    leveldbRuns.push(await transfers(join(dir, `run${round}`)));
  }
  const best = (runs: { perSecond: number; ms: number }[]) =>
    runs.reduce((a, b) => (b.perSecond > a.perSecond ? b : a));
  const memory = best(memoryRuns);
  const leveldb = best(leveldbRuns);
  const pool = await transacts();
  const pairing = await pairingsPerSecond(20);
  const f = (x: number) => x.toFixed(1);
  console.log(`USDC transfers applied per second (${nTransfers} in one ledger):`);
  console.log(`  in-memory state : ${f(memory.perSecond)} /s (${f(memory.ms)} ms)`);
  console.log(
    `  LevelDB state   : ${f(leveldb.perSecond)} /s (${f(leveldb.ms)} ms)   ratio LevelDB/memory = ${(leveldb.perSecond / memory.perSecond).toFixed(2)}`,
  );
  console.log(
    `pool transacts (deposits, real proofs) applied per second (${nTransacts}, one per ledger, close time summed):`,
  );
  console.log(
    `  transact        : ${f(pool.perSecond)} /s (${f(pool.ms)} ms; proving took ${f(pool.proveMsEach)} ms each, not counted)`,
  );
  console.log(
    `  pairing check   : ${f(pairing)} /s (4 pairs, WASM curve)   ratio transact/pairing = ${(pool.perSecond / pairing).toFixed(2)}`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
