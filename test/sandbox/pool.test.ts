// The pool contract on the sandbox with real Groth16 proofs of policy_tx_2_2 (lead's witness builder, the
// native prover, the built verification key): a deposit inserts the commitments the TypeScript MerkleTree
// predicts, a withdrawal spends nullifiers and pays the recipient, `disburse` pays only the payout wallet,
// and each bad transaction fails on the ledger and reverts everything.
import { randomBytes } from 'node:crypto';
import {
  Account,
  Address,
  Asset,
  Contract,
  Keypair,
  nativeToScVal,
  rpc,
  SorobanDataBuilder,
  scValToNative,
  xdr,
} from '#stellar-sdk';
import test from 'ava';
import {
  buildTransactionInputs,
  circuitArtifacts,
  dummyInput,
  loadWitnessCalculator,
  POLICY_CIRCUIT,
  randomFieldElement,
  type SpentNote,
  type WitnessCalculator,
} from '../../src/circuit/index.ts';
import {
  commitment,
  decryptNote,
  deriveAgentKeys,
  type ExtData,
  encryptNote,
  MerkleTree,
  membershipLeaf,
  notePublicKey,
  nullifier,
  SparseMerkleTree,
} from '../../src/crypto/index.ts';
import {
  type PoolProof,
  poolCallArgs,
  poolProofFromSignals,
  poolProofToScVal,
} from '../../src/ledger/pool-args.ts';
import { ContractError, contractErrorOf, type PoolContractName } from '../../src/ledger/contract-errors.ts';
import {
  AspMembershipError,
  AspNonMembershipError,
  PoolError,
  VerifierError,
} from '../../src/ledger/pool-interface.ts';
import { loadProver, type Prover, releaseVerifier } from '../../src/prover/index.ts';
import type { PoolSandbox as Sandbox } from '../../src/deploy/sandbox-network.ts';
import { STANDALONE_PASSPHRASE } from '../../src/ledger/networks.ts';
import { address, fund, invokeTx, startSandbox, submit, tokenBalance } from './helpers.ts';

const USDC = 10_000_000n;
const artifacts = circuitArtifacts(POLICY_CIRCUIT.id);

interface World {
  sandbox: Sandbox;
  server: rpc.Server;
  prover: Prover;
  witness: WitnessCalculator;
  pool: string;
  token: string;
  admin: Keypair;
  poolWallet: string;
  alice: Keypair;
  relayer: Keypair;
  bob: Keypair;
  /** mirrors of the on-chain trees */
  tree: MerkleTree;
  aspTree: MerkleTree;
  blocklist: SparseMerkleTree;
  sk: bigint;
  pk: bigint;
  memBlinding: bigint;
  memIndex: number;
  encKeys: ReturnType<typeof deriveAgentKeys>;
}

let w: World;

const u256 = (n: bigint) => nativeToScVal(n, { type: 'u256' });

async function call(source: Keypair, contract: string, fn: string, args: xdr.ScVal[]) {
  const account = await w.server.getAccount(source.publicKey());
  const tx = await w.server.prepareTransaction(invokeTx(account, contract, fn, args));
  tx.sign(source);
  return submit(w.server, tx);
}

async function view(contract: string, fn: string, args: xdr.ScVal[] = []): Promise<unknown> {
  const sim = await w.server.simulateTransaction(
    invokeTx(new Account(Keypair.random().publicKey(), '0'), contract, fn, args),
  );
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(sim.error);
  return scValToNative(sim.result!.retval);
}

async function adminCall(fn: string, contract: string, args: xdr.ScVal[]) {
  const { final } = await call(w.admin, contract, fn, args);
  if (final?.status !== rpc.Api.GetTransactionStatus.SUCCESS) throw new Error(`${fn} failed`);
}

function encrypted(amount: bigint, blinding: bigint): Uint8Array {
  return encryptNote({ amount, blinding }, w.encKeys.encryptionPublicKey);
}

