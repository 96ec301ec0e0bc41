extern crate std;

use pool_common::testutils::{bytes_hex, test_env, u256_hex, vec_hex};
use pool_common::ttl::{INSTANCE_TTL_EXTEND_TO, INSTANCE_TTL_THRESHOLD};
use soroban_sdk::testutils::storage::Instance as _;
use soroban_sdk::testutils::Ledger as _;
use soroban_sdk::{BytesN, Env, Vec, U256};

use crate::{Groth16Error, Groth16Proof, VerificationKeyBytes, Verifier, VerifierClient};

/// contracts/verifier/testdata/policy_tx_2_2.json (scripts/gen-contract-fixtures.ts): a verification key of
/// the pool circuit, one proof and its 11 public inputs.
const FIXTURE: &str = include_str!("../testdata/policy_tx_2_2.json");

fn fixture() -> serde_json::Value {
    serde_json::from_str(FIXTURE).unwrap()
}

fn hex_of(v: &serde_json::Value) -> &str {
    v.as_str().unwrap()
}

pub fn vk_of(env: &Env, v: &serde_json::Value) -> VerificationKeyBytes {
    let mut ic = Vec::new(env);
    for p in v["ic"].as_array().unwrap() {
        ic.push_back(BytesN::from_array(env, &bytes_hex::<64>(hex_of(p))));
    }
    VerificationKeyBytes {
        alpha: BytesN::from_array(env, &bytes_hex::<64>(hex_of(&v["alpha"]))),
        beta: BytesN::from_array(env, &bytes_hex::<128>(hex_of(&v["beta"]))),
        gamma: BytesN::from_array(env, &bytes_hex::<128>(hex_of(&v["gamma"]))),
        delta: BytesN::from_array(env, &bytes_hex::<128>(hex_of(&v["delta"]))),
        ic,
    }
}

fn proof_of(env: &Env, bytes: &[u8]) -> Groth16Proof {
    assert_eq!(bytes.len(), 256);
    Groth16Proof {
        a: BytesN::from_array(env, bytes[..64].try_into().unwrap()),
        b: BytesN::from_array(env, bytes[64..192].try_into().unwrap()),
        c: BytesN::from_array(env, bytes[192..].try_into().unwrap()),
    }
}

struct Setup {
    env: Env,
    client: VerifierClient<'static>,
    proof: std::vec::Vec<u8>,
    inputs: Vec<U256>,
}

fn setup() -> Setup {
    let env = test_env();
    let f = fixture();
    let id = env.register(Verifier, (vk_of(&env, &f["vk"]),));
    let client = VerifierClient::new(&env, &id);
    let mut inputs = Vec::new(&env);
    for x in f["public_inputs"].as_array().unwrap() {
        inputs.push_back(u256_hex(&env, hex_of(x)));
    }
    assert_eq!(inputs.len(), 11);
    Setup { proof: vec_hex(hex_of(&f["proof"])), env, client, inputs }
}

impl Setup {
    fn verify(&self, proof: &[u8], inputs: &Vec<U256>) -> Result<bool, Groth16Error> {
        match self.client.try_verify(&proof_of(&self.env, proof), inputs) {
            Ok(Ok(v)) => Ok(v),
            Err(Ok(e)) => Err(e),
            other => panic!("not a contract result: {other:?}"),
        }
    }
}

fn r(env: &Env) -> U256 {
    pool_common::fr_modulus(env)
}

const Q: [u8; 32] = pool_common::constants::FQ_MODULUS_BE;

#[test]
fn accepts_the_real_proof() {
    let s = setup();
    s.env.cost_estimate().budget().reset_default();
    assert_eq!(s.verify(&s.proof, &s.inputs), Ok(true));
    std::println!(
        "verify (native contract, host crypto metered): {} instructions, {} bytes",
        s.env.cost_estimate().budget().cpu_instruction_cost(),
        s.env.cost_estimate().budget().memory_bytes_cost()
    );
    // and through the panicking client
    assert!(s.client.verify(&proof_of(&s.env, &s.proof), &s.inputs));
}

#[test]
fn refuses_a_changed_public_input() {
    let s = setup();
    for i in 0..s.inputs.len() {
        let mut inputs = s.inputs.clone();
        let x = inputs.get(i).unwrap();
        let changed = if x == U256::from_u32(&s.env, 0) {
            U256::from_u32(&s.env, 1)
        } else {
            x.sub(&U256::from_u32(&s.env, 1))
        };
        inputs.set(i, changed);
        assert_eq!(s.verify(&s.proof, &inputs), Err(Groth16Error::InvalidProof), "input {i}");
    }
}

