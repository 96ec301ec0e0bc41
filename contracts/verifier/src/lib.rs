//! Groth16 verifier over BN254 for the pool's circuit. The verification key is fixed at deployment (instance
//! storage); `verify(proof, public_inputs)` computes vk_x = IC[0] + Σ inputs[i]·IC[i+1] with one host MSM and
//! checks e(−A, B)·e(α, β)·e(vk_x, γ)·e(C, δ) = 1 with one host multi-pairing. The only arithmetic done in the
//! guest is negating A's y coordinate (q − y on bytes).
//!
//! Encodings (the host's, CAP-0074): G1 = be32(x)‖be32(y), G2 = be32(x.c1)‖be32(x.c0)‖be32(y.c1)‖be32(y.c0),
//! the point at infinity is all zero bytes.
#![no_std]

use pool_common::field::{fq_negate, fr_modulus, is_fq};
use pool_common::ttl::extend_instance;
pub use pool_common::Groth16Proof;
use soroban_sdk::crypto::bn254::{Bn254Fr, Bn254G1Affine, Bn254G2Affine};
use soroban_sdk::{
    contract, contracterror, contractimpl, contracttype, BytesN, Env, Symbol, TryFromVal, Vec, U256,
};

/// The verification key as the constructor takes it (snarkjs verification_key.json in the encodings above).
#[contracttype]
#[derive(Clone, Debug, Eq, PartialEq)]
pub struct VerificationKeyBytes {
    pub alpha: BytesN<64>,
    pub beta: BytesN<128>,
    pub gamma: BytesN<128>,
    pub delta: BytesN<128>,
    pub ic: Vec<BytesN<64>>,
}

/// Why `verify` refused a proof: InvalidProof (0) — the pairing check failed, or A, B or C is the point at
/// infinity; MalformedPublicInputs (1) — not one input per IC point after the first, or an input ≥ r;
/// MalformedProof (2) — a coordinate ≥ q or a G1 point off the curve (in a proof, or in a key at deployment).
/// Each case's doc is its name, as in the sandbox's published spec (typed clients report an error by it).
#[contracterror]
#[derive(Copy, Clone, Debug, Eq, PartialEq, PartialOrd, Ord)]
#[repr(u32)]
pub enum Groth16Error {
    /// InvalidProof
    InvalidProof = 0,
    /// MalformedPublicInputs
    MalformedPublicInputs = 1,
    /// MalformedProof
    MalformedProof = 2,
}

fn vk_key(env: &Env) -> Symbol {
    Symbol::new(env, "VerificationKey")
}

fn coordinates_canonical(bytes: &[u8]) -> bool {
    bytes.chunks(32).all(is_fq)
}

fn is_zero(bytes: &[u8]) -> bool {
    bytes.iter().all(|b| *b == 0)
}

/// A G1 point's encoding is canonical and, unless it is the point at infinity, on the curve.
fn g1_valid(env: &Env, p: &BytesN<64>) -> bool {
    let bytes = p.to_array();
    if !coordinates_canonical(&bytes) {
        return false;
    }
    is_zero(&bytes) || env.crypto().bn254().g1_is_on_curve(&Bn254G1Affine::from_bytes(p.clone()))
}

/// −P for a canonical G1 encoding.
fn g1_negate(env: &Env, p: &[u8; 64]) -> Bn254G1Affine {
    let mut out = *p;
    let mut y = [0u8; 32];
    y.copy_from_slice(&p[32..]);
    out[32..].copy_from_slice(&fq_negate(&y));
    Bn254G1Affine::from_bytes(BytesN::from_array(env, &out))
}

/// The same host vector seen with another element type of the same encoding (no copy, no host call):
/// BytesN<64> ⇄ Bn254G1Affine, U256 ⇄ Bn254Fr. The host checks the elements when it reads them.
fn recast<A, B>(env: &Env, v: &Vec<A>) -> Vec<B>
where
    B: soroban_sdk::IntoVal<Env, soroban_sdk::Val> + TryFromVal<Env, soroban_sdk::Val>,
{
    Vec::<B>::try_from_val(env, v.as_val()).unwrap()
}

#[contract]
pub struct Verifier;

