//! Simulation (simulateTransaction) as stellar-rpc's preflight library computes it with
//! soroban-simulation: recording footprint, recorded or enforced authorization, the default resource and
//! fee adjustments with the caller's instruction leeway, ledger reads served by JavaScript.

use crate::fees::{adjust, archived_indices, max_envelope_size};
use crate::network::Network;
use crate::worker::Reader;
use crate::xdr_io::{decode, encode};
use soroban_env_host::e2e_invoke::RecordingInvocationAuthMode;
use soroban_env_host::storage::{EntryWithLiveUntil, SnapshotSource};
use soroban_env_host::xdr::{
    AccountId, InvokeHostFunctionOp, LedgerEntry, LedgerKey, OperationBody, ScErrorCode,
    ScErrorType,
};
use soroban_env_host::HostError;
use soroban_simulation::simulation::{
    simulate_extend_ttl_op, simulate_invoke_host_function_op, simulate_restore_op,
    SimulationAdjustmentConfig,
};
use soroban_simulation::AutoRestoringSnapshotSource;
use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AuthMode {
    /// Enforce the operation's own (signed) authorization entries.
    Enforce,
    /// Record authorization; only root invocations may require it (stellar-rpc's default).
    Record,
    /// Record authorization, allowing non-root authorization too.
    RecordAllowNonroot,
}

pub struct SimulateInput<'a> {
    pub operation: &'a [u8],
    pub source_account: &'a [u8],
    pub auth_mode: AuthMode,
    /// Record `AddressV2` credentials (stellar-rpc's `useUpgradedAuth`).
    pub use_upgraded_auth: bool,
    pub ledger_seq: u32,
    pub timestamp: u64,
    pub instruction_leeway: u32,
}

#[derive(Debug, Clone)]
pub struct StateChange {
    pub key: Vec<u8>,
    pub before: Option<Vec<u8>>,
    pub after: Option<Vec<u8>>,
}

#[derive(Debug, Clone, Default)]
pub struct SimulateOutput {
    pub error: Option<String>,
    pub return_value: Option<Vec<u8>>,
    pub auth: Vec<Vec<u8>>,
    pub transaction_data: Option<Vec<u8>>,
    pub min_resource_fee: i64,
    pub contract_events: Vec<Vec<u8>>,
    pub diagnostic_events: Vec<Vec<u8>>,
    pub state_changes: Vec<StateChange>,
    pub cpu_instructions: u64,
    pub memory_bytes: u64,
    /// The transaction size the fee was computed for (the largest envelope, adjusted).
    pub transaction_size_bytes: u32,
    /// Size of the contract events and the return value, the events the fee was computed for.
    pub events_size_bytes: u32,
}

/// Ledger reads served by the caller, each key asked at most once per simulation.
pub struct CallerSnapshot {
    reader: Reader,
    seen: RefCell<HashMap<Rc<LedgerKey>, Option<EntryWithLiveUntil>>>,
    failure: RefCell<Option<String>>,
}

impl CallerSnapshot {
    pub fn new(reader: Reader) -> Self {
        Self {
            reader,
            seen: RefCell::new(HashMap::new()),
            failure: RefCell::new(None),
        }
    }

    fn fail(&self, why: String) -> HostError {
        self.failure.borrow_mut().get_or_insert(why);
        HostError::from((ScErrorType::Storage, ScErrorCode::InternalError))
    }

    fn failure(&self) -> Option<String> {
        self.failure.borrow().clone()
    }
}

impl SnapshotSource for CallerSnapshot {
    fn get(&self, key: &Rc<LedgerKey>) -> Result<Option<EntryWithLiveUntil>, HostError> {
        if let Some(hit) = self.seen.borrow().get(key) {
            return Ok(hit.clone());
        }
        let found = match self.reader.read(encode(key.as_ref())) {
            Err(why) => return Err(self.fail(format!("getEntry failed: {why}"))),
            Ok(None) => None,
            Ok(Some((bytes, live_until))) => {
                let entry: LedgerEntry =
                    decode("getEntry's entry", &bytes).map_err(|e| self.fail(e))?;
                if entry.to_key() != **key {
                    return Err(self.fail("getEntry returned the entry of another key".into()));
                }
                let has_ttl = matches!(
                    **key,
                    LedgerKey::ContractData(_) | LedgerKey::ContractCode(_)
                );
                if has_ttl && live_until.is_none() {
                    return Err(
                        self.fail("getEntry returned a contract entry without liveUntil".into())
                    );
                }
                Some((Rc::new(entry), if has_ttl { live_until } else { None }))
            }
        };
        self.seen.borrow_mut().insert(key.clone(), found.clone());
        Ok(found)
    }
}

fn adjustments(instruction_leeway: u32) -> SimulationAdjustmentConfig {
    let mut config = SimulationAdjustmentConfig::default_adjustment();
    config.instructions.additive_factor =
        config.instructions.additive_factor.max(instruction_leeway);
    config
}

