//! The diagnostic events stellar-core adds around the host's own: its `error` events (as its
//! DiagnosticEventManager::pushError writes them: topics `error` and the ScError, data the message alone
//! or the message followed by its arguments) and `host_fn_failed`.

use soroban_env_host::xdr::{
    ContractEvent, ContractEventBody, ContractEventType, ContractEventV0, DiagnosticEvent,
    ExtensionPoint, ScError, ScErrorCode, ScString, ScSymbol, ScVal, ScVec,
};

/// Diagnostic events in the order stellar-core emits them: the host's, then its own.
pub struct Diagnostics(pub Vec<DiagnosticEvent>);

impl Diagnostics {
    /// An error event as stellar-core's DiagnosticEventManager::pushError writes it.
    pub fn error(&mut self, error: ScError, message: &str, args: Vec<ScVal>) {
        let text = ScVal::String(ScString(message.try_into().unwrap_or_default()));
        let data = if args.is_empty() {
            text
        } else {
            let mut v = vec![text];
            v.extend(args);
            ScVal::Vec(Some(ScVec(v.try_into().unwrap_or_default())))
        };
        self.push(vec![symbol("error"), ScVal::Error(error)], data);
    }

    /// A resource over its declared amount or the network's limit: the message, then what was used and the
    /// limit, as stellar-core reports it.
    pub fn over_limit(&mut self, message: &str, used: impl Into<u64>, limit: impl Into<u64>) {
        let args = vec![ScVal::U64(used.into()), ScVal::U64(limit.into())];
        self.error(budget_exceeded(), message, args);
    }

    pub fn push(&mut self, topics: Vec<ScVal>, data: ScVal) {
        self.0.push(DiagnosticEvent {
            in_successful_contract_call: false,
            event: ContractEvent {
                ext: ExtensionPoint::V0,
                contract_id: None,
                type_: ContractEventType::Diagnostic,
                body: ContractEventBody::V0(ContractEventV0 {
                    topics: topics.try_into().unwrap_or_default(),
                    data,
                }),
            },
        });
    }
}

pub fn symbol(s: &str) -> ScVal {
    ScVal::Symbol(ScSymbol(s.try_into().unwrap_or_default()))
}

pub fn budget_exceeded() -> ScError {
    ScError::Budget(ScErrorCode::ExceededLimit)
}
