//! The PE's integer datapath ([`AccMode::Int`](crate::numerics::dot::AccMode::Int)), in the
//! same two pipeline stages as the floating-point one, over the stage functions of
//! [`crate::numerics::int`]:
//!
//! - Stage 1 ([`stage1_int_multiply`]): each lane of the A and B buses is extended and
//!   multiplied exactly ([`product`]); each 17-bit two's-complement product is packed into
//!   its word of the stage-1 register `s1_prod` ([`pack_int_product`]) and shown on the
//!   `sig_product` wire (32 bits a lane, sign-extended).
//! - Stage 2 ([`stage2_int_accumulate`]): the adder tree over the registered products plus
//!   the accumulator register's int32, exact, then narrowed back into the register (wrapped
//!   or clamped: [`accumulate`]). The accumulator registers `acc_0`/`acc_1` hold int32 bits;
//!   C shifts in and D drains out through them unchanged.
//!
//! No IEEE flags arise; the floating-point stage-2 wires (`max_exp`, `align_shift`, ...)
//! read 0.

use super::pe_datapath::lane;
use crate::numerics::int::{accumulate, product, IntMode, IntStep, PRODUCT_BITS};
use crate::rtl::Wide;

/// Packs an exact product (17-bit two's complement) into a word of `s1_prod`.
#[inline]
pub const fn pack_int_product(p: i64) -> u64 {
    (p as u64) & ((1 << PRODUCT_BITS) - 1)
}

/// Unpacks a word of `s1_prod`: sign-extends its low 17 bits.
#[inline]
pub const fn unpack_int_product(w: u64) -> i64 {
    let shift = 64 - PRODUCT_BITS;
    ((w << shift) as i64) >> shift
}

/// Stage 1: the exact products of `lanes` lanes of the A and B buses (lane widths from the
/// mode's formats).
#[inline]
pub fn stage1_int_multiply<const W: usize>(
    im: &IntMode,
    a_bus: &Wide<W>,
    b_bus: &Wide<W>,
    lanes: usize,
) -> [i64; W] {
    let mut p = [0i64; W];
    for (k, slot) in p.iter_mut().enumerate().take(lanes.min(W)) {
        let a = lane(a_bus, k, im.a.bits);
        let b = lane(b_bus, k, im.b.bits);
        *slot = product(im.a, a, im.b, b);
    }
    p
}

/// Stage 2: the registered products added to the accumulator's int32 (`acc`, its bits)
/// and narrowed back by the mode's overflow rule.
#[inline]
pub fn stage2_int_accumulate(im: &IntMode, products: &[i64], acc: u32) -> IntStep {
    accumulate(acc as i32, products, im.overflow)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn products_round_trip_through_the_register() {
        for p in [0i64, 1, -1, 65_025, -32_640, 16_384, -16_256] {
            assert_eq!(unpack_int_product(pack_int_product(p)), p);
            assert!(pack_int_product(p) < 1 << PRODUCT_BITS);
        }
    }
}
