//! The shielded pool (policy: ASP allowlist and/or blocklist). `transact` checks, in this order: the sender's
//! authorisation, the deposit cap and pull (ext_amount > 0), a known pool root, unspent nullifiers, the
//! ExtData hash, the public amount, the live ASP roots (blocklist, then allowlist), canonical public inputs
//! and the Groth16 proof (the verifier's own error fails the call); then it marks the nullifiers, pays a
//! withdrawal (ext_amount < 0) and appends the two output commitments to the tree. `disburse` is the same
//! transaction restricted to admin-authorised withdrawals to the registered payout wallet.
//!
//! Trees roll over: the pool's commitments fill one tree of `tree_capacity` leaves (a power of two, at most
//! 2^levels) after another. When the current tree cannot take a transaction's two outputs, that transaction
//! opens the next tree (the outputs go there) and the full tree's final root is kept under its number
//! (`FullTreeRoot(tree)`), a known root for ever: a note in any tree is spent with the same circuit and key by
//! proving against its tree's root and naming that tree in `Proof.tree`. Nullifiers are global, so a note is
//! spent once whichever tree it is proved in. Nothing ever refuses a transaction for lack of room.
#![no_std]

use pool_common::field::{fr_modulus, is_canonical};
use pool_common::merkle;
use pool_common::ttl::{extend_instance, extend_persistent};
use pool_common::{AspClient, Groth16Proof, Poseidon2, VerifierClient};
use soroban_sdk::xdr::ToXdr;
use soroban_sdk::{
    contract, contracterror, contractevent, contractimpl, contracttype, token, Address, Bytes, BytesN, Env,
    Vec, I256, U256,
};

/// Roots `transact` accepts: the current one and the 89 before it.
pub const ROOT_HISTORY_SIZE: u32 = 90;
/// Policy bit: inputs prove membership in the ASP allowlist.
pub const ALLOWLIST_BIT: u32 = 1;
/// Policy bit: inputs prove non-membership in the ASP blocklist.
pub const BLOCKLIST_BIT: u32 = 2;

/// The pool's errors (src/ledger/pool-interface.ts's PoolError). AlreadyInitialized, NotInitialized and
/// Overflow are kept for the codes' sake and never returned. Each case's doc is its name, as in the sandbox's
/// published spec (typed clients report an error by it).
#[contracterror]
#[derive(Copy, Clone, Debug, Eq, PartialEq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Error {
    /// NotAuthorized
    NotAuthorized = 1,
    /// MerkleTreeFull
    MerkleTreeFull = 2,
    /// AlreadyInitialized
    AlreadyInitialized = 3,
    /// WrongLevels
    WrongLevels = 4,
    /// NextIndexNotEven
    NextIndexNotEven = 5,
    /// WrongExtAmount
    WrongExtAmount = 6,
    /// InvalidProof
    InvalidProof = 7,
    /// UnknownRoot
    UnknownRoot = 8,
    /// AlreadySpentNullifier
    AlreadySpentNullifier = 9,
    /// WrongExtHash
    WrongExtHash = 10,
    /// NotInitialized
    NotInitialized = 11,
    /// Overflow
    Overflow = 12,
    /// NonCanonicalPublicInput
    NonCanonicalPublicInput = 13,
    /// InvalidPolicyFlags
    InvalidPolicyFlags = 14,
    /// WrongTreeCapacity
    WrongTreeCapacity = 15,
}

/// Storage keys. Instance: Admin … PayoutWallet, TreeCapacity. Persistent: CurrentRootIndex, Root(slot) (the
/// current tree's recent roots), Nullifier(n), CurrentTree (the number of the tree outputs go to),
/// FullTreeRoot(tree) (each full tree's final root), and the current tree's NextIndex and FilledSubtree(level)
/// (pool_common::merkle::TreeKey, the same encoding).
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub enum DataKey {
    Admin,
    Token,
    Verifier,
    AspMembership,
    AspNonMembership,
    MaximumDepositAmount,
    Levels,
    PolicyFlags,
    PayoutWallet,
    CurrentRootIndex,
    Root(u32),
    Nullifier(U256),
    TreeCapacity,
    CurrentTree,
    FullTreeRoot(u32),
}

