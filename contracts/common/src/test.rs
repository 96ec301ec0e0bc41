extern crate std;

use soroban_sdk::{contract, testutils::storage::Persistent as _, vec, Env, Vec, U256};

use crate::constants::{MAX_LEVELS, ZERO_HASHES};
use crate::field::{bit, fq_negate, fr_modulus, is_canonical, is_fq, u256_bytes, u256_from_limbs};
use crate::merkle::{append, next_index, zero, TreeKey};
use crate::poseidon2::Poseidon2;
use crate::test_vectors::{
    COMPRESSIONS, HASHES, MERKLE_LEAVES, MERKLE_ROOTS_PAIRS_2, MERKLE_ROOTS_PAIRS_20, MERKLE_ROOTS_SINGLE_20,
    PERMUTATIONS,
};
use crate::testutils::{bytes_hex, test_env, u256_hex};
use crate::ttl::{extend_persistent, PERSISTENT_TTL_EXTEND_TO};

/// Storage needs a contract context: an empty contract to run the library code in.
#[contract]
struct Host;

fn hexes(env: &Env, xs: &[&str]) -> Vec<U256> {
    let mut v = Vec::new(env);
    for x in xs {
        v.push_back(u256_hex(env, x));
    }
    v
}

#[test]
fn poseidon2_t3_known_answer_from_the_brief() {
    let env = test_env();
    let h = Poseidon2::new(&env);
    let out =
        h.permutation(&vec![&env, U256::from_u32(&env, 0), U256::from_u32(&env, 1), U256::from_u32(&env, 2)]);
    let want = hexes(
        &env,
        &[
            "0bb61d24daca55eebcb1929a82650f328134334da98ea4f847f760054f4a3033",
            "303b6f7c86d043bfcbcc80214f26a30277a15d3f74ca654992defe7ff8d03570",
            "1ed25194542b12eef8617361c3ba7c52e660b145994427cc86296242cf766ec8",
        ],
    );
    assert_eq!(out, want);
}

#[test]
fn poseidon2_permutations_match_src_crypto() {
    let env = test_env();
    let h = Poseidon2::new(&env);
    let mut widths = std::collections::BTreeSet::new();
    for (input, output) in PERMUTATIONS {
        widths.insert(input.len());
        assert_eq!(h.permutation(&hexes(&env, input)), hexes(&env, output));
    }
    assert_eq!(widths.into_iter().collect::<std::vec::Vec<_>>(), [2, 3, 4]);
}

#[test]
fn poseidon2_hash_and_compress_match_src_crypto() {
    let env = test_env();
    let h = Poseidon2::new(&env);
    for (inputs, domain, want) in HASHES {
        let inputs: std::vec::Vec<U256> = inputs.iter().map(|x| u256_hex(&env, x)).collect();
        let domain = u256_hex(&env, domain).to_u128().unwrap() as u32;
        assert_eq!(h.hash(&inputs, domain), u256_hex(&env, want));
        if inputs.len() == 2 {
            assert_eq!(h.hash2(&inputs[0], &inputs[1], domain), u256_hex(&env, want));
        }
    }
    for (l, r, want) in COMPRESSIONS {
        assert_eq!(h.compress(&u256_hex(&env, l), &u256_hex(&env, r)), u256_hex(&env, want));
    }
}

#[test]
fn poseidon2_parameters_are_built_once_per_invocation() {
    let env = test_env();
    let h = Poseidon2::new(&env);
    let one = U256::from_u32(&env, 1);
    let mut budget = env.cost_estimate().budget();
    budget.reset_unlimited();
    h.compress(&one, &one);
    let first = env.cost_estimate().budget().cpu_instruction_cost();
    budget.reset_unlimited();
    h.compress(&one, &one);
    let second = env.cost_estimate().budget().cpu_instruction_cost();
    std::println!("compress: {first} instructions with building the t=2 parameters, {second} after");
    assert!(second < first, "the second compression reuses the parameters");
}

#[test]
fn zero_hashes_are_the_compressions_of_the_xlm_leaf() {
    let env = test_env();
    let h = Poseidon2::new(&env);
    let xlm = [88u32, 76, 77].map(|b| U256::from_u32(&env, b));
    let mut z = h.hash(&xlm, 0);
    assert_eq!(z, zero(&env, 0));
    for level in 1..=MAX_LEVELS {
        z = h.compress(&z, &z);
        assert_eq!(z, zero(&env, level), "level {level}");
    }
    assert_eq!(ZERO_HASHES.len(), MAX_LEVELS as usize + 1);
}

#[test]
fn merkle_single_appends_match_the_typescript_tree() {
    let env = test_env();
    let id = env.register(Host, ());
    env.as_contract(&id, || {
        let h = Poseidon2::new(&env);
        assert_eq!(zero(&env, 20), u256_hex(&env, MERKLE_ROOTS_SINGLE_20[0]));
        for (i, leaf) in MERKLE_LEAVES.iter().enumerate() {
            let next = next_index(&env);
            assert_eq!(next, i as u32);
            let root = append(&env, &h, 20, next, &[u256_hex(&env, leaf)]);
            assert_eq!(root, u256_hex(&env, MERKLE_ROOTS_SINGLE_20[i + 1]), "after leaf {i}");
        }
        assert_eq!(next_index(&env), MERKLE_LEAVES.len() as u32);
    });
}

