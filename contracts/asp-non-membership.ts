// ASP non-membership (blocklist) contract, as SPP's asp-non-membership: a sparse Merkle tree (circomlib
// SMT with Poseidon2) keyed by note public key. The leaf set is kept in contract storage and the tree is
// rebuilt with the shared TypeScript SMT, so roots and proofs match what the circuit checks.
import type { xdr } from '@stellar/stellar-sdk';
import { FIELD_MODULUS, SparseMerkleTree, verifyNonMembership } from '../src/crypto/index.ts';
import {
  addr,
  asAddress,
  asU256,
  asVec,
  bool,
  type ContractDefinition,
  type ContractEnv,
  expectArgs,
  struct,
  sym,
  u256,
  vec,
  voidVal,
} from '../src/sandbox/contract-api.ts';
import { contractError } from '../src/sandbox/errors.ts';
import { AspNonMembershipError, ASP_NON_MEMBERSHIP_INTERFACE } from '../src/ledger/pool-interface.ts';

const ADMIN = vec([sym('Admin')]);
const ROOT = vec([sym('Root')]);
const KEYS = vec([sym('Keys')]);
const leafKey = (key: bigint) => vec([sym('Leaf'), u256(key)]);

const admin = (env: ContractEnv) => asAddress(env.instance.get(ADMIN) as xdr.ScVal);

function field(v: xdr.ScVal, what: string): bigint {
  const x = asU256(v, what);
  if (x >= FIELD_MODULUS)
    throw contractError(AspNonMembershipError.NonCanonical, `${what} is not a field element`);
  return x;
}

function keys(env: ContractEnv): bigint[] {
  const v = env.persistent.get(KEYS);
  return v ? asVec(v).map((k) => asU256(k)) : [];
}

function loadTree(env: ContractEnv): SparseMerkleTree {
  const tree = new SparseMerkleTree();
  for (const k of keys(env)) tree.insert(k, asU256(env.persistent.get(leafKey(k)) as xdr.ScVal));
  return tree;
}

function saveRoot(env: ContractEnv, tree: SparseMerkleTree): bigint {
  env.persistent.set(KEYS, vec(tree.entries().map(([k]) => u256(k))));
  env.persistent.set(ROOT, u256(tree.root));
  return tree.root;
}

function insert(env: ContractEnv, args: xdr.ScVal[]): xdr.ScVal {
  expectArgs(args, 2, 'insert_leaf');
  const key = field(args[0] as xdr.ScVal, 'key');
  const value = field(args[1] as xdr.ScVal, 'value');
  env.requireAuth(admin(env));
  const tree = loadTree(env);
  if (tree.find(key).found)
    throw contractError(AspNonMembershipError.KeyExists, 'key is already in the tree');
  tree.insert(key, value);
  env.persistent.set(leafKey(key), u256(value));
  const root = saveRoot(env, tree);
  env.emit([sym('LeafInserted')], struct({ key: u256(key), root: u256(root), value: u256(value) }));
  return voidVal();
}

function remove(env: ContractEnv, args: xdr.ScVal[]): xdr.ScVal {
  expectArgs(args, 1, 'delete_leaf');
  const key = field(args[0] as xdr.ScVal, 'key');
  env.requireAuth(admin(env));
  const tree = loadTree(env);
  if (!tree.find(key).found) throw contractError(AspNonMembershipError.KeyNotFound, 'key is not in the tree');
  tree.delete(key);
  env.persistent.remove(leafKey(key));
  const root = saveRoot(env, tree);
  env.emit([sym('LeafDeleted')], struct({ key: u256(key), root: u256(root) }));
  return voidVal();
}

export const aspNonMembership: ContractDefinition = {
  name: 'asp_non_membership',
  interface: ASP_NON_MEMBERSHIP_INTERFACE,
  /** (admin: Address); the empty tree's root is 0 */
  construct(env, args) {
    expectArgs(args, 1, '__constructor');
    env.instance.set(ADMIN, addr(asAddress(args[0] as xdr.ScVal, 'admin')));
    env.persistent.set(ROOT, u256(0n));
  },
  functions: {
    get_root: (env, args) => {
      expectArgs(args, 0, 'get_root');
      return env.persistent.get(ROOT) as xdr.ScVal;
    },
    get_admin: (env, args) => {
      expectArgs(args, 0, 'get_admin');
      return addr(admin(env));
    },
    insert_leaf: insert,
    insert: insert,
    delete_leaf: remove,
    delete: remove,
    /** find_key(key) -> FindResult {found, found_value, is_old0, not_found_key, not_found_value, siblings} */
    find_key: (env, args) => {
      expectArgs(args, 1, 'find_key');
      const r = loadTree(env).find(field(args[0] as xdr.ScVal, 'key'));
      return struct({
        found: bool(r.found),
        found_value: u256(r.foundValue),
        is_old0: bool(r.isOld0),
        not_found_key: u256(r.notFoundKey),
        not_found_value: u256(r.notFoundValue),
        siblings: vec(r.siblings.map(u256)),
      });
    },
    /** verify_non_membership(key, siblings, not_found_key, not_found_value) -> bool, against the current root */
    verify_non_membership: (env, args) => {
      expectArgs(args, 4, 'verify_non_membership');
      const key = field(args[0] as xdr.ScVal, 'key');
      const siblings = asVec(args[1] as xdr.ScVal, 'siblings').map((s) => field(s, 'sibling'));
      const oldKey = field(args[2] as xdr.ScVal, 'not_found_key');
      const oldValue = field(args[3] as xdr.ScVal, 'not_found_value');
      const root = asU256(env.persistent.get(ROOT) as xdr.ScVal);
      // an empty slot is reported as not_found_key = key (find_key) or as (0, 0) (circuit inputs)
      const isOld0 = oldKey === key || (oldKey === 0n && oldValue === 0n) ? 1n : 0n;
      return bool(verifyNonMembership(root, key, { root, siblings, oldKey, oldValue, isOld0 }));
    },
  },
};
