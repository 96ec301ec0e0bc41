//! The parsed-module cache, kept as stellar-core keeps it: every contract code entry of the live state is
//! parsed once and reused by every later invocation (so the host charges the cheaper cached
//! instantiation, as testnet does). stellar-core adds code uploaded during a ledger when that ledger
//! closes; here code created by an invocation is held back until a later ledger's call needs it, and code
//! already in the ledger when this host was made (a restarted sandbox) is parsed on first use, as a
//! stellar-core that started on that ledger would have parsed it at start-up.

use soroban_env_host::budget::{AsBudget, Budget};
use soroban_env_host::xdr::{ContractCostParams, Hash};
use soroban_env_host::{CompilationContext, Error, ErrorHandler, HostError, ModuleCache, Val};
use std::collections::HashMap;
use std::sync::Mutex;

/// A budget with no limit, for parsing outside any transaction (that work is not charged to anyone).
#[derive(Clone)]
struct Unmetered {
    budget: Budget,
}

impl Unmetered {
    fn new() -> Result<Self, HostError> {
        let empty = || ContractCostParams(Vec::new().try_into().unwrap_or_default());
        Ok(Self {
            budget: Budget::try_from_configs(u64::MAX, u64::MAX, empty(), empty())?,
        })
    }
}

impl AsBudget for Unmetered {
    fn as_budget(&self) -> &Budget {
        &self.budget
    }
}

impl ErrorHandler for Unmetered {
    fn map_err<T, E>(&self, res: Result<T, E>) -> Result<T, HostError>
    where
        Error: From<E>,
        E: core::fmt::Debug,
    {
        res.map_err(|e| HostError::from(Error::from(e)))
    }

    fn error(&self, error: Error, _msg: &str, _args: &[Val]) -> HostError {
        HostError::from(error)
    }
}

impl CompilationContext for Unmetered {}

pub struct Modules {
    cache: ModuleCache,
    /// Code created by an invocation, by hash, with the ledger that created it (not yet in the cache).
    pending: Mutex<HashMap<[u8; 32], u32>>,
}

impl Modules {
    pub fn new() -> Result<Self, String> {
        let ctx = Unmetered::new().map_err(|e| format!("module cache: {e:?}"))?;
        Ok(Self {
            cache: ModuleCache::new(&ctx).map_err(|e| format!("module cache: {e:?}"))?,
            pending: Mutex::new(HashMap::new()),
        })
    }

    /// The cache to hand to the host for an invocation in ledger `ledger_seq` whose footprint holds
    /// these contract codes (hash and Wasm): first parses any of them that stellar-core would have
    /// cached by then.
    pub fn prepare<'a>(
        &self,
        protocol: u32,
        ledger_seq: u32,
        codes: impl Iterator<Item = (&'a [u8; 32], &'a [u8])>,
    ) -> ModuleCache {
        for (hash, wasm) in codes {
            let key = Hash(*hash);
            if self.cache.contains_module(&key).unwrap_or(true) {
                continue;
            }
            let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
            match pending.get(hash) {
                // uploaded in this very ledger: stellar-core caches it when the ledger closes
                Some(created) if *created >= ledger_seq => continue,
                _ => {
                    pending.remove(hash);
                }
            }
            drop(pending);
            if let Ok(ctx) = Unmetered::new() {
                // Invalid code is left out: the host then parses it itself and fails as on testnet.
                let _ = self
                    .cache
                    .parse_and_cache_module_simple(&ctx, protocol, wasm);
            }
        }
        self.cache.clone()
    }

    /// Notes code an invocation in ledger `ledger_seq` created.
    pub fn created(&self, hash: [u8; 32], ledger_seq: u32) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        pending.entry(hash).or_insert(ledger_seq);
    }

    pub fn contains(&self, hash: &[u8; 32]) -> bool {
        self.cache.contains_module(&Hash(*hash)).unwrap_or(false)
    }

    pub fn clear(&self) {
        let _ = self.cache.clear();
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }
}
