//! Time-to-live policy shared by the contracts (a ledger closes about every 5 s: 17,280 ledgers a day).
//!
//! * The instance (and with it the contract's code) is extended on every state-changing call and on the calls
//!   the pool makes on every `transact` (the verifier's `verify`, the ASP contracts' `get_root`).
//! * Persistent entries a call reads or writes (tree roots, filled subtrees, next index, SMT nodes) are
//!   extended with the same policy: when fewer than 29 days are left, back to 30 days. Most calls therefore
//!   only check the TTL; an entry is actually extended (and rent paid) about once a day while in use.
//! * A nullifier is written with the network's minimum TTL and never extended. It never needs to stay live to
//!   stay spent: an archived persistent entry cannot be recreated (a transaction touching its key must restore
//!   it first), so `is_spent` and `transact` see it as present again after the restore; keeping it live would
//!   only cost every transaction rent (about 0.25 XLM per nullifier for the maximum TTL at testnet's rates).
use soroban_sdk::{Env, IntoVal, Val};

pub const LEDGERS_PER_DAY: u32 = 17_280;

/// Extend the instance when fewer ledgers than this are left…
pub const INSTANCE_TTL_THRESHOLD: u32 = 29 * LEDGERS_PER_DAY;
/// …to this many ledgers.
pub const INSTANCE_TTL_EXTEND_TO: u32 = 30 * LEDGERS_PER_DAY;

/// Extend a persistent entry a call touches when fewer ledgers than this are left…
pub const PERSISTENT_TTL_THRESHOLD: u32 = 29 * LEDGERS_PER_DAY;
/// …to this many ledgers.
pub const PERSISTENT_TTL_EXTEND_TO: u32 = 30 * LEDGERS_PER_DAY;

/// Keeps the contract instance and its code live.
pub fn extend_instance(env: &Env) {
    env.storage().instance().extend_ttl(INSTANCE_TTL_THRESHOLD, INSTANCE_TTL_EXTEND_TO);
}

/// Keeps a persistent entry that exists live (threshold / extend-to policy above).
pub fn extend_persistent<K: IntoVal<Env, Val>>(env: &Env, key: &K) {
    env.storage().persistent().extend_ttl(key, PERSISTENT_TTL_THRESHOLD, PERSISTENT_TTL_EXTEND_TO);
}