#[contractimpl]
impl Verifier {
    /// Stores the verification key, refusing a malformed one: no IC point, a coordinate ≥ q, a G1 point off
    /// the curve (MalformedProof). The G2 points are then checked by the host in a pairing that must hold,
    /// e(α, β)·e(−α, β)·e(α, γ)·e(−α, γ)·e(α, δ)·e(−α, δ) = 1, so a key the host would refuse at every
    /// `verify` (a G2 point off the twist or outside the subgroup) fails the deployment instead.
    pub fn __constructor(env: Env, vk: VerificationKeyBytes) -> Result<(), Groth16Error> {
        if vk.ic.is_empty() {
            return Err(Groth16Error::MalformedProof);
        }
        if !g1_valid(&env, &vk.alpha) || !vk.ic.iter().all(|p| g1_valid(&env, &p)) {
            return Err(Groth16Error::MalformedProof);
        }
        for g2 in [&vk.beta, &vk.gamma, &vk.delta] {
            if !coordinates_canonical(&g2.to_array()) {
                return Err(Groth16Error::MalformedProof);
            }
        }
        let alpha = Bn254G1Affine::from_bytes(vk.alpha.clone());
        let neg_alpha = g1_negate(&env, &vk.alpha.to_array());
        let g1 = Vec::from_array(
            &env,
            [alpha.clone(), neg_alpha.clone(), alpha.clone(), neg_alpha.clone(), alpha, neg_alpha],
        );
        let [beta, gamma, delta] =
            [&vk.beta, &vk.gamma, &vk.delta].map(|p| Bn254G2Affine::from_bytes(p.clone()));
        let g2 = Vec::from_array(&env, [beta.clone(), beta, gamma.clone(), gamma, delta.clone(), delta]);
        if !env.crypto().bn254().pairing_check(g1, g2) {
            return Err(Groth16Error::MalformedProof);
        }
        env.storage().instance().set(&vk_key(&env), &vk);
        extend_instance(&env);
        Ok(())
    }

    /// Checks a proof of the key's circuit for `public_inputs` (one U256 per IC point after the first).
    /// Ok(true) when it holds; otherwise an error: wrong count or an input ≥ r → MalformedPublicInputs;
    /// a coordinate ≥ q or a G1 point off the curve → MalformedProof; A, B or C at infinity, or a failed
    /// pairing → InvalidProof. (A G2 point B off the twist or outside the subgroup makes the host's pairing
    /// fail the call with a host error, Error(Crypto, InvalidInput): there is no host check to ask first.)
    pub fn verify(env: Env, proof: Groth16Proof, public_inputs: Vec<U256>) -> Result<bool, Groth16Error> {
        extend_instance(&env);
        let vk: VerificationKeyBytes = env.storage().instance().get(&vk_key(&env)).unwrap();
        if public_inputs.len() + 1 != vk.ic.len() {
            return Err(Groth16Error::MalformedPublicInputs);
        }
        let r = fr_modulus(&env);
        if public_inputs.iter().any(|x| x >= r) {
            return Err(Groth16Error::MalformedPublicInputs);
        }
        let a = proof.a.to_array();
        let b = proof.b.to_array();
        let c = proof.c.to_array();
        if !g1_valid(&env, &proof.a) || !coordinates_canonical(&b) || !g1_valid(&env, &proof.c) {
            return Err(Groth16Error::MalformedProof);
        }
        // an honest proof never has a point at infinity
        if is_zero(&a) || is_zero(&b) || is_zero(&c) {
            return Err(Groth16Error::InvalidProof);
        }
        let bn = env.crypto().bn254();
        let ic0 = Bn254G1Affine::from_bytes(vk.ic.get_unchecked(0));
        let vk_x = if public_inputs.is_empty() {
            ic0
        } else {
            let points: Vec<Bn254G1Affine> = recast(&env, &vk.ic.slice(1..));
            let scalars: Vec<Bn254Fr> = recast(&env, &public_inputs);
            bn.g1_add(&ic0, &bn.g1_msm(points, scalars))
        };
        let g1 = Vec::from_array(
            &env,
            [
                g1_negate(&env, &a),
                Bn254G1Affine::from_bytes(vk.alpha),
                vk_x,
                Bn254G1Affine::from_bytes(proof.c),
            ],
        );
        let g2 = Vec::from_array(
            &env,
            [
                Bn254G2Affine::from_bytes(proof.b),
                Bn254G2Affine::from_bytes(vk.beta),
                Bn254G2Affine::from_bytes(vk.gamma),
                Bn254G2Affine::from_bytes(vk.delta),
            ],
        );
        if bn.pairing_check(g1, g2) {
            Ok(true)
        } else {
            Err(Groth16Error::InvalidProof)
        }
    }
}

#[cfg(test)]
mod test;
