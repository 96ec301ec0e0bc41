//! What the pool calls on the other contracts, as hand-written client traits (no build-order dependency on
//! the other crates' WASMs), and the proof type the pool and the verifier share.
use soroban_sdk::{contractclient, contracttype, BytesN, Env, Vec, U256};

/// A(64) ‖ B(128) ‖ C(64): G1 = x‖y, G2 = x.c1‖x.c0‖y.c1‖y.c0, 32-byte big-endian limbs.
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct Groth16Proof {
    pub a: BytesN<64>,
    pub b: BytesN<128>,
    pub c: BytesN<64>,
}

/// The Groth16 verifier. `verify` fails the calling transaction with the verifier's own `Groth16Error`
/// when the proof is refused (the pool calls it without `try_`).
#[contractclient(name = "VerifierClient")]
pub trait VerifierInterface {
    fn verify(env: Env, proof: Groth16Proof, public_inputs: Vec<U256>) -> bool;
}

/// The live root of an ASP contract (allowlist or blocklist).
#[contractclient(name = "AspClient")]
pub trait AspRootInterface {
    fn get_root(env: Env) -> U256;
}
