//! The pool with the real verifier and ASP contracts, the Stellar Asset Contract as its token, and real proofs
//! (contracts/pool/testdata/transactions.json, made by scripts/gen-contract-fixtures.ts): a deposit, a
//! withdrawal and a disbursement, then every check of `transact` and `disburse` in its order.
extern crate std;

use asp_membership::{AspMembership, AspMembershipClient};
use asp_non_membership::{AspNonMembership, AspNonMembershipClient};
use pool_common::merkle::TreeKey;
use pool_common::testutils::{bytes_hex, test_env, u256_hex, vec_hex};
use pool_common::ttl::{INSTANCE_TTL_EXTEND_TO, PERSISTENT_TTL_EXTEND_TO, PERSISTENT_TTL_THRESHOLD};
use pool_common::Groth16Proof;
use soroban_sdk::testutils::storage::{Instance as _, Persistent as _};
use soroban_sdk::testutils::{
    Address as _, AuthorizedFunction, AuthorizedInvocation, Events as _, Ledger as _,
};
use soroban_sdk::xdr::{self, ScVal, ToXdr};
use soroban_sdk::{
    token, Address, Bytes, BytesN, Env, IntoVal, InvokeError, Symbol, TryFromVal, Vec, I256, U256,
};
use verifier::{VerificationKeyBytes, Verifier};

use crate::{DataKey, Error, ExtData, Pool, PoolClient, Proof};

pub(crate) const FIXTURE: &str = include_str!("../testdata/transactions.json");
const USDC: i128 = 10_000_000;

fn fixture() -> serde_json::Value {
    serde_json::from_str(FIXTURE).unwrap()
}

fn s(v: &serde_json::Value) -> &str {
    v.as_str().unwrap()
}

fn vk_of(env: &Env, v: &serde_json::Value) -> VerificationKeyBytes {
    let mut ic = Vec::new(env);
    for p in v["ic"].as_array().unwrap() {
        ic.push_back(BytesN::from_array(env, &bytes_hex::<64>(s(p))));
    }
    VerificationKeyBytes {
        alpha: BytesN::from_array(env, &bytes_hex::<64>(s(&v["alpha"]))),
        beta: BytesN::from_array(env, &bytes_hex::<128>(s(&v["beta"]))),
        gamma: BytesN::from_array(env, &bytes_hex::<128>(s(&v["gamma"]))),
        delta: BytesN::from_array(env, &bytes_hex::<128>(s(&v["delta"]))),
        ic,
    }
}

/// One proved transaction of the fixture.
#[derive(Clone)]
pub(crate) struct Tx {
    pub(crate) proof: Proof,
    pub(crate) ext: ExtData,
    /// the 11 public inputs in the verifier's order
    pub(crate) inputs: std::vec::Vec<U256>,
    pub(crate) index: u32,
    pub(crate) root_after: U256,
}

pub(crate) fn vk_of_fixture(env: &Env, f: &serde_json::Value) -> VerificationKeyBytes {
    vk_of(env, &f["vk"])
}

/// The fixture's deposit, withdrawal and disbursement.
pub(crate) fn fixture_txs(env: &Env, f: &serde_json::Value) -> [Tx; 3] {
    let txs = f["transactions"].as_array().unwrap();
    [tx_of(env, &txs[0]), tx_of(env, &txs[1]), tx_of(env, &txs[2])]
}

fn tx_of(env: &Env, v: &serde_json::Value) -> Tx {
    let bytes = vec_hex(s(&v["proof"]));
    let inputs: std::vec::Vec<U256> =
        v["public_inputs"].as_array().unwrap().iter().map(|x| u256_hex(env, s(x))).collect();
    let e = &v["ext_data"];
    let ext = ExtData {
        recipient: Address::from_str(env, s(&e["recipient"])),
        ext_amount: I256::from_i128(env, s(&e["ext_amount"]).parse::<i128>().unwrap()),
        encrypted_output0: Bytes::from_slice(env, &vec_hex(s(&e["encrypted_output0"]))),
        encrypted_output1: Bytes::from_slice(env, &vec_hex(s(&e["encrypted_output1"]))),
    };
    let proof = Proof {
        proof: Groth16Proof {
            a: BytesN::from_array(env, bytes[..64].try_into().unwrap()),
            b: BytesN::from_array(env, bytes[64..192].try_into().unwrap()),
            c: BytesN::from_array(env, bytes[192..].try_into().unwrap()),
        },
        root: inputs[0].clone(),
        public_amount: inputs[1].clone(),
        ext_data_hash: BytesN::from_array(env, &bytes_hex::<32>(s(&v["public_inputs"][2]))),
        input_nullifiers: Vec::from_array(env, [inputs[3].clone(), inputs[4].clone()]),
        output_commitment0: inputs[5].clone(),
        output_commitment1: inputs[6].clone(),
        asp_membership_root: inputs[7].clone(),
        asp_non_membership_root: inputs[9].clone(),
        tree: 0,
    };
    Tx {
        proof,
        ext,
        inputs,
        index: v["index"].as_u64().unwrap() as u32,
        root_after: u256_hex(env, s(&v["root_after"])),
    }
}

