//! Applying one InvokeHostFunction operation as stellar-core applies it (its InvokeHostFunctionOpFrame
//! and Rust bridge): footprint entries checked for archival and disk-read limits, the host run under a
//! budget of the declared instructions and the network's memory limit, then the entry-size, write-byte,
//! event-size and refundable-fee checks, each failure mapped to the operation result code stellar-core
//! would give, with the same diagnostic events.

use crate::changes::{changes, Before, Change, ChangeKind};
use crate::diagnostics::{symbol, Diagnostics};
use crate::fees::{archived_indices, declared_resource_fee, is_soroban_key};
use crate::module_cache::Modules;
use crate::network::Network;
use crate::xdr_io::{decode, encode};
use soroban_env_host::budget::Budget;
use soroban_env_host::e2e_invoke::{
    entry_size_for_rent, extract_rent_changes, invoke_host_function, TtlLedgerEntryMeta,
};
use soroban_env_host::fees::compute_rent_fee;
use soroban_env_host::xdr::{
    AccountId, ContractDataDurability, DiagnosticEvent, InvokeHostFunctionOp, LedgerEntry,
    LedgerEntryData, LedgerKey, ScError, ScErrorCode, ScVal, SorobanTransactionData,
};
use std::collections::HashSet;
use std::time::Instant;

/// One footprint key with the ledger's entry for it (absent: `None`) and that entry's TTL.
pub struct FootprintEntry<'a> {
    pub key: &'a [u8],
    pub entry: Option<&'a [u8]>,
    pub live_until: Option<u32>,
}

pub struct ApplyInput<'a> {
    pub operation: &'a [u8],
    pub soroban_data: &'a [u8],
    pub source_account: &'a [u8],
    pub transaction_size_bytes: u32,
    pub ledger_seq: u32,
    pub timestamp: u64,
    /// Every footprint key, read-only ones first, each list in footprint order.
    pub entries: Vec<FootprintEntry<'a>>,
    pub prng_seed: &'a [u8],
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    Success,
    Trapped,
    ResourceLimitExceeded,
    EntryArchived,
    InsufficientRefundableFee,
}

impl Outcome {
    pub fn name(self) -> &'static str {
        match self {
            Outcome::Success => "success",
            Outcome::Trapped => "trapped",
            Outcome::ResourceLimitExceeded => "resourceLimitExceeded",
            Outcome::EntryArchived => "entryArchived",
            Outcome::InsufficientRefundableFee => "insufficientRefundableFee",
        }
    }
}

#[derive(Debug, Clone, Default)]
pub struct FeeCharged {
    pub non_refundable: i64,
    pub refundable_consumed: i64,
    pub rent: i64,
    pub events: i64,
    /// What the transaction declared it may spend on refundable resources.
    pub refundable_declared: i64,
}

#[derive(Debug, Clone)]
pub struct ApplyOutput {
    pub outcome: Outcome,
    pub return_value: Option<Vec<u8>>,
    pub error: Option<String>,
    pub changes: Vec<Change>,
    pub contract_events: Vec<Vec<u8>>,
    pub diagnostic_events: Vec<Vec<u8>>,
    pub fee: FeeCharged,
    pub cpu_instructions: u64,
    pub memory_bytes: u64,
    pub disk_read_bytes: u32,
    pub write_bytes: u32,
    pub events_size_bytes: u32,
    /// Wall time of the host invocation alone.
    pub invoke_nanos: u64,
}

