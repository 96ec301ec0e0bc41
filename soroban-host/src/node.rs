//! The Node-API surface (napi-rs): the `SorobanHost` class and the settings functions. Converts between
//! JavaScript objects and the Rust calls, runs host work on the worker thread, and turns every error or
//! panic into a thrown JavaScript `Error`.
// In a test build the `#[napi]` exports register nothing, so their functions look unused.
#![cfg_attr(test, allow(dead_code))]

use crate::apply::{self, ApplyInput, FootprintEntry};
use crate::config;
use crate::fees::declared_resource_fee;
use crate::footprint_ops::{self, FootprintApplyInput, FootprintOp};
use crate::simulate::{self, AuthMode, SimulateInput};
use crate::worker::{self, ReadAnswer};
use crate::xdr_io::decode;
use crate::HostState;
use napi::bindgen_prelude::{BigInt, Buffer, Function};
use napi::{Error, Result, Status};
use napi_derive::napi;
use soroban_env_host::xdr::SorobanTransactionData;
use std::panic::{catch_unwind, AssertUnwindSafe};

fn js_error(message: String) -> Error {
    Error::new(Status::GenericFailure, message)
}

/// Runs `f` on this thread, turning an error or a panic into a JavaScript exception.
fn guard<T>(what: &str, f: impl FnOnce() -> std::result::Result<T, String>) -> Result<T> {
    match catch_unwind(AssertUnwindSafe(f)) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(js_error(format!("{what}: {e}"))),
        Err(p) => Err(js_error(format!(
            "{what}: panicked: {}",
            worker::panic_text(&p)
        ))),
    }
}

fn timestamp(ledger: &LedgerContext) -> std::result::Result<u64, String> {
    let (negative, value, lossless) = ledger.timestamp.get_u64();
    if negative || !lossless {
        return Err("ledger.timestamp must be a non-negative bigint below 2^64".into());
    }
    Ok(value)
}

fn buffers(v: Vec<Vec<u8>>) -> Vec<Buffer> {
    v.into_iter().map(Buffer::from).collect()
}

#[napi(object)]
pub struct HostOptions {
    pub network_passphrase: String,
    pub protocol_version: u32,
    pub base_reserve: u32,
    pub config_settings: Vec<Buffer>,
}

#[napi(object)]
pub struct LedgerContext {
    pub sequence: u32,
    pub timestamp: BigInt,
}

#[napi(object)]
pub struct ApplyEntry {
    pub key: Buffer,
    pub entry: Option<Buffer>,
    pub live_until: Option<u32>,
}

#[napi(object)]
pub struct ApplyRequest {
    pub operation: Buffer,
    pub soroban_data: Buffer,
    pub source_account: Buffer,
    pub transaction_size_bytes: u32,
    pub ledger: LedgerContext,
    pub entries: Vec<ApplyEntry>,
    pub prng_seed: Buffer,
}

#[napi(object, use_nullable = true)]
pub struct ApplyChange {
    pub key: Buffer,
    pub read_only: bool,
    pub kind: String,
    pub entry: Option<Buffer>,
    pub live_until: Option<u32>,
}

#[napi(object)]
pub struct ApplyFee {
    pub non_refundable: BigInt,
    pub refundable_consumed: BigInt,
    pub rent: BigInt,
    pub events: BigInt,
    pub refundable_declared: BigInt,
}

#[napi(object, use_nullable = true)]
pub struct ApplyResult {
    pub outcome: String,
    pub return_value: Option<Buffer>,
    pub error: Option<String>,
    pub changes: Vec<ApplyChange>,
    pub contract_events: Vec<Buffer>,
    pub diagnostic_events: Vec<Buffer>,
    pub fee: ApplyFee,
    pub cpu_instructions: BigInt,
    pub memory_bytes: BigInt,
    pub disk_read_bytes: u32,
    pub write_bytes: u32,
    pub events_size_bytes: u32,
    pub invoke_nanos: BigInt,
}

#[napi(object)]
pub struct FootprintApplyRequest {
    /// "extend" or "restore"
    pub kind: String,
    pub extend_to: Option<u32>,
    pub soroban_data: Buffer,
    pub transaction_size_bytes: u32,
    pub ledger: LedgerContext,
    pub entries: Vec<ApplyEntry>,
}

