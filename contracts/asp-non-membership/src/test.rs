extern crate std;

use pool_common::field::{bit, u256_bytes};
use pool_common::test_vectors::{SMT_FINDS, SMT_OPS};
use pool_common::testutils::{test_env, u256_hex};
use pool_common::ttl::{INSTANCE_TTL_EXTEND_TO, PERSISTENT_TTL_EXTEND_TO, PERSISTENT_TTL_THRESHOLD};
use pool_common::Poseidon2;
use soroban_sdk::testutils::storage::{Instance as _, Persistent as _};
use soroban_sdk::testutils::{Address as _, Events as _, Ledger as _, MockAuth, MockAuthInvoke};
use soroban_sdk::{Address, Env, Event as _, IntoVal, TryFromVal, Val, Vec, U256};

use crate::{
    AspNonMembership, AspNonMembershipClient, DataKey, Error, FindResult, LeafDeleted, LeafInserted, SmtNode,
};

struct Setup {
    env: Env,
    admin: Address,
    id: Address,
    client: AspNonMembershipClient<'static>,
}

fn setup() -> Setup {
    let env = test_env();
    let admin = Address::generate(&env);
    let id = env.register(AspNonMembership, (&admin,));
    let client = AspNonMembershipClient::new(&env, &id);
    Setup { env, admin, id, client }
}

fn contract_result<T: core::fmt::Debug, C: core::fmt::Debug, I: core::fmt::Debug>(
    r: Result<Result<T, C>, Result<Error, I>>,
) -> Result<T, Error> {
    match r {
        Ok(Ok(v)) => Ok(v),
        Err(Ok(e)) => Err(e),
        other => panic!("not a contract result: {other:?}"),
    }
}

impl Setup {
    fn u(&self, x: u32) -> U256 {
        U256::from_u32(&self.env, x)
    }

    /// `fn_name(args)` authorised by the admin (only that call).
    fn as_admin<T>(
        &self,
        fn_name: &str,
        args: Vec<Val>,
        call: impl FnOnce(&AspNonMembershipClient<'_>) -> T,
    ) -> T {
        let invoke = MockAuthInvoke { contract: &self.id, fn_name, args, sub_invokes: &[] };
        let auths = [MockAuth { address: &self.admin, invoke: &invoke }];
        let client = self.client.mock_auths(&auths);
        call(&client)
    }

    fn insert(&self, key: &U256, value: &U256) -> Result<(), Error> {
        let args = (key.clone(), value.clone()).into_val(&self.env);
        contract_result(self.as_admin("insert_leaf", args, |c| c.try_insert_leaf(key, value)))
    }

    fn delete(&self, key: &U256) -> Result<(), Error> {
        let args = (key.clone(),).into_val(&self.env);
        contract_result(self.as_admin("delete_leaf", args, |c| c.try_delete_leaf(key)))
    }

    /// Every stored node, by position.
    fn nodes(&self) -> std::vec::Vec<(U256, SmtNode)> {
        self.env.as_contract(&self.id, || {
            let mut out = std::vec::Vec::new();
            for (k, v) in self.env.storage().persistent().all().iter() {
                if let Ok(DataKey::Node(pos)) = DataKey::try_from_val(&self.env, &k) {
                    out.push((pos, SmtNode::try_from_val(&self.env, &v).unwrap()));
                }
            }
            out
        })
    }
}

/// The canonical tree's root computed from its key set alone (as src/crypto/sparse-merkle-tree.ts does).
fn reference_root(env: &Env, h: &Poseidon2, leaves: &[(U256, U256)], level: u32) -> U256 {
    match leaves {
        [] => U256::from_u32(env, 0),
        [(k, v)] => h.hash2(k, v, 1),
        _ => {
            let (right, left): (std::vec::Vec<_>, std::vec::Vec<_>) =
                leaves.iter().cloned().partition(|(k, _)| bit(&u256_bytes(k), level));
            let l = reference_root(env, h, &left, level + 1);
            let r = reference_root(env, h, &right, level + 1);
            h.compress(&l, &r)
        }
    }
}

#[test]
fn constructor_starts_empty() {
    let s = setup();
    assert_eq!(s.client.get_root(), s.u(0));
    assert_eq!(s.client.get_admin(), s.admin);
    let r = s.client.find_key(&s.u(5));
    assert_eq!(
        r,
        FindResult {
            found: false,
            found_value: s.u(0),
            is_old0: true,
            not_found_key: s.u(5),
            not_found_value: s.u(0),
            siblings: Vec::new(&s.env),
        }
    );
    assert!(s.nodes().is_empty());
}

#[test]
fn inserts_and_deletes_match_the_typescript_tree() {
    let s = setup();
    for (i, (insert, key, value, root)) in SMT_OPS.iter().enumerate() {
        let (key, value, root) = (u256_hex(&s.env, key), u256_hex(&s.env, value), u256_hex(&s.env, root));
        let events = if *insert {
            s.insert(&key, &value).unwrap();
            [LeafInserted { key: key.clone(), root: root.clone(), value }.to_xdr(&s.env, &s.id)]
        } else {
            s.delete(&key).unwrap();
            [LeafDeleted { key: key.clone(), root: root.clone() }.to_xdr(&s.env, &s.id)]
        };
        assert_eq!(s.env.events().all().filter_by_contract(&s.id), events, "op {i}");
        assert_eq!(s.client.get_root(), root, "root after op {i}");
    }
    for (key, found, found_value, is_old0, nf_key, nf_value, siblings) in SMT_FINDS {
        let mut sib = Vec::new(&s.env);
        for x in siblings.iter() {
            sib.push_back(u256_hex(&s.env, x));
        }
        let want = FindResult {
            found: *found,
            found_value: u256_hex(&s.env, found_value),
            is_old0: *is_old0,
            not_found_key: u256_hex(&s.env, nf_key),
            not_found_value: u256_hex(&s.env, nf_value),
            siblings: sib,
        };
        assert_eq!(s.client.find_key(&u256_hex(&s.env, key)), want, "find {key}");
    }
}

#[test]
fn the_empty_tree_leaves_no_nodes_behind() {
    let s = setup();
    // SMT_OPS empties the tree after its 20th operation
    for (i, (insert, key, value, root)) in SMT_OPS.iter().enumerate().take(20) {
        let (key, value) = (u256_hex(&s.env, key), u256_hex(&s.env, value));
        if *insert { s.insert(&key, &value) } else { s.delete(&key) }.unwrap();
        assert_eq!(s.client.get_root(), u256_hex(&s.env, root), "op {i}");
    }
    assert_eq!(s.client.get_root(), s.u(0));
    assert!(s.nodes().is_empty(), "{:?}", s.nodes());
}

/// A small deterministic generator (xorshift) for the randomised comparison.
struct Rng(u64);
impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 << 13;
        self.0 ^= self.0 >> 7;
        self.0 ^= self.0 << 17;
        self.0
    }
}

