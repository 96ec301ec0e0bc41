// The shielded pool (SPP pool.rs / pool-core, policy AB: allowlist + blocklist), implementing
// src/ledger/pool-interface.ts. `transact` checks in SPP's order: sender auth, deposit pull, known root,
// unspent nullifiers, ExtData hash, public amount, live ASP roots (blocklist, then allowlist), canonical
// inputs, Groth16 verification (the verifier's errors fail the call); then marks nullifiers, pays withdrawals and inserts the two
// output commitments. `disburse` is a transact restricted to admin-authorised withdrawals to the payout wallet.
import type { xdr } from '@stellar/stellar-sdk';
import { extDataHashOfScVal, FIELD_MODULUS } from '../src/crypto/index.ts';
import {
  addr,
  asAddress,
  asBytes,
  asI256,
  asStruct,
  asU32,
  asU256,
  asVec,
  bool,
  bytes,
  type ContractDefinition,
  type ContractEnv,
  expectArgs,
  i128,
  struct,
  sym,
  u32,
  u256,
  vec,
  voidVal,
} from '../src/sandbox/contract-api.ts';
import { contractError } from '../src/sandbox/errors.ts';
import {
  ALLOWLIST_BIT,
  BLOCKLIST_BIT,
  POOL_INTERFACE,
  PoolError,
  PoolStorageKey,
  PoolEvent,
  ROOT_HISTORY_SIZE,
} from '../src/ledger/pool-interface.ts';
import { appendLeaves, emptyRoot, nextIndex } from './merkle-storage.ts';

const MAX_EXT_AMOUNT = 1n << 248n;

const key = (name: string) => vec([sym(name)]);
const ADMIN = key('Admin');
const TOKEN = key('Token');
const VERIFIER = key('Verifier');
const ASP_MEMBERSHIP = key('AspMembership');
const ASP_NON_MEMBERSHIP = key('AspNonMembership');
const MAX_DEPOSIT = key('MaximumDepositAmount');
const LEVELS = key('Levels');
const POLICY = key('PolicyFlags');
const PAYOUT = key('PayoutWallet');
const CURRENT_ROOT_INDEX = key('CurrentRootIndex');
const rootKey = PoolStorageKey.root;
const nullifierKey = (n: bigint) => vec([sym('Nullifier'), u256(n)]);

const getAddr = (env: ContractEnv, k: xdr.ScVal) => asAddress(env.instance.get(k) as xdr.ScVal);
const getU32 = (env: ContractEnv, k: xdr.ScVal) => asU32(env.instance.get(k) as xdr.ScVal);

function currentRoot(env: ContractEnv): bigint {
  const i = asU32(env.persistent.get(CURRENT_ROOT_INDEX) as xdr.ScVal);
  return asU256(env.persistent.get(rootKey(i)) as xdr.ScVal);
}

function isKnownRoot(env: ContractEnv, root: bigint): boolean {
  if (root === 0n) return false;
  const current = asU32(env.persistent.get(CURRENT_ROOT_INDEX) as xdr.ScVal);
  let i = current;
  do {
    const r = env.persistent.get(rootKey(i));
    if (r && asU256(r) === root) return true;
    i = i === 0 ? ROOT_HISTORY_SIZE - 1 : i - 1;
  } while (i !== current);
  return false;
}

interface ProofArgs {
  groth16: xdr.ScVal;
  root: bigint;
  nullifiers: bigint[];
  commitment0: bigint;
  commitment1: bigint;
  publicAmount: bigint;
  extDataHash: bigint;
  aspMembershipRoot: bigint;
  aspNonMembershipRoot: bigint;
}

const PROOF_FIELDS = [
  'proof',
  'root',
  'input_nullifiers',
  'output_commitment0',
  'output_commitment1',
  'public_amount',
  'ext_data_hash',
  'asp_membership_root',
  'asp_non_membership_root',
] as const;