#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Proof {
    pub proof: Groth16Proof,
    pub root: U256,
    pub input_nullifiers: Vec<U256>,
    pub output_commitment0: U256,
    pub output_commitment1: U256,
    pub public_amount: U256,
    pub ext_data_hash: BytesN<32>,
    pub asp_membership_root: U256,
    pub asp_non_membership_root: U256,
    /// The tree `root` is a root of: needed only for a full tree's final root once it has left the ring.
    pub tree: u32,
}

/// Hashed by the proof as keccak256(XDR of this struct's ScVal map) mod r.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct ExtData {
    pub recipient: Address,
    pub ext_amount: I256,
    pub encrypted_output0: Bytes,
    pub encrypted_output1: Bytes,
}

/// A spent nullifier (data: an empty map).
#[contractevent(topics = ["new_nullifier_event"])]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct NewNullifierEvent {
    #[topic]
    pub nullifier: U256,
}

/// An output commitment appended at leaf `index` of tree `tree`, with the note encrypted for its owner.
#[contractevent(topics = ["new_commitment_event"])]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct NewCommitmentEvent {
    #[topic]
    pub commitment: U256,
    pub encrypted_output: Bytes,
    pub index: u32,
    pub tree: u32,
}

fn instance_get<V: soroban_sdk::TryFromVal<Env, soroban_sdk::Val>>(env: &Env, key: &DataKey) -> V {
    env.storage().instance().get(key).unwrap()
}

fn admin(env: &Env) -> Address {
    instance_get(env, &DataKey::Admin)
}

fn current_root_index(env: &Env) -> u32 {
    env.storage().persistent().get(&DataKey::CurrentRootIndex).unwrap()
}

/// The number of the tree outputs go to (0 before the first rollover).
fn current_tree(env: &Env) -> u32 {
    env.storage().persistent().get(&DataKey::CurrentTree).unwrap_or(0)
}

/// A root `transact` accepts: one in the ring of recent roots, or the final root of full tree `tree`.
fn is_known_root(env: &Env, root: &U256, tree: u32) -> bool {
    if in_root_ring(env, root) {
        return true;
    }
    if tree >= current_tree(env) {
        return false;
    }
    let key = DataKey::FullTreeRoot(tree);
    match env.storage().persistent().get::<_, U256>(&key) {
        Some(r) if r == *root => {
            extend_persistent(env, &key);
            true
        }
        _ => false,
    }
}

/// The ring of roots, newest first; 0 is never a root. Reads slots until it finds `root` (all of them if absent)
/// and keeps the matching slot live.
fn in_root_ring(env: &Env, root: &U256) -> bool {
    if *root == U256::from_u32(env, 0) {
        return false;
    }
    let store = env.storage().persistent();
    let current = current_root_index(env);
    let mut i = current;
    loop {
        let key = DataKey::Root(i);
        if let Some(r) = store.get::<_, U256>(&key) {
            if r == *root {
                extend_persistent(env, &key);
                return true;
            }
        }
        i = if i == 0 { ROOT_HISTORY_SIZE - 1 } else { i - 1 };
        if i == current {
            return false;
        }
    }
}

/// 2^248 as an I256: |ext_amount| must stay below it.
fn max_ext_amount(env: &Env) -> I256 {
    I256::from_parts(env, 0x0100_0000_0000_0000, 0, 0, 0)
}

fn i256_to_u256(env: &Env, x: &I256) -> U256 {
    U256::from_be_bytes(env, &x.to_be_bytes())
}

/// The field element the circuit sees: ext_amount, or r − |ext_amount| for a withdrawal.
fn public_amount(env: &Env, ext_amount: &I256) -> Result<U256, Error> {
    let max = max_ext_amount(env);
    let zero = I256::from_i32(env, 0);
    if *ext_amount >= max || *ext_amount <= zero.sub(&max) {
        return Err(Error::WrongExtAmount);
    }
    if *ext_amount >= zero {
        Ok(i256_to_u256(env, ext_amount))
    } else {
        Ok(fr_modulus(env).sub(&i256_to_u256(env, &zero.sub(ext_amount))))
    }
}