interface Built {
  proof: PoolProof;
  extData: ExtData;
  outputs: { amount: bigint; blinding: bigint; commitment: bigint }[];
  nullifiers: bigint[];
}

/** Proves a pool transaction for alice's key: inputs (real notes or dummies), two outputs to her key. */
async function prove(opts: {
  inputs: SpentNote[];
  outAmounts: [bigint, bigint];
  extAmount: bigint;
  recipient: string;
  root?: bigint;
}): Promise<Built> {
  const outputs = opts.outAmounts.map((amount) => ({
    amount,
    publicKey: w.pk,
    blinding: randomFieldElement(),
  }));
  const extData: ExtData = {
    recipient: opts.recipient,
    extAmount: opts.extAmount,
    encryptedOutput0: encrypted(outputs[0]!.amount, outputs[0]!.blinding),
    encryptedOutput1: encrypted(outputs[1]!.amount, outputs[1]!.blinding),
  };
  const membership = { root: w.aspTree.root, blinding: w.memBlinding, path: w.aspTree.path(w.memIndex) };
  const nonMembership = w.blocklist.nonMembershipProof(w.pk, POLICY_CIRCUIT.smtLevels);
  const prepared = buildTransactionInputs({
    root: opts.root ?? w.tree.root,
    inputs: opts.inputs,
    outputs,
    extData,
    membership: [membership, membership],
    nonMembership: [nonMembership, nonMembership],
  });
  const wtns = await w.witness.calculateWtns(prepared.inputs);
  const result = await w.prover.prove(wtns);
  return {
    proof: poolProofFromSignals(result.bytes, result.publicSignals),
    extData,
    outputs: outputs.map((o, i) => ({
      amount: o.amount,
      blinding: o.blinding,
      commitment: prepared.commitments[i]!,
    })),
    nullifiers: prepared.nullifiers,
  };
}

function spend(amount: bigint, blinding: bigint, index: number): SpentNote {
  return { amount, secretKey: w.sk, blinding, path: w.tree.path(index) };
}

async function snapshot() {
  return {
    root: await view(w.pool, 'get_root'),
    next: await view(w.pool, 'get_next_index'),
    pool: await tokenBalance(w.server, w.token, w.pool),
    alice: await tokenBalance(w.server, w.token, w.alice.publicKey()),
    bob: await tokenBalance(w.server, w.token, w.bob.publicKey()),
    wallet: await tokenBalance(w.server, w.token, w.poolWallet),
    events: (await w.server.getEvents({ startLedger: 1, filters: [{ contractIds: [w.pool] }] })).events
      .length,
  };
}

/** Error code of a failed transaction, from its host_fn_failed diagnostic event. */
function failureCode(final: rpc.Api.GetFailedTransactionResponse): string {
  for (const d of final.diagnosticEventsXdr ?? []) {
    const topics = (d.event.body.value as xdr.ContractEventV0).topics;
    if (topics[0]?.type === 'scvSymbol' && String(topics[0].value) === 'host_fn_failed') {
      const err = topics[1]?.value as xdr.ScError;
      return err.type === 'sceContract' ? `Contract#${err.value}` : String(err.type);
    }
  }
  return 'none';
}

const poolKey = (key: xdr.ScVal) =>
  xdr.LedgerKey.contractData(
    new xdr.LedgerKeyContractData({
      contract: new Address(w.pool).toScAddress(),
      key,
      durability: xdr.ContractDataDurability.persistent,
    }),
  );

