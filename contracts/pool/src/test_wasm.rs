//! The built WASMs (build/contracts/*.wasm, from `npx tsx scripts/build-contracts.ts`) in the test host, to
//! measure what the network would meter: the VM's instructions as well as the host's. Without the WASMs the
//! test says so and passes (the native tests above check the behaviour).
extern crate std;

use pool_common::testutils::test_env;
use soroban_sdk::testutils::Address as _;
use soroban_sdk::{token, Address, Env, U256};

use crate::test::{fixture_txs, vk_of_fixture};
use crate::PoolClient;

fn wasm(name: &str) -> Option<std::vec::Vec<u8>> {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join(std::format!("../../build/contracts/{name}.wasm"));
    std::fs::read(path).ok()
}

fn report(env: &Env, what: &str) -> u64 {
    let r = env.cost_estimate().resources();
    std::println!(
        "{what}: {} instructions, {} bytes of memory, {} entries read ({} from disk) / {} written, {} bytes written, \
         {} bytes of events",
        r.instructions,
        r.mem_bytes,
        r.memory_read_entries,
        r.disk_read_entries,
        r.write_entries,
        r.write_bytes,
        r.contract_events_size_bytes
    );
    r.instructions as u64
}

#[test]
fn costs_of_the_built_wasms() {
    let (Some(verifier), Some(pool), Some(asp_m), Some(asp_nm)) =
        (wasm("verifier"), wasm("pool"), wasm("asp_membership"), wasm("asp_non_membership"))
    else {
        std::println!(
            "build/contracts/*.wasm not built: run `npx tsx scripts/build-contracts.ts` to measure them"
        );
        return;
    };
    let env = test_env();
    let f: serde_json::Value = serde_json::from_str(crate::test::FIXTURE).unwrap();
    let admin = Address::generate(&env);
    let sac = env.register_stellar_asset_contract_v2(Address::generate(&env));
    let token = sac.address();
    let verifier_id = env.register(verifier.as_slice(), (vk_of_fixture(&env, &f),));
    let asp_m_id = env.register(asp_m.as_slice(), (&admin, 20u32));
    let asp_nm_id = env.register(asp_nm.as_slice(), (&admin,));
    let asp_m = asp_membership::AspMembershipClient::new(&env, &asp_m_id);
    let asp_nm = asp_non_membership::AspNonMembershipClient::new(&env, &asp_nm_id);
    let hex = |v: &serde_json::Value| pool_common::testutils::u256_hex(&env, v.as_str().unwrap());
    let mut asp_insert = 0;
    for leaf in f["membership_leaves"].as_array().unwrap() {
        asp_m.mock_all_auths().insert_leaf(&hex(leaf));
        asp_insert = report(&env, "asp_membership.insert_leaf (20 levels)");
    }
    // a blocklist of 100 keys, then the fixture's blocked key
    let mut x = 0x1234_5678_9abc_def1u64;
    let mut next = || {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        x
    };
    for _ in 0..100 {
        let k = U256::from_parts(&env, next() >> 5, next(), next(), next());
        asp_nm.mock_all_auths().insert_leaf(&k, &U256::from_u32(&env, 1));
    }
    let b = &f["blocked"][0];
    asp_nm.mock_all_auths().insert_leaf(&hex(&b["key"]), &hex(&b["value"]));
    let smt_insert = report(&env, "asp_non_membership.insert_leaf (101st key)");
    let blocked = hex(&b["key"]);
    asp_nm.mock_all_auths().delete_leaf(&blocked);
    report(&env, "asp_non_membership.delete_leaf");
    asp_nm.mock_all_auths().insert_leaf(&blocked, &hex(&b["value"]));
    // the pool must see the fixture's roots: a fresh blocklist with only the fixture's key
    let asp_nm_id = env.register(wasm("asp_non_membership").unwrap().as_slice(), (&admin,));
    asp_non_membership::AspNonMembershipClient::new(&env, &asp_nm_id)
        .mock_all_auths()
        .insert_leaf(&hex(&b["key"]), &hex(&b["value"]));

    let max = U256::from_u128(&env, 1_000_000_000_000);
    let pool_id = env
        .register(pool.as_slice(), (&admin, &token, &verifier_id, &asp_m_id, &asp_nm_id, max, 20u32, 1u32 << 20, 3u32));
    let pool = PoolClient::new(&env, &pool_id);
    let alice = Address::generate(&env);
    token::StellarAssetClient::new(&env, &token).mock_all_auths().mint(&alice, &1_000_000_000);
    let [deposit, withdraw, _] = fixture_txs(&env, &f);
    pool.mock_all_auths().transact(&deposit.proof, &deposit.ext, &alice);
    let transact_deposit = report(&env, "pool.transact deposit (20 levels, policy 3)");
    assert_eq!(pool.get_root(), deposit.root_after);
    pool.mock_all_auths().transact(&withdraw.proof, &withdraw.ext, &Address::generate(&env));
    report(&env, "pool.transact withdrawal");
    assert_eq!(pool.get_root(), withdraw.root_after);

    let client = verifier::VerifierClient::new(&env, &verifier_id);
    let inputs = soroban_sdk::Vec::from_slice(&env, &deposit.inputs);
    assert!(client.verify(&deposit.proof.proof, &inputs));
    let verify = report(&env, "verifier.verify");
    for (what, cost) in [
        ("verify", verify),
        ("transact", transact_deposit),
        ("asp insert", asp_insert),
        ("smt insert", smt_insert),
    ] {
        assert!(cost < 400_000_000, "{what} must fit a transaction");
    }
}