#[test]
fn refuses_a_proof_with_one_byte_changed() {
    let s = setup();
    // a byte of A's or C's x: the point leaves the curve
    for at in [0usize, 31, 192, 200] {
        let mut p = s.proof.clone();
        p[at] ^= 0x01;
        assert_eq!(s.verify(&p, &s.inputs), Err(Groth16Error::MalformedProof), "byte {at}");
    }
    // a byte of A's or C's y: also off the curve
    for at in [40usize, 255] {
        let mut p = s.proof.clone();
        p[at] ^= 0x80 >> 1;
        assert_eq!(s.verify(&p, &s.inputs), Err(Groth16Error::MalformedProof), "byte {at}");
    }
    // a byte of B: off the twist, which only the host's pairing can tell (a host error, no contract code)
    let mut p = s.proof.clone();
    p[100] ^= 0x01;
    let res = s.client.try_verify(&proof_of(&s.env, &p), &s.inputs);
    assert!(matches!(res, Err(Err(_))), "B off the twist fails in the host: {res:?}");
}

#[test]
fn refuses_valid_points_that_are_not_the_proof() {
    let s = setup();
    // A and C swapped, and −A: points on the curve, pairing fails
    let mut swapped = s.proof.clone();
    swapped[..64].copy_from_slice(&s.proof[192..]);
    swapped[192..].copy_from_slice(&s.proof[..64]);
    assert_eq!(s.verify(&swapped, &s.inputs), Err(Groth16Error::InvalidProof));
    let mut neg = s.proof.clone();
    let y: [u8; 32] = s.proof[32..64].try_into().unwrap();
    neg[32..64].copy_from_slice(&pool_common::field::fq_negate(&y));
    assert_eq!(s.verify(&neg, &s.inputs), Err(Groth16Error::InvalidProof));
}

#[test]
fn wrong_input_count_is_malformed() {
    let s = setup();
    let mut fewer = s.inputs.clone();
    fewer.pop_back();
    assert_eq!(s.verify(&s.proof, &fewer), Err(Groth16Error::MalformedPublicInputs));
    let mut more = s.inputs.clone();
    more.push_back(U256::from_u32(&s.env, 0));
    assert_eq!(s.verify(&s.proof, &more), Err(Groth16Error::MalformedPublicInputs));
    assert_eq!(s.verify(&s.proof, &Vec::new(&s.env)), Err(Groth16Error::MalformedPublicInputs));
}

#[test]
fn input_not_below_r_is_malformed() {
    let s = setup();
    let env = &s.env;
    // x + r would be the same scalar to the host: refused before it reduces it
    let mut aliased = s.inputs.clone();
    aliased.set(0, s.inputs.get(0).unwrap().add(&r(env)));
    assert_eq!(s.verify(&s.proof, &aliased), Err(Groth16Error::MalformedPublicInputs));
    for bad in [r(env), U256::from_parts(env, u64::MAX, u64::MAX, u64::MAX, u64::MAX)] {
        let mut inputs = s.inputs.clone();
        inputs.set(10, bad);
        assert_eq!(s.verify(&s.proof, &inputs), Err(Groth16Error::MalformedPublicInputs));
    }
    // r − 1 is canonical: a well-formed (wrong) input
    let mut inputs = s.inputs.clone();
    inputs.set(10, r(env).sub(&U256::from_u32(env, 1)));
    assert_eq!(s.verify(&s.proof, &inputs), Err(Groth16Error::InvalidProof));
}

#[test]
fn coordinates_not_below_q_are_malformed() {
    let s = setup();
    for limb in 0..8 {
        let mut p = s.proof.clone();
        p[limb * 32..limb * 32 + 32].copy_from_slice(&Q);
        assert_eq!(s.verify(&p, &s.inputs), Err(Groth16Error::MalformedProof), "limb {limb}");
        // the encoding's flag bits
        let mut p = s.proof.clone();
        p[limb * 32] |= 0xc0;
        assert_eq!(s.verify(&p, &s.inputs), Err(Groth16Error::MalformedProof), "flags of limb {limb}");
    }
}