function readProof(v: xdr.ScVal): ProofArgs {
  const f = asStruct(v, PROOF_FIELDS, 'proof');
  const g = asStruct(f.proof, ['a', 'b', 'c'] as const, 'proof.proof');
  asBytes(g.a, 'proof.a', 64);
  asBytes(g.b, 'proof.b', 128);
  asBytes(g.c, 'proof.c', 64);
  const hashBytes = asBytes(f.ext_data_hash, 'ext_data_hash', 32);
  return {
    groth16: f.proof,
    root: asU256(f.root, 'root'),
    nullifiers: asVec(f.input_nullifiers, 'input_nullifiers').map((n) => asU256(n, 'nullifier')),
    commitment0: asU256(f.output_commitment0, 'output_commitment0'),
    commitment1: asU256(f.output_commitment1, 'output_commitment1'),
    publicAmount: asU256(f.public_amount, 'public_amount'),
    extDataHash: BigInt(`0x${Buffer.from(hashBytes).toString('hex')}`),
    aspMembershipRoot: asU256(f.asp_membership_root, 'asp_membership_root'),
    aspNonMembershipRoot: asU256(f.asp_non_membership_root, 'asp_non_membership_root'),
  };
}

interface ExtDataArgs {
  scVal: xdr.ScVal;
  recipient: string;
  extAmount: bigint;
  encryptedOutputs: [Uint8Array, Uint8Array];
}

function readExtData(v: xdr.ScVal): ExtDataArgs {
  const f = asStruct(
    v,
    ['recipient', 'ext_amount', 'encrypted_output0', 'encrypted_output1'] as const,
    'ext_data',
  );
  return {
    scVal: v,
    recipient: asAddress(f.recipient, 'recipient'),
    extAmount: asI256(f.ext_amount, 'ext_amount'),
    encryptedOutputs: [
      asBytes(f.encrypted_output0, 'encrypted_output0'),
      asBytes(f.encrypted_output1, 'encrypted_output1'),
    ],
  };
}

function calculatePublicAmount(extAmount: bigint): bigint {
  if (extAmount >= MAX_EXT_AMOUNT || -extAmount >= MAX_EXT_AMOUNT) {
    throw contractError(PoolError.WrongExtAmount, '|ext_amount| must be below 2^248');
  }
  return extAmount >= 0n ? extAmount : FIELD_MODULUS + extAmount;
}

async function tokenTransfer(env: ContractEnv, from: string, to: string, amount: bigint): Promise<void> {
  await env.call(getAddr(env, TOKEN), 'transfer', [addr(from), addr(to), i128(amount)]);
}