/// keccak256 of the ExtData ScVal's XDR, reduced mod r.
fn ext_data_hash(env: &Env, ext: &ExtData) -> U256 {
    let digest = env.crypto().keccak256(&ext.clone().to_xdr(env));
    U256::from_be_bytes(env, &digest.into()).rem_euclid(&fr_modulus(env))
}

fn token_amount(x: &I256) -> Result<i128, Error> {
    x.to_i128().ok_or(Error::WrongExtAmount)
}

fn transfer(env: &Env, from: &Address, to: &Address, amount: i128) {
    let token: Address = instance_get(env, &DataKey::Token);
    token::TokenClient::new(env, &token).transfer(from, to, &amount);
}

fn live_asp_root(env: &Env, key: &DataKey) -> U256 {
    let asp: Address = instance_get(env, key);
    AspClient::new(env, &asp).get_root()
}

/// Everything after the sender's authorisation and the deposit pull.
fn internal_transact(env: &Env, proof: Proof, ext: ExtData) -> Result<(), Error> {
    if !is_known_root(env, &proof.root, proof.tree) {
        return Err(Error::UnknownRoot);
    }
    let store = env.storage().persistent();
    for n in proof.input_nullifiers.iter() {
        if store.has(&DataKey::Nullifier(n)) {
            return Err(Error::AlreadySpentNullifier);
        }
    }
    let hash = U256::from_be_bytes(env, &proof.ext_data_hash.clone().into());
    if ext_data_hash(env, &ext) != hash {
        return Err(Error::WrongExtHash);
    }
    if public_amount(env, &ext.ext_amount)? != proof.public_amount {
        return Err(Error::WrongExtAmount);
    }
    // the blocklist root first, then the allowlist root; both must be the live ones (no history)
    let policy: u32 = instance_get(env, &DataKey::PolicyFlags);
    if policy & BLOCKLIST_BIT != 0
        && live_asp_root(env, &DataKey::AspNonMembership) != proof.asp_non_membership_root
    {
        return Err(Error::InvalidProof);
    }
    if policy & ALLOWLIST_BIT != 0 && live_asp_root(env, &DataKey::AspMembership) != proof.asp_membership_root
    {
        return Err(Error::InvalidProof);
    }

    let n = proof.input_nullifiers.len();
    let mut inputs = Vec::from_array(env, [proof.root.clone(), proof.public_amount.clone(), hash]);
    inputs.append(&proof.input_nullifiers);
    inputs.push_back(proof.output_commitment0.clone());
    inputs.push_back(proof.output_commitment1.clone());
    for (bit, root) in
        [(ALLOWLIST_BIT, &proof.asp_membership_root), (BLOCKLIST_BIT, &proof.asp_non_membership_root)]
    {
        if policy & bit != 0 {
            for _ in 0..n {
                inputs.push_back(root.clone());
            }
        }
    }
    let hasher = Poseidon2::new(env);
    let r = hasher.modulus();
    if !inputs.iter().all(|x| is_canonical(&x, r)) {
        return Err(Error::NonCanonicalPublicInput);
    }
    // no try_: a refused proof fails the transaction with the verifier's Groth16Error
    let verifier: Address = instance_get(env, &DataKey::Verifier);
    if !VerifierClient::new(env, &verifier).verify(&proof.proof, &inputs) {
        return Err(Error::InvalidProof);
    }

    for nullifier in proof.input_nullifiers.iter() {
        let key = DataKey::Nullifier(nullifier.clone());
        store.set(&key, &true);
        NewNullifierEvent { nullifier }.publish(env);
    }
    let zero = I256::from_i32(env, 0);
    if ext.ext_amount < zero {
        let amount = token_amount(&zero.sub(&ext.ext_amount))?;
        transfer(env, &env.current_contract_address(), &ext.recipient, amount);
    }

    let leaves = [proof.output_commitment0.clone(), proof.output_commitment1.clone()];
    let (tree, index, root) = append_outputs(env, &hasher, &leaves)?;
    let slot = (current_root_index(env) + 1) % ROOT_HISTORY_SIZE;
    store.set(&DataKey::CurrentRootIndex, &slot);
    extend_persistent(env, &DataKey::CurrentRootIndex);
    store.set(&DataKey::Root(slot), &root);
    extend_persistent(env, &DataKey::Root(slot));
    for (i, (commitment, encrypted_output)) in
        [(leaves[0].clone(), ext.encrypted_output0), (leaves[1].clone(), ext.encrypted_output1)]
            .into_iter()
            .enumerate()
    {
        NewCommitmentEvent { commitment, encrypted_output, index: index + i as u32, tree }.publish(env);
    }
    Ok(())
}

