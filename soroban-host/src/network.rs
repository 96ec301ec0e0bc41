//! The network a host runs for: passphrase, protocol, base reserve and the Soroban settings, turned once
//! (when a host is made) into what every call needs — fee and rent configuration, the limits stellar-core
//! checks, the cost parameters the budget meters with, and the `LedgerInfo` template.

use crate::xdr_io::decode;
use sha2::{Digest, Sha256};
use soroban_env_host::fees::{
    compute_rent_write_fee_per_1kb, FeeConfiguration, RentFeeConfiguration,
    RentWriteFeeConfiguration,
};
use soroban_env_host::xdr::{ConfigSettingEntry, ContractCostParams, LedgerEntry, LedgerEntryData};
use soroban_env_host::LedgerInfo;
use soroban_simulation::NetworkConfig;

/// Per-transaction limits stellar-core applies around the host.
#[derive(Debug, Clone, Copy)]
pub struct TxLimits {
    pub max_instructions: u64,
    pub memory_limit: u32,
    pub max_contract_events_size_bytes: u32,
    pub max_contract_size_bytes: u32,
    pub max_contract_data_entry_size_bytes: u32,
    pub max_contract_data_key_size_bytes: u32,
    pub max_disk_read_entries: u32,
    pub max_disk_read_bytes: u32,
    pub max_write_entries: u32,
    pub max_write_bytes: u32,
    pub max_footprint_entries: u32,
    pub max_size_bytes: u32,
}

pub struct Network {
    pub passphrase: String,
    pub network_id: [u8; 32],
    pub protocol_version: u32,
    pub base_reserve: u32,
    /// Everything soroban-simulation needs (fees, rent, cost parameters, TTL bounds); apply uses the same.
    pub config: NetworkConfig,
    pub limits: TxLimits,
    /// The average of the live state size window, from which the rent write fee is derived.
    pub average_state_size: u64,
}

impl Network {
    /// Builds the network from its ConfigSetting ledger entries (`LedgerEntry` XDR each).
    pub fn from_setting_entries(
        passphrase: &str,
        protocol_version: u32,
        base_reserve: u32,
        entries: &[&[u8]],
    ) -> Result<Network, String> {
        let mut settings = Vec::with_capacity(entries.len());
        for (i, bytes) in entries.iter().enumerate() {
            let what = format!("configSettings[{i}]");
            match decode::<LedgerEntry>(&what, bytes)?.data {
                LedgerEntryData::ConfigSetting(s) => settings.push(s),
                other => {
                    return Err(format!(
                        "{what} is a {} ledger entry, not a ConfigSetting",
                        other.name()
                    ))
                }
            }
        }
        Self::from_settings(passphrase, protocol_version, base_reserve, &settings)
    }