#[napi(object)]
pub struct TtlChange {
    pub key: Buffer,
    pub live_until: u32,
    pub restored: bool,
}

#[napi(object)]
pub struct FootprintApplyResult {
    pub outcome: String,
    pub changes: Vec<TtlChange>,
    pub diagnostic_events: Vec<Buffer>,
    pub fee: ApplyFee,
    pub disk_read_bytes: u32,
    pub write_bytes: u32,
}

#[napi(object)]
pub struct SimulateRequest {
    pub operation: Buffer,
    pub source_account: Buffer,
    pub auth_mode: String,
    pub use_upgraded_auth: Option<bool>,
    pub ledger: LedgerContext,
    pub instruction_leeway: Option<u32>,
}

#[napi(object)]
pub struct SnapshotEntry {
    pub entry: Buffer,
    pub live_until: Option<u32>,
}

#[napi(object, use_nullable = true)]
pub struct StateChange {
    pub key: Buffer,
    pub before: Option<Buffer>,
    pub after: Option<Buffer>,
}

#[napi(object, use_nullable = true)]
pub struct SimulateResult {
    pub error: Option<String>,
    pub return_value: Option<Buffer>,
    pub auth: Vec<Buffer>,
    pub transaction_data: Option<Buffer>,
    pub min_resource_fee: BigInt,
    pub contract_events: Vec<Buffer>,
    pub diagnostic_events: Vec<Buffer>,
    pub state_changes: Vec<StateChange>,
    pub cpu_instructions: BigInt,
    pub memory_bytes: BigInt,
    pub transaction_size_bytes: u32,
    pub events_size_bytes: u32,
}

#[napi(object)]
pub struct FootprintRequest {
    pub keys: Vec<Buffer>,
    pub extend_to: Option<u32>,
    pub ledger: LedgerContext,
}

#[napi(object, use_nullable = true)]
pub struct FootprintSimResult {
    pub error: Option<String>,
    pub transaction_data: Option<Buffer>,
    pub min_resource_fee: BigInt,
    pub restore_transaction_data: Option<Buffer>,
    pub restore_min_resource_fee: Option<BigInt>,
}

#[napi(object)]
pub struct ResourceFeeRequest {
    pub soroban_data: Buffer,
    pub transaction_size_bytes: u32,
    pub events_size_bytes: Option<u32>,
}

#[napi(object)]
pub struct ResourceFee {
    pub non_refundable: BigInt,
    pub refundable: BigInt,
}

#[napi(object)]
pub struct SettingsFile {
    pub settings: Vec<Buffer>,
    pub unknown: Vec<String>,
    pub synthesised: Vec<String>,
}

#[napi(object)]
pub struct NetworkLimits {
    pub tx_max_instructions: f64,
    pub tx_memory_limit: u32,
    pub tx_max_contract_events_size_bytes: u32,
    pub contract_max_size_bytes: u32,
    pub contract_data_entry_size_bytes: u32,
    pub contract_data_key_size_bytes: u32,
    pub tx_max_disk_read_entries: u32,
    pub tx_max_disk_read_bytes: u32,
    pub tx_max_write_ledger_entries: u32,
    pub tx_max_write_bytes: u32,
    pub tx_max_footprint_entries: u32,
    pub tx_max_size_bytes: u32,
}

#[napi(object)]
pub struct HostInfo {
    pub host_version: String,
    pub protocol_version: u32,
    pub network_id: Buffer,
    pub base_reserve: u32,
    pub min_persistent_ttl: u32,
    pub min_temporary_ttl: u32,
    pub max_entry_ttl: u32,
    pub average_state_size: f64,
    pub rent_fee_per_1kb: BigInt,
    pub limits: NetworkLimits,
}

fn settings_file(f: &config::SettingsFile) -> SettingsFile {
    SettingsFile {
        settings: buffers(config::setting_entries_xdr(&f.settings)),
        unknown: f.unknown.clone(),
        synthesised: f.synthesised.clone(),
    }
}

/// Testnet's published settings (protocol 27 file) as ConfigSetting `LedgerEntry` XDR, completed with
/// the internal settings, and what could not be read.
#[napi]
pub fn testnet_config() -> Result<SettingsFile> {
    guard("testnetConfig", || {
        config::testnet_settings().map(settings_file)
    })
}

