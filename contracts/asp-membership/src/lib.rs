//! ASP membership (allowlist): an incremental Merkle tree of `hash([note public key, blinding], 1)` leaves with
//! ONE current root, no history (the pool compares a proof's membership root with it by equality). Inserts
//! are admin-only until the admin opens them with `set_admin_insert_only(false)`.
#![no_std]

use pool_common::field::is_canonical;
use pool_common::merkle;
use pool_common::ttl::{extend_instance, extend_persistent};
use pool_common::Poseidon2;
use soroban_sdk::{contract, contracterror, contractevent, contractimpl, contracttype, Address, Env, U256};

/// NotAuthorized is kept for the code's sake (a missing authorisation fails in the host). Each case's doc is
/// its name, as in the sandbox's published spec (typed clients report an error by it).
#[contracterror]
#[derive(Copy, Clone, Debug, Eq, PartialEq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Error {
    /// NotAuthorized
    NotAuthorized = 1,
    /// MerkleTreeFull
    MerkleTreeFull = 2,
    /// WrongLevels
    WrongLevels = 4,
    /// NonCanonical
    NonCanonical = 13,
}

/// Instance: Admin, Levels, AdminInsertOnly. Persistent: Root, and the tree's NextIndex and
/// FilledSubtree(level) (pool_common::merkle::TreeKey).
#[contracttype]
#[derive(Clone)]
pub enum DataKey {
    Admin,
    Levels,
    AdminInsertOnly,
    Root,
}

/// A leaf appended at `index`, and the tree's new root.
#[contractevent(topics = ["LeafAdded"])]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct LeafAdded {
    pub index: u64,
    pub leaf: U256,
    pub root: U256,
}

fn admin(env: &Env) -> Address {
    env.storage().instance().get(&DataKey::Admin).unwrap()
}

fn field(hasher: &Poseidon2, x: &U256) -> Result<(), Error> {
    if is_canonical(x, hasher.modulus()) {
        Ok(())
    } else {
        Err(Error::NonCanonical)
    }
}

#[contract]
pub struct AspMembership;

#[contractimpl]
impl AspMembership {
    /// levels 1..=32 (WrongLevels); inserts start admin-only; the root is the empty tree's.
    pub fn __constructor(env: Env, admin: Address, levels: u32) -> Result<(), Error> {
        if levels == 0 || levels > pool_common::constants::MAX_LEVELS {
            return Err(Error::WrongLevels);
        }
        let instance = env.storage().instance();
        instance.set(&DataKey::Admin, &admin);
        instance.set(&DataKey::Levels, &levels);
        instance.set(&DataKey::AdminInsertOnly, &true);
        extend_instance(&env);
        env.storage().persistent().set(&DataKey::Root, &merkle::zero(&env, levels));
        extend_persistent(&env, &DataKey::Root);
        Ok(())
    }

    /// The live root. The pool reads it on every transaction, so it keeps this contract's instance and root
    /// entry live.
    pub fn get_root(env: Env) -> U256 {
        extend_instance(&env);
        extend_persistent(&env, &DataKey::Root);
        env.storage().persistent().get(&DataKey::Root).unwrap()
    }

    pub fn get_admin(env: Env) -> Address {
        admin(&env)
    }

    /// The tree's node hash: compress(left, right); both must be field elements (NonCanonical).
    pub fn hash_pair(env: Env, left: U256, right: U256) -> Result<U256, Error> {
        let hasher = Poseidon2::new(&env);
        field(&hasher, &left)?;
        field(&hasher, &right)?;
        Ok(hasher.compress(&left, &right))
    }

    /// Appends a leaf (a field element: NonCanonical), admin-authorised unless inserts are open; MerkleTreeFull
    /// once all 2^levels leaves are used.
    pub fn insert_leaf(env: Env, leaf: U256) -> Result<(), Error> {
        let hasher = Poseidon2::new(&env);
        field(&hasher, &leaf)?;
        let instance = env.storage().instance();
        if instance.get(&DataKey::AdminInsertOnly).unwrap_or(true) {
            admin(&env).require_auth();
        }
        extend_instance(&env);
        let levels: u32 = instance.get(&DataKey::Levels).unwrap();
        let index = merkle::next_index(&env);
        if index as u64 >= 1u64 << levels {
            return Err(Error::MerkleTreeFull);
        }
        let root = merkle::append(&env, &hasher, levels, index, core::slice::from_ref(&leaf));
        env.storage().persistent().set(&DataKey::Root, &root);
        extend_persistent(&env, &DataKey::Root);
        LeafAdded { index: index as u64, leaf, root }.publish(&env);
        Ok(())
    }

    /// Admin: whether inserts need the admin's authorisation.
    pub fn set_admin_insert_only(env: Env, admin_only: bool) {
        admin(&env).require_auth();
        env.storage().instance().set(&DataKey::AdminInsertOnly, &admin_only);
        extend_instance(&env);
    }

    pub fn update_admin(env: Env, new_admin: Address) {
        admin(&env).require_auth();
        env.storage().instance().set(&DataKey::Admin, &new_admin);
        extend_instance(&env);
    }
}

#[cfg(test)]
mod test;
