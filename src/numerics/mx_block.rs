//! The block-scaled accumulation stages of the tensor core's MX datapath (the PE's
//! [`crate::hw::pe_mx::MxFront`]): an exact fixed-point block-sum register fed with the exact
//! products of each step, and the block's firing, which applies the two E8M0 scales as an
//! exponent add and adds the scaled block sum into the FP32 accumulator with one rounding
//! (nearest even).
//!
//! This is the `fused` mode of [`super::mx_dot`] (`c <- RNE32(c + X_A X_B sum_i P_i Q_i)` per
//! block of 32, the block's sum exact), written as hardware stages instead of over big
//! integers, so the two are independent implementations of one rule.
//!
//! The block sum is a two's-complement fixed-point register of [`BLOCK_SUM_BITS`] bits with
//! its least significant bit at `2^BLOCK_SUM_LSB`: every product of two MX element values
//! (E4M3, E5M2, E2M3, E3M2, E2M1) is a multiple of `2^-32` (two E5M2 subnormal LSBs, the
//! finest) and at most `57344^2 < 2^32` in magnitude, so 32 of them fit in 70 bits with sign.
//! Beside it the block state keeps the special class (an infinity or NaN product), whether any
//! product was nonzero, and whether a `+0` product was seen (for the sign of an exact zero).

use super::flags::{Flags, RoundingMode};
use super::format::{Class, FP32};
use super::multiply::{Product, ProductClass};
use super::round::{round_pack, Overflow, RoundTrace, Rounded, Unrounded};
use super::unpack::unpack;

/// Exponent of the block-sum register's least significant bit.
pub const BLOCK_SUM_LSB: i32 = -32;
/// Width of the block-sum register (two's complement).
pub const BLOCK_SUM_BITS: u32 = 72;
/// E8M0 bias: a scale code `x` is worth `2^(x - 127)`; `0xFF` is NaN.
pub const E8M0_BIAS: i32 = 127;
/// The E8M0 NaN code.
pub const E8M0_NAN: u8 = 0xFF;

/// The special class of a block so far (2 bits in the PE: `blk_cls`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub enum BlockClass {
    /// Every product finite.
    #[default]
    Finite,
    /// An infinity of this sign (`true` = negative), no NaN and no opposite infinity.
    Inf(bool),
    /// NaN (a NaN product, `0 x Inf`, or infinities of both signs).
    Nan,
}

impl BlockClass {
    /// The 2-bit code the PE registers (0 finite, 1 `+Inf`, 2 `-Inf`, 3 NaN).
    pub const fn code(self) -> u8 {
        match self {
            BlockClass::Finite => 0,
            BlockClass::Inf(false) => 1,
            BlockClass::Inf(true) => 2,
            BlockClass::Nan => 3,
        }
    }

    /// The class of a 2-bit code written by [`BlockClass::code`].
    pub const fn from_code(c: u8) -> BlockClass {
        match c & 3 {
            0 => BlockClass::Finite,
            1 => BlockClass::Inf(false),
            2 => BlockClass::Inf(true),
            _ => BlockClass::Nan,
        }
    }

    fn add_inf(self, neg: bool) -> BlockClass {
        match self {
            BlockClass::Finite => BlockClass::Inf(neg),
            BlockClass::Inf(n) if n == neg => self,
            _ => BlockClass::Nan,
        }
    }
}

/// The block accumulator's state: what the PE holds in `blk_sum`, `blk_cls`, `blk_nz` and
/// `blk_pz` between the steps of one block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BlockState {
    /// The exact sum of the finite products, in units of `2^BLOCK_SUM_LSB`.
    pub sum: i128,
    /// Special class of the products so far.
    pub class: BlockClass,
    /// Some finite product was nonzero.
    pub nonzero: bool,
    /// Some product was `+0`.
    pub pos_zero: bool,
    /// Some product raised `invalid` (`0 x Inf`, a signaling NaN).
    pub invalid: bool,
}

impl BlockState {
    /// The sum as the register's bits (two's complement, [`BLOCK_SUM_BITS`] wide).
    pub fn sum_bits(&self) -> u128 {
        (self.sum as u128) & ((1u128 << BLOCK_SUM_BITS) - 1)
    }