    pub fn from_settings(
        passphrase: &str,
        protocol_version: u32,
        base_reserve: u32,
        settings: &[ConfigSettingEntry],
    ) -> Result<Network, String> {
        let mut s = Found::default();
        for setting in settings {
            match setting {
                ConfigSettingEntry::ContractMaxSizeBytes(v) => s.max_size = Some(*v),
                ConfigSettingEntry::ContractComputeV0(v) => s.compute = Some(v.clone()),
                ConfigSettingEntry::ContractLedgerCostV0(v) => s.ledger = Some(v.clone()),
                ConfigSettingEntry::ContractLedgerCostExtV0(v) => s.ledger_ext = Some(v.clone()),
                ConfigSettingEntry::ContractHistoricalDataV0(v) => s.historical = Some(v.clone()),
                ConfigSettingEntry::ContractEventsV0(v) => s.events = Some(v.clone()),
                ConfigSettingEntry::ContractBandwidthV0(v) => s.bandwidth = Some(v.clone()),
                ConfigSettingEntry::ContractCostParamsCpuInstructions(v) => s.cpu = Some(v.clone()),
                ConfigSettingEntry::ContractCostParamsMemoryBytes(v) => s.mem = Some(v.clone()),
                ConfigSettingEntry::ContractDataKeySizeBytes(v) => s.key_size = Some(*v),
                ConfigSettingEntry::ContractDataEntrySizeBytes(v) => s.entry_size = Some(*v),
                ConfigSettingEntry::StateArchival(v) => s.archival = Some(v.clone()),
                ConfigSettingEntry::LiveSorobanStateSizeWindow(v) => s.window = Some(v.to_vec()),
                _ => {}
            }
        }
        let mut missing = Vec::new();
        macro_rules! need {
            ($field:ident, $name:literal) => {
                match s.$field.take() {
                    Some(v) => Some(v),
                    None => {
                        missing.push($name);
                        None
                    }
                }
            };
        }
        let max_size = need!(max_size, "contract_max_size_bytes");
        let compute = need!(compute, "contract_compute_v0");
        let ledger = need!(ledger, "contract_ledger_cost_v0");
        let ledger_ext = need!(ledger_ext, "contract_ledger_cost_ext_v0");
        let historical = need!(historical, "contract_historical_data_v0");
        let events = need!(events, "contract_events_v0");
        let bandwidth = need!(bandwidth, "contract_bandwidth_v0");
        let cpu = need!(cpu, "contract_cost_params_cpu_instructions");
        let mem = need!(mem, "contract_cost_params_memory_bytes");
        let key_size = need!(key_size, "contract_data_key_size_bytes");
        let entry_size = need!(entry_size, "contract_data_entry_size_bytes");
        let archival = need!(archival, "state_archival");
        let window = need!(window, "live_soroban_state_size_window");
        let (
            Some(max_size),
            Some(compute),
            Some(ledger),
            Some(ledger_ext),
            Some(historical),
            Some(events),
            Some(bandwidth),
            Some(cpu),
            Some(mem),
            Some(key_size),
            Some(entry_size),
            Some(archival),
            Some(window),
        ) = (
            max_size, compute, ledger, ledger_ext, historical, events, bandwidth, cpu, mem,
            key_size, entry_size, archival, window,
        )
        else {
            return Err(format!("the network settings lack {}", missing.join(", ")));
        };
        if window.is_empty() {
            return Err("the live Soroban state size window is empty".into());
        }
        let average_state_size =
            window.iter().fold(0u64, |sum, v| sum.saturating_add(*v)) / window.len() as u64;
        let rent_write_fee = compute_rent_write_fee_per_1kb(
            i64::try_from(average_state_size).map_err(|_| "state size exceeds i64")?,
            &RentWriteFeeConfiguration {
                state_target_size_bytes: ledger.soroban_state_target_size_bytes,
                rent_fee_1kb_state_size_low: ledger.rent_fee1_kb_soroban_state_size_low,
                rent_fee_1kb_state_size_high: ledger.rent_fee1_kb_soroban_state_size_high,
                state_size_rent_fee_growth_factor: ledger.soroban_state_rent_fee_growth_factor,
            },
        );
        let config = NetworkConfig {
            fee_configuration: FeeConfiguration {
                fee_per_instruction_increment: compute.fee_rate_per_instructions_increment,
                fee_per_disk_read_entry: ledger.fee_disk_read_ledger_entry,
                fee_per_write_entry: ledger.fee_write_ledger_entry,
                fee_per_disk_read_1kb: ledger.fee_disk_read1_kb,
                // since protocol 23 writes are priced at the flat rate, not the rent rate
                fee_per_write_1kb: ledger_ext.fee_write1_kb,
                fee_per_historical_1kb: historical.fee_historical1_kb,
                fee_per_contract_event_1kb: events.fee_contract_events1_kb,
                fee_per_transaction_size_1kb: bandwidth.fee_tx_size1_kb,
            },
            rent_fee_configuration: RentFeeConfiguration {
                fee_per_write_1kb: ledger_ext.fee_write1_kb,
                fee_per_rent_1kb: rent_write_fee,
                fee_per_write_entry: ledger.fee_write_ledger_entry,
                persistent_rent_rate_denominator: archival.persistent_rent_rate_denominator,
                temporary_rent_rate_denominator: archival.temp_rent_rate_denominator,
            },
            tx_max_instructions: compute.tx_max_instructions,
            tx_memory_limit: compute.tx_memory_limit,
            cpu_cost_params: cpu,
            memory_cost_params: mem,
            min_temp_entry_ttl: archival.min_temporary_ttl,
            min_persistent_entry_ttl: archival.min_persistent_ttl,
            max_entry_ttl: archival.max_entry_ttl,
        };
        let limits = TxLimits {
            max_instructions: u64::try_from(compute.tx_max_instructions)
                .map_err(|_| "tx_max_instructions is negative")?,
            memory_limit: compute.tx_memory_limit,
            max_contract_events_size_bytes: events.tx_max_contract_events_size_bytes,
            max_contract_size_bytes: max_size,
            max_contract_data_entry_size_bytes: entry_size,
            max_contract_data_key_size_bytes: key_size,
            max_disk_read_entries: ledger.tx_max_disk_read_entries,
            max_disk_read_bytes: ledger.tx_max_disk_read_bytes,
            max_write_entries: ledger.tx_max_write_ledger_entries,
            max_write_bytes: ledger.tx_max_write_bytes,
            max_footprint_entries: ledger_ext.tx_max_footprint_entries,
            max_size_bytes: bandwidth.tx_max_size_bytes,
        };
        Ok(Network {
            passphrase: passphrase.to_string(),
            network_id: Sha256::digest(passphrase.as_bytes()).into(),
            protocol_version,
            base_reserve,
            config,
            limits,
            average_state_size,
        })
    }

