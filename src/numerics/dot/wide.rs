//! An exact wide fixed-point accumulator for multi-term sums.
//!
//! Every term the dot-product unit can meet is `sig * 2^lsb_exp` with `sig` at most 64 bits
//! wide and `lsb_exp >= WIDE_LSB_EXP` (TF32 x TF32 subnormal products reach down to
//! `2^-272`, BF16 x BF16 ones to `2^-266`); the largest term lies below `2^256` (BF16 and
//! TF32 products). The accumulator is a
//! fixed-point register of `WIDE_LIMBS * 64` bits whose bit 0 weighs `2^WIDE_LSB_EXP`, leaving
//! more than 100 bits of headroom above `2^256`, so any sum of fewer than `2^100` terms is
//! exact. Positive and negative terms go into two magnitude registers (carries rarely travel
//! far), subtracted once at the end.

use crate::numerics::round::Unrounded;

/// Number of 64-bit limbs in each magnitude register.
pub const WIDE_LIMBS: usize = 10;

/// Exponent of bit 0 of the accumulator (the smallest TF32 x TF32 product LSB).
pub const WIDE_LSB_EXP: i32 = -272;

/// Bits kept in the significand handed to the shared round-pack (the rest become sticky).
const WINDOW_BITS: u32 = 126;

/// An exact signed sum of terms `(-1)^sign * sig * 2^lsb_exp`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WideAcc {
    pos: [u64; WIDE_LIMBS],
    neg: [u64; WIDE_LIMBS],
}

fn add_shifted(reg: &mut [u64; WIDE_LIMBS], sig: u64, shift: u32) {
    let limb = (shift / 64) as usize;
    let off = shift % 64;
    let lo = sig << off;
    let hi = if off == 0 { 0 } else { sig >> (64 - off) };
    let (s, mut carry) = reg[limb].overflowing_add(lo);
    reg[limb] = s;
    let mut i = limb + 1;
    let mut add = hi;
    while i < WIDE_LIMBS && (add != 0 || carry) {
        let (s1, c1) = reg[i].overflowing_add(add);
        let (s2, c2) = s1.overflowing_add(carry as u64);
        reg[i] = s2;
        carry = c1 || c2;
        add = 0;
        i += 1;
    }
}

impl WideAcc {
    /// An empty (zero) accumulator.
    pub const fn new() -> WideAcc {
        WideAcc {
            pos: [0; WIDE_LIMBS],
            neg: [0; WIDE_LIMBS],
        }
    }

    /// Adds `(-1)^sign * sig * 2^lsb_exp` exactly. Panics in debug builds if `lsb_exp` lies
    /// below [`WIDE_LSB_EXP`] or the term does not fit (no format pair produces such a term).
    pub fn add(&mut self, sign: bool, sig: u64, lsb_exp: i32) {
        if sig == 0 {
            return;
        }
        debug_assert!(lsb_exp >= WIDE_LSB_EXP);
        let shift = (lsb_exp - WIDE_LSB_EXP) as u32;
        debug_assert!(shift < (WIDE_LIMBS as u32 - 1) * 64);
        if sign {
            add_shifted(&mut self.neg, sig, shift);
        } else {
            add_shifted(&mut self.pos, sig, shift);
        }
    }

    /// The signed magnitude `(negative, |sum|)` as limbs, least significant first.
    pub fn magnitude(&self) -> (bool, [u64; WIDE_LIMBS]) {
        let mut neg_larger = false;
        for i in (0..WIDE_LIMBS).rev() {
            if self.pos[i] != self.neg[i] {
                neg_larger = self.neg[i] > self.pos[i];
                break;
            }
        }
        let (big, small) = if neg_larger {
            (&self.neg, &self.pos)
        } else {
            (&self.pos, &self.neg)
        };
        let mut out = [0u64; WIDE_LIMBS];
        let mut borrow = false;
        for i in 0..WIDE_LIMBS {
            let (d1, b1) = big[i].overflowing_sub(small[i]);
            let (d2, b2) = d1.overflowing_sub(borrow as u64);
            out[i] = d2;
            borrow = b1 || b2;
        }
        (neg_larger, out)
    }

    /// True if the sum is exactly zero.
    pub fn is_zero(&self) -> bool {
        self.pos == self.neg
    }

    /// The sum as an [`Unrounded`] for the shared round-pack: the top 126 bits below the
    /// leading one (or all bits, if fewer) and a sticky bit for the rest. The leading-zero
    /// count of the wide register is returned alongside (`WIDE_LIMBS * 64` for zero).
    /// A zero sum comes back with `sign = zero_sign`.
    pub fn to_unrounded(&self, zero_sign: bool) -> (Unrounded, u32) {
        let (neg, mag) = self.magnitude();
        let mut top_limb = None;
        for i in (0..WIDE_LIMBS).rev() {
            if mag[i] != 0 {
                top_limb = Some(i);
                break;
            }
        }
        let Some(t) = top_limb else {
            return (
                Unrounded {
                    sign: zero_sign,
                    exp: WIDE_LSB_EXP,
                    sig: 0,
                    sticky: false,
                },
                WIDE_LIMBS as u32 * 64,
            );
        };
        let top_bit = t as u32 * 64 + 63 - mag[t].leading_zeros();
        let lzc = WIDE_LIMBS as u32 * 64 - 1 - top_bit;
        let start = (top_bit + 1).saturating_sub(WINDOW_BITS);
        let sig = extract(&mag, start);
        let sticky = if start == 0 {
            false
        } else {
            let full = (start / 64) as usize;
            mag[..full].iter().any(|&l| l != 0) || (mag[full] & ((1u64 << (start % 64)) - 1)) != 0
        };
        (
            Unrounded {
                sign: neg,
                exp: WIDE_LSB_EXP + start as i32,
                sig,
                sticky,
            },
            lzc,
        )
    }
}

/// Bits `start .. start + 128` of `mag` (missing bits read as zero).
fn extract(mag: &[u64; WIDE_LIMBS], start: u32) -> u128 {
    let limb = (start / 64) as usize;
    let off = start % 64;
    let get = |i: usize| if i < WIDE_LIMBS { mag[i] } else { 0 };
    let l0 = get(limb) as u128;
    let l1 = get(limb + 1) as u128;
    let l2 = get(limb + 2) as u128;
    let v = (l0 | (l1 << 64)) >> off;
    if off == 0 {
        v
    } else {
        v | (l2 << (128 - off))
    }
}
