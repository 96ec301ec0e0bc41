//! Poseidon2 over BN254 (Horizen Labs instance: x^5, 8 full + 56 partial rounds, t = 2, 3, 4) through the
//! host's `poseidon2_permutation`, with the constants generated from src/crypto (constants.rs).
//!
//! The host takes the round constants as (8 + 56) rows of t values in round order: 4 full rounds, the 56
//! partial rounds (only the first value of a partial row is used; the rest are zero), 4 full rounds. Building
//! that Vec costs a few hundred host calls, so a [`Poseidon2`] builds each width's parameters once, on first
//! use, and every hash of the invocation reuses them: make one per contract call and pass it around.
//!
//! Inputs must already be canonical (< r): the host would silently reduce them. Callers check values that come
//! from outside (see `field`); values produced by these hashes are canonical.
use core::cell::OnceCell;

use soroban_sdk::{symbol_short, Env, Vec, U256};

use crate::constants::{
    Limbs, POSEIDON2_FULL_ROUNDS, POSEIDON2_PARTIAL_ROUNDS, POSEIDON2_T2_DIAG_M1, POSEIDON2_T2_EXTERNAL,
    POSEIDON2_T2_INTERNAL, POSEIDON2_T3_DIAG_M1, POSEIDON2_T3_EXTERNAL, POSEIDON2_T3_INTERNAL,
    POSEIDON2_T4_DIAG_M1, POSEIDON2_T4_EXTERNAL, POSEIDON2_T4_INTERNAL,
};
use crate::field::{fr_modulus, u256_from_limbs};

const SBOX_DEGREE: u32 = 5;
const HALF_FULL: usize = POSEIDON2_FULL_ROUNDS as usize / 2;
const ROUNDS: usize = (POSEIDON2_FULL_ROUNDS + POSEIDON2_PARTIAL_ROUNDS) as usize;

struct Params {
    diag_m1: Vec<U256>,
    round_constants: Vec<Vec<U256>>,
}

impl Params {
    fn new<const T: usize>(
        env: &Env,
        external: &[[Limbs; T]; POSEIDON2_FULL_ROUNDS as usize],
        internal: &[Limbs; POSEIDON2_PARTIAL_ROUNDS as usize],
        diag_m1: &[Limbs; T],
    ) -> Self {
        let rows: [Vec<U256>; ROUNDS] = core::array::from_fn(|r| {
            let row: [U256; T] =
                if r < HALF_FULL {
                    core::array::from_fn(|i| u256_from_limbs(env, &external[r][i]))
                } else if r < HALF_FULL + POSEIDON2_PARTIAL_ROUNDS as usize {
                    let c = &internal[r - HALF_FULL];
                    core::array::from_fn(|i| {
                        if i == 0 {
                            u256_from_limbs(env, c)
                        } else {
                            U256::from_u32(env, 0)
                        }
                    })
                } else {
                    let e = &external[r - POSEIDON2_PARTIAL_ROUNDS as usize];
                    core::array::from_fn(|i| u256_from_limbs(env, &e[i]))
                };
            Vec::from_array(env, row)
        });
        let diag: [U256; T] = core::array::from_fn(|i| u256_from_limbs(env, &diag_m1[i]));
        Params { diag_m1: Vec::from_array(env, diag), round_constants: Vec::from_array(env, rows) }
    }
}

/// Poseidon2 hashing for one contract invocation (parameters built lazily, once per width).
pub struct Poseidon2 {
    env: Env,
    modulus: U256,
    t2: OnceCell<Params>,
    t3: OnceCell<Params>,
    t4: OnceCell<Params>,
}

impl Poseidon2 {
    pub fn new(env: &Env) -> Self {
        Poseidon2 {
            env: env.clone(),
            modulus: fr_modulus(env),
            t2: OnceCell::new(),
            t3: OnceCell::new(),
            t4: OnceCell::new(),
        }
    }

    /// The scalar field modulus r (already built: callers may reuse it for their range checks).
    pub fn modulus(&self) -> &U256 {
        &self.modulus
    }

    fn params(&self, t: u32) -> &Params {
        let env = &self.env;
        match t {
            2 => self.t2.get_or_init(|| {
                Params::new(env, &POSEIDON2_T2_EXTERNAL, &POSEIDON2_T2_INTERNAL, &POSEIDON2_T2_DIAG_M1)
            }),
            3 => self.t3.get_or_init(|| {
                Params::new(env, &POSEIDON2_T3_EXTERNAL, &POSEIDON2_T3_INTERNAL, &POSEIDON2_T3_DIAG_M1)
            }),
            4 => self.t4.get_or_init(|| {
                Params::new(env, &POSEIDON2_T4_EXTERNAL, &POSEIDON2_T4_INTERNAL, &POSEIDON2_T4_DIAG_M1)
            }),
            _ => panic!("Poseidon2 width must be 2, 3 or 4"),
        }
    }

    /// The permutation of a state of 2, 3 or 4 canonical field elements.
    pub fn permutation(&self, state: &Vec<U256>) -> Vec<U256> {
        let t = state.len();
        let p = self.params(t);
        self.env.crypto_hazmat().poseidon2_permutation(
            state,
            symbol_short!("BN254"),
            t,
            SBOX_DEGREE,
            POSEIDON2_FULL_ROUNDS,
            POSEIDON2_PARTIAL_ROUNDS,
            &p.diag_m1,
            &p.round_constants,
        )
    }

    /// The fixed-width hash: permutation of [inputs…, domain] (t = inputs + 1), first element.
    pub fn hash(&self, inputs: &[U256], domain: u32) -> U256 {
        let mut state: Vec<U256> = Vec::from_slice(&self.env, inputs);
        state.push_back(U256::from_u32(&self.env, domain));
        self.permutation(&state).get_unchecked(0)
    }

    /// hash([a, b], domain) (t = 3): the sparse Merkle tree's leaves use domain 1.
    pub fn hash2(&self, a: &U256, b: &U256, domain: u32) -> U256 {
        let state = Vec::from_array(&self.env, [a.clone(), b.clone(), U256::from_u32(&self.env, domain)]);
        self.permutation(&state).get_unchecked(0)
    }

    /// Compression: permutation([left, right])[0] + left mod r; every binary Merkle node.
    pub fn compress(&self, left: &U256, right: &U256) -> U256 {
        let state = Vec::from_array(&self.env, [left.clone(), right.clone()]);
        let sum = self.permutation(&state).get_unchecked(0).add(left);
        if sum >= self.modulus {
            sum.sub(&self.modulus)
        } else {
            sum
        }
    }
}
