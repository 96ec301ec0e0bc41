//! BN254 field constants and checks. The host reduces U256 inputs of its field functions modulo the field
//! without complaint, so every value that reaches one from a caller is range-checked here first.
use soroban_sdk::{Env, U256};

use crate::constants::{Limbs, FQ_MODULUS_BE, FR_MODULUS_BE};

const fn be_limbs(b: &[u8; 32]) -> Limbs {
    let mut out = [0u64; 4];
    let mut i = 0;
    while i < 32 {
        out[i / 8] = (out[i / 8] << 8) | b[i] as u64;
        i += 1;
    }
    out
}

/// r as U256 limbs, most significant first.
pub const FR_MODULUS: Limbs = be_limbs(&FR_MODULUS_BE);

/// A host U256 from limbs, most significant first (one host call).
pub fn u256_from_limbs(env: &Env, l: &Limbs) -> U256 {
    U256::from_parts(env, l[0], l[1], l[2], l[3])
}

/// The scalar field modulus r as a U256.
pub fn fr_modulus(env: &Env) -> U256 {
    u256_from_limbs(env, &FR_MODULUS)
}

/// `x` is a canonical scalar field element (x < r); `r` from [`fr_modulus`].
pub fn is_canonical(x: &U256, r: &U256) -> bool {
    x < r
}

/// A 32-byte big-endian coordinate is a canonical base field element (< q). Checked in the guest: no host call.
/// A value below q also has the two flag bits of the encoding clear (q < 2^254).
pub fn is_fq(coordinate: &[u8]) -> bool {
    coordinate.len() == 32 && coordinate < &FQ_MODULUS_BE[..]
}

/// q − y for a canonical coordinate y (big-endian bytes), or 0 for y = 0: the y of −P for P = (x, y).
pub fn fq_negate(y: &[u8; 32]) -> [u8; 32] {
    if y.iter().all(|b| *b == 0) {
        return *y;
    }
    let mut out = [0u8; 32];
    let mut borrow = 0u16;
    for i in (0..32).rev() {
        let minuend = FQ_MODULUS_BE[i] as u16;
        let subtrahend = y[i] as u16 + borrow;
        if minuend >= subtrahend {
            out[i] = (minuend - subtrahend) as u8;
            borrow = 0;
        } else {
            out[i] = (minuend + 256 - subtrahend) as u8;
            borrow = 1;
        }
    }
    out
}

/// The 32 big-endian bytes of a U256 in guest memory (two host calls).
pub fn u256_bytes(x: &U256) -> [u8; 32] {
    let mut out = [0u8; 32];
    x.to_be_bytes().copy_into_slice(&mut out);
    out
}

/// Bit `i` (0 = least significant) of a big-endian 256-bit value; 0 past bit 255.
pub fn bit(be: &[u8; 32], i: u32) -> bool {
    if i >= 256 {
        return false;
    }
    let byte = be[31 - (i / 8) as usize];
    (byte >> (i % 8)) & 1 == 1
}
