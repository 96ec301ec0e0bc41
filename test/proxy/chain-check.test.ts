// The rebuild's check against the chain's present state, on a real sandbox running the pool contract: a tree,
// nullifiers and notes that agree with the pool contract pass; a leaf the contract does not hold, a nullifier
// it has not spent, an ASP root it does not check proofs against, or a note whose commitment is not its leaf is
// refused, naming it. The current tree's comparison is one function of (local tree, next index, root) and the
// chain's; full trees are compared by their final roots.
import { randomBytes } from 'node:crypto';
import test from 'ava';
import { rpc } from '#stellar-sdk';
import { MerkleForest, MerkleTree, SparseMerkleTree } from '../../src/crypto/index.ts';
import { type PoolSandbox, startPoolSandbox } from '../../src/deploy/sandbox-network.ts';
import { ChainMismatchError, checkAgainstChain, treeMismatch } from '../../src/proxy/services/chain-check.ts';
import type { NoteRecord } from '../../src/proxy/services/notebook.ts';
import { PoolReads } from '../../src/proxy/services/pool-reads.ts';

let sandbox: PoolSandbox;
let reads: PoolReads;

test.before(async () => {
  sandbox = await startPoolSandbox({ port: 0, ledgerMs: 100 });
  const server = new rpc.Server(sandbox.rpcUrl, { allowHttp: true });
  reads = new PoolReads(server, sandbox.info.networkPassphrase, sandbox.info.contracts.pool);
});

test.after.always(async () => {
  await sandbox?.close();
});

/** The ASP roots of a deployment no key was registered in: an empty allowlist tree and blocklist. */
const emptyAsp = () => ({ membership: new MerkleTree(20).root, nonMembership: new SparseMerkleTree().root });

const field = () => BigInt(`0x${randomBytes(31).toString('hex')}`);

function note(over: Partial<NoteRecord>): NoteRecord {
  return {
    agentId: 'op/agent-1',
    commitment: field(),
    amount: 1n,
    blinding: 1n,
    leafIndex: 0,
    nullifier: field(),
    state: 'unspent',
    ...over,
  };
}

/** Checks `tree`, `spent` and `notes` against the sandbox's pool contract (no pass in between). */
function check(tree: MerkleForest, spent: bigint[] = [], notes: NoteRecord[] = [], asp = emptyAsp()) {
  let passes = 0;
  return {
    run: () =>
      checkAgainstChain({
        reads,
        tree,
        asp: () => asp,
        spent: new Set(spent),
        notes: async () => notes,
        sync: async () => void passes++,
      }),
    passes: () => passes,
  };
}

test('the tree comparison names what differs: leaves, then root', (t) => {
  t.is(treeMismatch({ tree: 0, root: 5n, nextIndex: 3 }, { tree: 0, root: 5n, nextIndex: 3 }), undefined);
  t.regex(
    treeMismatch({ tree: 1, root: 5n, nextIndex: 3 }, { tree: 0, root: 5n, nextIndex: 3 })!,
    /the events read fill 2 pool trees, the pool contract 1/,
  );
  t.regex(
    treeMismatch({ tree: 0, root: 5n, nextIndex: 4 }, { tree: 0, root: 5n, nextIndex: 3 })!,
    /holds 4 leaves, .* 3/,
  );
  t.regex(
    treeMismatch({ tree: 0, root: 5n, nextIndex: 3 }, { tree: 0, root: 6n, nextIndex: 3 })!,
    /root .* \(0x0+5\) is not the pool contract's \(0x0+6\) at 3 leaves/,
  );
});

test('an empty tree and no nullifiers agree with a new pool contract', async (t) => {
  t.is(await reads.nextIndex(), 0);
  t.is(
    await reads.root(),
    new MerkleTree(20).root,
    'the contract and src/crypto compute the same empty root',
  );
  await t.notThrowsAsync(check(new MerkleForest(20)).run());
});

test('a forged leaf is refused, after reading again', async (t) => {
  const tree = new MerkleForest(20);
  tree.insert(field());
  const forged = check(tree);
  const error = await t.throwsAsync(forged.run(), { instanceOf: ChainMismatchError });
  t.regex(error!.message, /the pool tree rebuilt from the events read holds 1 leaves, the pool contract's 0/);
  t.true(forged.passes() > 0, 'the events were read again before refusing');
});

test('an allowlist root the chain does not hold is refused', async (t) => {
  const tree = new MerkleTree(20);
  tree.insert(field());
  const error = await t.throwsAsync(
    check(new MerkleForest(20), [], [], { ...emptyAsp(), membership: tree.root }).run(),
    { instanceOf: ChainMismatchError },
  );
  t.regex(
    error!.message,
    /the ASP allowlist root rebuilt from the events read \(0x[0-9a-f]+\) is not the chain's/,
  );
});

test('a nullifier the pool contract has not spent is refused, naming it', async (t) => {
  const nullifier = field();
  const error = await t.throwsAsync(check(new MerkleForest(20), [nullifier]).run(), {
    instanceOf: ChainMismatchError,
  });
  t.regex(
    error!.message,
    new RegExp(`nullifier 0x${nullifier.toString(16).padStart(64, '0')} is spent in the events read but not`),
  );
});

test('a note whose commitment is not its leaf is refused, naming it', async (t) => {
  const error = await t.throwsAsync(check(new MerkleForest(20), [], [note({ leafIndex: 0 })]).run(), {
    instanceOf: ChainMismatchError,
  });
  t.regex(
    error!.message,
    /the note of op\/agent-1 at leaf 0 has commitment 0x[0-9a-f]+, which is not that leaf/,
  );
});