/// Any `ConfigUpgradeSet` JSON document (stellar-xdr's JSON form) as ConfigSetting `LedgerEntry` XDR.
#[napi]
pub fn config_from_upgrade_json(json: String) -> Result<SettingsFile> {
    guard("configFromUpgradeJson", || {
        config::settings_from_upgrade_json(&json).map(|f| settings_file(&f))
    })
}

/// Panics on the host thread: proves a panic comes back as an exception (for tests; this one panic is
/// not printed).
#[napi]
pub fn panic_on_host_thread() -> Result<()> {
    guard("panicOnHostThread", || {
        worker::run_alone::<()>(|| {
            worker::deliberate_panic("a deliberate panic on the host thread")
        })
    })
}

#[napi]
pub struct SorobanHost {
    state: HostState,
}

#[napi]
impl SorobanHost {
    #[napi(constructor)]
    pub fn new(options: HostOptions) -> Result<Self> {
        guard("SorobanHost", || {
            let entries: Vec<&[u8]> = options.config_settings.iter().map(|b| &b[..]).collect();
            Ok(SorobanHost {
                state: HostState::new(
                    &options.network_passphrase,
                    options.protocol_version,
                    options.base_reserve,
                    &entries,
                )?,
            })
        })
    }

    #[napi]
    pub fn info(&self) -> Result<HostInfo> {
        guard("info", || {
            let n = &self.state.network;
            let l = &n.limits;
            Ok(HostInfo {
                host_version: crate::HOST_VERSION.to_string(),
                protocol_version: n.protocol_version,
                network_id: Buffer::from(n.network_id.to_vec()),
                base_reserve: n.base_reserve,
                min_persistent_ttl: n.config.min_persistent_entry_ttl,
                min_temporary_ttl: n.config.min_temp_entry_ttl,
                max_entry_ttl: n.config.max_entry_ttl,
                average_state_size: n.average_state_size as f64,
                rent_fee_per_1kb: n.config.rent_fee_configuration.fee_per_rent_1kb.into(),
                limits: NetworkLimits {
                    tx_max_instructions: l.max_instructions as f64,
                    tx_memory_limit: l.memory_limit,
                    tx_max_contract_events_size_bytes: l.max_contract_events_size_bytes,
                    contract_max_size_bytes: l.max_contract_size_bytes,
                    contract_data_entry_size_bytes: l.max_contract_data_entry_size_bytes,
                    contract_data_key_size_bytes: l.max_contract_data_key_size_bytes,
                    tx_max_disk_read_entries: l.max_disk_read_entries,
                    tx_max_disk_read_bytes: l.max_disk_read_bytes,
                    tx_max_write_ledger_entries: l.max_write_entries,
                    tx_max_write_bytes: l.max_write_bytes,
                    tx_max_footprint_entries: l.max_footprint_entries,
                    tx_max_size_bytes: l.max_size_bytes,
                },
            })
        })
    }

    #[napi]
    pub fn apply_invoke(&self, request: ApplyRequest) -> Result<ApplyResult> {
        guard("applyInvoke", || {
            let input = ApplyInput {
                operation: &request.operation,
                soroban_data: &request.soroban_data,
                source_account: &request.source_account,
                transaction_size_bytes: request.transaction_size_bytes,
                ledger_seq: request.ledger.sequence,
                timestamp: timestamp(&request.ledger)?,
                entries: request
                    .entries
                    .iter()
                    .map(|e| FootprintEntry {
                        key: &e.key,
                        entry: e.entry.as_deref(),
                        live_until: e.live_until,
                    })
                    .collect(),
                prng_seed: &request.prng_seed,
            };
            let state = &self.state;
            let out = worker::run_alone(|| apply::apply(&state.network, &state.modules, &input))?;
            Ok(ApplyResult {
                outcome: out.outcome.name().to_string(),
                return_value: out.return_value.map(Buffer::from),
                error: out.error,
                changes: out
                    .changes
                    .into_iter()
                    .map(|c| ApplyChange {
                        key: c.key.into(),
                        read_only: c.read_only,
                        kind: c.kind.name().to_string(),
                        entry: c.entry.map(Buffer::from),
                        live_until: c.live_until,
                    })
                    .collect(),
                contract_events: buffers(out.contract_events),
                diagnostic_events: buffers(out.diagnostic_events),
                fee: ApplyFee {
                    non_refundable: out.fee.non_refundable.into(),
                    refundable_consumed: out.fee.refundable_consumed.into(),
                    rent: out.fee.rent.into(),
                    events: out.fee.events.into(),
                    refundable_declared: out.fee.refundable_declared.into(),
                },
                cpu_instructions: out.cpu_instructions.into(),
                memory_bytes: out.memory_bytes.into(),
                disk_read_bytes: out.disk_read_bytes,
                write_bytes: out.write_bytes,
                events_size_bytes: out.events_size_bytes,
                invoke_nanos: out.invoke_nanos.into(),
            })
        })
    }