struct World {
    env: Env,
    f: serde_json::Value,
    admin: Address,
    alice: Address,
    relayer: Address,
    token: Address,
    pool_id: Address,
    pool: PoolClient<'static>,
    asp_m: AspMembershipClient<'static>,
    asp_nm: AspNonMembershipClient<'static>,
    deposit: Tx,
    withdraw: Tx,
    disburse: Tx,
}

/// A pool with `policy` and a deposit cap of `max_deposit` (U256 limbs, most significant first).
fn world_with(policy: u32, max_deposit: [u64; 4]) -> World {
    world_of(policy, max_deposit, 1 << 20)
}

/// A pool whose trees take `capacity` leaves each.
fn world_of(policy: u32, max_deposit: [u64; 4], capacity: u32) -> World {
    let env = test_env();
    let [a, b, c, d] = max_deposit;
    let max_deposit = U256::from_parts(&env, a, b, c, d);
    let f = fixture();
    let admin = Address::generate(&env);
    let issuer = Address::generate(&env);
    let sac = env.register_stellar_asset_contract_v2(issuer);
    let token = sac.address();
    let verifier = env.register(Verifier, (vk_of(&env, &f["vk"]),));
    let levels = f["asp_levels"].as_u64().unwrap() as u32;
    let asp_m_id = env.register(AspMembership, (&admin, levels));
    let asp_nm_id = env.register(AspNonMembership, (&admin,));
    let asp_m = AspMembershipClient::new(&env, &asp_m_id);
    let asp_nm = AspNonMembershipClient::new(&env, &asp_nm_id);
    for leaf in f["membership_leaves"].as_array().unwrap() {
        asp_m.mock_all_auths().insert_leaf(&u256_hex(&env, s(leaf)));
    }
    for b in f["blocked"].as_array().unwrap() {
        asp_nm.mock_all_auths().insert_leaf(&u256_hex(&env, s(&b["key"])), &u256_hex(&env, s(&b["value"])));
    }
    assert_eq!(asp_m.get_root(), u256_hex(&env, s(&f["membership_root"])));
    assert_eq!(asp_nm.get_root(), u256_hex(&env, s(&f["non_membership_root"])));
    let pool_levels = f["levels"].as_u64().unwrap() as u32;
    let pool_id = env
        .register(Pool, (&admin, &token, &verifier, &asp_m_id, &asp_nm_id, max_deposit, pool_levels, capacity, policy));
    let pool = PoolClient::new(&env, &pool_id);
    let alice = Address::generate(&env);
    let relayer = Address::generate(&env);
    token::StellarAssetClient::new(&env, &token).mock_all_auths().mint(&alice, &(100 * USDC));
    let [deposit, withdraw, disburse] = fixture_txs(&env, &f);
    World { env, f, admin, alice, relayer, token, pool_id, pool, asp_m, asp_nm, deposit, withdraw, disburse }
}

const CAP: [u64; 4] = [0, 0, 0, 1000 * USDC as u64];

fn world() -> World {
    world_with(3, CAP)
}

/// The code of a failed call: the pool's own error, or another contract's (the verifier's) passed through.
fn code<T: core::fmt::Debug, C: core::fmt::Debug>(
    r: Result<Result<T, C>, Result<Error, InvokeError>>,
) -> u32 {
    match r {
        Err(Ok(e)) => e as u32,
        Err(Err(InvokeError::Contract(c))) => c,
        other => panic!("not a contract error: {other:?}"),
    }
}

impl World {
    fn balance(&self, who: &Address) -> i128 {
        token::TokenClient::new(&self.env, &self.token).balance(who)
    }

    fn transact(&self, tx: &Tx, sender: &Address) -> Result<(), u32> {
        match self.pool.mock_all_auths().try_transact(&tx.proof, &tx.ext, sender) {
            Ok(Ok(())) => Ok(()),
            r => Err(code(r)),
        }
    }

    fn disburse_call(&self, tx: &Tx, sender: &Address) -> Result<(), u32> {
        match self.pool.mock_all_auths().try_disburse(&tx.proof, &tx.ext, sender) {
            Ok(Ok(())) => Ok(()),
            r => Err(code(r)),
        }
    }

    fn state(&self) -> (U256, u32, i128, i128) {
        (
            self.pool.get_root(),
            self.pool.get_next_index(),
            self.balance(&self.pool_id),
            self.balance(&self.alice),
        )
    }

    fn u(&self, x: u32) -> U256 {
        U256::from_u32(&self.env, x)
    }

    fn persistent_ttl(&self, key: &impl IntoVal<Env, soroban_sdk::Val>) -> u32 {
        self.env.as_contract(&self.pool_id, || self.env.storage().persistent().get_ttl(key))
    }

    /// keccak256(XDR of ext) mod r, as the contract and src/crypto/ext-data.ts compute it.
    fn ext_hash(&self, ext: &ExtData) -> BytesN<32> {
        let digest = self.env.crypto().keccak256(&ext.clone().to_xdr(&self.env));
        let x =
            U256::from_be_bytes(&self.env, &digest.into()).rem_euclid(&pool_common::fr_modulus(&self.env));
        let mut out = [0u8; 32];
        x.to_be_bytes().copy_into_slice(&mut out);
        BytesN::from_array(&self.env, &out)
    }
}

