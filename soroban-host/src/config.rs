//! The network's settings: reads a `ConfigUpgradeSet` in stellar-xdr's JSON form (the published testnet
//! file, embedded at build time), adds the settings a network keeps for itself but never publishes (the
//! live Soroban state size window and the eviction iterator), and wraps each as a ConfigSetting
//! `LedgerEntry`, as a ledger stores them.

use crate::xdr_io::encode;
use soroban_env_host::xdr::{
    ConfigSettingEntry, ConfigSettingId, EvictionIterator, LedgerEntry, LedgerEntryData,
    LedgerEntryExt, VecM,
};
use std::sync::OnceLock;

/// Testnet's settings for protocol 27 as stellar/quickstart publishes them (see config/README.md).
pub const TESTNET_P27_JSON: &str = include_str!("../config/testnet-p27.json");

/// The ledger sequence number written into the settings' entries: they exist from the genesis ledger.
pub const GENESIS_LEDGER_SEQ: u32 = 1;

/// Settings read from a published file, with what could not be read and what was added.
#[derive(Debug, Clone)]
pub struct SettingsFile {
    /// Every setting, published and synthesised, in ConfigSettingId order.
    pub settings: Vec<ConfigSettingEntry>,
    /// Published settings this XDR version does not know, or knows only in part (as text).
    pub unknown: Vec<String>,
    /// The ids of settings that were not published and were synthesised here.
    pub synthesised: Vec<String>,
}

/// Testnet's settings, parsed once per process.
pub fn testnet_settings() -> Result<&'static SettingsFile, String> {
    static PARSED: OnceLock<Result<SettingsFile, String>> = OnceLock::new();
    PARSED
        .get_or_init(|| settings_from_upgrade_json(TESTNET_P27_JSON))
        .as_ref()
        .map_err(|e| format!("the embedded testnet settings: {e}"))
}

/// Reads a `ConfigUpgradeSet` JSON document (`{"updated_entry": [{"<setting>": …}, …]}`) and completes it
/// with the settings a network derives itself.
pub fn settings_from_upgrade_json(json: &str) -> Result<SettingsFile, String> {
    let doc: serde_json::Value =
        serde_json::from_str(json).map_err(|e| format!("not JSON: {e}"))?;
    let items = doc
        .get("updated_entry")
        .and_then(|v| v.as_array())
        .ok_or("expected an object with an `updated_entry` array (a ConfigUpgradeSet)")?;
    let mut settings: Vec<ConfigSettingEntry> = Vec::with_capacity(items.len() + 2);
    let mut unknown = Vec::new();
    for item in items {
        let name = item
            .as_object()
            .and_then(|o| o.keys().next().cloned())
            .unwrap_or_else(|| item.to_string());
        match serde_json::from_value::<ConfigSettingEntry>(item.clone()) {
            Ok(setting) => {
                // serde ignores fields it does not know: write the setting back and compare, so that a
                // field this XDR version lacks is reported instead of silently dropped.
                let back = serde_json::to_value(&setting).map_err(|e| e.to_string())?;
                if canonical(&back) != canonical(item) {
                    unknown.push(format!(
                        "{name}: only partly understood by stellar-xdr {} (published {item}, read {back})",
                        XDR_VERSION
                    ));
                }
                if settings
                    .iter()
                    .any(|s| s.discriminant() == setting.discriminant())
                {
                    return Err(format!("setting {name} appears twice"));
                }
                settings.push(setting);
            }
            Err(e) => unknown.push(format!("{name}: {e}")),
        }
    }
    let mut synthesised = Vec::new();
    if !has(&settings, ConfigSettingId::LiveSorobanStateSizeWindow) {
        settings.push(state_size_window(&settings)?);
        synthesised.push("live_soroban_state_size_window".to_string());
    }
    if !has(&settings, ConfigSettingId::EvictionIterator) {
        settings.push(eviction_iterator(&settings)?);
        synthesised.push("eviction_iterator".to_string());
    }
    settings.sort_by_key(|s| s.discriminant() as i32);
    Ok(SettingsFile {
        settings,
        unknown,
        synthesised,
    })
}

const XDR_VERSION: &str = "28.0.0";

fn has(settings: &[ConfigSettingEntry], id: ConfigSettingId) -> bool {
    settings.iter().any(|s| s.discriminant() == id)
}

/// JSON with every number written as a string, so `7` and `"7"` compare equal.
fn canonical(v: &serde_json::Value) -> serde_json::Value {
    use serde_json::Value;
    match v {
        Value::Number(n) => Value::String(n.to_string()),
        Value::Array(a) => Value::Array(a.iter().map(canonical).collect()),
        Value::Object(o) => {
            Value::Object(o.iter().map(|(k, v)| (k.clone(), canonical(v))).collect())
        }
        other => other.clone(),
    }
}

