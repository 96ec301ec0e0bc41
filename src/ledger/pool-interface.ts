// The interface of the pool's contracts, declared once: the shielded pool, its Groth16 verifier and the two
// ASP contracts (membership allowlist, non-membership blocklist), with the function names, argument and
// return types, struct types, error enums (the codes of stellar-private-payments' Rust contracts,
// https://github.com/NethermindEth/stellar-private-payments) and event names. The Rust contracts in contracts/
// implement it (the build checks their published specs against it); the proxy decodes errors and events
// with it. The pool call-argument codecs live in pool-args.ts.
import { xdr } from '#stellar-sdk';
import { type ContractInterface, type FunctionSpec, type SpecType } from './contract-spec.ts';

/** How many past pool roots `transact` accepts. */
export { ROOT_HISTORY_SIZE } from '../crypto/index.ts';

/**
 * Persistent storage keys of the pool's Merkle trees (SPP's merkle_with_history layout: `FilledSubtree(level)`,
 * `Root(slot)` in a ring of ROOT_HISTORY_SIZE; then, for trees that roll over, `CurrentTree` and each full
 * tree's `FullTreeRoot(tree)`). Which of them a `transact` writes depends on how many leaves came before it, so
 * callers that must pin a footprint ahead of time name them here.
 */
export const PoolStorageKey = {
  root: (slot: number): xdr.ScVal => xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('Root'), xdr.ScVal.scvU32(slot)]),
  filledSubtree: (level: number): xdr.ScVal =>
    xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('FilledSubtree'), xdr.ScVal.scvU32(level)]),
  currentTree: (): xdr.ScVal => xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('CurrentTree')]),
  fullTreeRoot: (tree: number): xdr.ScVal =>
    xdr.ScVal.scvVec([xdr.ScVal.scvSymbol('FullTreeRoot'), xdr.ScVal.scvU32(tree)]),
};

// ---- error enums ----

/** The pool's `Error` enum (codes 1–15). */
export const PoolError = {
  NotAuthorized: 1,
  MerkleTreeFull: 2,
  AlreadyInitialized: 3,
  WrongLevels: 4,
  NextIndexNotEven: 5,
  WrongExtAmount: 6,
  InvalidProof: 7,
  UnknownRoot: 8,
  AlreadySpentNullifier: 9,
  WrongExtHash: 10,
  NotInitialized: 11,
  Overflow: 12,
  NonCanonicalPublicInput: 13,
  InvalidPolicyFlags: 14,
  WrongTreeCapacity: 15,
} as const;

/** The verifier's `Groth16Error`. The pool calls `verify` without `try_`, so these surface from `transact`. */
export const VerifierError = { InvalidProof: 0, MalformedPublicInputs: 1, MalformedProof: 2 } as const;

export const AspMembershipError = {
  NotAuthorized: 1,
  MerkleTreeFull: 2,
  WrongLevels: 4,
  NonCanonical: 13,
} as const;

export const AspNonMembershipError = {
  NotAuthorized: 1,
  KeyExists: 2,
  KeyNotFound: 3,
  NonCanonical: 13,
} as const;

// ---- types ----

const U256: SpecType = 'u256';
const ADDRESS: SpecType = 'address';
const G1: SpecType = { bytesN: 64 };
const G2: SpecType = { bytesN: 128 };

const groth16Proof = {
  name: 'Groth16Proof',
  doc: 'A(64) ‖ B(128) ‖ C(64): G1 = x‖y, G2 = x.c1‖x.c0‖y.c1‖y.c0, 32-byte big-endian limbs',
  fields: [
    ['a', G1],
    ['b', G2],
    ['c', G1],
  ],
} as const;

// ---- pool ----

const poolFunctions = [
  {
    name: '__constructor',
    inputs: [
      ['admin', ADDRESS],
      ['token', ADDRESS],
      ['verifier', ADDRESS],
      ['asp_membership', ADDRESS],
      ['asp_non_membership', ADDRESS],
      ['maximum_deposit_amount', U256],
      ['levels', 'u32'],
      ['tree_capacity', 'u32'],
      ['policy_flags', 'u32'],
    ],
  },
  {
    name: 'transact',
    doc: 'Deposit (ext_amount > 0), transfer (0) or withdrawal (< 0) with a Groth16 proof; sender authorises.',
    inputs: [
      ['proof', { udt: 'Proof' }],
      ['ext_data', { udt: 'ExtData' }],
      ['sender', ADDRESS],
    ],
  },
  {
    name: 'disburse',
    doc: 'A transact restricted to admin-authorised withdrawals to the registered payout wallet.',
    inputs: [
      ['proof', { udt: 'Proof' }],
      ['ext_data', { udt: 'ExtData' }],
      ['sender', ADDRESS],
    ],
  },
  { name: 'get_root', inputs: [], output: U256 },
  {
    name: 'is_known_root',
    inputs: [
      ['root', U256],
      ['tree', 'u32'],
    ],
    output: 'bool',
  },
  { name: 'is_spent', inputs: [['nullifier', U256]], output: 'bool' },
  { name: 'get_next_index', inputs: [], output: 'u32' },
  { name: 'get_current_tree', inputs: [], output: 'u32' },
  { name: 'get_tree_capacity', inputs: [], output: 'u32' },
  { name: 'get_full_tree_root', inputs: [['tree', 'u32']], output: { option: U256 } },
  { name: 'get_policy_flags', inputs: [], output: 'u32' },
  { name: 'get_asp_membership_root', inputs: [], output: U256 },
  { name: 'get_asp_non_membership_root', inputs: [], output: U256 },
  { name: 'get_payout_wallet', inputs: [], output: { option: ADDRESS } },
  { name: 'set_payout_wallet', inputs: [['wallet', ADDRESS]] },
  { name: 'update_admin', inputs: [['new_admin', ADDRESS]] },
  { name: 'update_asp_membership', inputs: [['new_asp_membership', ADDRESS]] },
  { name: 'update_asp_non_membership', inputs: [['new_asp_non_membership', ADDRESS]] },
] as const satisfies readonly FunctionSpec[];