/// Appends the output pair to the current tree, first opening the next tree when this one is full (its final
/// root, the ring's newest, is kept as `FullTreeRoot`). Returns the tree, the left leaf's index in it and the
/// tree's new root.
pub(crate) fn append_outputs(env: &Env, hasher: &Poseidon2, leaves: &[U256; 2]) -> Result<(u32, u32, U256), Error> {
    let store = env.storage().persistent();
    let levels: u32 = instance_get(env, &DataKey::Levels);
    let capacity: u32 = instance_get(env, &DataKey::TreeCapacity);
    let mut tree = current_tree(env);
    let mut index = merkle::next_index(env);
    if index % 2 != 0 {
        return Err(Error::NextIndexNotEven);
    }
    if index as u64 + 2 > capacity as u64 {
        let slot = current_root_index(env);
        let final_root: U256 = store.get(&DataKey::Root(slot)).unwrap();
        store.set(&DataKey::FullTreeRoot(tree), &final_root);
        extend_persistent(env, &DataKey::FullTreeRoot(tree));
        tree = tree.checked_add(1).ok_or(Error::MerkleTreeFull)?;
        store.set(&DataKey::CurrentTree, &tree);
        index = 0;
    }
    extend_persistent(env, &DataKey::CurrentTree);
    // a fresh tree needs no reset: every node the append reads at an odd position was written in this tree
    let root = merkle::append(env, hasher, levels, index, leaves);
    Ok((tree, index, root))
}

fn transact(env: &Env, proof: Proof, ext: ExtData, sender: Address, disburse: bool) -> Result<(), Error> {
    extend_instance(env);
    let zero = I256::from_i32(env, 0);
    if disburse {
        admin(env).require_auth();
        let payout: Option<Address> = env.storage().instance().get(&DataKey::PayoutWallet);
        if payout.as_ref() != Some(&ext.recipient) {
            return Err(Error::NotAuthorized);
        }
        if ext.ext_amount >= zero {
            return Err(Error::WrongExtAmount);
        }
    }
    sender.require_auth();
    if ext.ext_amount > zero {
        let max: U256 = instance_get(env, &DataKey::MaximumDepositAmount);
        if i256_to_u256(env, &ext.ext_amount) > max {
            return Err(Error::WrongExtAmount);
        }
        let amount = token_amount(&ext.ext_amount)?;
        transfer(env, &sender, &env.current_contract_address(), amount);
    }
    internal_transact(env, proof, ext)
}

#[contract]
pub struct Pool;

#[contractimpl]
impl Pool {
    /// levels 1..=32 (WrongLevels), tree_capacity a power of two in 4..=2^levels (WrongTreeCapacity: how many
    /// leaves one tree takes before the next opens), policy_flags ⊆ {allowlist 1, blocklist 2}
    /// (InvalidPolicyFlags); the empty tree's root goes to slot 0 of the ring.
    #[allow(clippy::too_many_arguments)]
    pub fn __constructor(
        env: Env,
        admin: Address,
        token: Address,
        verifier: Address,
        asp_membership: Address,
        asp_non_membership: Address,
        maximum_deposit_amount: U256,
        levels: u32,
        tree_capacity: u32,
        policy_flags: u32,
    ) -> Result<(), Error> {
        if levels == 0 || levels > pool_common::constants::MAX_LEVELS {
            return Err(Error::WrongLevels);
        }
        if tree_capacity < 4 || !tree_capacity.is_power_of_two() || tree_capacity as u64 > 1u64 << levels {
            return Err(Error::WrongTreeCapacity);
        }
        if policy_flags > (ALLOWLIST_BIT | BLOCKLIST_BIT) {
            return Err(Error::InvalidPolicyFlags);
        }
        let instance = env.storage().instance();
        instance.set(&DataKey::Admin, &admin);
        instance.set(&DataKey::Token, &token);
        instance.set(&DataKey::Verifier, &verifier);
        instance.set(&DataKey::AspMembership, &asp_membership);
        instance.set(&DataKey::AspNonMembership, &asp_non_membership);
        instance.set(&DataKey::MaximumDepositAmount, &maximum_deposit_amount);
        instance.set(&DataKey::Levels, &levels);
        instance.set(&DataKey::TreeCapacity, &tree_capacity);
        instance.set(&DataKey::PolicyFlags, &policy_flags);
        extend_instance(&env);
        let store = env.storage().persistent();
        store.set(&DataKey::CurrentRootIndex, &0u32);
        extend_persistent(&env, &DataKey::CurrentRootIndex);
        store.set(&DataKey::CurrentTree, &0u32);
        extend_persistent(&env, &DataKey::CurrentTree);
        store.set(&DataKey::Root(0), &merkle::zero(&env, levels));
        extend_persistent(&env, &DataKey::Root(0));
        Ok(())
    }