#[test]
fn random_operations_keep_the_canonical_form() {
    let s = setup();
    let h = Poseidon2::new(&s.env);
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let mut present: std::vec::Vec<(U256, U256)> = std::vec::Vec::new();
    for op in 0..70 {
        // small keys collide on long prefixes; some keys are full width
        let key = match rng.next() % 4 {
            0 => U256::from_parts(&s.env, rng.next() >> 5, rng.next(), rng.next(), rng.next()),
            _ => s.u((rng.next() % 96) as u32),
        };
        let value = s.u((rng.next() % 3) as u32);
        let at = present.iter().position(|(k, _)| *k == key);
        if rng.next() % 3 == 0 {
            match at {
                Some(i) => {
                    s.delete(&key).unwrap();
                    present.remove(i);
                }
                None => assert_eq!(s.delete(&key), Err(Error::KeyNotFound)),
            }
        } else {
            match at {
                Some(_) => assert_eq!(s.insert(&key, &value), Err(Error::KeyExists)),
                None => {
                    s.insert(&key, &value).unwrap();
                    present.push((key.clone(), value.clone()));
                }
            }
        }
        s.env.cost_estimate().budget().reset_unlimited();
        assert_eq!(s.client.get_root(), reference_root(&s.env, &h, &present, 0), "op {op}");
        // every stored leaf is a present key, at most 2n − 1 nodes are stored
        let nodes = s.nodes();
        let leaves = nodes.iter().filter(|(_, n)| matches!(n, SmtNode::Leaf(..))).count();
        assert_eq!(leaves, present.len(), "op {op}");
        assert!(nodes.len() <= 2 * present.len().max(1) - 1 + 254, "op {op}");
    }
    // every present key is found with its value, and every probe answers a valid non-membership proof
    for (k, v) in &present {
        let r = s.client.find_key(k);
        assert!(r.found && r.found_value == *v);
        assert!(!s.client.verify_non_membership(k, &r.siblings, &s.u(0), &s.u(0)));
    }
    for probe in 0..96u32 {
        let key = s.u(probe);
        let r = s.client.find_key(&key);
        if !r.found {
            assert!(s.client.verify_non_membership(&key, &r.siblings, &r.not_found_key, &r.not_found_value));
        }
    }
}