export const POOL_INTERFACE: ContractInterface = {
  name: 'pool',
  functions: poolFunctions,
  structs: [
    groth16Proof,
    {
      name: 'Proof',
      fields: [
        ['proof', { udt: 'Groth16Proof' }],
        ['root', U256],
        ['input_nullifiers', { vec: U256 }],
        ['output_commitment0', U256],
        ['output_commitment1', U256],
        ['public_amount', U256],
        ['ext_data_hash', { bytesN: 32 }],
        ['asp_membership_root', U256],
        ['asp_non_membership_root', U256],
        ['tree', 'u32'],
      ],
    },
    {
      name: 'ExtData',
      fields: [
        ['recipient', ADDRESS],
        ['ext_amount', 'i256'],
        ['encrypted_output0', 'bytes'],
        ['encrypted_output1', 'bytes'],
      ],
    },
  ],
  errors: [{ name: 'Error', cases: PoolError }],
};

/** Names of the pool's events (first topic). */
export const PoolEvent = {
  newCommitment: 'new_commitment_event',
  newNullifier: 'new_nullifier_event',
} as const;

// ---- verifier ----

const verifierFunctions = [
  { name: '__constructor', inputs: [['vk', { udt: 'VerificationKeyBytes' }]] },
  {
    name: 'verify',
    doc: 'One 4-pair BN254 pairing check; a rejected proof fails with Groth16Error.',
    inputs: [
      ['proof', { udt: 'Groth16Proof' }],
      ['public_inputs', { vec: U256 }],
    ],
    output: 'bool',
  },
] as const satisfies readonly FunctionSpec[];

export const VERIFIER_INTERFACE: ContractInterface = {
  name: 'verifier',
  functions: verifierFunctions,
  structs: [
    groth16Proof,
    {
      name: 'VerificationKeyBytes',
      fields: [
        ['alpha', G1],
        ['beta', G2],
        ['gamma', G2],
        ['delta', G2],
        ['ic', { vec: G1 }],
      ],
    },
  ],
  errors: [{ name: 'Groth16Error', cases: VerifierError }],
};

// ---- ASP membership (allowlist) ----

const aspMembershipFunctions = [
  {
    name: '__constructor',
    inputs: [
      ['admin', ADDRESS],
      ['levels', 'u32'],
    ],
  },
  { name: 'get_root', inputs: [], output: U256 },
  { name: 'get_admin', inputs: [], output: ADDRESS },
  {
    name: 'hash_pair',
    inputs: [
      ['left', U256],
      ['right', U256],
    ],
    output: U256,
  },
  { name: 'insert_leaf', inputs: [['leaf', U256]] },
  { name: 'set_admin_insert_only', inputs: [['admin_only', 'bool']] },
  { name: 'update_admin', inputs: [['new_admin', ADDRESS]] },
] as const satisfies readonly FunctionSpec[];

export const ASP_MEMBERSHIP_INTERFACE: ContractInterface = {
  name: 'asp_membership',
  functions: aspMembershipFunctions,
  structs: [],
  errors: [{ name: 'Error', cases: AspMembershipError }],
};

// ---- ASP non-membership (blocklist) ----

const KEY_VALUE = [
  ['key', U256],
  ['value', U256],
] as const;

const aspNonMembershipFunctions = [
  { name: '__constructor', inputs: [['admin', ADDRESS]] },
  { name: 'get_root', inputs: [], output: U256 },
  { name: 'get_admin', inputs: [], output: ADDRESS },
  { name: 'insert_leaf', inputs: KEY_VALUE },
  { name: 'insert', inputs: KEY_VALUE },
  { name: 'delete_leaf', inputs: [['key', U256]] },
  { name: 'delete', inputs: [['key', U256]] },
  { name: 'find_key', inputs: [['key', U256]], output: { udt: 'FindResult' } },
  {
    name: 'verify_non_membership',
    inputs: [
      ['key', U256],
      ['siblings', { vec: U256 }],
      ['not_found_key', U256],
      ['not_found_value', U256],
    ],
    output: 'bool',
  },
] as const satisfies readonly FunctionSpec[];

export const ASP_NON_MEMBERSHIP_INTERFACE: ContractInterface = {
  name: 'asp_non_membership',
  functions: aspNonMembershipFunctions,
  structs: [
    {
      name: 'FindResult',
      fields: [
        ['found', 'bool'],
        ['found_value', U256],
        ['is_old0', 'bool'],
        ['not_found_key', U256],
        ['not_found_value', U256],
        ['siblings', { vec: U256 }],
      ],
    },
  ],
  errors: [{ name: 'Error', cases: AspNonMembershipError }],
};