/** Steps 3.1–3.10 of SPP's transact (after sender auth and the deposit pull). */
async function internalTransact(env: ContractEnv, proof: ProofArgs, ext: ExtDataArgs): Promise<void> {
  if (!isKnownRoot(env, proof.root))
    throw contractError(PoolError.UnknownRoot, 'root is not in the root history');
  for (const n of proof.nullifiers) {
    if (env.persistent.has(nullifierKey(n)))
      throw contractError(PoolError.AlreadySpentNullifier, `nullifier ${n} is spent`);
  }
  if (extDataHashOfScVal(ext.scVal) !== proof.extDataHash)
    throw contractError(PoolError.WrongExtHash, 'ext_data_hash mismatch');
  if (calculatePublicAmount(ext.extAmount) !== proof.publicAmount) {
    throw contractError(PoolError.WrongExtAmount, 'public_amount does not match ext_amount');
  }
  // SPP checks the blocklist root before the allowlist root; both must be the live roots (no history)
  const policy = getU32(env, POLICY);
  if (policy & BLOCKLIST_BIT) {
    const live = asU256(await env.call(getAddr(env, ASP_NON_MEMBERSHIP), 'get_root', []));
    if (live !== proof.aspNonMembershipRoot)
      throw contractError(PoolError.InvalidProof, 'ASP non-membership root is not current');
  }
  if (policy & ALLOWLIST_BIT) {
    const live = asU256(await env.call(getAddr(env, ASP_MEMBERSHIP), 'get_root', []));
    if (live !== proof.aspMembershipRoot)
      throw contractError(PoolError.InvalidProof, 'ASP membership root is not current');
  }
  const n = proof.nullifiers.length;
  const inputs = [
    proof.root,
    proof.publicAmount,
    proof.extDataHash,
    ...proof.nullifiers,
    proof.commitment0,
    proof.commitment1,
    ...(policy & ALLOWLIST_BIT ? Array<bigint>(n).fill(proof.aspMembershipRoot) : []),
    ...(policy & BLOCKLIST_BIT ? Array<bigint>(n).fill(proof.aspNonMembershipRoot) : []),
  ];
  if (inputs.some((x) => x >= FIELD_MODULUS))
    throw contractError(PoolError.NonCanonicalPublicInput, 'public input ≥ r');
  // SPP calls the verifier without try_: a rejected proof fails the transaction with the verifier's own
  // Groth16Error (#0 InvalidProof, #1 MalformedPublicInputs, #2 MalformedProof); a `false` is the pool's #7
  const verdict = await env.call(getAddr(env, VERIFIER), 'verify', [proof.groth16, vec(inputs.map(u256))]);
  if (verdict.type !== 'scvBool' || verdict.value !== true) {
    throw contractError(PoolError.InvalidProof, 'proof rejected by the verifier');
  }
  for (const nullifier of proof.nullifiers) {
    env.persistent.set(nullifierKey(nullifier), bool(true));
    env.emit([sym(PoolEvent.newNullifier), u256(nullifier)], struct({}));
  }
  if (ext.extAmount < 0n) await tokenTransfer(env, env.contractId, ext.recipient, -ext.extAmount);

  const levels = getU32(env, LEVELS);
  const index = nextIndex(env);
  if (index % 2 !== 0) throw contractError(PoolError.NextIndexNotEven, 'next index is odd');
  if (index + 2 > 2 ** levels) throw contractError(PoolError.MerkleTreeFull, 'pool tree is full');
  const root = appendLeaves(env, levels, [proof.commitment0, proof.commitment1]);
  const slot = (asU32(env.persistent.get(CURRENT_ROOT_INDEX) as xdr.ScVal) + 1) % ROOT_HISTORY_SIZE;
  env.persistent.set(CURRENT_ROOT_INDEX, u32(slot));
  env.persistent.set(rootKey(slot), u256(root));
  [proof.commitment0, proof.commitment1].forEach((c, i) => {
    env.emit(
      [sym(PoolEvent.newCommitment), u256(c)],
      struct({ encrypted_output: bytes(ext.encryptedOutputs[i] as Uint8Array), index: u32(index + i) }),
    );
  });
}

async function transact(env: ContractEnv, args: xdr.ScVal[], disburse: boolean): Promise<xdr.ScVal> {
  expectArgs(args, 3, disburse ? 'disburse' : 'transact');
  const proof = readProof(args[0] as xdr.ScVal);
  const ext = readExtData(args[1] as xdr.ScVal);
  const sender = asAddress(args[2] as xdr.ScVal, 'sender');
  if (disburse) {
    env.requireAuth(getAddr(env, ADMIN));
    const payout = env.instance.get(PAYOUT);
    if (!payout || asAddress(payout) !== ext.recipient) {
      throw contractError(PoolError.NotAuthorized, 'disburse pays only the registered payout wallet');
    }
    if (ext.extAmount >= 0n)
      throw contractError(PoolError.WrongExtAmount, 'disburse is a withdrawal (ext_amount < 0)');
  }
  env.requireAuth(sender);
  if (ext.extAmount > 0n) {
    const max = asU256(env.instance.get(MAX_DEPOSIT) as xdr.ScVal);
    if (ext.extAmount > max)
      throw contractError(PoolError.WrongExtAmount, `deposit above the maximum ${max}`);
    await tokenTransfer(env, sender, env.contractId, ext.extAmount);
  }
  await internalTransact(env, proof, ext);
  return voidVal();
}

function requireAdmin(env: ContractEnv): void {
  env.requireAuth(getAddr(env, ADMIN));
}