    /// Applies one ExtendFootprintTTL or RestoreFootprint operation as stellar-core applies it.
    #[napi]
    pub fn apply_footprint(&self, request: FootprintApplyRequest) -> Result<FootprintApplyResult> {
        guard("applyFootprint", || {
            let op = match request.kind.as_str() {
                "extend" => FootprintOp::Extend {
                    extend_to: request.extend_to.ok_or("extendTo is required to extend")?,
                },
                "restore" => FootprintOp::Restore,
                other => return Err(format!("kind must be 'extend' or 'restore', not {other:?}")),
            };
            let input = FootprintApplyInput {
                op,
                soroban_data: &request.soroban_data,
                transaction_size_bytes: request.transaction_size_bytes,
                ledger_seq: request.ledger.sequence,
                entries: request
                    .entries
                    .iter()
                    .map(|e| FootprintEntry {
                        key: &e.key,
                        entry: e.entry.as_deref(),
                        live_until: e.live_until,
                    })
                    .collect(),
            };
            // on a host thread, as applyInvoke: sizing contract code for rent parses its module
            let network = &self.state.network;
            let out = worker::run_alone(|| footprint_ops::apply_footprint_op(network, &input))?;
            Ok(FootprintApplyResult {
                outcome: out.outcome.name().to_string(),
                changes: out
                    .changes
                    .into_iter()
                    .map(|c| TtlChange {
                        key: c.key.into(),
                        live_until: c.live_until,
                        restored: c.restored,
                    })
                    .collect(),
                diagnostic_events: buffers(out.diagnostic_events),
                fee: ApplyFee {
                    non_refundable: out.fee.non_refundable.into(),
                    refundable_consumed: out.fee.refundable_consumed.into(),
                    rent: out.fee.rent.into(),
                    events: out.fee.events.into(),
                    refundable_declared: out.fee.refundable_declared.into(),
                },
                disk_read_bytes: out.disk_read_bytes,
                write_bytes: out.write_bytes,
            })
        })
    }

    #[napi]
    pub fn simulate_invoke(
        &self,
        request: SimulateRequest,
        get_entry: Function<Buffer, Option<SnapshotEntry>>,
    ) -> Result<SimulateResult> {
        guard("simulateInvoke", || {
            let auth_mode = match request.auth_mode.as_str() {
                "enforce" => AuthMode::Enforce,
                "record" => AuthMode::Record,
                "record_allow_nonroot" => AuthMode::RecordAllowNonroot,
                other => {
                    return Err(format!(
                    "authMode must be 'enforce', 'record' or 'record_allow_nonroot', not {other:?}"
                ))
                }
            };
            // Copies: JavaScript runs (getEntry) while the host works.
            let operation = request.operation.to_vec();
            let source_account = request.source_account.to_vec();
            let input = SimulateInput {
                operation: &operation,
                source_account: &source_account,
                auth_mode,
                use_upgraded_auth: request.use_upgraded_auth.unwrap_or(false),
                ledger_seq: request.ledger.sequence,
                timestamp: timestamp(&request.ledger)?,
                instruction_leeway: request.instruction_leeway.unwrap_or(0),
            };
            let network = &self.state.network;
            let out = worker::run(
                |reader| simulate::simulate_invoke(network, reader, &input),
                |key| read_from(&get_entry, key),
            )?;
            Ok(SimulateResult {
                error: out.error,
                return_value: out.return_value.map(Buffer::from),
                auth: buffers(out.auth),
                transaction_data: out.transaction_data.map(Buffer::from),
                min_resource_fee: out.min_resource_fee.into(),
                contract_events: buffers(out.contract_events),
                diagnostic_events: buffers(out.diagnostic_events),
                state_changes: out
                    .state_changes
                    .into_iter()
                    .map(|c| StateChange {
                        key: c.key.into(),
                        before: c.before.map(Buffer::from),
                        after: c.after.map(Buffer::from),
                    })
                    .collect(),
                cpu_instructions: out.cpu_instructions.into(),
                memory_bytes: out.memory_bytes.into(),
                transaction_size_bytes: out.transaction_size_bytes,
                events_size_bytes: out.events_size_bytes,
            })
        })
    }

