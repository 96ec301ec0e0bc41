//! Test contract for the Soroban host addon: a constructor, instance and persistent storage, events,
//! authorization of the caller and of a nested token transfer, and a loop to exhaust a budget.
#![no_std]
use soroban_sdk::{contract, contractevent, contractimpl, contracttype, token, Address, Bytes, Env};

#[contracttype]
pub enum Key {
    Admin,
    Count,
    Deposited(Address),
}

#[contractevent]
pub struct Counted {
    pub count: u32,
}

#[contractevent]
pub struct Shouted {
    pub data: Bytes,
}

#[contract]
pub struct Counter;

#[contractimpl]
impl Counter {
    pub fn __constructor(env: Env, admin: Address, start: u32) {
        env.storage().instance().set(&Key::Admin, &admin);
        env.storage().persistent().set(&Key::Count, &start);
    }

    pub fn admin(env: Env) -> Address {
        env.storage().instance().get(&Key::Admin).unwrap()
    }

    pub fn count(env: Env) -> u32 {
        env.storage().persistent().get(&Key::Count).unwrap_or(0)
    }

    /// Adds `by` to the count; needs the admin's authorization.
    pub fn increment(env: Env, by: u32) -> u32 {
        let admin: Address = env.storage().instance().get(&Key::Admin).unwrap();
        admin.require_auth();
        let count = Self::count(env.clone()) + by;
        env.storage().persistent().set(&Key::Count, &count);
        Counted { count }.publish(&env);
        count
    }

    /// Moves `amount` of `token` from `from` into this contract (a nested, authorized transfer).
    pub fn deposit(env: Env, token: Address, from: Address, amount: i128) -> i128 {
        from.require_auth();
        token::Client::new(&env, &token).transfer(&from, &env.current_contract_address(), &amount);
        let key = Key::Deposited(from);
        let total: i128 = env.storage().persistent().get(&key).unwrap_or(0) + amount;
        env.storage().persistent().set(&key, &total);
        total
    }

    /// Hashes `rounds` times: a way to spend instructions.
    pub fn burn(env: Env, rounds: u32) -> u32 {
        let mut data = Bytes::from_array(&env, &[0u8; 32]);
        for _ in 0..rounds {
            data = env.crypto().sha256(&data).into();
        }
        data.get(0).unwrap_or(0) as u32
    }

    /// Publishes an event carrying `kib` KiB.
    pub fn shout(env: Env, kib: u32) {
        let mut data = Bytes::new(&env);
        for _ in 0..kib {
            data.extend_from_array(&[7u8; 1024]);
        }
        Shouted { data }.publish(&env);
    }
}