    /// The sum read back from the register's bits (sign-extended).
    pub fn sum_from_bits(bits: u128) -> i128 {
        let shift = 128 - BLOCK_SUM_BITS;
        ((bits << shift) as i128) >> shift
    }
}

/// Adds the exact `products` of one step into the block state (the block-sum adder).
///
/// Every finite product must be a multiple of `2^BLOCK_SUM_LSB` (true of the MX element
/// formats; [`crate::hw::tensor_core::check_config`] refuses others in MX mode).
pub fn block_accumulate(mut s: BlockState, products: &[Product]) -> BlockState {
    for p in products {
        s.invalid |= p.flags.invalid;
        match p.class {
            ProductClass::Nan => s.class = BlockClass::Nan,
            ProductClass::Infinite => s.class = s.class.add_inf(p.sign),
            ProductClass::Zero => s.pos_zero |= !p.sign,
            ProductClass::Finite => {
                let shift = p.lsb_exp() - BLOCK_SUM_LSB;
                debug_assert!((0..64).contains(&shift), "product LSB 2^{}", p.lsb_exp());
                let v = i128::from(p.sig) << shift;
                s.sum += if p.sign { -v } else { v };
                s.nonzero |= p.sig != 0;
            }
        }
    }
    s
}

/// What the block's firing produced (the PE traces these fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockFire {
    /// The new accumulator (FP32 bits) and its flags.
    pub out: Rounded,
    /// The block's scale exponent `xa + xb - 254` (the exponent add).
    pub scale_exp: i32,
    /// The result is a special (NaN or infinity from the scales, products or `c`).
    pub special: bool,
}

/// A signed magnitude `mag * 2^exp`.
#[derive(Clone, Copy, Debug)]
struct Mag {
    neg: bool,
    mag: u128,
    exp: i32,
}

/// Where the aligner puts a nonzero operand's leading one (the 72-bit block sum and the
/// 24-bit `c` then have at least 24 zero bits below their last significant bit).
const ALIGN_MSB: u32 = 96;

fn normalise(x: Mag) -> Mag {
    let top = 127 - x.mag.leading_zeros();
    let s = ALIGN_MSB - top;
    Mag {
        mag: x.mag << s,
        exp: x.exp - s as i32,
        ..x
    }
}

/// `x + y` (both nonzero) as an unrounded value: the larger-exponent operand stays, the other
/// shifts right with its lost bits jammed into its LSB (which sits far below FP32's round
/// bit whenever anything is lost), then one add or subtract.
fn align_add(x: Mag, y: Mag) -> Unrounded {
    let (x, y) = (normalise(x), normalise(y));
    let (big, small) = if x.exp >= y.exp { (x, y) } else { (y, x) };
    let d = (big.exp - small.exp) as u32;
    let shifted = if d >= 128 {
        u128::from(small.mag != 0)
    } else {
        let kept = small.mag >> d;
        let lost = small.mag & ((1u128 << d) - 1) != 0;
        kept | u128::from(lost)
    };
    let (sign, sig) = if big.neg == small.neg {
        (big.neg, big.mag + shifted)
    } else if big.mag >= shifted {
        (big.neg, big.mag - shifted)
    } else {
        (small.neg, shifted - big.mag)
    };
    Unrounded {
        sign,
        exp: big.exp,
        sig,
        sticky: false,
    }
}

fn special_out(bits: u64, flags: Flags) -> BlockFire {
    BlockFire {
        out: Rounded {
            bits,
            flags,
            trace: RoundTrace::IDLE,
        },
        scale_exp: 0,
        special: true,
    }
}