const rootKeys = () =>
  Array.from({ length: 90 }, (_, i) =>
    poolKey(xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Root'), xdr.ScVal.scvU32(i)])),
  );

function retarget(entry: xdr.SorobanAuthorizationEntry, args: xdr.ScVal[]): xdr.SorobanAuthorizationEntry {
  const root = entry.rootInvocation;
  const fn = root.function.value as xdr.InvokeContractArgs;
  return new xdr.SorobanAuthorizationEntry({
    credentials: entry.credentials,
    rootInvocation: new xdr.SorobanAuthorizedInvocation({
      function: xdr.SorobanAuthorizedFunction.sorobanAuthorizedFunctionTypeContractFn(
        new xdr.InvokeContractArgs({
          contractAddress: fn.contractAddress,
          functionName: fn.functionName,
          args,
        }),
      ),
      subInvocations: root.subInvocations,
    }),
  });
}

type Expected = readonly [PoolContractName, string];

/** Code of an expected contract error, from the interface's enums. */
function codeOf([contract, name]: Expected): number {
  const enums: Record<string, Record<string, number>> = {
    pool: PoolError,
    verifier: VerifierError,
    asp_membership: AspMembershipError,
    asp_non_membership: AspNonMembershipError,
  };
  const code = enums[contract]?.[name];
  if (code === undefined) throw new Error(`no error ${contract}.${name}`);
  return code;
}

/** The typed error of a failed simulation or transaction, as a caller sees it. */
function typedError(t: import('ava').ExecutionContext, response: unknown, expected: Expected): void {
  const err = contractErrorOf(response, w.sandbox.info.contracts);
  t.true(err instanceof ContractError, 'a typed contract error');
  t.deepEqual([err?.contract, err?.name, err?.code], [...expected, codeOf(expected)]);
}

/**
 * Expects `fn(args)` to fail with contract error `expected`: in simulation, and on the ledger when submitted
 * anyway with the footprint of `reference` (a valid call's simulation); nothing may change.
 */
async function expectRejected(
  t: import('ava').ExecutionContext,
  fn: string,
  args: xdr.ScVal[],
  expected: Expected,
  reference: xdr.ScVal[],
  signer = w.relayer,
  extraReads: xdr.LedgerKey[] = [],
) {
  const before = await snapshot();
  const account = await w.server.getAccount(signer.publicKey());
  const sim = await w.server.simulateTransaction(
    invokeTx(new Account(account.accountId(), account.sequenceNumber()), w.pool, fn, args),
  );
  const code = codeOf(expected);
  t.true(rpc.Api.isSimulationError(sim), `${fn} should fail in simulation`);
  if (rpc.Api.isSimulationError(sim)) t.true(sim.error.includes(`Error(Contract, #${code})`), sim.error);
  typedError(t, sim, expected);
  const refSim = await w.server.simulateTransaction(
    invokeTx(new Account(account.accountId(), account.sequenceNumber()), w.pool, fn, reference),
  );
  if (!rpc.Api.isSimulationSuccess(refSim)) return t.fail(`reference call must simulate: ${refSim.error}`);
  const { txWithAuth } = await import('./helpers.ts');
  // the reference's source-account entry, re-aimed at the rejected arguments (same sub-invocations)
  const auth = refSim.result!.auth.map((e) => retarget(e, args));
  // the rejected call reads entries a valid one does not (other nullifiers, the whole root history)
  const data = new SorobanDataBuilder(refSim.transactionData.build());
  data.setReadOnly([...refSim.transactionData.build().resources.footprint.readOnly, ...extraReads]);
  // each extra key is in-memory Soroban state: it costs only its share of the transaction's size
  data.setResourceFee(BigInt(refSim.minResourceFee) + 1_000n * BigInt(extraReads.length));
  const tx = txWithAuth(account, new Contract(w.pool).call(fn, ...args), auth, {
    ...refSim,
    transactionData: data,
  });
  tx.sign(signer);
  const { final } = await submit(w.server, tx);
  t.is(final?.status, rpc.Api.GetTransactionStatus.FAILED);
  if (final?.status === rpc.Api.GetTransactionStatus.FAILED) t.is(failureCode(final), `Contract#${code}`);
  typedError(t, final, expected);
  t.deepEqual(await snapshot(), before);
}

test.before(async () => {
  const { sandbox, server } = await startSandbox({ vkey: artifacts.vkey });
  const info = sandbox.info;
  const secrets = sandbox.secrets();
  w = {
    sandbox,
    server,
    prover: await loadProver(artifacts.zkey),
    witness: await loadWitnessCalculator(artifacts.wasm),
    pool: info.contracts.pool,
    token: info.contracts.token,
    admin: Keypair.fromSecret(secrets.admin),
    poolWallet: info.accounts.poolWallet,
    alice: Keypair.random(),
    relayer: Keypair.random(),
    bob: Keypair.random(),
    tree: new MerkleTree(POLICY_CIRCUIT.levels),
    aspTree: new MerkleTree(POLICY_CIRCUIT.aspLevels),
    blocklist: new SparseMerkleTree(),
    sk: randomFieldElement(),
    pk: 0n,
    memBlinding: randomFieldElement(),
    memIndex: 0,
    encKeys: deriveAgentKeys(randomBytes(32), 'agent-1'),
  };
  w.pk = notePublicKey(w.sk);
  await fund(sandbox, w.alice.publicKey(), '100');
  await fund(sandbox, w.relayer.publicKey());
  await fund(sandbox, w.bob.publicKey()); // a USDC trustline: withdrawals pay bob
  // allowlist alice's key (one other member first), blocklist someone else
  const { asp_membership, asp_non_membership } = info.contracts;
  const other = membershipLeaf(notePublicKey(randomFieldElement()), randomFieldElement());
  await adminCall('insert_leaf', asp_membership, [u256(other)]);
  w.aspTree.insert(other);
  const leaf = membershipLeaf(w.pk, w.memBlinding);
  await adminCall('insert_leaf', asp_membership, [u256(leaf)]);
  w.memIndex = w.aspTree.insert(leaf);
  const blocked = notePublicKey(randomFieldElement());
  await adminCall('insert_leaf', asp_non_membership, [u256(blocked), u256(1n)]);
  w.blocklist.insert(blocked, 1n);
});

test.after.always(async () => {
  await w?.sandbox.close();
  await releaseVerifier();
});

test.serial('genesis trees match the TypeScript mirrors', async (t) => {
  t.is(await view(w.pool, 'get_root'), w.tree.root);
  t.is(await view(w.sandbox.info.contracts.asp_membership, 'get_root'), w.aspTree.root);
  t.is(await view(w.sandbox.info.contracts.asp_non_membership, 'get_root'), w.blocklist.root);
  t.is(await view(w.pool, 'get_policy_flags'), 3);
  t.is(await view(w.pool, 'get_payout_wallet'), w.poolWallet);
});

let deposit: Built;

test.serial(
  'a deposit with a real proof inserts two commitments whose root equals the MerkleTree root',
  async (t) => {
    deposit = await prove({
      inputs: [dummyInput(w.sk), dummyInput(w.sk)],
      outAmounts: [10n * USDC, 0n],
      extAmount: 10n * USDC,
      recipient: w.alice.publicKey(),
    });
    const { final } = await call(
      w.alice,
      w.pool,
      'transact',
      poolCallArgs(deposit.proof, deposit.extData, w.alice.publicKey()),
    );
    t.is(final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
    w.tree.insertPair(deposit.outputs[0]!.commitment, deposit.outputs[1]!.commitment);
    t.is(await view(w.pool, 'get_root'), w.tree.root);
    t.is(await view(w.pool, 'get_next_index'), 2);
    t.true((await view(w.pool, 'is_known_root', [u256(w.tree.root), xdr.ScVal.scvU32(0)])) as boolean);
    t.is(await tokenBalance(w.server, w.token, w.alice.publicKey()), 90n * USDC);
    t.is(await tokenBalance(w.server, w.token, w.pool), 10n * USDC);
    // the SAC balance entry of the pool contract is readable the way wallets read it
    const sac = await w.server.getSACBalance(
      w.pool,
      new Asset('USDC', w.admin.publicKey()),
      STANDALONE_PASSPHRASE,
    );
    t.is(sac.balanceEntry?.amount, String(10n * USDC));
    // events: two nullifiers, then the commitments with their index and decryptable notes
    const events = await w.server.getEvents({ startLedger: 1, filters: [{ contractIds: [w.pool] }] });
    t.deepEqual(
      events.events.map((e) => scValToNative(e.topic[0]!)),
      ['new_nullifier_event', 'new_nullifier_event', 'new_commitment_event', 'new_commitment_event'],
    );
    t.deepEqual(
      events.events.slice(0, 2).map((e) => scValToNative(e.topic[1]!)),
      deposit.nullifiers,
    );
    const commitments = events.events.slice(2);
    t.deepEqual(
      commitments.map((e) => scValToNative(e.topic[1]!)),
      deposit.outputs.map((o) => o.commitment),
    );
    const data = commitments.map(
      (e) => scValToNative(e.value) as { index: number; encrypted_output: Uint8Array },
    );
    t.deepEqual(
      data.map((d) => d.index),
      [0, 1],
    );
    // topic filters and cursors over the pool's events
    const commitmentTopic = nativeToScVal('new_commitment_event', { type: 'symbol' }).toXdr('base64');
    const onlyCommitments = await w.server.getEvents({
      startLedger: 1,
      filters: [{ contractIds: [w.pool], topics: [[commitmentTopic, '*']] }],
    });
    t.deepEqual(
      onlyCommitments.events.map((e) => e.id),
      commitments.map((e) => e.id),
    );
    const first = await w.server.getEvents({
      startLedger: 1,
      filters: [{ contractIds: [w.pool] }],
      limit: 3,
    });
    const rest = await w.server.getEvents({
      cursor: first.cursor,
      filters: [{ contractIds: [w.pool] }],
      limit: 3,
    });
    t.deepEqual(
      [...first.events, ...rest.events].map((e) => e.id),
      events.events.map((e) => e.id),
    );
    const note = decryptNote(new Uint8Array(data[0]!.encrypted_output), w.encKeys.encryptionSecretKey);
    t.is(note?.amount, 10n * USDC);
    t.is(commitment(note!.amount, w.pk, note!.blinding), deposit.outputs[0]!.commitment);
  },
);

let withdrawal: Built;

test.serial('a withdrawal spends the nullifiers and pays the recipient', async (t) => {
  const input = spend(10n * USDC, deposit.outputs[0]!.blinding, 0);
  withdrawal = await prove({
    inputs: [input, dummyInput(w.sk)],
    outAmounts: [3n * USDC, 0n],
    extAmount: -7n * USDC,
    recipient: w.bob.publicKey(),
  });
  t.is(withdrawal.nullifiers[0], nullifier(deposit.outputs[0]!.commitment, 0n, w.sk));
  t.false((await view(w.pool, 'is_spent', [u256(withdrawal.nullifiers[0]!)])) as boolean);
  const { final } = await call(
    w.relayer,
    w.pool,
    'transact',
    poolCallArgs(withdrawal.proof, withdrawal.extData, w.relayer.publicKey()),
  );
  t.is(final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  w.tree.insertPair(withdrawal.outputs[0]!.commitment, withdrawal.outputs[1]!.commitment);
  t.true((await view(w.pool, 'is_spent', [u256(withdrawal.nullifiers[0]!)])) as boolean);
  t.is(await view(w.pool, 'get_root'), w.tree.root);
  t.is(await tokenBalance(w.server, w.token, w.bob.publicKey()), 7n * USDC);
  t.is(await tokenBalance(w.server, w.token, w.pool), 3n * USDC);
  t.is(await tokenBalance(w.server, w.token, w.relayer.publicKey()), 0n);
});

test.serial('the same nullifier again fails and reverts everything (#9)', async (t) => {
  const args = poolCallArgs(withdrawal.proof, withdrawal.extData, w.relayer.publicKey());
  // reference footprint: a fresh valid proof's, plus the spent nullifiers and the root history
  const fresh = await prove({
    inputs: [dummyInput(w.sk), dummyInput(w.sk)],
    outAmounts: [0n, 0n],
    extAmount: 0n,
    recipient: w.alice.publicKey(),
  });
  const reference = poolCallArgs({ ...fresh.proof }, fresh.extData, w.relayer.publicKey());
  const spentKeys = withdrawal.nullifiers.map((n) =>
    poolKey(xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Nullifier'), u256(n)])),
  );
  await expectRejected(t, 'transact', args, ['pool', 'AlreadySpentNullifier'], reference, w.relayer, [
    ...spentKeys,
    ...rootKeys(),
  ]);
});

let pending: Built;

test.serial('an unknown root fails (#8)', async (t) => {
  // deposits do not check Merkle membership in the circuit, so any root can be proven; the contract refuses it
  const bogus = await prove({
    inputs: [dummyInput(w.sk), dummyInput(w.sk)],
    outAmounts: [USDC, 0n],
    extAmount: USDC,
    recipient: w.alice.publicKey(),
    root: randomFieldElement(),
  });
  pending = await prove({
    inputs: [dummyInput(w.sk), dummyInput(w.sk)],
    outAmounts: [USDC, 0n],
    extAmount: USDC,
    recipient: w.alice.publicKey(),
  });
  await expectRejected(
    t,
    'transact',
    poolCallArgs(bogus.proof, bogus.extData, w.alice.publicKey()),
    ['pool', 'UnknownRoot'],
    poolCallArgs(pending.proof, pending.extData, w.alice.publicKey()),
    w.alice,
    rootKeys(),
  );
});

test.serial('a wrong extDataHash fails (#10): ExtData changed after proving', async (t) => {
  const tampered: ExtData = { ...pending.extData, encryptedOutput1: encrypted(5n, 5n) };
  await expectRejected(
    t,
    'transact',
    poolCallArgs(pending.proof, tampered, w.alice.publicKey()),
    ['pool', 'WrongExtHash'],
    poolCallArgs(pending.proof, pending.extData, w.alice.publicKey()),
    w.alice,
  );
});

test.serial("a proof for other public inputs fails with the verifier's InvalidProof (#0)", async (t) => {
  // the pool calls the verifier without try_, as SPP's does: the verifier's own error fails the call
  const forged: PoolProof = { ...pending.proof, outputCommitment1: commitment(999n * USDC, w.pk, 1n) };
  await expectRejected(
    t,
    'transact',
    poolCallArgs(forged, pending.extData, w.alice.publicKey()),
    ['verifier', 'InvalidProof'],
    poolCallArgs(pending.proof, pending.extData, w.alice.publicKey()),
    w.alice,
  );
  // a malformed argument (a number for the ExtData struct) traps in the contract's argument conversion
  const sim = await w.server.simulateTransaction(
    invokeTx(new Account(w.alice.publicKey(), '1'), w.pool, 'transact', [
      poolProofToScVal(pending.proof),
      u256(1n),
      address(w.alice.publicKey()),
    ]),
  );
  t.true(rpc.Api.isSimulationError(sim) && sim.error.includes('Error(WasmVm, InvalidAction)'));
  t.is(contractErrorOf(sim, w.sandbox.info.contracts), undefined, 'a type error is not a contract error');
});

test.serial(
  "a proof with a third nullifier fails with the verifier's MalformedPublicInputs (#1)",
  async (t) => {
    const extra: PoolProof = {
      ...pending.proof,
      inputNullifiers: [...pending.proof.inputNullifiers, randomFieldElement()],
    };
    await expectRejected(
      t,
      'transact',
      poolCallArgs(extra, pending.extData, w.alice.publicKey()),
      ['verifier', 'MalformedPublicInputs'],
      poolCallArgs(pending.proof, pending.extData, w.alice.publicKey()),
      w.alice,
      [
        poolKey(
          xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Nullifier'), u256(extra.inputNullifiers[2] as bigint)]),
        ),
      ],
    );
  },
);

/**
 * A proof made against the live ASP roots fails once `change` moves one of them: simulation and ledger.
 * `unread`: a contract whose entries are left out of the submitted footprint (the check must fail first).
 */
async function expectStaleAsp(
  t: import('ava').ExecutionContext,
  built: Built,
  change: () => Promise<void>,
  unread?: string,
) {
  const args = poolCallArgs(built.proof, built.extData, w.alice.publicKey());
  const simulated = await w.server.simulateTransaction(
    invokeTx(await w.server.getAccount(w.alice.publicKey()), w.pool, 'transact', args),
  );
  if (!rpc.Api.isSimulationSuccess(simulated)) return t.fail(`valid before the change: ${simulated.error}`);
  let refSim = simulated;
  await change();
  const before = await snapshot();
  const sim = await w.server.simulateTransaction(
    invokeTx(await w.server.getAccount(w.alice.publicKey()), w.pool, 'transact', args),
  );
  t.true(rpc.Api.isSimulationError(sim) && sim.error.includes('Error(Contract, #7)'));
  typedError(t, sim, ['pool', 'InvalidProof']);
  const { txWithAuth } = await import('./helpers.ts');
  const live = await w.server.getAccount(w.alice.publicKey());
  const data = refSim.transactionData.build();
  if (unread) {
    const ours = (k: xdr.LedgerKey) =>
      k.type === 'contractData' &&
      Address.fromScAddress((k.value as xdr.LedgerKeyContractData).contract).toString() === unread;
    const fp = data.resources.footprint;
    const kept = new SorobanDataBuilder(data).setReadOnly(fp.readOnly.filter((k) => !ours(k)));
    t.true(kept.build().resources.footprint.readOnly.length < fp.readOnly.length, 'entries left out');
    refSim = { ...refSim, transactionData: kept };
  }
  const tx = txWithAuth(live, new Contract(w.pool).call('transact', ...args), refSim.result!.auth, refSim);
  tx.sign(w.alice);
  const { final } = await submit(w.server, tx);
  t.is(final?.status, rpc.Api.GetTransactionStatus.FAILED);
  if (final?.status === rpc.Api.GetTransactionStatus.FAILED) t.is(failureCode(final), 'Contract#7');
  typedError(t, final, ['pool', 'InvalidProof']);
  t.deepEqual(await snapshot(), before);
}

test.serial('an ASP membership root that is not current fails (#7)', async (t) => {
  // the pending proof was made against the current allowlist root; a new member changes it
  await expectStaleAsp(t, pending, async () => {
    const newcomer = membershipLeaf(notePublicKey(randomFieldElement()), randomFieldElement());
    await adminCall('insert_leaf', w.sandbox.info.contracts.asp_membership, [u256(newcomer)]);
    w.aspTree.insert(newcomer);
  });
});

test.serial(
  'an ASP non-membership (blocklist) root that is not current fails (#7), checked before the allowlist',
  async (t) => {
    const fresh = await prove({
      inputs: [dummyInput(w.sk), dummyInput(w.sk)],
      outAmounts: [USDC, 0n],
      extAmount: USDC,
      recipient: w.alice.publicKey(),
    });
    // submitted without the allowlist contract's entries in its footprint: the pool fails on the stale
    // blocklist root before it reads the allowlist (else the access would fail the footprint check)
    await expectStaleAsp(
      t,
      fresh,
      async () => {
        const blocked = notePublicKey(randomFieldElement());
        await adminCall('insert_leaf', w.sandbox.info.contracts.asp_non_membership, [
          u256(blocked),
          u256(1n),
        ]);
        w.blocklist.insert(blocked, 1n);
      },
      w.sandbox.info.contracts.asp_membership,
    );
  },
);

test.serial('disburse pays only the payout wallet, authorised by the admin', async (t) => {
  const change = spend(3n * USDC, withdrawal.outputs[0]!.blinding, 2);
  const toBob = await prove({
    inputs: [change, dummyInput(w.sk)],
    outAmounts: [USDC, 0n],
    extAmount: -2n * USDC,
    recipient: w.bob.publicKey(),
  });
  const toWallet = await prove({
    inputs: [change, dummyInput(w.sk)],
    outAmounts: [USDC, 0n],
    extAmount: -2n * USDC,
    recipient: w.poolWallet,
  });
  await expectRejected(
    t,
    'disburse',
    poolCallArgs(toBob.proof, toBob.extData, w.admin.publicKey()),
    ['pool', 'NotAuthorized'],
    poolCallArgs(toWallet.proof, toWallet.extData, w.admin.publicKey()),
    w.admin,
  );
  // a non-admin cannot disburse even to the payout wallet
  const stranger = await w.server.simulateTransaction(
    invokeTx(
      await w.server.getAccount(w.relayer.publicKey()),
      w.pool,
      'disburse',
      poolCallArgs(toWallet.proof, toWallet.extData, w.relayer.publicKey()),
    ),
    undefined,
    'enforce',
  );
  t.true(rpc.Api.isSimulationError(stranger) && stranger.error.includes('Error(Auth'));
  const { final } = await call(
    w.admin,
    w.pool,
    'disburse',
    poolCallArgs(toWallet.proof, toWallet.extData, w.admin.publicKey()),
  );
  t.is(final?.status, rpc.Api.GetTransactionStatus.SUCCESS);
  w.tree.insertPair(toWallet.outputs[0]!.commitment, toWallet.outputs[1]!.commitment);
  t.is(await view(w.pool, 'get_root'), w.tree.root);
  t.is(await tokenBalance(w.server, w.token, w.poolWallet), 2n * USDC);
  t.is(await tokenBalance(w.server, w.token, w.pool), USDC);
});

test.serial(
  "the verifier contract accepts the native prover's proof on the host's BN254 pairing, and refuses it with one byte of A, B or C changed",
  async (t) => {
    const verifier = w.sandbox.info.contracts.verifier;
    const fresh = await prove({
      inputs: [dummyInput(w.sk), dummyInput(w.sk)],
      outAmounts: [0n, 0n],
      extAmount: 0n,
      recipient: w.alice.publicKey(),
    });
    const p = fresh.proof;
    const inputs = [
      p.root,
      p.publicAmount,
      p.extDataHash,
      ...p.inputNullifiers,
      p.outputCommitment0,
      p.outputCommitment1,
      p.aspMembershipRoot,
      p.aspMembershipRoot,
      p.aspNonMembershipRoot,
      p.aspNonMembershipRoot,
    ];
    const verify = async (bytes: Uint8Array) => {
      const groth16 = (poolProofToScVal({ ...p, proofBytes: bytes }).value as xdr.ScMapEntry[]).find(
        (e) => String(e.key.value) === 'proof',
      )?.val as xdr.ScVal;
      return w.server.simulateTransaction(
        invokeTx(new Account(w.alice.publicKey(), '0'), verifier, 'verify', [
          groth16,
          xdr.ScVal.scvVec(inputs.map(u256)),
        ]),
      );
    };
    const ok = await verify(p.proofBytes);
    if (!rpc.Api.isSimulationSuccess(ok)) return t.fail(ok.error);
    t.is(scValToNative(ok.result!.retval), true);
    t.log(`verify: ${ok.transactionData.build().resources.instructions} instructions declared`);
    // one byte of A, of B and of C changed: refused (the pairing fails, or the point is not on the curve)
    for (const at of [5, 64 + 70, 192 + 33]) {
      const bytes = Uint8Array.from(p.proofBytes);
      bytes[at] = (bytes[at] as number) ^ 1;
      const refused = await verify(bytes);
      t.true(rpc.Api.isSimulationError(refused), `byte ${at} changed`);
    }
  },
);
