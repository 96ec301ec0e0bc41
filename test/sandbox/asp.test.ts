// The ASP contracts through rpc.Server: admin-only inserts into the membership tree (roots equal the
// TypeScript MerkleTree's), and the blocklist SMT (insert, find_key, verify_non_membership, delete) with
// roots and proofs equal to the TypeScript SparseMerkleTree's.
import test from 'ava';
import { Account, Keypair, nativeToScVal, rpc, scValToNative, xdr } from '#stellar-sdk';
import { compress, FIELD_MODULUS, MerkleTree, SparseMerkleTree } from '../../src/crypto/index.ts';
import type { PoolSandbox as Sandbox } from '../../src/deploy/sandbox-network.ts';
import { fund, invokeTx, startSandbox, submit } from './helpers.ts';

let sandbox: Sandbox;
let server: rpc.Server;
let admin: Keypair;

test.before(async () => {
  ({ sandbox, server } = await startSandbox());
  admin = Keypair.fromSecret(sandbox.secrets().admin);
});
test.after.always(async () => {
  await sandbox?.close();
});

const u256 = (n: bigint) => nativeToScVal(n, { type: 'u256' });

async function view(contract: string, fn: string, args: xdr.ScVal[] = []) {
  const sim = await server.simulateTransaction(
    invokeTx(new Account(Keypair.random().publicKey(), '0'), contract, fn, args),
  );
  if (!rpc.Api.isSimulationSuccess(sim)) throw new Error(sim.error);
  return scValToNative(sim.result!.retval);
}

async function send(who: Keypair, contract: string, fn: string, args: xdr.ScVal[]) {
  const account = await server.getAccount(who.publicKey());
  const tx = await server.prepareTransaction(invokeTx(account, contract, fn, args));
  tx.sign(who);
  return (await submit(server, tx)).final?.status;
}

test.serial('membership: admin inserts leaves, roots match MerkleTree, others are refused', async (t) => {
  const id = sandbox.info.contracts.asp_membership;
  const mirror = new MerkleTree(20);
  t.is(await view(id, 'get_root'), mirror.root);
  for (const leaf of [11n, 22n, 33n]) {
    t.is(await send(admin, id, 'insert_leaf', [u256(leaf)]), rpc.Api.GetTransactionStatus.SUCCESS);
    mirror.insert(leaf);
    t.is(await view(id, 'get_root'), mirror.root);
  }
  const events = await server.getEvents({ startLedger: 1, filters: [{ contractIds: [id] }] });
  t.deepEqual(
    events.events.map((e) => (scValToNative(e.value) as { leaf: bigint }).leaf),
    [11n, 22n, 33n],
  );
  t.deepEqual(
    events.events.map((e) => Number((scValToNative(e.value) as { index: bigint }).index)),
    [0, 1, 2],
  );
  // a stranger cannot insert; the tree does not change
  const mallory = Keypair.random();
  await fund(sandbox, mallory.publicKey());
  const account = await server.getAccount(mallory.publicKey());
  const sim = await server.simulateTransaction(
    invokeTx(account, id, 'insert_leaf', [u256(44n)]),
    undefined,
    'enforce',
  );
  t.true(rpc.Api.isSimulationError(sim) && sim.error.includes('Error(Auth, InvalidAction)'));
  t.is(await view(id, 'get_root'), mirror.root);
  // non-field leaves are refused
  const big = await server.simulateTransaction(
    invokeTx(new Account(admin.publicKey(), '1'), id, 'insert_leaf', [u256(FIELD_MODULUS)]),
  );
  t.true(rpc.Api.isSimulationError(big) && big.error.includes('Error(Contract, #13)'));
  t.is(await view(id, 'hash_pair', [u256(1n), u256(2n)]), compress(1n, 2n));
});

test.serial(
  'non-membership: insert, find_key, verify_non_membership and delete match SparseMerkleTree',
  async (t) => {
    const id = sandbox.info.contracts.asp_non_membership;
    const mirror = new SparseMerkleTree();
    t.is(await view(id, 'get_root'), 0n);
    for (const [k, v] of [
      [5n, 1n],
      [6n, 1n],
      [13n, 1n],
    ] as const) {
      t.is(await send(admin, id, 'insert_leaf', [u256(k), u256(v)]), rpc.Api.GetTransactionStatus.SUCCESS);
      mirror.insert(k, v);
      t.is(await view(id, 'get_root'), mirror.root);
    }
    // a key already present is refused
    const dup = await server.simulateTransaction(
      invokeTx(new Account(admin.publicKey(), '1'), id, 'insert_leaf', [u256(5n), u256(2n)]),
    );
    t.true(rpc.Api.isSimulationError(dup) && dup.error.includes('Error(Contract, #2)'));

    const found = (await view(id, 'find_key', [u256(6n)])) as { found: boolean; found_value: bigint };
    t.true(found.found);
    t.is(found.found_value, 1n);
    const absent = (await view(id, 'find_key', [u256(9n)])) as {
      found: boolean;
      siblings: bigint[];
      not_found_key: bigint;
      not_found_value: bigint;
    };
    t.false(absent.found);
    const local = mirror.find(9n);
    t.deepEqual(absent.siblings, local.siblings);
    t.is(absent.not_found_key, local.notFoundKey);
    const proofArgs = (key: bigint, r: typeof absent) => [
      u256(key),
      xdr.ScVal.scvVec(r.siblings.map(u256)),
      u256(r.not_found_key),
      u256(r.not_found_value),
    ];
    t.true((await view(id, 'verify_non_membership', proofArgs(9n, absent))) as boolean);
    // the same proof does not show a present key absent
    t.false((await view(id, 'verify_non_membership', proofArgs(6n, absent))) as boolean);
    // a key whose path ends at another leaf (not an empty slot)
    const nextToFive = (await view(id, 'find_key', [u256(21n)])) as typeof absent;
    t.is(nextToFive.not_found_key, 5n);
    t.true((await view(id, 'verify_non_membership', proofArgs(21n, nextToFive))) as boolean);
    t.false((await view(id, 'verify_non_membership', proofArgs(5n, nextToFive))) as boolean);

    t.is(await send(admin, id, 'delete_leaf', [u256(6n)]), rpc.Api.GetTransactionStatus.SUCCESS);
    mirror.delete(6n);
    t.is(await view(id, 'get_root'), mirror.root);
    t.false(((await view(id, 'find_key', [u256(6n)])) as { found: boolean }).found);
    const missing = await server.simulateTransaction(
      invokeTx(new Account(admin.publicKey(), '1'), id, 'delete', [u256(6n)]),
    );
    t.true(rpc.Api.isSimulationError(missing) && missing.error.includes('Error(Contract, #3)'));
    const names = (await server.getEvents({ startLedger: 1, filters: [{ contractIds: [id] }] })).events.map(
      (e) => scValToNative(e.topic[0] as xdr.ScVal),
    );
    t.deepEqual(names, ['LeafInserted', 'LeafInserted', 'LeafInserted', 'LeafDeleted']);
  },
);