    /// The `LedgerInfo` of ledger `sequence` closing at `timestamp`.
    pub fn ledger_info(&self, sequence: u32, timestamp: u64) -> LedgerInfo {
        let mut info = LedgerInfo {
            protocol_version: self.protocol_version,
            sequence_number: sequence,
            timestamp,
            network_id: self.network_id,
            base_reserve: self.base_reserve,
            ..Default::default()
        };
        self.config.fill_config_fields_in_ledger_info(&mut info);
        info
    }

    pub fn cpu_params(&self) -> ContractCostParams {
        self.config.cpu_cost_params.clone()
    }

    pub fn mem_params(&self) -> ContractCostParams {
        self.config.memory_cost_params.clone()
    }
}

#[derive(Default)]
struct Found {
    max_size: Option<u32>,
    compute: Option<soroban_env_host::xdr::ConfigSettingContractComputeV0>,
    ledger: Option<soroban_env_host::xdr::ConfigSettingContractLedgerCostV0>,
    ledger_ext: Option<soroban_env_host::xdr::ConfigSettingContractLedgerCostExtV0>,
    historical: Option<soroban_env_host::xdr::ConfigSettingContractHistoricalDataV0>,
    events: Option<soroban_env_host::xdr::ConfigSettingContractEventsV0>,
    bandwidth: Option<soroban_env_host::xdr::ConfigSettingContractBandwidthV0>,
    cpu: Option<ContractCostParams>,
    mem: Option<ContractCostParams>,
    key_size: Option<u32>,
    entry_size: Option<u32>,
    archival: Option<soroban_env_host::xdr::StateArchivalSettings>,
    window: Option<Vec<u64>>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::config::{setting_entries_xdr, testnet_settings};

    pub fn testnet() -> Network {
        let f = testnet_settings().unwrap();
        let xdrs = setting_entries_xdr(&f.settings);
        let refs: Vec<&[u8]> = xdrs.iter().map(|v| v.as_slice()).collect();
        Network::from_setting_entries("Test SDF Network ; September 2015", 29, 5_000_000, &refs)
            .unwrap()
    }

    #[test]
    fn rent_write_fee_is_the_high_rate_at_target_size() {
        let n = testnet();
        assert_eq!(n.average_state_size, 4_000_000_000);
        // at exactly the target size the rent write fee is `rent_fee1_kb_soroban_state_size_high`
        assert_eq!(n.config.rent_fee_configuration.fee_per_rent_1kb, 10_000);
        assert_eq!(n.limits.max_instructions, 400_000_000);
        assert_eq!(n.limits.max_contract_events_size_bytes, 16_384);
        assert_eq!(
            hex(&n.network_id),
            "cee0302d59844d32bdca915c8203dd44b33fbb7edc19051ea37abedf28ecd472"
        );
    }

    #[test]
    fn missing_settings_are_named() {
        let e = Network::from_settings("x", 29, 1, &[ConfigSettingEntry::ContractMaxSizeBytes(1)])
            .err()
            .unwrap();
        assert!(
            e.contains("contract_compute_v0") && e.contains("state_archival"),
            "{e}"
        );
    }

    fn hex(b: &[u8]) -> String {
        b.iter().map(|x| format!("{x:02x}")).collect()
    }
}