pub fn simulate_invoke(
    network: &Network,
    reader: Reader,
    input: &SimulateInput,
) -> Result<SimulateOutput, String> {
    let op: InvokeHostFunctionOp = decode("operation", input.operation)?;
    let source: AccountId = decode("sourceAccount", input.source_account)?;
    let ledger_info = network.ledger_info(input.ledger_seq, input.timestamp);
    let auth_mode = match input.auth_mode {
        AuthMode::Enforce => RecordingInvocationAuthMode::Enforcing(op.auth.to_vec()),
        AuthMode::Record => RecordingInvocationAuthMode::recording(true, input.use_upgraded_auth),
        AuthMode::RecordAllowNonroot => {
            RecordingInvocationAuthMode::recording(false, input.use_upgraded_auth)
        }
    };
    let snapshot = Rc::new(CallerSnapshot::new(reader));
    let seed: [u8; 32] = rand::random();
    let sim = simulate_invoke_host_function_op(
        snapshot.clone(),
        &network.config,
        &adjustments(input.instruction_leeway),
        &ledger_info,
        op.host_function.clone(),
        auth_mode,
        &source,
        seed,
        true,
    );
    let sim = match sim {
        Ok(sim) => sim,
        Err(e) => return Err(snapshot.failure().unwrap_or_else(|| format!("{e:?}"))),
    };
    let mut out = SimulateOutput {
        cpu_instructions: sim.simulated_instructions.into(),
        memory_bytes: sim.simulated_memory.into(),
        diagnostic_events: sim.diagnostic_events.iter().map(encode).collect(),
        ..Default::default()
    };
    let value = match &sim.invoke_result {
        Ok(v) => v,
        Err(e) => {
            out.error = Some(snapshot.failure().unwrap_or_else(|| format!("{e:?}")));
            return Ok(out);
        }
    };
    let Some(data) = &sim.transaction_data else {
        out.error = Some("simulation produced no transaction data".into());
        return Ok(out);
    };
    out.return_value = Some(encode(value));
    out.auth = sim.auth.iter().map(encode).collect();
    out.transaction_data = Some(encode(data));
    out.min_resource_fee = data.resource_fee;
    out.contract_events = sim.contract_events.iter().map(encode).collect();
    out.events_size_bytes = out
        .contract_events
        .iter()
        .map(|e| e.len() as u32)
        .sum::<u32>()
        .saturating_add(out.return_value.as_ref().map_or(0, |v| v.len() as u32));
    let body = OperationBody::InvokeHostFunction(InvokeHostFunctionOp {
        host_function: op.host_function,
        auth: sim
            .auth
            .clone()
            .try_into()
            .map_err(|_| "too many auth entries")?,
    });
    let size = max_envelope_size(body, &data.resources, archived_indices(data))?;
    out.transaction_size_bytes = adjust(size.into(), 1.1, 500) as u32;
    for diff in &sim.modified_entries {
        let Some(any) = diff.state_after.as_ref().or(diff.state_before.as_ref()) else {
            continue;
        };
        out.state_changes.push(StateChange {
            key: encode(&any.to_key()),
            before: diff.state_before.as_ref().map(encode),
            after: diff.state_after.as_ref().map(encode),
        });
    }
    Ok(out)
}

#[derive(Debug, Clone, Default)]
pub struct FootprintSimOutput {
    pub error: Option<String>,
    pub transaction_data: Option<Vec<u8>>,
    pub min_resource_fee: i64,
    /// For an extension of archived entries: the RestoreFootprint transaction to send first.
    pub restore_preamble: Option<(Vec<u8>, i64)>,
}

/// ExtendFootprintTTL preflight: extends `keys` (those that exist and need it) to `extend_to` ledgers.
pub fn simulate_extend_ttl(
    network: &Network,
    reader: Reader,
    keys: &[Vec<u8>],
    extend_to: u32,
    ledger_seq: u32,
    timestamp: u64,
) -> Result<FootprintSimOutput, String> {
    let keys = decode_keys(keys)?;
    let ledger_info = network.ledger_info(ledger_seq, timestamp);
    let caller = Rc::new(CallerSnapshot::new(reader));
    let snapshot = AutoRestoringSnapshotSource::new(caller.clone(), &ledger_info)
        .map_err(|e| format!("{e:?}"))?;
    let adjust = SimulationAdjustmentConfig::default_adjustment();
    let mut out = FootprintSimOutput::default();
    match simulate_extend_ttl_op(
        &snapshot,
        &network.config,
        &adjust,
        &ledger_info,
        &keys,
        extend_to,
    ) {
        Ok(r) => {
            out.min_resource_fee = r.transaction_data.resource_fee;
            out.transaction_data = Some(encode(&r.transaction_data));
            match snapshot.simulate_restore_keys_op(&network.config, &adjust, &ledger_info) {
                Ok(Some(restore)) => {
                    out.restore_preamble = Some((
                        encode(&restore.transaction_data),
                        restore.transaction_data.resource_fee,
                    ))
                }
                Ok(None) => {}
                Err(e) => out.error = Some(caller.failure().unwrap_or_else(|| format!("{e:?}"))),
            }
        }
        Err(e) => out.error = Some(caller.failure().unwrap_or_else(|| format!("{e:?}"))),
    }
    Ok(out)
}

/// RestoreFootprint preflight: restores the archived entries among `keys`.
pub fn simulate_restore(
    network: &Network,
    reader: Reader,
    keys: &[Vec<u8>],
    ledger_seq: u32,
    timestamp: u64,
) -> Result<FootprintSimOutput, String> {
    let keys = decode_keys(keys)?;
    let ledger_info = network.ledger_info(ledger_seq, timestamp);
    let snapshot = CallerSnapshot::new(reader);
    let adjust = SimulationAdjustmentConfig::default_adjustment();
    let mut out = FootprintSimOutput::default();
    match simulate_restore_op(&snapshot, &network.config, &adjust, &ledger_info, &keys) {
        Ok(r) => {
            out.min_resource_fee = r.transaction_data.resource_fee;
            out.transaction_data = Some(encode(&r.transaction_data));
        }
        Err(e) => out.error = Some(snapshot.failure().unwrap_or_else(|| format!("{e:?}"))),
    }
    Ok(out)
}

fn decode_keys(keys: &[Vec<u8>]) -> Result<Vec<LedgerKey>, String> {
    keys.iter()
        .enumerate()
        .map(|(i, k)| decode::<LedgerKey>(&format!("keys[{i}]"), k))
        .collect()
}