#[test]
fn constructor_and_views() {
    let w = world();
    let empty = u256_hex(&w.env, s(&w.f["empty_root"]));
    assert_eq!(w.pool.get_root(), empty);
    assert_eq!(w.pool.get_next_index(), 0);
    assert_eq!(w.pool.get_policy_flags(), 3);
    assert_eq!(w.pool.get_payout_wallet(), None);
    assert!(w.pool.is_known_root(&empty, &0));
    assert!(!w.pool.is_known_root(&w.u(0), &0));
    assert!(!w.pool.is_known_root(&w.u(1), &0));
    assert!(!w.pool.is_spent(&w.deposit.inputs[3]));
    assert_eq!(w.pool.get_asp_membership_root(), w.asp_m.get_root());
    assert_eq!(w.pool.get_asp_non_membership_root(), w.asp_nm.get_root());
    w.env.as_contract(&w.pool_id, || {
        let p = w.env.storage().persistent();
        assert_eq!(p.get::<_, u32>(&DataKey::CurrentRootIndex), Some(0));
        assert!(!p.has(&TreeKey::NextIndex));
        assert_eq!(w.env.storage().instance().get::<_, u32>(&DataKey::Levels), Some(20));
        assert_eq!(w.env.storage().instance().get_ttl(), INSTANCE_TTL_EXTEND_TO);
    });
}

fn register_pool(levels: u32, policy: u32) {
    register_pool_of(levels, 1 << levels.min(31), policy);
}

fn register_pool_of(levels: u32, capacity: u32, policy: u32) {
    let env = test_env();
    let a = Address::generate(&env);
    env.register(Pool, (&a, &a, &a, &a, &a, U256::from_u32(&env, 1), levels, capacity, policy));
}

#[test]
#[should_panic(expected = "Error(Contract, #4)")]
fn constructor_refuses_zero_levels() {
    register_pool(0, 3);
}

#[test]
#[should_panic(expected = "Error(Contract, #4)")]
fn constructor_refuses_33_levels() {
    register_pool(33, 3);
}

#[test]
#[should_panic(expected = "Error(Contract, #14)")]
fn constructor_refuses_unknown_policy_flags() {
    register_pool(20, 4);
}

#[test]
fn constructor_accepts_every_policy_and_level_bound() {
    for (levels, policy) in [(2, 0), (32, 1), (20, 2), (20, 3)] {
        register_pool(levels, policy);
    }
    for capacity in [4, 8, 1 << 19, 1 << 20] {
        register_pool_of(20, capacity, 3);
    }
}

#[test]
fn constructor_refuses_a_tree_capacity_not_a_power_of_two_in_4_to_2_pow_levels() {
    for (levels, capacity) in [(20, 0), (20, 2), (20, 6), (20, 12), (20, (1 << 20) + 1), (20, 1 << 21), (1, 4)] {
        let env = test_env();
        let a = Address::generate(&env);
        let r = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
            env.register(Pool, (&a, &a, &a, &a, &a, U256::from_u32(&env, 1), levels, capacity, 3u32));
        }));
        assert!(r.is_err(), "levels {levels} capacity {capacity} was accepted");
    }
}

