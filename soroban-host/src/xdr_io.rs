//! XDR at the boundary: decoding what JavaScript passes (with an error that names the argument and the
//! type expected) and encoding what goes back.

use soroban_env_host::xdr::{Limits, ReadXdr, WriteXdr};
use soroban_env_host::DEFAULT_XDR_RW_LIMITS;

/// Decodes `bytes` as a whole `T` (no bytes left over), naming `what` in the error.
pub fn decode<T: ReadXdr>(what: &str, bytes: &[u8]) -> Result<T, String> {
    T::from_xdr(bytes, DEFAULT_XDR_RW_LIMITS).map_err(|e| {
        format!(
            "{what} is not valid {} XDR ({} bytes): {e}",
            short_type_name::<T>(),
            bytes.len()
        )
    })
}

/// Encodes a value the host produced; these are bounded by the host's own limits.
pub fn encode<T: WriteXdr>(v: &T) -> Vec<u8> {
    v.to_xdr(Limits::none())
        .expect("a value the host built always encodes")
}

fn short_type_name<T>() -> &'static str {
    let full = std::any::type_name::<T>();
    full.rsplit("::").next().unwrap_or(full)
}

#[cfg(test)]
mod tests {
    use super::*;
    use soroban_env_host::xdr::{LedgerKey, ScVal};

    #[test]
    fn errors_name_argument_and_type() {
        let e = decode::<LedgerKey>("entries[2].key", &[0, 0, 0, 99]).unwrap_err();
        assert!(
            e.starts_with("entries[2].key is not valid LedgerKey XDR (4 bytes)"),
            "{e}"
        );
        // trailing bytes are refused too
        let mut v = encode(&ScVal::U32(7));
        v.extend_from_slice(&[0, 0, 0, 0]);
        assert!(decode::<ScVal>("returnValue", &v).is_err());
    }
}