/// Applies the operation. `Err` is for inputs stellar-core would never apply (malformed XDR, a footprint
/// that does not match the entries given, a declared fee below its non-refundable part).
pub fn apply(
    network: &Network,
    modules: &Modules,
    input: &ApplyInput,
) -> Result<ApplyOutput, String> {
    let op: InvokeHostFunctionOp = decode("operation", input.operation)?;
    let data: SorobanTransactionData = decode("sorobanData", input.soroban_data)?;
    let _: AccountId = decode("sourceAccount", input.source_account)?;
    let seed: [u8; 32] = input
        .prng_seed
        .try_into()
        .map_err(|_| format!("prngSeed must be 32 bytes, not {}", input.prng_seed.len()))?;
    let resources = &data.resources;
    let fp = &resources.footprint;
    let ro_len = fp.read_only.len();
    let keys: Vec<&LedgerKey> = fp.read_only.iter().chain(fp.read_write.iter()).collect();
    if keys.len() != input.entries.len() {
        return Err(format!(
            "entries has {} items but the footprint has {} keys ({} read-only, {} read-write)",
            input.entries.len(),
            keys.len(),
            ro_len,
            fp.read_write.len()
        ));
    }
    for (i, (key, given)) in keys.iter().zip(&input.entries).enumerate() {
        let given_key: LedgerKey = decode(&format!("entries[{i}].key"), given.key)?;
        if &given_key != *key {
            return Err(format!(
                "entries[{i}].key is not footprint key {i} (read-only keys first, then read-write, in footprint order)"
            ));
        }
    }
    let seq = input.ledger_seq;
    let (non_refundable, _) =
        declared_resource_fee(network, &data, input.transaction_size_bytes, 0);
    let max_refundable = data.resource_fee.saturating_sub(non_refundable);
    if max_refundable < 0 {
        return Err(format!(
            "sorobanData.resourceFee {} is below the non-refundable fee {} of the declared resources: stellar-core refuses such a transaction before applying it",
            data.resource_fee, non_refundable
        ));
    }
    let mut out = ApplyOutput {
        outcome: Outcome::Success,
        return_value: None,
        error: None,
        changes: Vec::new(),
        contract_events: Vec::new(),
        diagnostic_events: Vec::new(),
        fee: FeeCharged {
            non_refundable,
            refundable_declared: max_refundable,
            ..Default::default()
        },
        cpu_instructions: 0,
        memory_bytes: 0,
        disk_read_bytes: 0,
        write_bytes: 0,
        events_size_bytes: 0,
        invoke_nanos: 0,
    };
    let mut diag = Diagnostics(Vec::new());
    let limits = &network.limits;
    let marked: HashSet<u32> = archived_indices(&data).iter().copied().collect();
    let restored_live_until =
        seq.saturating_add(network.config.min_persistent_entry_ttl.saturating_sub(1));
    // Only contract code needs a budget to size for rent (its parsed module's memory).
    let mut size_budget: Option<Budget> = None;

    // The footprint, as stellar-core reads it before invoking.
    let mut host_entries: Vec<(Option<&[u8]>, Option<TtlLedgerEntryMeta>)> =
        Vec::with_capacity(keys.len());
    let mut before: Vec<Before> = Vec::with_capacity(keys.len());
    let mut restored_indices: Vec<u32> = Vec::new();
    let mut codes: Vec<([u8; 32], Vec<u8>)> = Vec::new();
    let mut disk_read_bytes: u32 = 0;
    let fail = |mut out: ApplyOutput, diag: Diagnostics, outcome: Outcome| {
        out.outcome = outcome;
        out.diagnostic_events = diag.0.iter().map(encode).collect();
        Ok(out)
    };
    for (i, (key, given)) in keys.iter().zip(&input.entries).enumerate() {
        let read_only = i < ro_len;
        if !is_soroban_key(key) {
            if let Some(bytes) = given.entry {
                let entry: LedgerEntry = decode(&format!("entries[{i}].entry"), bytes)?;
                if entry.to_key() != **key {
                    return Err(format!(
                        "entries[{i}].entry is not the entry of entries[{i}].key"
                    ));
                }
            }
            // Classic entries are on disk: their size counts against the declared disk-read bytes.
            disk_read_bytes =
                disk_read_bytes.saturating_add(given.entry.map_or(0, |e| e.len() as u32));
            host_entries.push((given.entry, None));
            before.push(Before {
                entry: given.entry,
                live_until: None,
                restored: false,
            });
            if resources.disk_read_bytes < disk_read_bytes {
                diag.over_limit(
                    "operation byte-read resources exceeds amount specified",
                    disk_read_bytes,
                    resources.disk_read_bytes,
                );
                out.disk_read_bytes = disk_read_bytes;
                return fail(out, diag, Outcome::ResourceLimitExceeded);
            }
            continue;
        }
        let Some(bytes) = given.entry else {
            host_entries.push((None, None));
            before.push(Before {
                entry: None,
                live_until: None,
                restored: false,
            });
            continue;
        };
        let live_until = given.live_until.ok_or_else(|| {
            format!("entries[{i}] is a contract data or code entry but has no liveUntil")
        })?;
        let entry: LedgerEntry = decode(&format!("entries[{i}].entry"), bytes)?;
        if entry.to_key() != **key {
            return Err(format!(
                "entries[{i}].entry is not the entry of entries[{i}].key"
            ));
        }
        let durability = match key {
            LedgerKey::ContractData(k) => k.durability,
            _ => ContractDataDurability::Persistent,
        };
        let live = live_until >= seq;
        if !live && durability == ContractDataDurability::Temporary {
            // An expired temporary entry no longer exists.
            host_entries.push((None, None));
            before.push(Before {
                entry: None,
                live_until: None,
                restored: false,
            });
            continue;
        }
        let rw_index = i.checked_sub(ro_len).map(|x| x as u32);
        let restoring = !live && !read_only && rw_index.is_some_and(|x| marked.contains(&x));
        if !live && !restoring {
            match key {
                LedgerKey::ContractCode(k) => diag.error(
                    ScError::Value(ScErrorCode::InvalidInput),
                    "trying to access an archived contract code entry",
                    vec![ScVal::Bytes(
                        k.hash.0.to_vec().try_into().unwrap_or_default(),
                    )],
                ),
                LedgerKey::ContractData(k) => diag.error(
                    ScError::Value(ScErrorCode::InvalidInput),
                    "trying to access an archived contract data entry",
                    vec![ScVal::Address(k.contract.clone()), k.key.clone()],
                ),
                _ => {}
            }
            return fail(out, diag, Outcome::EntryArchived);
        }
        if !entry_size_ok(network, key, bytes.len() as u32, &mut diag) {
            return fail(out, diag, Outcome::ResourceLimitExceeded);
        }
        if restoring {
            // Restoring reads the archived entry from disk.
            disk_read_bytes = disk_read_bytes.saturating_add(bytes.len() as u32);
            if resources.disk_read_bytes < disk_read_bytes {
                diag.over_limit(
                    "operation byte-read resources exceeds amount specified",
                    disk_read_bytes,
                    resources.disk_read_bytes,
                );
                out.disk_read_bytes = disk_read_bytes;
                return fail(out, diag, Outcome::ResourceLimitExceeded);
            }
            restored_indices.push(rw_index.unwrap_or_default());
        }
        if let LedgerEntryData::ContractCode(code) = &entry.data {
            if !modules.contains(&code.hash.0) {
                codes.push((code.hash.0, code.code.to_vec()));
            }
        }
        let size_for_rent = if matches!(entry.data, LedgerEntryData::ContractCode(_)) {
            if size_budget.is_none() {
                size_budget = Some(
                    Budget::try_from_configs(0, 0, network.cpu_params(), network.mem_params())
                        .map_err(|e| format!("budget: {e:?}"))?,
                );
            }
            let budget = size_budget.as_ref().ok_or("budget")?;
            entry_size_for_rent(budget, &entry, bytes.len() as u32)
                .map_err(|e| format!("entry size for rent: {e:?}"))?
        } else {
            bytes.len() as u32
        };
        let host_live_until = if restoring {
            restored_live_until
        } else {
            live_until
        };
        host_entries.push((
            Some(bytes),
            Some(TtlLedgerEntryMeta {
                live_until_ledger: host_live_until,
                entry_size_for_rent: size_for_rent,
            }),
        ));
        before.push(Before {
            entry: Some(bytes),
            live_until: Some(live_until),
            restored: restoring,
        });
    }
    out.disk_read_bytes = disk_read_bytes;

    // The invocation.
    let hf = encode(&op.host_function);
    let resources_xdr = encode(resources);
    let auth: Vec<Vec<u8>> = op.auth.iter().map(encode).collect();
    let budget = Budget::try_from_configs(
        resources.instructions.into(),
        limits.memory_limit.into(),
        network.cpu_params(),
        network.mem_params(),
    )
    .map_err(|e| format!("budget: {e:?}"))?;
    let module_cache = modules.prepare(
        network.protocol_version,
        seq,
        codes.iter().map(|(h, w)| (h, w.as_slice())),
    );
    let mut host_diag: Vec<DiagnosticEvent> = Vec::new();
    let started = Instant::now();
    let result = invoke_host_function(
        &budget,
        true,
        hf.as_slice(),
        resources_xdr.as_slice(),
        &restored_indices,
        input.source_account,
        auth.iter().map(|a| a.as_slice()),
        network.ledger_info(seq, input.timestamp),
        host_entries.into_iter(),
        seed.as_slice(),
        &mut host_diag,
        None,
        Some(module_cache),
    );
    out.invoke_nanos = started.elapsed().as_nanos() as u64;
    out.cpu_instructions = budget.get_cpu_insns_consumed().unwrap_or(0);
    out.memory_bytes = budget.get_mem_bytes_consumed().unwrap_or(0);
    diag.0.extend(host_diag);
    let invoked = match result {
        Ok(r) => match r.encoded_invoke_result {
            Ok(value) => Ok((value, r.ledger_changes, r.encoded_contract_events)),
            Err(e) => Err(e),
        },
        Err(e) => Err(e),
    };
    let (value, ledger_changes, contract_events) = match invoked {
        Ok(v) => v,
        Err(e) => {
            let sc_error: ScError = e
                .error
                .try_into()
                .unwrap_or(ScError::Context(ScErrorCode::InternalError));
            diag.push(
                vec![symbol("host_fn_failed"), ScVal::Error(sc_error)],
                ScVal::Void,
            );
            out.error = Some(format!("{e:?}"));
            let outcome = if u64::from(resources.instructions) < out.cpu_instructions {
                diag.over_limit(
                    "operation instructions exceeds amount specified",
                    out.cpu_instructions,
                    resources.instructions,
                );
                Outcome::ResourceLimitExceeded
            } else if u64::from(limits.memory_limit) < out.memory_bytes {
                diag.over_limit(
                    "operation memory usage exceeds network config limit",
                    out.memory_bytes,
                    limits.memory_limit,
                );
                Outcome::ResourceLimitExceeded
            } else {
                Outcome::Trapped
            };
            return fail(out, diag, outcome);
        }
    };

    // Rent, from the entries' size and TTL changes.
    let rent = compute_rent_fee(
        &extract_rent_changes(&ledger_changes),
        &network.config.rent_fee_configuration,
        seq,
    );

    // Every read-write entry the host returns is written back, changed or not: check sizes and bytes.
    let mut write_bytes: u32 = 0;
    for change in ledger_changes.iter().filter(|c| !c.read_only) {
        let Some(new) = &change.encoded_new_value else {
            continue;
        };
        let key: LedgerKey = decode("a changed key", &change.encoded_key)?;
        if !entry_size_ok(network, &key, new.len() as u32, &mut diag) {
            out.write_bytes = write_bytes;
            return fail(out, diag, Outcome::ResourceLimitExceeded);
        }
        write_bytes = write_bytes.saturating_add(new.len() as u32);
        if resources.write_bytes < write_bytes {
            diag.over_limit(
                "operation byte-write resources exceeds amount specified",
                write_bytes,
                resources.write_bytes,
            );
            out.write_bytes = write_bytes;
            return fail(out, diag, Outcome::ResourceLimitExceeded);
        }
    }
    out.write_bytes = write_bytes;

    // Events and the return value, against the network's maximum.
    let max_events = limits.max_contract_events_size_bytes;
    let mut events_size: u32 = 0;
    for event in &contract_events {
        events_size = events_size.saturating_add(event.len() as u32);
        if max_events < events_size {
            diag.over_limit(
                "total events size exceeds network config maximum",
                events_size,
                max_events,
            );
            out.events_size_bytes = events_size;
            return fail(out, diag, Outcome::ResourceLimitExceeded);
        }
    }
    events_size = events_size.saturating_add(value.len() as u32);
    out.events_size_bytes = events_size;
    if max_events < events_size {
        diag.over_limit(
            "return value pushes events size above network config maximum",
            events_size,
            max_events,
        );
        return fail(out, diag, Outcome::ResourceLimitExceeded);
    }

    // The refundable part of the declared fee must cover rent, then rent and events.
    if max_refundable < rent {
        diag.over_limit(
            "refundable resource fee was not sufficient to cover the ledger storage rent: {} > {}",
            rent as u64,
            max_refundable as u64,
        );
        return fail(out, diag, Outcome::InsufficientRefundableFee);
    }
    let (_, events_fee) =
        declared_resource_fee(network, &data, input.transaction_size_bytes, events_size);
    if max_refundable < rent.saturating_add(events_fee) {
        diag.over_limit("refundable resource fee was not sufficient to cover the events fee after paying for ledger storage rent: {} > {}", events_fee as u64, (max_refundable - rent) as u64);
        return fail(out, diag, Outcome::InsufficientRefundableFee);
    }

    out.fee.rent = rent;
    out.fee.events = events_fee;
    out.fee.refundable_consumed = rent.saturating_add(events_fee);
    out.changes = changes(&ledger_changes, &before, seq)?;
    for c in &out.changes {
        if c.kind == ChangeKind::Created {
            if let Some(LedgerEntryData::ContractCode(code)) = c
                .entry
                .as_deref()
                .and_then(|e| decode::<LedgerEntry>("a created entry", e).ok())
                .map(|e| e.data)
            {
                modules.created(code.hash.0, seq);
            }
        }
    }
    out.return_value = Some(value);
    out.contract_events = contract_events;
    out.diagnostic_events = diag.0.iter().map(encode).collect();
    Ok(out)
}

/// stellar-core's entry size limits (contract code size, contract data entry size).
fn entry_size_ok(network: &Network, key: &LedgerKey, size: u32, diag: &mut Diagnostics) -> bool {
    let limits = &network.limits;
    match key {
        LedgerKey::ContractCode(_) if limits.max_contract_size_bytes < size => {
            diag.over_limit(
                "Wasm size exceeds network config maximum contract size",
                size,
                limits.max_contract_size_bytes,
            );
            false
        }
        LedgerKey::ContractData(_) if limits.max_contract_data_entry_size_bytes < size => {
            diag.over_limit(
                "ContractData size exceeds network config maximum size",
                size,
                limits.max_contract_data_entry_size_bytes,
            );
            false
        }
        _ => true,
    }
}