#[test]
fn verify_non_membership_follows_the_circuit() {
    let s = setup();
    for (insert, key, value, _) in SMT_OPS {
        let (key, value) = (u256_hex(&s.env, key), u256_hex(&s.env, value));
        if *insert { s.insert(&key, &value) } else { s.delete(&key) }.unwrap();
    }
    let zero = s.u(0);
    for (key, found, ..) in SMT_FINDS {
        let key = u256_hex(&s.env, key);
        let r = s.client.find_key(&key);
        let ok = s.client.verify_non_membership(&key, &r.siblings, &r.not_found_key, &r.not_found_value);
        assert_eq!(ok, !found);
        // circuit inputs: siblings padded with zeros to 10 levels; an empty slot as (0, 0)
        let mut padded = r.siblings.clone();
        while padded.len() < 10 {
            padded.push_back(zero.clone());
        }
        let (old_key, old_value) = if r.is_old0 {
            (zero.clone(), zero.clone())
        } else {
            (r.not_found_key.clone(), r.not_found_value.clone())
        };
        assert_eq!(s.client.verify_non_membership(&key, &padded, &old_key, &old_value), !found);
        if !found && !r.is_old0 {
            // another leaf's value, or a leaf off the key's path, does not prove absence
            let other = r.not_found_value.add(&s.u(1));
            assert!(!s.client.verify_non_membership(&key, &r.siblings, &r.not_found_key, &other));
        }
        if !r.siblings.is_empty() {
            let mut wrong = r.siblings.clone();
            wrong.set(0, wrong.get(0).unwrap().add(&s.u(1)));
            assert!(!s.client.verify_non_membership(&key, &wrong, &r.not_found_key, &r.not_found_value));
        }
    }
    // a leaf whose key does not share the probe's path bits is refused: 15 ends on 7's leaf; claim 3's
    let r = s.client.find_key(&s.u(15));
    assert_eq!(r.not_found_key, s.u(7));
    let three = s.client.find_key(&s.u(3));
    assert!(!s.client.verify_non_membership(&s.u(15), &r.siblings, &s.u(3), &three.found_value));
    // non-canonical arguments
    let big = pool_common::fr_modulus(&s.env);
    let none = Vec::new(&s.env);
    let v = |k: &U256, sib: &Vec<U256>, a: &U256, b: &U256| {
        contract_result(s.client.try_verify_non_membership(k, sib, a, b))
    };
    assert_eq!(v(&big, &none, &zero, &zero), Err(Error::NonCanonical));
    assert_eq!(v(&zero, &Vec::from_array(&s.env, [big.clone()]), &zero, &zero), Err(Error::NonCanonical));
    assert_eq!(v(&zero, &none, &big, &zero), Err(Error::NonCanonical));
    assert_eq!(v(&zero, &none, &zero, &big), Err(Error::NonCanonical));
}

#[test]
fn errors() {
    let s = setup();
    let (one, two) = (s.u(1), s.u(2));
    let r = pool_common::fr_modulus(&s.env);
    s.insert(&one, &two).unwrap();
    assert_eq!(s.insert(&one, &two), Err(Error::KeyExists));
    assert_eq!(s.insert(&one, &s.u(3)), Err(Error::KeyExists));
    assert_eq!(s.delete(&two), Err(Error::KeyNotFound));
    // checked before the authorisation, as the TypeScript contract
    assert_eq!(contract_result(s.client.try_insert_leaf(&r, &one)), Err(Error::NonCanonical));
    assert_eq!(contract_result(s.client.try_insert_leaf(&one, &r)), Err(Error::NonCanonical));
    assert_eq!(contract_result(s.client.try_delete_leaf(&r)), Err(Error::NonCanonical));
    assert_eq!(contract_result(s.client.try_find_key(&r)), Err(Error::NonCanonical));
    // the admin's authorisation is needed
    assert!(matches!(s.client.try_insert_leaf(&two, &one), Err(Err(_))));
    assert!(matches!(s.client.try_delete_leaf(&one), Err(Err(_))));
    let other = Address::generate(&s.env);
    let args: Vec<Val> = (two.clone(), one.clone()).into_val(&s.env);
    let invoke = MockAuthInvoke { contract: &s.id, fn_name: "insert_leaf", args, sub_invokes: &[] };
    assert!(matches!(
        s.client.mock_auths(&[MockAuth { address: &other, invoke: &invoke }]).try_insert_leaf(&two, &one),
        Err(Err(_))
    ));
    assert_eq!(s.client.find_key(&one).found_value, two);
    assert!(!s.client.find_key(&two).found);
}

