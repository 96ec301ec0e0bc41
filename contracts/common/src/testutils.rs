//! Helpers for the contracts' tests (feature `testutils`).
extern crate std;

use soroban_sdk::testutils::EnvTestConfig;
use soroban_sdk::{Bytes, Env, U256};

/// A test Env that writes no test snapshot files (the SDK's default writes test_snapshots/*.json).
/// Resource limits stay enforced: the SDK's default per-invocation limits (400M instructions, 41.9 MB of
/// memory, 16 KiB of events, …) are testnet's and mainnet's.
pub fn test_env() -> Env {
    Env::new_with_config(EnvTestConfig { capture_snapshot_at_drop: false })
}

/// A U256 from 64 hex digits (the format of test_vectors.rs).
pub fn u256_hex(env: &Env, hex: &str) -> U256 {
    U256::from_be_bytes(env, &Bytes::from_slice(env, &bytes_hex::<32>(hex)))
}

/// N bytes from 2N hex digits.
pub fn bytes_hex<const N: usize>(hex: &str) -> [u8; N] {
    let hex = hex.trim_start_matches("0x");
    assert_eq!(hex.len(), 2 * N, "expected {} hex digits, got {}", 2 * N, hex.len());
    let mut out = [0u8; N];
    for (i, b) in out.iter_mut().enumerate() {
        *b = u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).expect("hex digit");
    }
    out
}

/// Any number of bytes from hex digits.
pub fn vec_hex(hex: &str) -> std::vec::Vec<u8> {
    let hex = hex.trim_start_matches("0x");
    assert!(hex.len() % 2 == 0, "odd number of hex digits");
    (0..hex.len()).step_by(2).map(|i| u8::from_str_radix(&hex[i..i + 2], 16).expect("hex digit")).collect()
}
