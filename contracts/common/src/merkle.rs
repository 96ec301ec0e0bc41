//! The incremental binary Merkle tree kept in contract storage (the pool's commitment tree and the ASP
//! allowlist): for each level the last left node (`FilledSubtree(level)`) and the number of leaves
//! (`NextIndex`), both persistent. Leaves are appended one at a time (ASP) or as a sibling pair (pool); the
//! root comes back to the caller, which stores it where it keeps roots. The pool's trees roll over: `next` is
//! the leaf index in the current tree, and a new tree starts again at 0 over the same entries (an append never
//! reads a level at an odd position that the current tree has not written).
//!
//! Appending a pair writes `FilledSubtree(0)` = left leaf, then every level at which the pair's ancestor is a
//! left child: the entries `src/proxy/flows/pin-footprint.ts` declares for a deposit prepared ahead of time.
use soroban_sdk::{contracttype, Env, U256};

use crate::constants::ZERO_HASHES;
use crate::field::u256_from_limbs;
use crate::poseidon2::Poseidon2;
use crate::ttl::extend_persistent;

/// Persistent keys of the tree: `Vec[Symbol("NextIndex")]`, `Vec[Symbol("FilledSubtree"), U32(level)]`.
#[contracttype]
#[derive(Clone)]
pub enum TreeKey {
    NextIndex,
    FilledSubtree(u32),
}

/// Root of an empty subtree of height `level` (0..=32).
pub fn zero(env: &Env, level: u32) -> U256 {
    u256_from_limbs(env, &ZERO_HASHES[level as usize])
}

/// Number of leaves appended so far (0 before the first append: the key is written by the first one).
pub fn next_index(env: &Env) -> u32 {
    env.storage().persistent().get(&TreeKey::NextIndex).unwrap_or(0)
}

/// Appends one leaf, or two sibling leaves (`leaves.len()` 1 or 2; a pair needs an even next index), and
/// returns the new root. The caller has checked the capacity and that the leaves are canonical.
pub fn append(env: &Env, hasher: &Poseidon2, levels: u32, next: u32, leaves: &[U256]) -> U256 {
    let store = env.storage().persistent();
    let (mut node, mut level, mut index) = match leaves {
        [leaf] => (leaf.clone(), 0u32, next),
        [left, right] => {
            debug_assert!(next % 2 == 0);
            let key = TreeKey::FilledSubtree(0);
            store.set(&key, left);
            extend_persistent(env, &key);
            (hasher.compress(left, right), 1u32, next >> 1)
        }
        _ => panic!("append takes one leaf or a pair"),
    };
    while level < levels {
        let key = TreeKey::FilledSubtree(level);
        if index % 2 == 0 {
            store.set(&key, &node);
            extend_persistent(env, &key);
            node = hasher.compress(&node, &zero(env, level));
        } else {
            let left = match store.get::<_, U256>(&key) {
                Some(left) => {
                    extend_persistent(env, &key);
                    left
                }
                None => zero(env, level),
            };
            node = hasher.compress(&left, &node);
        }
        index >>= 1;
        level += 1;
    }
    store.set(&TreeKey::NextIndex, &(next + leaves.len() as u32));
    extend_persistent(env, &TreeKey::NextIndex);
    node
}
