//! Applying one ExtendFootprintTTL or RestoreFootprint operation as stellar-core applies it since
//! protocol 23 (its ExtendFootprintTTLOpFrame and RestoreFootprintOpFrame, parallel apply): which
//! entries are extended or restored, the entry-size, disk-read and write-byte checks, and the rent the
//! host's `compute_rent_fee` charges for it, which the refundable part of the declared fee must cover.
//! Nothing runs in the host itself: these operations only move TTLs.

use crate::apply::{FeeCharged, FootprintEntry};
use crate::diagnostics::Diagnostics;
use crate::fees::{declared_resource_fee, is_soroban_key};
use crate::network::Network;
use crate::xdr_io::{decode, encode};
use soroban_env_host::budget::Budget;
use soroban_env_host::e2e_invoke::entry_size_for_rent;
use soroban_env_host::fees::{compute_rent_fee, LedgerEntryRentChange};
use soroban_env_host::xdr::{
    ContractDataDurability, LedgerEntry, LedgerEntryData, LedgerKey, SorobanTransactionData,
};

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FootprintOp {
    /// ExtendFootprintTTL: the read-only entries live until `ledger + extend_to`.
    Extend { extend_to: u32 },
    /// RestoreFootprint: the archived read-write entries live again for the minimum persistent TTL.
    Restore,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum FootprintOutcome {
    Success,
    Malformed,
    ResourceLimitExceeded,
    InsufficientRefundableFee,
}

impl FootprintOutcome {
    pub fn name(self) -> &'static str {
        match self {
            FootprintOutcome::Success => "success",
            FootprintOutcome::Malformed => "malformed",
            FootprintOutcome::ResourceLimitExceeded => "resourceLimitExceeded",
            FootprintOutcome::InsufficientRefundableFee => "insufficientRefundableFee",
        }
    }
}

pub struct FootprintApplyInput<'a> {
    pub op: FootprintOp,
    pub soroban_data: &'a [u8],
    pub transaction_size_bytes: u32,
    pub ledger_seq: u32,
    /// Every footprint key, read-only ones first, each list in footprint order.
    pub entries: Vec<FootprintEntry<'a>>,
}

/// An entry whose TTL the operation set (its LedgerKey XDR and the new TTL).
#[derive(Debug, Clone)]
pub struct TtlChange {
    pub key: Vec<u8>,
    pub live_until: u32,
    /// Whether the entry was archived and is now restored.
    pub restored: bool,
}

#[derive(Debug, Clone)]
pub struct FootprintApplyOutput {
    pub outcome: FootprintOutcome,
    pub changes: Vec<TtlChange>,
    pub diagnostic_events: Vec<Vec<u8>>,
    pub fee: FeeCharged,
    pub disk_read_bytes: u32,
    pub write_bytes: u32,
}

/// stellar-core's validity checks of the operation against its footprint (doCheckValidForSoroban): the
/// message of the first that fails.
pub fn check_valid(
    network: &Network,
    op: FootprintOp,
    data: &SorobanTransactionData,
) -> Option<String> {
    let fp = &data.resources.footprint;
    match op {
        FootprintOp::Extend { extend_to } => {
            if !fp.read_write.is_empty() {
                return Some(
                    "read-write footprint must be empty for ExtendFootprintTTL operation".into(),
                );
            }
            if !fp.read_only.iter().all(is_soroban_key) {
                return Some(
                    "only entries with TTL (contract data or code entries) can have it extended"
                        .into(),
                );
            }
            let max = network.config.max_entry_ttl.saturating_sub(1);
            if extend_to > max {
                return Some(format!("TTL extension is too large: {extend_to} > {max}"));
            }
        }
        FootprintOp::Restore => {
            if !fp.read_only.is_empty() {
                return Some(
                    "read-only footprint must be empty for RestoreFootprint operation".into(),
                );
            }
            let persistent = |k: &LedgerKey| match k {
                LedgerKey::ContractCode(_) => true,
                LedgerKey::ContractData(d) => d.durability == ContractDataDurability::Persistent,
                _ => false,
            };
            if !fp.read_write.iter().all(persistent) {
                return Some("only persistent Soroban entries can be restored".into());
            }
        }
    }
    None
}

