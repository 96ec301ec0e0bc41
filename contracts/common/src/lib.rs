//! Code shared by the pool's contracts (not a contract itself): Poseidon2 through the host's permutation,
//! the incremental Merkle tree kept in contract storage, BN254 field checks, the TTL policy, and the
//! interfaces the pool calls the verifier and the ASP contracts through.
#![no_std]

pub mod constants;
pub mod field;
pub mod interfaces;
pub mod merkle;
pub mod poseidon2;
pub mod ttl;

#[cfg(any(test, feature = "testutils"))]
pub mod test_vectors;
#[cfg(any(test, feature = "testutils"))]
pub mod testutils;

pub use field::{fr_modulus, u256_from_limbs};
pub use interfaces::{AspClient, Groth16Proof, VerifierClient};
pub use poseidon2::Poseidon2;

#[cfg(test)]
mod test;