#[test]
fn deposit_withdraw_disburse_with_real_proofs() {
    let w = world();
    let env = &w.env;

    // deposit: alice pays 10 USDC into the pool; two commitments at 0 and 1
    w.transact(&w.deposit, &w.alice).unwrap();
    let deposit_cost = env.cost_estimate().budget().cpu_instruction_cost();
    // the auth tree: alice authorised transact and, under it, the token transfer to the pool
    let args: Vec<soroban_sdk::Val> =
        (w.deposit.proof.clone(), w.deposit.ext.clone(), w.alice.clone()).into_val(env);
    assert_eq!(
        env.auths(),
        [(
            w.alice.clone(),
            AuthorizedInvocation {
                function: AuthorizedFunction::Contract((
                    w.pool_id.clone(),
                    Symbol::new(env, "transact"),
                    args
                )),
                sub_invocations: std::vec![AuthorizedInvocation {
                    function: AuthorizedFunction::Contract((
                        w.token.clone(),
                        Symbol::new(env, "transfer"),
                        (w.alice.clone(), w.pool_id.clone(), 10 * USDC).into_val(env),
                    )),
                    sub_invocations: std::vec![],
                }],
            }
        )]
    );
    // events: the two nullifiers (data: an empty map), then the commitments with their index and note
    let events = env.events().all().filter_by_contract(&w.pool_id);
    let bodies: std::vec::Vec<xdr::ContractEventV0> = events
        .events()
        .iter()
        .map(|e| match &e.body {
            xdr::ContractEventBody::V0(b) => b.clone(),
        })
        .collect();
    assert_eq!(bodies.len(), 4);
    let sym = |name: &str| ScVal::Symbol(name.try_into().unwrap());
    let u256 = |x: &U256| ScVal::try_from_val(env, &x.to_val()).unwrap();
    for (i, b) in bodies[..2].iter().enumerate() {
        assert_eq!(b.topics.to_vec(), [sym("new_nullifier_event"), u256(&w.deposit.inputs[3 + i])]);
        assert_eq!(b.data, ScVal::Map(Some(xdr::ScMap(std::vec![].try_into().unwrap()))));
    }
    for (i, b) in bodies[2..].iter().enumerate() {
        assert_eq!(b.topics.to_vec(), [sym("new_commitment_event"), u256(&w.deposit.inputs[5 + i])]);
        let note = if i == 0 { &w.deposit.ext.encrypted_output0 } else { &w.deposit.ext.encrypted_output1 };
        let note: std::vec::Vec<u8> = note.iter().collect();
        let data = ScVal::Map(Some(xdr::ScMap(
            std::vec![
                xdr::ScMapEntry { key: sym("encrypted_output"), val: ScVal::Bytes(note.try_into().unwrap()) },
                xdr::ScMapEntry { key: sym("index"), val: ScVal::U32(i as u32) },
                xdr::ScMapEntry { key: sym("tree"), val: ScVal::U32(0) },
            ]
            .try_into()
            .unwrap(),
        )));
        assert_eq!(b.data, data);
    }
    assert_eq!(w.pool.get_root(), w.deposit.root_after);
    assert_eq!(w.pool.get_next_index(), 2);
    assert!(w.pool.is_known_root(&w.deposit.root_after, &0));
    assert!(w.pool.is_spent(&w.deposit.inputs[3]) && w.pool.is_spent(&w.deposit.inputs[4]));
    assert_eq!((w.balance(&w.alice), w.balance(&w.pool_id)), (90 * USDC, 10 * USDC));

    // withdrawal: a relayer submits, 4 USDC go to the recipient contract; change note at 2, zero note at 3
    let recipient = w.withdraw.ext.recipient.clone();
    w.transact(&w.withdraw, &w.relayer).unwrap();
    assert_eq!(env.auths().len(), 1, "only the relayer authorises: the pool pays from its own balance");
    assert_eq!(w.balance(&recipient), 4 * USDC);
    assert_eq!(w.balance(&w.pool_id), 6 * USDC);
    assert_eq!((w.pool.get_root(), w.pool.get_next_index()), (w.withdraw.root_after.clone(), 4));
    assert_eq!(w.withdraw.index, 2);

    // disbursement to the registered payout wallet, authorised by the admin
    let payout = Address::from_str(env, s(&w.f["payout_wallet"]));
    w.pool.mock_all_auths().set_payout_wallet(&payout);
    assert_eq!(w.pool.get_payout_wallet(), Some(payout.clone()));
    w.disburse_call(&w.disburse, &w.relayer).unwrap();
    let signers: std::vec::Vec<Address> = env.auths().iter().map(|(a, _)| a.clone()).collect();
    assert_eq!(signers, [w.admin.clone(), w.relayer.clone()]);
    assert_eq!(w.balance(&payout), USDC);
    assert_eq!(w.balance(&w.pool_id), 5 * USDC);
    assert_eq!((w.pool.get_root(), w.pool.get_next_index()), (w.disburse.root_after.clone(), 6));
    // every root since genesis is still known
    for tx in [&w.deposit, &w.withdraw, &w.disburse] {
        assert!(w.pool.is_known_root(&tx.root_after, &0));
    }
    std::println!("transact deposit (native contracts, host crypto metered): {deposit_cost} instructions");
}

#[test]
fn spent_nullifiers_and_stale_roots_are_refused() {
    let w = world();
    w.transact(&w.deposit, &w.alice).unwrap();
    let before = w.state();
    // a replay: the root is still known, the nullifiers are spent
    assert_eq!(w.transact(&w.deposit, &w.alice), Err(Error::AlreadySpentNullifier as u32));
    // a root never seen
    let mut tx = w.withdraw.clone();
    tx.proof.root = w.u(12345);
    assert_eq!(w.transact(&tx, &w.relayer), Err(Error::UnknownRoot as u32));
    tx.proof.root = w.u(0);
    assert_eq!(w.transact(&tx, &w.relayer), Err(Error::UnknownRoot as u32));
    assert_eq!(w.state(), before);
}