/// Applies the operation. `Err` is for inputs stellar-core would never apply (malformed XDR, entries that
/// do not match the footprint, a declared fee below its non-refundable part).
pub fn apply_footprint_op(
    network: &Network,
    input: &FootprintApplyInput,
) -> Result<FootprintApplyOutput, String> {
    let data: SorobanTransactionData = decode("sorobanData", input.soroban_data)?;
    let fp = &data.resources.footprint;
    let keys: Vec<&LedgerKey> = fp.read_only.iter().chain(fp.read_write.iter()).collect();
    if keys.len() != input.entries.len() {
        return Err(format!(
            "entries has {} items but the footprint has {} keys",
            input.entries.len(),
            keys.len()
        ));
    }
    let seq = input.ledger_seq;
    let (non_refundable, _) =
        declared_resource_fee(network, &data, input.transaction_size_bytes, 0);
    let max_refundable = data.resource_fee.saturating_sub(non_refundable);
    if max_refundable < 0 {
        return Err(format!(
            "sorobanData.resourceFee {} is below the non-refundable fee {} of the declared resources",
            data.resource_fee, non_refundable
        ));
    }
    let mut out = FootprintApplyOutput {
        outcome: FootprintOutcome::Success,
        changes: Vec::new(),
        diagnostic_events: Vec::new(),
        fee: FeeCharged {
            non_refundable,
            refundable_declared: max_refundable,
            ..Default::default()
        },
        disk_read_bytes: 0,
        write_bytes: 0,
    };
    let mut diag = Diagnostics(Vec::new());
    let finish = |mut out: FootprintApplyOutput, diag: Diagnostics, outcome| {
        out.outcome = outcome;
        out.changes.clear();
        out.diagnostic_events = diag.0.iter().map(encode).collect();
        Ok(out)
    };
    if let Some(why) = check_valid(network, input.op, &data) {
        diag.error(
            soroban_env_host::xdr::ScError::Storage(
                soroban_env_host::xdr::ScErrorCode::InvalidInput,
            ),
            &why,
            vec![],
        );
        return finish(out, diag, FootprintOutcome::Malformed);
    }
    let budget = Budget::try_from_configs(0, 0, network.cpu_params(), network.mem_params())
        .map_err(|e| format!("budget: {e:?}"))?;
    let (targets, new_live_until) = match input.op {
        FootprintOp::Extend { extend_to } => (
            &input.entries[..fp.read_only.len()],
            seq.saturating_add(extend_to),
        ),
        FootprintOp::Restore => (
            &input.entries[fp.read_only.len()..],
            seq.saturating_add(network.config.min_persistent_entry_ttl.saturating_sub(1)),
        ),
    };
    let mut rent_changes: Vec<LedgerEntryRentChange> = Vec::new();
    for (i, given) in targets.iter().enumerate() {
        let key: LedgerKey = decode(&format!("entries[{i}].key"), given.key)?;
        let Some(bytes) = given.entry else {
            // a missing entry is skipped (the unspent fee is refunded)
            continue;
        };
        let entry: LedgerEntry = decode(&format!("entries[{i}].entry"), bytes)?;
        if entry.to_key() != key {
            return Err(format!("entries[{i}].entry is not the entry of its key"));
        }
        let live_until = given
            .live_until
            .ok_or_else(|| format!("entries[{i}] is a contract entry without liveUntil"))?;
        let live = live_until >= seq;
        let restoring = input.op == FootprintOp::Restore;
        if restoring == live {
            // extending skips archived entries (they must be restored), restoring skips live ones
            continue;
        }
        if !restoring && live_until >= new_live_until {
            continue;
        }
        let size = bytes.len() as u32;
        let limits = &network.limits;
        let too_big = match key {
            LedgerKey::ContractCode(_) if limits.max_contract_size_bytes < size => Some((
                "Wasm size exceeds network config maximum contract size",
                limits.max_contract_size_bytes,
            )),
            LedgerKey::ContractData(_) if limits.max_contract_data_entry_size_bytes < size => {
                Some((
                    "ContractData size exceeds network config maximum size",
                    limits.max_contract_data_entry_size_bytes,
                ))
            }
            _ => None,
        };
        if let Some((message, limit)) = too_big {
            diag.over_limit(message, size, limit);
            return finish(out, diag, FootprintOutcome::ResourceLimitExceeded);
        }
        if restoring {
            // restoring reads the archived entry from disk and writes it back
            out.disk_read_bytes = out.disk_read_bytes.saturating_add(size);
            if data.resources.disk_read_bytes < out.disk_read_bytes {
                diag.over_limit(
                    "operation byte-read resources exceeds amount specified",
                    out.disk_read_bytes,
                    data.resources.disk_read_bytes,
                );
                return finish(out, diag, FootprintOutcome::ResourceLimitExceeded);
            }
            out.write_bytes = out.write_bytes.saturating_add(size);
            if data.resources.write_bytes < out.write_bytes {
                diag.over_limit(
                    "operation byte-write resources exceeds amount specified",
                    out.write_bytes,
                    data.resources.write_bytes,
                );
                return finish(out, diag, FootprintOutcome::ResourceLimitExceeded);
            }
        }
        let size_for_rent = entry_size_for_rent(&budget, &entry, size)
            .map_err(|e| format!("entry size for rent: {e:?}"))?;
        let is_persistent = match &key {
            LedgerKey::ContractData(d) => d.durability == ContractDataDurability::Persistent,
            _ => true,
        };
        rent_changes.push(LedgerEntryRentChange {
            is_persistent,
            is_code_entry: matches!(entry.data, LedgerEntryData::ContractCode(_)),
            // a restored entry is rented as a new one
            old_size_bytes: if restoring { 0 } else { size_for_rent },
            new_size_bytes: size_for_rent,
            old_live_until_ledger: if restoring { 0 } else { live_until },
            new_live_until_ledger: new_live_until,
        });
        out.changes.push(TtlChange {
            key: given.key.to_vec(),
            live_until: new_live_until,
            restored: restoring,
        });
    }
    let rent = compute_rent_fee(&rent_changes, &network.config.rent_fee_configuration, seq);
    if max_refundable < rent {
        diag.over_limit(
            "refundable resource fee was not sufficient to cover the ledger storage rent: {} > {}",
            rent as u64,
            max_refundable as u64,
        );
        return finish(out, diag, FootprintOutcome::InsufficientRefundableFee);
    }
    out.fee.rent = rent;
    out.fee.refundable_consumed = rent;
    out.diagnostic_events = diag.0.iter().map(encode).collect();
    Ok(out)
}
