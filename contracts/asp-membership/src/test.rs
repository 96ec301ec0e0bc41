extern crate std;

use pool_common::merkle::{zero, TreeKey};
use pool_common::test_vectors::{COMPRESSIONS, MERKLE_LEAVES, MERKLE_ROOTS_SINGLE_20};
use pool_common::testutils::{test_env, u256_hex};
use pool_common::ttl::{INSTANCE_TTL_EXTEND_TO, PERSISTENT_TTL_EXTEND_TO, PERSISTENT_TTL_THRESHOLD};
use soroban_sdk::testutils::storage::{Instance as _, Persistent as _};
use soroban_sdk::testutils::{
    Address as _, AuthorizedFunction, AuthorizedInvocation, Events as _, Ledger as _,
};
use soroban_sdk::testutils::{MockAuth, MockAuthInvoke};
use soroban_sdk::xdr::{self, ScVal};
use soroban_sdk::{Address, Env, Event as _, IntoVal, Symbol, U256};

use crate::{AspMembership, AspMembershipClient, DataKey, Error, LeafAdded};

struct Setup {
    env: Env,
    admin: Address,
    id: Address,
    client: AspMembershipClient<'static>,
}

fn setup(levels: u32) -> Setup {
    let env = test_env();
    let admin = Address::generate(&env);
    let id = env.register(AspMembership, (&admin, levels));
    let client = AspMembershipClient::new(&env, &id);
    Setup { env, admin, id, client }
}

impl Setup {
    /// Calls insert_leaf with only the admin's authorisation of exactly that call.
    fn insert_as_admin(&self, leaf: &U256) -> Result<(), Error> {
        let args = (leaf.clone(),).into_val(&self.env);
        let invoke = MockAuthInvoke { contract: &self.id, fn_name: "insert_leaf", args, sub_invokes: &[] };
        match self
            .client
            .mock_auths(&[MockAuth { address: &self.admin, invoke: &invoke }])
            .try_insert_leaf(leaf)
        {
            Ok(Ok(())) => Ok(()),
            Err(Ok(e)) => Err(e),
            other => panic!("not a contract result: {other:?}"),
        }
    }

    fn persistent_ttl(&self, key: &impl IntoVal<Env, soroban_sdk::Val>) -> u32 {
        self.env.as_contract(&self.id, || self.env.storage().persistent().get_ttl(key))
    }

    fn instance_ttl(&self) -> u32 {
        self.env.as_contract(&self.id, || self.env.storage().instance().get_ttl())
    }
}

#[test]
fn constructor_sets_the_empty_root_and_admin() {
    let s = setup(20);
    assert_eq!(s.client.get_root(), u256_hex(&s.env, MERKLE_ROOTS_SINGLE_20[0]));
    assert_eq!(s.client.get_admin(), s.admin);
    for levels in [1u32, 32] {
        let s = setup(levels);
        assert_eq!(s.client.get_root(), zero(&s.env, levels));
    }
}

#[test]
#[should_panic(expected = "Error(Contract, #4)")]
fn constructor_refuses_zero_levels() {
    setup(0);
}

#[test]
#[should_panic(expected = "Error(Contract, #4)")]
fn constructor_refuses_more_than_32_levels() {
    setup(33);
}

