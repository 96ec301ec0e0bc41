// ASP membership (allowlist) contract, as SPP's asp-membership: an incremental Merkle tree of
// `hash(notePublicKey, blinding, dom 1)` leaves with ONE current root (no history; the pool compares
// proofs against it by equality). Inserts are admin-only unless the admin opens them.
import type { xdr } from '@stellar/stellar-sdk';
import { compress, FIELD_MODULUS } from '../src/crypto/index.ts';
import {
  addr,
  asAddress,
  asBool,
  asU32,
  asU256,
  bool,
  type ContractDefinition,
  type ContractEnv,
  expectArgs,
  struct,
  sym,
  u32,
  u64,
  u256,
  vec,
  voidVal,
} from '../src/sandbox/contract-api.ts';
import { contractError } from '../src/sandbox/errors.ts';
import { AspMembershipError, ASP_MEMBERSHIP_INTERFACE } from '../src/ledger/pool-interface.ts';
import { appendLeaves, emptyRoot, nextIndex } from './merkle-storage.ts';

const ADMIN = vec([sym('Admin')]);
const LEVELS = vec([sym('Levels')]);
const ROOT = vec([sym('Root')]);
const ADMIN_INSERT_ONLY = vec([sym('AdminInsertOnly')]);

const admin = (env: ContractEnv) => asAddress(env.instance.get(ADMIN) as xdr.ScVal);
const levels = (env: ContractEnv) => asU32(env.instance.get(LEVELS) as xdr.ScVal);

function field(v: xdr.ScVal, what: string): bigint {
  const x = asU256(v, what);
  if (x >= FIELD_MODULUS)
    throw contractError(AspMembershipError.NonCanonical, `${what} is not a field element`);
  return x;
}

export const aspMembership: ContractDefinition = {
  name: 'asp_membership',
  interface: ASP_MEMBERSHIP_INTERFACE,
  /** (admin: Address, levels: u32) */
  construct(env, args) {
    expectArgs(args, 2, '__constructor');
    const depth = asU32(args[1] as xdr.ScVal, 'levels');
    if (depth < 1 || depth > 32) throw contractError(AspMembershipError.WrongLevels, 'levels must be 1..32');
    env.instance.set(ADMIN, addr(asAddress(args[0] as xdr.ScVal, 'admin')));
    env.instance.set(LEVELS, u32(depth));
    env.instance.set(ADMIN_INSERT_ONLY, bool(true));
    env.persistent.set(ROOT, u256(emptyRoot(depth)));
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
    hash_pair: (_env, args) => {
      expectArgs(args, 2, 'hash_pair');
      return u256(compress(field(args[0] as xdr.ScVal, 'left'), field(args[1] as xdr.ScVal, 'right')));
    },
    insert_leaf: (env, args) => {
      expectArgs(args, 1, 'insert_leaf');
      const leaf = field(args[0] as xdr.ScVal, 'leaf');
      if (asBool(env.instance.get(ADMIN_INSERT_ONLY) as xdr.ScVal)) env.requireAuth(admin(env));
      const depth = levels(env);
      const index = nextIndex(env);
      if (index >= 2 ** depth)
        throw contractError(AspMembershipError.MerkleTreeFull, 'membership tree is full');
      const root = appendLeaves(env, depth, [leaf]);
      env.persistent.set(ROOT, u256(root));
      env.emit([sym('LeafAdded')], struct({ index: u64(BigInt(index)), leaf: u256(leaf), root: u256(root) }));
      return voidVal();
    },
    set_admin_insert_only: (env, args) => {
      expectArgs(args, 1, 'set_admin_insert_only');
      env.requireAuth(admin(env));
      env.instance.set(ADMIN_INSERT_ONLY, bool(asBool(args[0] as xdr.ScVal)));
      return voidVal();
    },
    update_admin: (env, args) => {
      expectArgs(args, 1, 'update_admin');
      env.requireAuth(admin(env));
      env.instance.set(ADMIN, addr(asAddress(args[0] as xdr.ScVal, 'new_admin')));
      return voidVal();
    },
  },
};