#[test]
fn ext_data_and_public_amount_checks() {
    let w = world();
    let before = w.state();
    // any change to the ext data changes its hash
    let mut tx = w.deposit.clone();
    tx.ext.encrypted_output0 = Bytes::from_slice(&w.env, &[1, 2, 3]);
    assert_eq!(w.transact(&tx, &w.alice), Err(Error::WrongExtHash as u32));
    let mut tx = w.withdraw.clone();
    tx.proof.root = w.pool.get_root(); // a known root, so the hash is what fails
    tx.ext.recipient = w.relayer.clone();
    assert_eq!(w.transact(&tx, &w.relayer), Err(Error::WrongExtHash as u32));
    // the proof's public amount must be ext_amount's
    let mut tx = w.deposit.clone();
    tx.proof.public_amount = tx.proof.public_amount.add(&w.u(1));
    assert_eq!(w.transact(&tx, &w.alice), Err(Error::WrongExtAmount as u32));
    // |ext_amount| ≥ 2^248 (with a matching hash): a withdrawal of 2^248
    let mut tx = w.withdraw.clone();
    tx.proof.root = w.pool.get_root();
    tx.ext.ext_amount = I256::from_parts(&w.env, -0x0100_0000_0000_0000, 0, 0, 0);
    tx.proof.ext_data_hash = w.ext_hash(&tx.ext);
    assert_eq!(w.transact(&tx, &w.relayer), Err(Error::WrongExtAmount as u32));
    // 2^248 − 1 passes that check and fails on the proof's public amount instead
    tx.ext.ext_amount = I256::from_parts(&w.env, -0x0100_0000_0000_0000, 0, 0, 1);
    tx.proof.ext_data_hash = w.ext_hash(&tx.ext);
    assert_eq!(w.transact(&tx, &w.relayer), Err(Error::WrongExtAmount as u32));
    assert_eq!(w.state(), before);
}

#[test]
fn deposits_are_capped_and_pulled_before_the_proof() {
    // a 5 USDC cap refuses the 10 USDC deposit
    let w = world_with(3, [0, 0, 0, 5 * USDC as u64]);
    assert_eq!(w.transact(&w.deposit, &w.alice), Err(Error::WrongExtAmount as u32));
    // a sender who cannot pay fails in the token, with the Stellar Asset Contract's own error (#10, its
    // balance error, which a caller decoding with the pool's enum would read as WrongExtHash): the pull
    // precedes every proof check
    let w = world();
    let poor = Address::generate(&w.env);
    assert_eq!(w.transact(&w.deposit, &poor), Err(10));
    assert_eq!(w.pool.get_next_index(), 0);
    // a deposit above i128 (under a cap that allows it) cannot be pulled: WrongExtAmount
    let w = world_with(3, [u64::MAX, 0, 0, 0]);
    let mut tx = w.deposit.clone();
    tx.ext.ext_amount = I256::from_parts(&w.env, 1, 0, 0, 0);
    assert_eq!(w.transact(&tx, &w.alice), Err(Error::WrongExtAmount as u32));
}

#[test]
fn transact_needs_the_senders_authorisation() {
    let w = world();
    let before = w.state();
    let r = w.pool.try_transact(&w.deposit.proof, &w.deposit.ext, &w.alice);
    assert!(matches!(r, Err(Err(InvokeError::Abort))), "{r:?}");
    assert_eq!(w.state(), before);
}

#[test]
fn stale_asp_roots_are_refused_blocklist_first() {
    // a key added to the allowlist after proving: the proof's membership root is no longer live
    let w = world();
    w.asp_m.mock_all_auths().insert_leaf(&w.u(42));
    assert_eq!(w.transact(&w.deposit, &w.alice), Err(Error::InvalidProof as u32));
    // a key added to the blocklist: the non-membership root is stale
    let w = world();
    w.asp_nm.mock_all_auths().insert_leaf(&w.u(42), &w.u(1));
    assert_eq!(w.transact(&w.deposit, &w.alice), Err(Error::InvalidProof as u32));
    // the blocklist is read first: with a stale blocklist root, an allowlist address that is not a contract
    // is never called
    let w = world();
    w.asp_nm.mock_all_auths().insert_leaf(&w.u(42), &w.u(1));
    w.pool.mock_all_auths().update_asp_membership(&Address::generate(&w.env));
    assert_eq!(w.transact(&w.deposit, &w.alice), Err(Error::InvalidProof as u32));
}

#[test]
fn policy_flags_choose_the_public_inputs() {
    // the key is for 11 inputs (both ASP roots twice): a pool that asks for fewer fails in the verifier
    for policy in [0u32, 1, 2] {
        let w = world_with(policy, CAP);
        assert_eq!(w.pool.get_policy_flags(), policy);
        assert_eq!(
            w.transact(&w.deposit, &w.alice),
            Err(verifier::Groth16Error::MalformedPublicInputs as u32),
            "policy {policy}"
        );
    }
}

#[test]
fn non_canonical_inputs_are_refused() {
    let w = world();
    let r = pool_common::fr_modulus(&w.env);
    let mut tx = w.deposit.clone();
    tx.proof.input_nullifiers.set(0, tx.proof.input_nullifiers.get(0).unwrap().add(&r));
    assert_eq!(w.transact(&tx, &w.alice), Err(Error::NonCanonicalPublicInput as u32));
    let mut tx = w.deposit.clone();
    tx.proof.output_commitment1 = tx.proof.output_commitment1.add(&r);
    assert_eq!(w.transact(&tx, &w.alice), Err(Error::NonCanonicalPublicInput as u32));
    assert_eq!(w.pool.get_next_index(), 0);
}