#[test]
fn points_at_infinity_are_invalid() {
    let s = setup();
    for (from, to) in [(0usize, 64usize), (64, 192), (192, 256)] {
        let mut p = s.proof.clone();
        p[from..to].fill(0);
        assert_eq!(s.verify(&p, &s.inputs), Err(Groth16Error::InvalidProof), "bytes {from}..{to}");
    }
    assert_eq!(s.verify(&[0u8; 256], &s.inputs), Err(Groth16Error::InvalidProof));
}

#[test]
fn verify_keeps_the_instance_live() {
    let s = setup();
    let id = s.client.address.clone();
    let ttl = || s.env.as_contract(&id, || s.env.storage().instance().get_ttl());
    assert_eq!(ttl(), INSTANCE_TTL_EXTEND_TO);
    // two days on: below the threshold, so the next verify extends it back
    s.env
        .ledger()
        .with_mut(|l| l.sequence_number += INSTANCE_TTL_EXTEND_TO - INSTANCE_TTL_THRESHOLD + 17_280);
    assert!(ttl() < INSTANCE_TTL_THRESHOLD);
    assert_eq!(s.verify(&s.proof, &s.inputs), Ok(true));
    assert_eq!(ttl(), INSTANCE_TTL_EXTEND_TO);
    // a refused proof changes nothing, not even the TTL
    s.env.ledger().with_mut(|l| l.sequence_number += 2 * 17_280);
    let before = ttl();
    assert_eq!(s.verify(&[0u8; 256], &s.inputs), Err(Groth16Error::InvalidProof));
    assert_eq!(ttl(), before);
}

#[test]
fn a_key_with_no_public_inputs_verifies_against_ic0_alone() {
    // with ic = [IC0] and no inputs, vk_x = IC0: the real proof fails the pairing (it is not for this key)
    let env = test_env();
    let f = fixture();
    let mut vk = vk_of(&env, &f["vk"]);
    vk.ic = Vec::from_array(&env, [vk.ic.get(0).unwrap()]);
    let id = env.register(Verifier, (vk,));
    let client = VerifierClient::new(&env, &id);
    let proof = proof_of(&env, &vec_hex(hex_of(&f["proof"])));
    assert_eq!(client.try_verify(&proof, &Vec::new(&env)), Err(Ok(Groth16Error::InvalidProof)));
    let one = Vec::from_array(&env, [U256::from_u32(&env, 1)]);
    assert_eq!(client.try_verify(&proof, &one), Err(Ok(Groth16Error::MalformedPublicInputs)));
}

// ---- malformed keys are refused at deployment ----

fn register_with(change: impl FnOnce(&Env, &mut VerificationKeyBytes)) {
    let env = test_env();
    let mut vk = vk_of(&env, &fixture()["vk"]);
    change(&env, &mut vk);
    env.register(Verifier, (vk,));
}

#[test]
fn the_fixture_key_deploys() {
    register_with(|_, _| {});
}

#[test]
#[should_panic(expected = "Error(Contract, #2)")]
fn a_key_without_ic_is_refused() {
    register_with(|env, vk| vk.ic = Vec::new(env));
}

#[test]
#[should_panic(expected = "Error(Contract, #2)")]
fn a_key_with_alpha_off_the_curve_is_refused() {
    register_with(|env, vk| {
        let mut a = vk.alpha.to_array();
        a[63] ^= 1;
        vk.alpha = BytesN::from_array(env, &a);
    });
}

#[test]
#[should_panic(expected = "Error(Contract, #2)")]
fn a_key_with_an_ic_point_off_the_curve_is_refused() {
    register_with(|env, vk| {
        let mut p = vk.ic.get(5).unwrap().to_array();
        p[10] ^= 1;
        vk.ic.set(5, BytesN::from_array(env, &p));
    });
}

#[test]
#[should_panic(expected = "Error(Contract, #2)")]
fn a_key_with_a_coordinate_not_below_q_is_refused() {
    register_with(|env, vk| {
        let mut d = vk.delta.to_array();
        d[64..96].copy_from_slice(&Q);
        vk.delta = BytesN::from_array(env, &d);
    });
}

#[test]
#[should_panic(expected = "Error(Crypto, InvalidInput)")]
fn a_key_with_a_g2_point_off_the_twist_fails_in_the_host() {
    register_with(|env, vk| {
        let mut g = vk.gamma.to_array();
        g[5] ^= 1;
        vk.gamma = BytesN::from_array(env, &g);
    });
}