#[test]
fn merkle_pair_appends_match_the_typescript_tree() {
    let env = test_env();
    let id = env.register(Host, ());
    env.as_contract(&id, || {
        let h = Poseidon2::new(&env);
        assert!(!env.storage().persistent().has(&TreeKey::NextIndex));
        for (i, pair) in MERKLE_LEAVES.chunks(2).enumerate() {
            let leaves = [u256_hex(&env, pair[0]), u256_hex(&env, pair[1])];
            let root = append(&env, &h, 20, next_index(&env), &leaves);
            assert_eq!(root, u256_hex(&env, MERKLE_ROOTS_PAIRS_20[i + 1]), "after pair {i}");
            // as the TypeScript contract: level 0 keeps the pair's left leaf
            let left: U256 = env.storage().persistent().get(&TreeKey::FilledSubtree(0)).unwrap();
            assert_eq!(left, leaves[0]);
        }
        assert_eq!(next_index(&env), 6);
        // pairs at 0 and 4 are left children at level 1, the pair at 2 a right one: level 1 holds the first
        // pair's node until the third pair overwrites it
        let level1: U256 = env.storage().persistent().get(&TreeKey::FilledSubtree(1)).unwrap();
        let third = h.compress(&u256_hex(&env, MERKLE_LEAVES[4]), &u256_hex(&env, MERKLE_LEAVES[5]));
        assert_eq!(level1, third);
    });
}

#[test]
fn merkle_small_tree_and_single_then_pair_agree() {
    let env = test_env();
    let id = env.register(Host, ());
    env.as_contract(&id, || {
        let h = Poseidon2::new(&env);
        assert_eq!(zero(&env, 2), u256_hex(&env, MERKLE_ROOTS_PAIRS_2[0]));
        for (i, pair) in MERKLE_LEAVES[..4].chunks(2).enumerate() {
            let leaves = [u256_hex(&env, pair[0]), u256_hex(&env, pair[1])];
            let root = append(&env, &h, 2, next_index(&env), &leaves);
            assert_eq!(root, u256_hex(&env, MERKLE_ROOTS_PAIRS_2[i + 1]));
        }
    });
}

#[test]
fn field_helpers() {
    let env = test_env();
    let r = fr_modulus(&env);
    assert_eq!(u256_bytes(&r), crate::constants::FR_MODULUS_BE);
    let below = r.sub(&U256::from_u32(&env, 1));
    assert!(is_canonical(&below, &r));
    assert!(!is_canonical(&r, &r));
    assert!(!is_canonical(&U256::from_parts(&env, u64::MAX, 0, 0, 0), &r));

    let q = crate::constants::FQ_MODULUS_BE;
    assert!(!is_fq(&q));
    let mut q_minus_1 = q;
    q_minus_1[31] -= 1;
    assert!(is_fq(&q_minus_1));
    assert!(is_fq(&[0u8; 32]));
    assert!(!is_fq(&[0xffu8; 32]));
    assert!(!is_fq(&[0u8; 31]));

    // q - 1 and 1 negate to each other; 0 stays 0; y + (q - y) = q
    let mut one = [0u8; 32];
    one[31] = 1;
    assert_eq!(fq_negate(&q_minus_1), one);
    assert_eq!(fq_negate(&one), q_minus_1);
    assert_eq!(fq_negate(&[0u8; 32]), [0u8; 32]);
    let y = bytes_hex::<32>("1ed25194542b12eef8617361c3ba7c52e660b145994427cc86296242cf766ec8");
    let neg = fq_negate(&y);
    let y_u = U256::from_be_bytes(&env, &soroban_sdk::Bytes::from_array(&env, &y));
    let neg_u = U256::from_be_bytes(&env, &soroban_sdk::Bytes::from_array(&env, &neg));
    assert_eq!(u256_bytes(&y_u.add(&neg_u)), q);

    let five = u256_bytes(&U256::from_u32(&env, 0b101));
    assert!(bit(&five, 0) && !bit(&five, 1) && bit(&five, 2) && !bit(&five, 255) && !bit(&five, 300));
    let top = u256_bytes(&U256::from_parts(&env, 1 << 63, 0, 0, 0));
    assert!(bit(&top, 255) && !bit(&top, 254));
    assert_eq!(u256_from_limbs(&env, &[0, 0, 0, 7]), U256::from_u32(&env, 7));
}

#[test]
fn ttl_helpers_extend_persistent_entries() {
    let env = test_env();
    let id = env.register(Host, ());
    env.as_contract(&id, || {
        let key = TreeKey::NextIndex;
        env.storage().persistent().set(&key, &1u32);
        let before = env.storage().persistent().get_ttl(&key);
        assert!(before < PERSISTENT_TTL_EXTEND_TO);
        extend_persistent(&env, &key);
        assert_eq!(env.storage().persistent().get_ttl(&key), PERSISTENT_TTL_EXTEND_TO);
    });
}