/// The window of live Soroban state sizes the rent write fee averages: as many samples as the network
/// keeps, each at the target state size, so rent is priced as on a network at its target size.
fn state_size_window(settings: &[ConfigSettingEntry]) -> Result<ConfigSettingEntry, String> {
    let (mut samples, mut target) = (None, None);
    for s in settings {
        match s {
            ConfigSettingEntry::StateArchival(a) => {
                samples = Some(a.live_soroban_state_size_window_sample_size)
            }
            ConfigSettingEntry::ContractLedgerCostV0(c) => {
                target = Some(c.soroban_state_target_size_bytes)
            }
            _ => {}
        }
    }
    let samples = samples.ok_or("state_archival is needed to size the state size window")?;
    let target = target.ok_or("contract_ledger_cost_v0 is needed for the target state size")?;
    let target =
        u64::try_from(target).map_err(|_| "soroban_state_target_size_bytes is negative")?;
    let window: VecM<u64> = vec![target; samples.max(1) as usize]
        .try_into()
        .map_err(|_| "state size window too long")?;
    Ok(ConfigSettingEntry::LiveSorobanStateSizeWindow(window))
}

/// Where eviction scans start on a new network: the current bucket of the configured first level.
fn eviction_iterator(settings: &[ConfigSettingEntry]) -> Result<ConfigSettingEntry, String> {
    let level = settings
        .iter()
        .find_map(|s| match s {
            ConfigSettingEntry::StateArchival(a) => Some(a.starting_eviction_scan_level),
            _ => None,
        })
        .ok_or("state_archival is needed for the eviction iterator's first level")?;
    Ok(ConfigSettingEntry::EvictionIterator(EvictionIterator {
        bucket_list_level: level,
        is_curr_bucket: true,
        bucket_file_offset: 0,
    }))
}

/// A setting as the ledger entry that stores it.
pub fn setting_ledger_entry(setting: &ConfigSettingEntry) -> LedgerEntry {
    LedgerEntry {
        last_modified_ledger_seq: GENESIS_LEDGER_SEQ,
        data: LedgerEntryData::ConfigSetting(setting.clone()),
        ext: LedgerEntryExt::V0,
    }
}

/// Every setting as `LedgerEntry` XDR.
pub fn setting_entries_xdr(settings: &[ConfigSettingEntry]) -> Vec<Vec<u8>> {
    settings
        .iter()
        .map(|s| encode(&setting_ledger_entry(s)))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn testnet_file_reads_whole() {
        let f = testnet_settings().unwrap();
        assert!(f.unknown.is_empty(), "{:?}", f.unknown);
        assert_eq!(
            f.synthesised,
            vec!["live_soroban_state_size_window", "eviction_iterator"]
        );
        // 17 published + 2 synthesised
        assert_eq!(f.settings.len(), 19);
        let compute = f
            .settings
            .iter()
            .find_map(|s| match s {
                ConfigSettingEntry::ContractComputeV0(c) => Some(c.clone()),
                _ => None,
            })
            .unwrap();
        assert_eq!(compute.tx_max_instructions, 400_000_000);
        assert_eq!(compute.fee_rate_per_instructions_increment, 7);
        let window = f
            .settings
            .iter()
            .find_map(|s| match s {
                ConfigSettingEntry::LiveSorobanStateSizeWindow(w) => Some(w.to_vec()),
                _ => None,
            })
            .unwrap();
        assert_eq!(window, vec![4_000_000_000u64; 30]);
    }

    #[test]
    fn unknown_setting_and_field_are_reported() {
        let f = settings_from_upgrade_json(
            r#"{"updated_entry":[{"contract_max_size_bytes":1},{"contract_events_v0":{"fee_contract_events1_kb":"1","tx_max_contract_events_size_bytes":2,"brand_new_field":3}},{"brand_new_setting":{"x":1}}]}"#,
        );
        // state_archival is missing, so nothing can be synthesised: an error, not a silent default
        assert!(f.is_err());
        let f = settings_from_upgrade_json(&TESTNET_P27_JSON.replace(
            r#""updated_entry": ["#,
            r#""updated_entry": [{"brand_new_setting": {"x": 1}}, "#,
        ))
        .unwrap();
        assert_eq!(f.unknown.len(), 1);
        assert!(
            f.unknown[0].starts_with("brand_new_setting"),
            "{:?}",
            f.unknown
        );
        let f = settings_from_upgrade_json(&TESTNET_P27_JSON.replace(
            r#""fee_contract_events1_kb": "5000","#,
            r#""fee_contract_events1_kb": "5000", "brand_new_field": 3,"#,
        ))
        .unwrap();
        assert_eq!(f.unknown.len(), 1);
        assert!(f.unknown[0].contains("partly"), "{:?}", f.unknown);
    }
}