export const pool: ContractDefinition = {
  name: 'pool',
  interface: POOL_INTERFACE,
  /** (admin, token, verifier, asp_membership, asp_non_membership, maximum_deposit_amount: U256, levels: u32, policy_flags: u32) */
  construct(env, args) {
    expectArgs(args, 8, '__constructor');
    const levels = asU32(args[6] as xdr.ScVal, 'levels');
    if (levels < 1 || levels > 32) throw contractError(PoolError.WrongLevels, 'levels must be 1..32');
    const policy = asU32(args[7] as xdr.ScVal, 'policy_flags');
    if (policy > (ALLOWLIST_BIT | BLOCKLIST_BIT))
      throw contractError(PoolError.InvalidPolicyFlags, 'unknown policy flags');
    [ADMIN, TOKEN, VERIFIER, ASP_MEMBERSHIP, ASP_NON_MEMBERSHIP].forEach((k, i) => {
      env.instance.set(k, addr(asAddress(args[i] as xdr.ScVal)));
    });
    env.instance.set(MAX_DEPOSIT, u256(asU256(args[5] as xdr.ScVal, 'maximum_deposit_amount')));
    env.instance.set(LEVELS, u32(levels));
    env.instance.set(POLICY, u32(policy));
    env.persistent.set(CURRENT_ROOT_INDEX, u32(0));
    env.persistent.set(rootKey(0), u256(emptyRoot(levels)));
  },
  functions: {
    transact: (env, args) => transact(env, args, false),
    disburse: (env, args) => transact(env, args, true),
    get_root: (env, args) => {
      expectArgs(args, 0, 'get_root');
      return u256(currentRoot(env));
    },
    is_known_root: (env, args) => {
      expectArgs(args, 1, 'is_known_root');
      return bool(isKnownRoot(env, asU256(args[0] as xdr.ScVal, 'root')));
    },
    is_spent: (env, args) => {
      expectArgs(args, 1, 'is_spent');
      return bool(env.persistent.has(nullifierKey(asU256(args[0] as xdr.ScVal, 'nullifier'))));
    },
    get_next_index: (env, args) => {
      expectArgs(args, 0, 'get_next_index');
      return u32(nextIndex(env));
    },
    get_policy_flags: (env, args) => {
      expectArgs(args, 0, 'get_policy_flags');
      return u32(getU32(env, POLICY));
    },
    get_asp_membership_root: (env, args) => {
      expectArgs(args, 0, 'get_asp_membership_root');
      return env.call(getAddr(env, ASP_MEMBERSHIP), 'get_root', []);
    },
    get_asp_non_membership_root: (env, args) => {
      expectArgs(args, 0, 'get_asp_non_membership_root');
      return env.call(getAddr(env, ASP_NON_MEMBERSHIP), 'get_root', []);
    },
    get_payout_wallet: (env, args) => {
      expectArgs(args, 0, 'get_payout_wallet');
      return env.instance.get(PAYOUT) ?? voidVal();
    },
    set_payout_wallet: (env, args) => {
      expectArgs(args, 1, 'set_payout_wallet');
      requireAdmin(env);
      env.instance.set(PAYOUT, addr(asAddress(args[0] as xdr.ScVal, 'wallet')));
      return voidVal();
    },
    update_admin: (env, args) => {
      expectArgs(args, 1, 'update_admin');
      requireAdmin(env);
      env.instance.set(ADMIN, addr(asAddress(args[0] as xdr.ScVal, 'new_admin')));
      return voidVal();
    },
    update_asp_membership: (env, args) => {
      expectArgs(args, 1, 'update_asp_membership');
      requireAdmin(env);
      env.instance.set(ASP_MEMBERSHIP, addr(asAddress(args[0] as xdr.ScVal)));
      return voidVal();
    },
    update_asp_non_membership: (env, args) => {
      expectArgs(args, 1, 'update_asp_non_membership');
      requireAdmin(env);
      env.instance.set(ASP_NON_MEMBERSHIP, addr(asAddress(args[0] as xdr.ScVal)));
      return voidVal();
    },
  },
};
