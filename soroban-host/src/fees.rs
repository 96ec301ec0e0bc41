//! Resource fees as stellar-core computes them from a transaction's declared resources, and the
//! worst-case envelope size stellar-rpc's simulation prices a transaction at.

use crate::network::Network;
use soroban_env_host::fees::{compute_transaction_resource_fee, TransactionResources};
use soroban_env_host::xdr::{
    BytesM, DecoratedSignature, Duration, Hash, LedgerBounds, LedgerKey, Memo, MuxedAccount,
    MuxedAccountMed25519, Operation, OperationBody, Preconditions, PreconditionsV2, SequenceNumber,
    Signature, SignatureHint, SignerKey, SignerKeyEd25519SignedPayload, SorobanResources,
    SorobanResourcesExtV0, SorobanTransactionData, SorobanTransactionDataExt, TimeBounds,
    TimePoint, Transaction, TransactionExt, TransactionV1Envelope, Uint256,
};

/// Whether a key's entry lives in Soroban state (contract data and code) rather than classic state.
pub fn is_soroban_key(key: &LedgerKey) -> bool {
    matches!(key, LedgerKey::ContractData(_) | LedgerKey::ContractCode(_))
}

/// The archived entries (indices into the read-write footprint) a transaction restores.
pub fn archived_indices(data: &SorobanTransactionData) -> &[u32] {
    match &data.ext {
        SorobanTransactionDataExt::V0 => &[],
        SorobanTransactionDataExt::V1(ext) => ext.archived_soroban_entries.as_slice(),
    }
}

/// Entries read from disk since protocol 23: classic entries, and archived Soroban entries being
/// restored (live Soroban state is in memory).
pub fn disk_read_entries(data: &SorobanTransactionData) -> u32 {
    let fp = &data.resources.footprint;
    let classic = fp
        .read_only
        .iter()
        .chain(fp.read_write.iter())
        .filter(|k| !is_soroban_key(k))
        .count();
    (classic + archived_indices(data).len()) as u32
}

/// `(non_refundable, refundable)` fee for `data`'s declared resources, a transaction of `tx_size` bytes
/// and `events_size` bytes of events (0 before execution), as stellar-core computes it.
pub fn declared_resource_fee(
    network: &Network,
    data: &SorobanTransactionData,
    tx_size: u32,
    events_size: u32,
) -> (i64, i64) {
    let r = &data.resources;
    compute_transaction_resource_fee(
        &TransactionResources {
            instructions: r.instructions,
            disk_read_entries: disk_read_entries(data),
            write_entries: r.footprint.read_write.len() as u32,
            disk_read_bytes: r.disk_read_bytes,
            write_bytes: r.write_bytes,
            contract_events_size_bytes: events_size,
            transaction_size_bytes: tx_size,
        },
        &network.config.fee_configuration,
    )
}

/// The largest envelope a transaction carrying this one operation and footprint can be (muxed sources,
/// every precondition, a hash memo, 20 signatures), which is the size simulation prices before its
/// size adjustment.
pub fn max_envelope_size(
    body: OperationBody,
    resources: &SorobanResources,
    archived: &[u32],
) -> Result<u32, String> {
    let muxed = MuxedAccount::MuxedEd25519(MuxedAccountMed25519 {
        id: 0,
        ed25519: Uint256([0; 32]),
    });
    let payload: BytesM<64> = vec![0u8; 64].try_into().map_err(|_| "payload")?;
    let signed_payload = SignerKey::Ed25519SignedPayload(SignerKeyEd25519SignedPayload {
        ed25519: Uint256([0; 32]),
        payload: payload.clone(),
    });
    let signature = DecoratedSignature {
        hint: SignatureHint([0; 4]),
        signature: Signature(payload),
    };
    let tx = Transaction {
        source_account: muxed.clone(),
        fee: 0,
        seq_num: SequenceNumber(0),
        cond: Preconditions::V2(PreconditionsV2 {
            time_bounds: Some(TimeBounds {
                min_time: TimePoint(0),
                max_time: TimePoint(0),
            }),
            ledger_bounds: Some(LedgerBounds {
                min_ledger: 0,
                max_ledger: 0,
            }),
            min_seq_num: Some(SequenceNumber(0)),
            min_seq_age: Duration(0),
            min_seq_ledger_gap: 0,
            extra_signers: vec![signed_payload.clone(), signed_payload]
                .try_into()
                .map_err(|_| "signers")?,
        }),
        memo: Memo::Hash(Hash([0; 32])),
        operations: vec![Operation {
            source_account: Some(muxed),
            body,
        }]
        .try_into()
        .map_err(|_| "operations")?,
        ext: TransactionExt::V1(SorobanTransactionData {
            resources: SorobanResources {
                footprint: resources.footprint.clone(),
                instructions: 0,
                disk_read_bytes: 0,
                write_bytes: 0,
            },
            resource_fee: 0,
            ext: SorobanTransactionDataExt::V1(SorobanResourcesExtV0 {
                archived_soroban_entries: archived.to_vec().try_into().map_err(|_| "archived")?,
            }),
        }),
    };
    // Measured as the bare v1 envelope (without the TransactionEnvelope union's 4-byte type), as
    // soroban-simulation measures it, so that the simulated fee comes out the same.
    let envelope = TransactionV1Envelope {
        tx,
        signatures: vec![signature; 20].try_into().map_err(|_| "signatures")?,
    };
    Ok(crate::xdr_io::encode(&envelope).len() as u32)
}

/// stellar-rpc's default adjustment of a simulated value: `max(v + add, floor(v * mul))`, 0 stays 0.
pub fn adjust(value: u64, mul: f64, add: u64) -> u64 {
    if value == 0 {
        return 0;
    }
    (value.saturating_add(add)).max(((value as f64) * mul).floor() as u64)
}