#[test]
fn inserts_match_the_typescript_tree_and_emit_leaf_added() {
    let s = setup(20);
    for (i, leaf) in MERKLE_LEAVES.iter().enumerate() {
        let leaf = u256_hex(&s.env, leaf);
        s.insert_as_admin(&leaf).unwrap();
        // the call's auth tree: the admin authorised insert_leaf(leaf)
        assert_eq!(
            s.env.auths(),
            [(
                s.admin.clone(),
                AuthorizedInvocation {
                    function: AuthorizedFunction::Contract((
                        s.id.clone(),
                        Symbol::new(&s.env, "insert_leaf"),
                        (leaf.clone(),).into_val(&s.env)
                    )),
                    sub_invocations: std::vec![],
                }
            )]
        );
        // its event: topics [LeafAdded], data {index: u64, leaf, root}
        let root = u256_hex(&s.env, MERKLE_ROOTS_SINGLE_20[i + 1]);
        let events = s.env.events().all().filter_by_contract(&s.id);
        let index = i as u64;
        assert_eq!(
            events,
            [LeafAdded { index, leaf: leaf.clone(), root: root.clone() }.to_xdr(&s.env, &s.id)]
        );
        let xdr::ContractEventBody::V0(body) = &events.events()[0].body;
        assert_eq!(body.topics.len(), 1);
        assert_eq!(body.topics[0], ScVal::Symbol("LeafAdded".try_into().unwrap()));
        let ScVal::Map(Some(map)) = &body.data else { panic!("data is a map") };
        let keys: std::vec::Vec<std::string::String> =
            map.iter().map(|e| std::format!("{:?}", e.key)).collect();
        assert_eq!(keys.len(), 3);
        assert!(keys[0].contains("index") && keys[1].contains("leaf") && keys[2].contains("root"));
        assert_eq!(map[0].val, ScVal::U64(index));
        assert_eq!(s.client.get_root(), root);
    }
}

#[test]
fn insert_is_admin_only_by_default() {
    let s = setup(20);
    let leaf = U256::from_u32(&s.env, 7);
    // no authorisation at all
    assert!(matches!(s.client.try_insert_leaf(&leaf), Err(Err(_))));
    // someone else's authorisation
    let other = Address::generate(&s.env);
    let args = (leaf.clone(),).into_val(&s.env);
    let invoke = MockAuthInvoke { contract: &s.id, fn_name: "insert_leaf", args, sub_invokes: &[] };
    assert!(matches!(
        s.client.mock_auths(&[MockAuth { address: &other, invoke: &invoke }]).try_insert_leaf(&leaf),
        Err(Err(_))
    ));
    assert_eq!(s.client.get_root(), zero(&s.env, 20));
    s.insert_as_admin(&leaf).unwrap();
}

#[test]
fn opened_inserts_need_no_authorisation() {
    let s = setup(20);
    // set_admin_insert_only itself is admin-only
    assert!(s.client.try_set_admin_insert_only(&false).is_err());
    s.client.mock_all_auths().set_admin_insert_only(&false);
    assert_eq!(s.env.auths()[0].0, s.admin);
    let leaf = u256_hex(&s.env, MERKLE_LEAVES[0]);
    s.client.set_auths(&[]).insert_leaf(&leaf);
    assert_eq!(s.env.auths(), []);
    assert_eq!(s.client.get_root(), u256_hex(&s.env, MERKLE_ROOTS_SINGLE_20[1]));
    s.client.mock_all_auths().set_admin_insert_only(&true);
    assert!(matches!(s.client.set_auths(&[]).try_insert_leaf(&leaf), Err(Err(_))));
}

#[test]
fn non_canonical_leaf_is_refused_before_authorisation() {
    let s = setup(20);
    let r = pool_common::fr_modulus(&s.env);
    assert_eq!(s.client.try_insert_leaf(&r), Err(Ok(Error::NonCanonical)));
    assert_eq!(s.insert_as_admin(&r.add(&U256::from_u32(&s.env, 5))), Err(Error::NonCanonical));
    assert_eq!(s.client.get_root(), zero(&s.env, 20));
    // r − 1 is a field element
    s.insert_as_admin(&r.sub(&U256::from_u32(&s.env, 1))).unwrap();
}

#[test]
fn a_full_tree_refuses_more_leaves() {
    let s = setup(1);
    for i in 0..2u32 {
        s.insert_as_admin(&U256::from_u32(&s.env, i + 1)).unwrap();
    }
    let root = s.client.get_root();
    assert_eq!(s.insert_as_admin(&U256::from_u32(&s.env, 3)), Err(Error::MerkleTreeFull));
    assert_eq!(s.client.get_root(), root);
    // the root of [1, 2] at one level
    let h = s.client.hash_pair(&U256::from_u32(&s.env, 1), &U256::from_u32(&s.env, 2));
    assert_eq!(root, h);
}