#[test]
fn verifier_errors_fail_the_transaction_with_their_own_code() {
    let w = world();
    let before = w.state();
    // a commitment the proof is not about: the pairing fails, Groth16Error::InvalidProof (#0)
    let mut tx = w.deposit.clone();
    tx.proof.output_commitment0 = tx.proof.output_commitment0.add(&w.u(1));
    assert_eq!(w.transact(&tx, &w.alice), Err(verifier::Groth16Error::InvalidProof as u32));
    // three nullifiers: 12 inputs for an 11-input key, MalformedPublicInputs (#1)
    let mut tx = w.deposit.clone();
    tx.proof.input_nullifiers.push_back(w.u(77));
    assert_eq!(w.transact(&tx, &w.alice), Err(verifier::Groth16Error::MalformedPublicInputs as u32));
    // A off the curve: MalformedProof (#2)
    let mut tx = w.deposit.clone();
    let mut a = tx.proof.proof.a.to_array();
    a[5] ^= 1;
    tx.proof.proof.a = BytesN::from_array(&w.env, &a);
    assert_eq!(w.transact(&tx, &w.alice), Err(verifier::Groth16Error::MalformedProof as u32));
    // nothing changed, not even the deposit pull
    assert_eq!(w.state(), before);
    assert!(!w.pool.is_spent(&w.deposit.inputs[3]));
}

#[test]
fn tree_index_checks() {
    // an odd next index (impossible through transact, which appends pairs)
    let w = world();
    w.env.as_contract(&w.pool_id, || w.env.storage().persistent().set(&TreeKey::NextIndex, &1u32));
    assert_eq!(w.transact(&w.deposit, &w.alice), Err(Error::NextIndexNotEven as u32));
    // the last pair of a 2^20-leaf tree fills it; nothing is refused for lack of room
    let w = world();
    w.env.as_contract(&w.pool_id, || {
        w.env.storage().persistent().set(&TreeKey::NextIndex, &((1u32 << 20) - 2))
    });
    w.transact(&w.deposit, &w.alice).unwrap();
    assert_eq!((w.pool.get_current_tree(), w.pool.get_next_index()), (0, 1 << 20));
    assert_eq!(w.pool.get_full_tree_root(&0), None);
    // the number of trees is the only bound: 2^32 of them
    let w = world();
    w.env.as_contract(&w.pool_id, || {
        let p = w.env.storage().persistent();
        p.set(&TreeKey::NextIndex, &(1u32 << 20));
        p.set(&DataKey::CurrentTree, &u32::MAX);
    });
    assert_eq!(w.transact(&w.deposit, &w.alice), Err(Error::MerkleTreeFull as u32));
}

/// The root of a tree of `levels` levels holding only `left` and `right` at leaves 0 and 1.
fn root_of_first_pair(env: &Env, left: &U256, right: &U256, levels: u32) -> U256 {
    let hasher = pool_common::Poseidon2::new(env);
    let mut node = hasher.compress(left, right);
    for level in 1..levels {
        node = hasher.compress(&node, &pool_common::merkle::zero(env, level));
    }
    node
}

#[test]
fn a_full_tree_rolls_over_and_the_outputs_open_the_next() {
    let w = world_of(3, CAP, 4);
    assert_eq!((w.pool.get_tree_capacity(), w.pool.get_current_tree()), (4, 0));
    w.transact(&w.deposit, &w.alice).unwrap();
    w.transact(&w.withdraw, &w.relayer).unwrap();
    // tree 0 is full (leaves 0..3) but stays current until a transaction needs room
    assert_eq!((w.pool.get_current_tree(), w.pool.get_next_index()), (0, 4));
    assert_eq!(w.pool.get_full_tree_root(&0), None);
    let payout = Address::from_str(&w.env, s(&w.f["payout_wallet"]));
    w.pool.mock_all_auths().set_payout_wallet(&payout);
    w.disburse_call(&w.disburse, &w.admin).unwrap();
    let events = w.env.events().all().filter_by_contract(&w.pool_id);
    let commitments: std::vec::Vec<ScVal> = events
        .events()
        .iter()
        .filter_map(|e| match &e.body {
            xdr::ContractEventBody::V0(b)
                if b.topics.first() == Some(&ScVal::Symbol("new_commitment_event".try_into().unwrap())) =>
            {
                Some(b.data.clone())
            }
            _ => None,
        })
        .collect();
    let field = |data: &ScVal, name: &str| match data {
        ScVal::Map(Some(m)) => m.iter().find(|e| e.key == ScVal::Symbol(name.try_into().unwrap())).unwrap().val.clone(),
        _ => panic!("not a map"),
    };
    assert_eq!(commitments.len(), 2, "the disbursement's two commitments");
    for (i, data) in commitments.iter().enumerate() {
        assert_eq!((field(data, "tree"), field(data, "index")), (ScVal::U32(1), ScVal::U32(i as u32)));
    }
    // the disbursement's outputs opened tree 1 at leaves 0 and 1; tree 0's final root is kept
    assert_eq!((w.pool.get_current_tree(), w.pool.get_next_index()), (1, 2));
    assert_eq!(w.pool.get_full_tree_root(&0), Some(w.withdraw.root_after.clone()));
    assert_eq!(w.pool.get_full_tree_root(&1), None);
    let levels = w.f["levels"].as_u64().unwrap() as u32;
    let new_root =
        root_of_first_pair(&w.env, &w.disburse.proof.output_commitment0, &w.disburse.proof.output_commitment1, levels);
    assert_eq!(w.pool.get_root(), new_root);
    // the next pair goes to leaves 2 and 3 of tree 1, the one after to tree 2
    let hasher = pool_common::Poseidon2::new(&w.env);
    let pair = [w.u(7), w.u(8)];
    let appended = w.env.as_contract(&w.pool_id, || crate::append_outputs(&w.env, &hasher, &pair).unwrap());
    assert_eq!((appended.0, appended.1), (1, 2));
    w.env.as_contract(&w.pool_id, || {
        let p = w.env.storage().persistent();
        let slot = (p.get::<_, u32>(&DataKey::CurrentRootIndex).unwrap() + 1) % crate::ROOT_HISTORY_SIZE;
        p.set(&DataKey::CurrentRootIndex, &slot);
        p.set(&DataKey::Root(slot), &appended.2);
    });
    let appended2 = w.env.as_contract(&w.pool_id, || crate::append_outputs(&w.env, &hasher, &pair).unwrap());
    assert_eq!((appended2.0, appended2.1), (2, 0));
    assert_eq!(w.pool.get_full_tree_root(&1), Some(appended.2));
}