    #[napi]
    pub fn simulate_extend_ttl(
        &self,
        request: FootprintRequest,
        get_entry: Function<Buffer, Option<SnapshotEntry>>,
    ) -> Result<FootprintSimResult> {
        guard("simulateExtendTtl", || {
            let keys: Vec<Vec<u8>> = request.keys.iter().map(|k| k.to_vec()).collect();
            let extend_to = request.extend_to.ok_or("extendTo is required")?;
            let (seq, ts) = (request.ledger.sequence, timestamp(&request.ledger)?);
            let network = &self.state.network;
            let out = worker::run(
                |reader| simulate::simulate_extend_ttl(network, reader, &keys, extend_to, seq, ts),
                |key| read_from(&get_entry, key),
            )?;
            Ok(footprint_result(out))
        })
    }

    #[napi]
    pub fn simulate_restore(
        &self,
        request: FootprintRequest,
        get_entry: Function<Buffer, Option<SnapshotEntry>>,
    ) -> Result<FootprintSimResult> {
        guard("simulateRestore", || {
            let keys: Vec<Vec<u8>> = request.keys.iter().map(|k| k.to_vec()).collect();
            let (seq, ts) = (request.ledger.sequence, timestamp(&request.ledger)?);
            let network = &self.state.network;
            let out = worker::run(
                |reader| simulate::simulate_restore(network, reader, &keys, seq, ts),
                |key| read_from(&get_entry, key),
            )?;
            Ok(footprint_result(out))
        })
    }

    #[napi]
    pub fn transaction_resource_fee(&self, request: ResourceFeeRequest) -> Result<ResourceFee> {
        guard("transactionResourceFee", || {
            let data: SorobanTransactionData = decode("sorobanData", &request.soroban_data)?;
            let (non_refundable, refundable) = declared_resource_fee(
                &self.state.network,
                &data,
                request.transaction_size_bytes,
                request.events_size_bytes.unwrap_or(0),
            );
            Ok(ResourceFee {
                non_refundable: non_refundable.into(),
                refundable: refundable.into(),
            })
        })
    }

    /// Whether the module cache holds the parsed code of this Wasm hash.
    #[napi]
    pub fn has_cached_module(&self, wasm_hash: Buffer) -> Result<bool> {
        guard("hasCachedModule", || {
            let hash: [u8; 32] = wasm_hash[..]
                .try_into()
                .map_err(|_| "wasmHash must be 32 bytes")?;
            Ok(self.state.modules.contains(&hash))
        })
    }

    /// Empties the module cache (as after a restart).
    #[napi]
    pub fn clear_module_cache(&self) -> Result<()> {
        guard("clearModuleCache", || {
            self.state.modules.clear();
            Ok(())
        })
    }
}

fn footprint_result(out: simulate::FootprintSimOutput) -> FootprintSimResult {
    FootprintSimResult {
        error: out.error,
        transaction_data: out.transaction_data.map(Buffer::from),
        min_resource_fee: out.min_resource_fee.into(),
        restore_min_resource_fee: out.restore_preamble.as_ref().map(|(_, fee)| (*fee).into()),
        restore_transaction_data: out.restore_preamble.map(|(data, _)| Buffer::from(data)),
    }
}

/// Asks JavaScript's `getEntry` for one key, on the calling thread.
fn read_from(get_entry: &Function<Buffer, Option<SnapshotEntry>>, key: &[u8]) -> ReadAnswer {
    match get_entry.call(Buffer::from(key.to_vec())) {
        Ok(None) => Ok(None),
        Ok(Some(found)) => Ok(Some((found.entry.to_vec(), found.live_until))),
        Err(e) => Err(e.reason.clone()),
    }
}