/// Fires a block: `RNE32(c + 2^(xa + xb - 254) * sum)` over the block state `s` (the last
/// step's products already added), with the E8M0 scale codes `xa` (A's block) and `xb`
/// (B's block). A NaN scale (`0xFF`), a NaN product or `c`, `0 x Inf` and `+Inf + -Inf` give
/// FP32's canonical NaN with `invalid`; otherwise an infinity wins. An exact zero is `+0`
/// unless `c` and every product are `-0`.
pub fn block_fire(s: &BlockState, xa: u8, xb: u8, c: u32) -> BlockFire {
    let nan = || special_out(FP32.canonical_nan(), Flags::INVALID);
    let cu = unpack(FP32, u64::from(c));
    if xa == E8M0_NAN || xb == E8M0_NAN || cu.class == Class::Nan || s.class == BlockClass::Nan {
        return nan();
    }
    let inf = |neg: bool| special_out(FP32.infinity(neg).unwrap_or(0), Flags::NONE);
    match (s.class, cu.class == Class::Infinite) {
        (BlockClass::Inf(n), true) if n != cu.sign => return nan(),
        (BlockClass::Inf(n), _) => return inf(n),
        (_, true) => return inf(cu.sign),
        _ => {}
    }
    let scale_exp = i32::from(xa) + i32::from(xb) - 2 * E8M0_BIAS;
    let flags = if s.invalid {
        Flags::INVALID
    } else {
        Flags::NONE
    };
    let block = Mag {
        neg: s.sum < 0,
        mag: s.sum.unsigned_abs(),
        exp: BLOCK_SUM_LSB + scale_exp,
    };
    let c_zero = cu.class == Class::Zero;
    let c_mag = Mag {
        neg: cu.sign,
        mag: if c_zero { 0 } else { u128::from(cu.sig) },
        exp: cu.lsb_exp(),
    };
    let done = |r: Rounded| BlockFire {
        out: Rounded {
            flags: r.flags | flags,
            ..r
        },
        scale_exp,
        special: false,
    };
    let zero = |neg: bool| {
        done(Rounded {
            bits: FP32.zero(neg),
            flags: Flags::NONE,
            trace: RoundTrace::IDLE,
        })
    };
    let unrounded = match (block.mag == 0, c_mag.mag == 0) {
        (true, true) => {
            // Exact zero: -0 only if c and every product are -0 (no cancellation, no +0).
            return zero(cu.sign && !s.nonzero && !s.pos_zero);
        }
        (true, false) => Unrounded {
            sign: c_mag.neg,
            exp: c_mag.exp,
            sig: c_mag.mag,
            sticky: false,
        },
        (false, true) => Unrounded {
            sign: block.neg,
            exp: block.exp,
            sig: block.mag,
            sticky: false,
        },
        (false, false) => align_add(block, c_mag),
    };
    if unrounded.sig == 0 {
        // Exact cancellation: +0 under nearest even.
        return zero(false);
    }
    done(round_pack(
        FP32,
        unrounded,
        RoundingMode::NearestEven,
        Overflow::Ieee,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn prod(sign: bool, sig: u64, lsb: i32) -> Product {
        Product {
            sign,
            class: ProductClass::Finite,
            exp_sum: lsb,
            sig,
            frac_bits: 0,
            flags: Flags::NONE,
        }
    }

    /// The register round-trips negative sums through its 72 bits.
    #[test]
    fn sum_bits_round_trip() {
        for v in [0i128, 1, -1, (1 << 70) - 1, -(1 << 70), -12345] {
            let s = BlockState {
                sum: v,
                ..BlockState::default()
            };
            assert_eq!(BlockState::sum_from_bits(s.sum_bits()), v);
        }
    }

    /// Scales 2^(127+127-254) = 1: 3 * 2^-32 + 1.0 rounds to 1.0; 1.5 * 2^3 exact.
    #[test]
    fn fire_basic() {
        let s = block_accumulate(BlockState::default(), &[prod(false, 3, -32)]);
        let r = block_fire(&s, 127, 127, 1.0f32.to_bits());
        assert_eq!(r.out.bits as u32, 1.0f32.to_bits());
        assert!(r.out.flags.inexact);
        let s = block_accumulate(BlockState::default(), &[prod(false, 3, -1)]);
        let r = block_fire(&s, 130, 127, 0);
        assert_eq!(f32::from_bits(r.out.bits as u32), 12.0);
        assert_eq!(r.scale_exp, 3);
        let r = block_fire(&s, 0xFF, 127, 0);
        assert!(f32::from_bits(r.out.bits as u32).is_nan());
    }
}
