//! The Soroban host for Node.js: runs InvokeHostFunction operations on the real Soroban host
//! (soroban-env-host, with soroban-simulation for preflight), as stellar-core applies them and as
//! stellar-rpc simulates them. XDR goes in and out as bytes; the JavaScript side is
//! src/sandbox/soroban-host.ts.

pub mod apply;
pub mod changes;
pub mod config;
pub mod diagnostics;
pub mod fees;
pub mod footprint_ops;
pub mod module_cache;
pub mod network;
pub mod simulate;
pub mod worker;
pub mod xdr_io;

#[cfg(feature = "node")]
mod node;

/// A host for one network: its settings, turned once into what calls need, and its module cache.
pub struct HostState {
    pub network: network::Network,
    pub modules: module_cache::Modules,
}

impl HostState {
    pub fn new(
        passphrase: &str,
        protocol_version: u32,
        base_reserve: u32,
        setting_entries: &[&[u8]],
    ) -> Result<Self, String> {
        if protocol_version != soroban_env_host::meta::INTERFACE_VERSION.protocol {
            return Err(format!(
                "protocolVersion {protocol_version} is not the protocol of this host (soroban-env-host {} runs protocol {})",
                HOST_VERSION,
                soroban_env_host::meta::INTERFACE_VERSION.protocol
            ));
        }
        Ok(Self {
            network: network::Network::from_setting_entries(
                passphrase,
                protocol_version,
                base_reserve,
                setting_entries,
            )?,
            modules: module_cache::Modules::new()?,
        })
    }
}

pub const HOST_VERSION: &str = "29.0.1";