#[test]
fn hash_pair_is_the_compression() {
    let s = setup(20);
    for (l, r, want) in COMPRESSIONS {
        assert_eq!(s.client.hash_pair(&u256_hex(&s.env, l), &u256_hex(&s.env, r)), u256_hex(&s.env, want));
    }
    let r = pool_common::fr_modulus(&s.env);
    let one = U256::from_u32(&s.env, 1);
    assert_eq!(s.client.try_hash_pair(&r, &one), Err(Ok(Error::NonCanonical)));
    assert_eq!(s.client.try_hash_pair(&one, &r), Err(Ok(Error::NonCanonical)));
}

#[test]
fn update_admin_hands_over() {
    let s = setup(20);
    let new_admin = Address::generate(&s.env);
    assert!(s.client.try_update_admin(&new_admin).is_err());
    assert_eq!(s.client.get_admin(), s.admin);
    s.client.mock_all_auths().update_admin(&new_admin);
    assert_eq!(s.env.auths()[0].0, s.admin);
    assert_eq!(s.client.get_admin(), new_admin);
    // the old admin's authorisation no longer inserts
    let leaf = U256::from_u32(&s.env, 1);
    let args = (leaf.clone(),).into_val(&s.env);
    let invoke = MockAuthInvoke { contract: &s.id, fn_name: "insert_leaf", args, sub_invokes: &[] };
    assert!(matches!(
        s.client.mock_auths(&[MockAuth { address: &s.admin, invoke: &invoke }]).try_insert_leaf(&leaf),
        Err(Err(_))
    ));
    s.client.mock_auths(&[MockAuth { address: &new_admin, invoke: &invoke }]).insert_leaf(&leaf);
}

#[test]
fn storage_layout_and_ttl() {
    let s = setup(20);
    s.env.as_contract(&s.id, || {
        let instance = s.env.storage().instance();
        assert_eq!(instance.get::<_, bool>(&DataKey::AdminInsertOnly), Some(true));
        assert_eq!(instance.get::<_, u32>(&DataKey::Levels), Some(20));
        assert!(!s.env.storage().persistent().has(&TreeKey::NextIndex));
    });
    assert_eq!(s.instance_ttl(), INSTANCE_TTL_EXTEND_TO);
    // a month and a half later every entry is below the threshold; an insert brings those it touches back
    s.insert_as_admin(&U256::from_u32(&s.env, 1)).unwrap();
    s.env
        .ledger()
        .with_mut(|l| l.sequence_number += PERSISTENT_TTL_EXTEND_TO - PERSISTENT_TTL_THRESHOLD + 1000);
    assert!(s.persistent_ttl(&DataKey::Root) < PERSISTENT_TTL_THRESHOLD);
    s.insert_as_admin(&U256::from_u32(&s.env, 2)).unwrap();
    assert_eq!(s.instance_ttl(), INSTANCE_TTL_EXTEND_TO);
    assert_eq!(s.persistent_ttl(&DataKey::Root), PERSISTENT_TTL_EXTEND_TO);
    assert_eq!(s.persistent_ttl(&TreeKey::NextIndex), PERSISTENT_TTL_EXTEND_TO);
    // leaf 1 is a right child: level 0 was read (leaf 0) and every level above written
    for level in 0..20 {
        assert_eq!(
            s.persistent_ttl(&TreeKey::FilledSubtree(level)),
            PERSISTENT_TTL_EXTEND_TO,
            "level {level}"
        );
    }
    // get_root (read by the pool on every transaction) keeps the instance and the root live
    s.env.ledger().with_mut(|l| l.sequence_number += 2 * 17_280);
    assert!(s.instance_ttl() < PERSISTENT_TTL_THRESHOLD);
    s.client.get_root();
    assert_eq!(s.instance_ttl(), INSTANCE_TTL_EXTEND_TO);
    assert_eq!(s.persistent_ttl(&DataKey::Root), PERSISTENT_TTL_EXTEND_TO);
}

#[test]
fn insert_cost() {
    let s = setup(20);
    s.insert_as_admin(&U256::from_u32(&s.env, 1)).unwrap();
    let budget = s.env.cost_estimate().budget();
    std::println!(
        "insert_leaf at 20 levels (native contract): {} instructions, {} bytes",
        budget.cpu_instruction_cost(),
        budget.memory_bytes_cost()
    );
}
