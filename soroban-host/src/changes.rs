//! What an invocation changed, from the host's per-key ledger changes and what each key held before:
//! created, updated, deleted and restored read-write entries, and TTL extensions (of read-only entries
//! too). Unchanged entries are left out.

use crate::xdr_io::{decode, encode};
use soroban_env_host::e2e_invoke::LedgerEntryChange;
use soroban_env_host::xdr::LedgerEntry;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ChangeKind {
    Created,
    Updated,
    Deleted,
    /// An archived entry brought back to the live state (with a new TTL).
    Restored,
    /// Only the TTL grew; the entry is unchanged.
    Extended,
}

impl ChangeKind {
    pub fn name(self) -> &'static str {
        match self {
            ChangeKind::Created => "created",
            ChangeKind::Updated => "updated",
            ChangeKind::Deleted => "deleted",
            ChangeKind::Restored => "restored",
            ChangeKind::Extended => "extended",
        }
    }
}

#[derive(Debug, Clone)]
pub struct Change {
    pub key: Vec<u8>,
    pub read_only: bool,
    pub kind: ChangeKind,
    /// The entry after the call (`None` when deleted).
    pub entry: Option<Vec<u8>>,
    pub live_until: Option<u32>,
}

/// What one footprint key held before the call, as the host was given it.
pub struct Before<'a> {
    pub entry: Option<&'a [u8]>,
    pub live_until: Option<u32>,
    pub restored: bool,
}

/// What the call changed, one item per footprint key that changed, in footprint order.
pub fn changes(
    ledger_changes: &[LedgerEntryChange],
    before: &[Before],
    seq: u32,
) -> Result<Vec<Change>, String> {
    // `ledger_changes` has one item per footprint key, in footprint order (read-only first).
    if ledger_changes.len() != before.len() {
        return Err(format!(
            "the host returned {} changes for {} footprint keys",
            ledger_changes.len(),
            before.len()
        ));
    }
    let mut out = Vec::new();
    for (c, b) in ledger_changes.iter().zip(before) {
        let new_ttl = c.ttl_change.as_ref().map(|t| t.new_live_until_ledger);
        let extended = match (&c.ttl_change, b.live_until) {
            (Some(t), Some(old)) => t.new_live_until_ledger > old,
            _ => false,
        };
        if c.read_only {
            if extended {
                out.push(Change {
                    key: c.encoded_key.clone(),
                    read_only: true,
                    kind: ChangeKind::Extended,
                    entry: b.entry.map(|e| e.to_vec()),
                    live_until: new_ttl,
                });
            }
            continue;
        }
        match (&c.encoded_new_value, b.entry) {
            (Some(new), old) => {
                let mut entry: LedgerEntry = decode("a changed entry", new)?;
                let kind = if b.restored {
                    ChangeKind::Restored
                } else if let Some(old) = old {
                    let old: LedgerEntry = decode("an entry before the call", old)?;
                    if old.data != entry.data || old.ext != entry.ext {
                        ChangeKind::Updated
                    } else if extended {
                        out.push(Change {
                            key: c.encoded_key.clone(),
                            read_only: false,
                            kind: ChangeKind::Extended,
                            entry: b.entry.map(|e| e.to_vec()),
                            live_until: new_ttl,
                        });
                        continue;
                    } else {
                        continue;
                    }
                } else {
                    ChangeKind::Created
                };
                entry.last_modified_ledger_seq = seq;
                out.push(Change {
                    key: c.encoded_key.clone(),
                    read_only: false,
                    kind,
                    entry: Some(encode(&entry)),
                    live_until: new_ttl,
                });
            }
            (None, Some(_)) => out.push(Change {
                key: c.encoded_key.clone(),
                read_only: false,
                kind: ChangeKind::Deleted,
                entry: None,
                live_until: None,
            }),
            (None, None) => {}
        }
    }
    Ok(out)
}