#[test]
fn insert_and_delete_aliases() {
    let s = setup();
    let (k, v) = (s.u(9), s.u(4));
    let args = (k.clone(), v.clone()).into_val(&s.env);
    s.as_admin("insert", args, |c| c.insert(&k, &v));
    assert_eq!(s.env.auths()[0].0, s.admin);
    let root = s.client.get_root();
    assert_eq!(root, Poseidon2::new(&s.env).hash2(&k, &v, 1));
    let args = (k.clone(),).into_val(&s.env);
    s.as_admin("delete", args, |c| c.delete(&k));
    assert_eq!(s.client.get_root(), s.u(0));
}

#[test]
fn ttl_of_instance_root_and_nodes() {
    let s = setup();
    let ttl_of = |key: &DataKey| s.env.as_contract(&s.id, || s.env.storage().persistent().get_ttl(key));
    let instance_ttl = || s.env.as_contract(&s.id, || s.env.storage().instance().get_ttl());
    for k in [1u32, 3, 5] {
        s.insert(&s.u(k), &s.u(1)).unwrap();
    }
    s.env
        .ledger()
        .with_mut(|l| l.sequence_number += PERSISTENT_TTL_EXTEND_TO - PERSISTENT_TTL_THRESHOLD + 1000);
    assert!(instance_ttl() < PERSISTENT_TTL_THRESHOLD);
    // inserting 7 rewrites the path 1 → … (keys 3 and 7 share bits 0..1, split at bit 2)
    s.insert(&s.u(7), &s.u(1)).unwrap();
    assert_eq!(instance_ttl(), INSTANCE_TTL_EXTEND_TO);
    assert_eq!(ttl_of(&DataKey::Root), PERSISTENT_TTL_EXTEND_TO);
    // 1 = 0b001, 3 = 0b011, 5 = 0b101, 7 = 0b111: branches at depth 0 and 1, then {1, 5} under a branch at
    // depth 2 (untouched), and 3 and 7 under a new branch at depth 2 (3's old place)
    let nodes = s.nodes();
    assert_eq!(nodes.len(), 8);
    let extended: std::vec::Vec<SmtNode> = nodes
        .iter()
        .filter(|(pos, _)| ttl_of(&DataKey::Node(pos.clone())) == PERSISTENT_TTL_EXTEND_TO)
        .map(|(_, n)| n.clone())
        .collect();
    assert_eq!(extended.len(), 5);
    for k in [3u32, 7] {
        assert!(extended.iter().any(|n| matches!(n, SmtNode::Leaf(key, _) if *key == s.u(k))));
    }
    assert_eq!(extended.iter().filter(|n| matches!(n, SmtNode::Branch(..))).count(), 3);
    // get_root keeps the instance and the root live
    s.env.ledger().with_mut(|l| l.sequence_number += 2 * 17_280);
    s.client.get_root();
    assert_eq!(instance_ttl(), INSTANCE_TTL_EXTEND_TO);
    assert_eq!(ttl_of(&DataKey::Root), PERSISTENT_TTL_EXTEND_TO);
}

#[test]
fn insert_cost() {
    let s = setup();
    let mut rng = Rng(7);
    for _ in 0..100 {
        let k = U256::from_parts(&s.env, rng.next() >> 5, rng.next(), rng.next(), rng.next());
        s.insert(&k, &s.u(1)).unwrap();
    }
    let k = U256::from_parts(&s.env, 1, 2, 3, 4);
    s.insert(&k, &s.u(1)).unwrap();
    let budget = s.env.cost_estimate().budget();
    let (cpu, mem) = (budget.cpu_instruction_cost(), budget.memory_bytes_cost());
    let depth = s.client.find_key(&k).siblings.len();
    std::println!(
        "SMT insert into 100 keys (depth {depth}, native contract): {cpu} instructions, {mem} bytes"
    );
}