#[test]
fn a_full_trees_root_stays_known_after_it_leaves_the_ring_and_its_notes_spend_once() {
    let w = world_of(3, CAP, 4);
    w.transact(&w.deposit, &w.alice).unwrap();
    w.transact(&w.withdraw, &w.relayer).unwrap();
    let final_root = w.withdraw.root_after.clone();
    // other transactions open tree 1 and then push every root of tree 0 out of the ring
    let hasher = pool_common::Poseidon2::new(&w.env);
    w.env.as_contract(&w.pool_id, || {
        let (tree, _, _) = crate::append_outputs(&w.env, &hasher, &[w.u(7), w.u(8)]).unwrap();
        assert_eq!(tree, 1);
        let p = w.env.storage().persistent();
        for slot in 0..crate::ROOT_HISTORY_SIZE {
            p.set(&DataKey::Root(slot), &U256::from_u32(&w.env, 1000 + slot));
        }
    });
    assert!(w.pool.is_known_root(&final_root, &0));
    assert!(!w.pool.is_known_root(&final_root, &1), "the current tree's roots are only those in the ring");
    assert!(!w.pool.is_known_root(&final_root, &2), "a tree not yet opened has no root");
    assert!(!w.pool.is_known_root(&w.deposit.root_after, &0), "only a full tree's final root is kept");
    let payout = Address::from_str(&w.env, s(&w.f["payout_wallet"]));
    w.pool.mock_all_auths().set_payout_wallet(&payout);
    // the disbursement spends the withdrawal's change, a note of tree 0: naming the wrong tree is refused
    let mut wrong = w.disburse.clone();
    wrong.proof.tree = 1;
    assert_eq!(w.disburse_call(&wrong, &w.admin), Err(Error::UnknownRoot as u32));
    let before = w.balance(&w.pool_id);
    w.disburse_call(&w.disburse, &w.admin).unwrap();
    assert_eq!(w.balance(&w.pool_id), before - USDC);
    assert_eq!((w.pool.get_current_tree(), w.pool.get_next_index()), (1, 4));
    // spent once: the same nullifiers are refused in any later tree
    w.env.as_contract(&w.pool_id, || {
        let (tree, _, _) = crate::append_outputs(&w.env, &hasher, &[w.u(9), w.u(10)]).unwrap();
        assert_eq!(tree, 2);
    });
    assert_eq!(w.disburse_call(&w.disburse, &w.admin), Err(Error::AlreadySpentNullifier as u32));
    assert_eq!(w.balance(&w.pool_id), before - USDC);
}

#[test]
fn disburse_checks() {
    let w = world();
    w.transact(&w.deposit, &w.alice).unwrap();
    w.transact(&w.withdraw, &w.relayer).unwrap();
    // no payout wallet registered
    assert_eq!(w.disburse_call(&w.disburse, &w.relayer), Err(Error::NotAuthorized as u32));
    // another wallet registered than the recipient
    w.pool.mock_all_auths().set_payout_wallet(&w.relayer);
    assert_eq!(w.disburse_call(&w.disburse, &w.relayer), Err(Error::NotAuthorized as u32));
    // only withdrawals: a deposit to the payout wallet's address is refused
    w.pool.mock_all_auths().set_payout_wallet(&w.deposit.ext.recipient);
    assert_eq!(w.disburse_call(&w.deposit, &w.alice), Err(Error::WrongExtAmount as u32));
    // the admin must authorise
    let payout = Address::from_str(&w.env, s(&w.f["payout_wallet"]));
    w.pool.mock_all_auths().set_payout_wallet(&payout);
    let r = w.pool.try_disburse(&w.disburse.proof, &w.disburse.ext, &w.relayer);
    assert!(matches!(r, Err(Err(InvokeError::Abort))), "{r:?}");
    w.disburse_call(&w.disburse, &w.relayer).unwrap();
    assert_eq!(w.balance(&payout), USDC);
}