    /// Deposit (ext_amount > 0), transfer (0) or withdrawal (< 0) with a Groth16 proof; sender authorises.
    pub fn transact(env: Env, proof: Proof, ext_data: ExtData, sender: Address) -> Result<(), Error> {
        transact(&env, proof, ext_data, sender, false)
    }

    /// A transact restricted to admin-authorised withdrawals to the registered payout wallet.
    pub fn disburse(env: Env, proof: Proof, ext_data: ExtData, sender: Address) -> Result<(), Error> {
        transact(&env, proof, ext_data, sender, true)
    }

    pub fn get_root(env: Env) -> U256 {
        let slot = current_root_index(&env);
        env.storage().persistent().get(&DataKey::Root(slot)).unwrap()
    }

    /// Whether `transact` accepts `root` for a proof naming `tree`.
    pub fn is_known_root(env: Env, root: U256, tree: u32) -> bool {
        is_known_root(&env, &root, tree)
    }

    pub fn is_spent(env: Env, nullifier: U256) -> bool {
        env.storage().persistent().has(&DataKey::Nullifier(nullifier))
    }

    /// Leaves used in the current tree.
    pub fn get_next_index(env: Env) -> u32 {
        merkle::next_index(&env)
    }

    /// The tree outputs go to (trees before it are full).
    pub fn get_current_tree(env: Env) -> u32 {
        current_tree(&env)
    }

    /// How many leaves one tree takes.
    pub fn get_tree_capacity(env: Env) -> u32 {
        instance_get(&env, &DataKey::TreeCapacity)
    }

    /// The final root of a full tree (None for the current tree and those not yet opened).
    pub fn get_full_tree_root(env: Env, tree: u32) -> Option<U256> {
        env.storage().persistent().get(&DataKey::FullTreeRoot(tree))
    }

    pub fn get_policy_flags(env: Env) -> u32 {
        instance_get(&env, &DataKey::PolicyFlags)
    }

    pub fn get_asp_membership_root(env: Env) -> U256 {
        live_asp_root(&env, &DataKey::AspMembership)
    }

    pub fn get_asp_non_membership_root(env: Env) -> U256 {
        live_asp_root(&env, &DataKey::AspNonMembership)
    }

    pub fn get_payout_wallet(env: Env) -> Option<Address> {
        env.storage().instance().get(&DataKey::PayoutWallet)
    }

    pub fn set_payout_wallet(env: Env, wallet: Address) {
        admin(&env).require_auth();
        env.storage().instance().set(&DataKey::PayoutWallet, &wallet);
        extend_instance(&env);
    }

    pub fn update_admin(env: Env, new_admin: Address) {
        admin(&env).require_auth();
        env.storage().instance().set(&DataKey::Admin, &new_admin);
        extend_instance(&env);
    }

    pub fn update_asp_membership(env: Env, new_asp_membership: Address) {
        admin(&env).require_auth();
        env.storage().instance().set(&DataKey::AspMembership, &new_asp_membership);
        extend_instance(&env);
    }

    pub fn update_asp_non_membership(env: Env, new_asp_non_membership: Address) {
        admin(&env).require_auth();
        env.storage().instance().set(&DataKey::AspNonMembership, &new_asp_non_membership);
        extend_instance(&env);
    }
}

#[cfg(test)]
mod test;
#[cfg(test)]
mod test_wasm;