#[test]
fn admin_functions_need_the_admin() {
    let w = world();
    let other = Address::generate(&w.env);
    assert!(w.pool.try_set_payout_wallet(&other).is_err());
    assert!(w.pool.try_update_admin(&other).is_err());
    assert!(w.pool.try_update_asp_membership(&other).is_err());
    assert!(w.pool.try_update_asp_non_membership(&other).is_err());
    assert_eq!(w.pool.get_payout_wallet(), None);

    w.pool.mock_all_auths().set_payout_wallet(&other);
    assert_eq!(w.env.auths()[0].0, w.admin);
    assert_eq!(w.pool.get_payout_wallet(), Some(other.clone()));

    // new ASP contracts: the pool reads their roots
    let asp_m = w.env.register(AspMembership, (&w.admin, 5u32));
    let asp_nm = w.env.register(AspNonMembership, (&w.admin,));
    w.pool.mock_all_auths().update_asp_membership(&asp_m);
    w.pool.mock_all_auths().update_asp_non_membership(&asp_nm);
    assert_eq!(w.pool.get_asp_membership_root(), pool_common::merkle::zero(&w.env, 5));
    assert_eq!(w.pool.get_asp_non_membership_root(), w.u(0));

    // a new admin: the old one no longer counts
    w.pool.mock_all_auths().update_admin(&other);
    w.pool.mock_all_auths().set_payout_wallet(&w.admin);
    assert_eq!(w.env.auths()[0].0, other);
}

#[test]
fn root_history_is_a_ring_of_90() {
    let w = world();
    let env = &w.env;
    // fill the ring by hand: slot i holds root i + 100, the current slot is 5 (so 6..89 are older)
    env.as_contract(&w.pool_id, || {
        let p = env.storage().persistent();
        for i in 0..90u32 {
            p.set(&DataKey::Root(i), &U256::from_u32(env, i + 100));
        }
        p.set(&DataKey::CurrentRootIndex, &5u32);
    });
    assert_eq!(w.pool.get_root(), w.u(105));
    for i in 0..90u32 {
        assert!(w.pool.is_known_root(&w.u(i + 100), &0), "slot {i}");
    }
    assert!(!w.pool.is_known_root(&w.u(99), &0));
    assert!(!w.pool.is_known_root(&w.u(190), &0));
    // the next root overwrites the oldest (slot 6)
    env.as_contract(&w.pool_id, || {
        env.storage().persistent().set(&DataKey::Root(6), &U256::from_u32(env, 7));
    });
    assert!(!w.pool.is_known_root(&w.u(106), &0));
    assert!(w.pool.is_known_root(&w.u(7), &0));
}

#[test]
fn ttl_of_instance_tree_and_nullifiers() {
    let w = world();
    let env = &w.env;
    w.transact(&w.deposit, &w.alice).unwrap();
    // nullifiers: written with the network's minimum TTL and never extended (staying spent needs no rent)
    let min = env.ledger().get().min_persistent_entry_ttl;
    for n in &w.deposit.inputs[3..5] {
        let live_until = w.persistent_ttl(&DataKey::Nullifier(n.clone()));
        assert!(live_until <= min, "{live_until} > {min}");
    }
    // six weeks on, every tree entry is below the threshold; the withdrawal extends those it touches
    env.ledger()
        .with_mut(|l| l.sequence_number += PERSISTENT_TTL_EXTEND_TO - PERSISTENT_TTL_THRESHOLD + 17_280);
    assert!(w.persistent_ttl(&DataKey::CurrentRootIndex) < PERSISTENT_TTL_THRESHOLD);
    w.transact(&w.withdraw, &w.relayer).unwrap();
    let instance = env.as_contract(&w.pool_id, || env.storage().instance().get_ttl());
    assert_eq!(instance, INSTANCE_TTL_EXTEND_TO);
    for key in [DataKey::CurrentRootIndex, DataKey::Root(1), DataKey::Root(2)] {
        assert_eq!(w.persistent_ttl(&key), PERSISTENT_TTL_EXTEND_TO, "{key:?}");
    }
    assert_eq!(w.persistent_ttl(&TreeKey::NextIndex), PERSISTENT_TTL_EXTEND_TO);
    // the pair at 2 writes level 0 and reads level 1 (the first pair's node), then writes the levels above
    for level in 0..20 {
        assert_eq!(
            w.persistent_ttl(&TreeKey::FilledSubtree(level)),
            PERSISTENT_TTL_EXTEND_TO,
            "level {level}"
        );
    }
    // Root(0), the empty tree's, was neither matched nor written
    assert!(w.persistent_ttl(&DataKey::Root(0)) < PERSISTENT_TTL_THRESHOLD);
    // the ASP contracts and the verifier were kept live by the calls the pool made
    let asp_m = w.asp_m.address.clone();
    assert_eq!(env.as_contract(&asp_m, || env.storage().instance().get_ttl()), INSTANCE_TTL_EXTEND_TO);
}
