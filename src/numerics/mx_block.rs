//! The block-scaled accumulation stages of the tensor core's MX datapath (the PE's
//! [`crate::hw::pe::MxPath`]): an exact fixed-point block-sum register fed with the exact
//! products of each step, and the block's firing, which multiplies the block sum by the
//! block's scale product ([`ScaleFactor`]) and adds it into the FP32 accumulator with one
//! rounding (nearest even).
//!
//! This is the `fused` mode of [`super::mx_dot`] (`c <- RNE32(c + X_A X_B sum_i P_i Q_i)` per
//! K-block, the block's sum exact), written as hardware stages instead of over big integers,
//! so the two are independent implementations of one rule.
//!
//! The block sum is a two's-complement fixed-point register of [`BLOCK_SUM_BITS`] bits with
//! its least significant bit at `2^BLOCK_SUM_LSB`: every product of two MX element values
//! (E4M3, E5M2, E2M3, E3M2, E2M1) is a multiple of `2^-32` (two E5M2 subnormal LSBs, the
//! finest) and at most `57344^2 < 2^32` in magnitude, so 32 of them fit in 70 bits with sign.
//! MXINT8 products (`q_a q_b 2^-12`, [`int8_product`]) and NVFP4's E2M1 products are coarser
//! and smaller, so they fit too. Beside it the block state keeps the special class (an
//! infinity or NaN product), whether any product was nonzero, was zero, had sign `+` or had
//! sign `-` (the sign of an exact zero, and the specials of a zero or infinite scale).
//!
//! The scale product is `sig * 2^exp` with a significand of at most 56 bits: E8M0 scales
//! have significand 1 (the product is an exponent add), NVFP4's E4M3 scales 4 bits each (a
//! 4 x 4-bit multiply), times NVFP4's FP32 tensor-scale product (48 bits), formed once per
//! core. The scaled block, `|sum| * sig`, stays below `2^127`.

use super::flags::{Flags, RoundingMode};
use super::format::{Class, Format, FP32};
use super::multiply::{Product, ProductClass};
use super::round::{round_pack, Overflow, RoundTrace, Rounded, Unrounded};
use super::unpack::unpack;

/// Exponent of the block-sum register's least significant bit.
pub const BLOCK_SUM_LSB: i32 = -32;
/// Width of the block-sum register (two's complement).
pub const BLOCK_SUM_BITS: u32 = 72;

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

/// The block accumulator's state: what the PE holds in `blk_sum`, `blk_cls`, `blk_nz`,
/// `blk_z`, `blk_pos` and `blk_neg` between the steps of one block.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
pub struct BlockState {
    /// The exact sum of the finite products, in units of `2^BLOCK_SUM_LSB`.
    pub sum: i128,
    /// Special class of the products so far.
    pub class: BlockClass,
    /// Some finite product was nonzero.
    pub nonzero: bool,
    /// Some product was zero (`+0` or `-0`).
    pub zero: bool,
    /// Some finite product (zero or not) had sign `+`.
    pub any_pos: bool,
    /// Some finite product (zero or not) had sign `-`.
    pub any_neg: bool,
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
/// Every finite product must be a multiple of `2^BLOCK_SUM_LSB` and below `2^32` in
/// magnitude (true of the MX element formats; [`crate::hw::core::check_config`]
/// refuses others in MX mode), so each lane's aligner is a 64-bit left shift: the product's
/// significand moved to the register's LSB `2^BLOCK_SUM_LSB`, below `2^64`. The aligned lanes
/// are then added with their signs into the block sum.
#[inline]
pub fn block_accumulate(mut s: BlockState, products: &[Product]) -> BlockState {
    for p in products {
        s.invalid |= p.flags.invalid;
        match p.class {
            ProductClass::Nan => s.class = BlockClass::Nan,
            ProductClass::Infinite => s.class = s.class.add_inf(p.sign),
            ProductClass::Finite | ProductClass::Zero => {
                s.any_pos |= !p.sign;
                s.any_neg |= p.sign;
                s.zero |= p.class == ProductClass::Zero;
                // A zero product's significand is 0: its lane adds nothing.
                s.nonzero |= p.sig != 0;
                s.sum += aligned(p);
            }
        }
    }
    s
}

/// One lane's aligner: the finite product `p` as a signed multiple of `2^BLOCK_SUM_LSB`
/// (the magnitude shifted into place, then negated in two's complement, invert and add
/// one, when the sign is set).
#[inline(always)]
fn aligned(p: &Product) -> i128 {
    let shift = (p.lsb_exp() - BLOCK_SUM_LSB) as u32;
    debug_assert!(
        p.sig == 0 || (shift < 64 && p.sig.leading_zeros() >= shift),
        "product {} x 2^{} outside the block-sum aligner",
        p.sig,
        p.lsb_exp()
    );
    let v = i128::from(p.sig << (shift & 63));
    let neg = -i128::from(p.sign);
    (v ^ neg) - neg
}

/// The special class of a scale or a scale product.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ScaleClass {
    /// Zero (an E4M3 or FP32 zero; E8M0 has none).
    Zero,
    /// Finite and nonzero.
    Finite,
    /// Infinite (only an FP32 tensor scale can be).
    Inf,
    /// NaN (E8M0 `0xFF`, an E4M3 NaN, a NaN tensor scale, or `0 x Inf`).
    Nan,
}

/// A block scale, or a product of scales, as the scale multiplier carries it: class, sign,
/// significand and the exponent of the significand's least significant bit.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct ScaleFactor {
    /// Zero, finite, infinite or NaN.
    pub class: ScaleClass,
    /// Sign (`true` = negative).
    pub neg: bool,
    /// The significand (0 unless finite).
    pub sig: u64,
    /// Exponent of `sig`'s least significant bit.
    pub exp: i32,
}

impl ScaleFactor {
    /// The scale 1 (what a missing tensor scale contributes).
    pub const ONE: ScaleFactor = ScaleFactor {
        class: ScaleClass::Finite,
        neg: false,
        sig: 1,
        exp: 0,
    };

    /// The scale coded `code` in `fmt` (E8M0, E4M3 or FP32), unpacked.
    pub fn decode(fmt: Format, code: u64) -> ScaleFactor {
        let u = unpack(fmt, code);
        let class = match u.class {
            Class::Zero => ScaleClass::Zero,
            Class::Infinite => ScaleClass::Inf,
            Class::Nan => ScaleClass::Nan,
            Class::Normal | Class::Subnormal => ScaleClass::Finite,
        };
        let finite = class == ScaleClass::Finite;
        ScaleFactor {
            class,
            neg: u.sign,
            sig: if finite { u.sig } else { 0 },
            exp: if finite { u.lsb_exp() } else { 0 },
        }
    }
}

impl std::ops::Mul for ScaleFactor {
    type Output = ScaleFactor;

    /// The exact product (the scale multiplier: significands multiply, exponents add; NaN
    /// wins, `0 x Inf` is NaN). The significands must fit 64 bits together (E4M3 x E4M3 x
    /// two FP32 significands: 56 bits).
    fn mul(self, o: ScaleFactor) -> ScaleFactor {
        use ScaleClass::*;
        let class = match (self.class, o.class) {
            (Nan, _) | (_, Nan) | (Inf, Zero) | (Zero, Inf) => Nan,
            (Inf, _) | (_, Inf) => Inf,
            (Zero, _) | (_, Zero) => Zero,
            (Finite, Finite) => Finite,
        };
        let finite = class == Finite;
        debug_assert!(!finite || self.sig.leading_zeros() + o.sig.leading_zeros() >= 64);
        ScaleFactor {
            class,
            neg: self.neg ^ o.neg,
            sig: if finite { self.sig * o.sig } else { 0 },
            exp: if finite { self.exp + o.exp } else { 0 },
        }
    }
}

/// The exact product of two MXINT8 elements (two's-complement codes worth `q * 2^-6`) as the
/// block-sum adder takes it: `|q_a q_b|` with its LSB at `2^-12`.
pub fn int8_product(a: u8, b: u8) -> Product {
    let p = i32::from(a as i8) * i32::from(b as i8);
    Product {
        sign: p < 0,
        class: if p == 0 {
            ProductClass::Zero
        } else {
            ProductClass::Finite
        },
        exp_sum: -2 * super::mx::INT8_FRAC_BITS,
        sig: u64::from(p.unsigned_abs()),
        frac_bits: 0,
        flags: Flags::NONE,
    }
}

/// What the block's firing produced (the PE traces these fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct BlockFire {
    /// The new accumulator (FP32 bits) and its flags.
    pub out: Rounded,
    /// The exponent of the scale product's LSB (for E8M0 scales `xa + xb - 254`, the
    /// exponent add); 0 for a special scale.
    pub scale_exp: i32,
    /// The scale product's significand (1 for E8M0 scales); 0 for a special scale.
    pub scale_sig: u64,
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

/// Where the aligner puts a nonzero operand's leading one. The scaled block sum has at most
/// 127 bits and `c` 24, so the shift is always left, the sum of two aligned operands fits 128
/// bits, and below the round bit of any FP32 result lie more than 24 zero bits or the jammed
/// sticky.
const ALIGN_MSB: u32 = 126;

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
        scale_sig: 0,
        special: true,
    }
}

/// The block's terms `scale x P_i` when the scale is infinite: NaN if a product is zero (or
/// the signs of the infinite terms differ), else an infinity.
fn inf_scaled(s: &BlockState, neg: bool) -> BlockClass {
    if s.zero {
        return BlockClass::Nan;
    }
    let mut class = match s.class {
        BlockClass::Inf(n) => BlockClass::Inf(n ^ neg),
        other => other,
    };
    if s.any_pos {
        class = class.add_inf(neg);
    }
    if s.any_neg {
        class = class.add_inf(!neg);
    }
    class
}

/// Fires a block: `RNE32(c + scale * sum)` over the block state `s` (the last step's products
/// already added), with `scale` the product of the block's scales (`ScaleFactor`'s `*`). A
/// NaN scale, a NaN product or `c`, `0 x Inf` and `+Inf + -Inf` give FP32's canonical NaN
/// with `invalid`; otherwise an infinity wins. An exact zero is `+0` unless `c` and every
/// scaled term are `-0`.
pub fn block_fire(s: &BlockState, scale: ScaleFactor, c: u32) -> BlockFire {
    let nan = || special_out(FP32.canonical_nan(), Flags::INVALID);
    let cu = unpack(FP32, u64::from(c));
    // The block's special class once scaled.
    let class = match scale.class {
        ScaleClass::Nan => BlockClass::Nan,
        ScaleClass::Inf => inf_scaled(s, scale.neg),
        ScaleClass::Zero => match s.class {
            BlockClass::Finite => BlockClass::Finite,
            _ => BlockClass::Nan,
        },
        ScaleClass::Finite => match s.class {
            BlockClass::Inf(n) => BlockClass::Inf(n ^ scale.neg),
            other => other,
        },
    };
    if cu.class == Class::Nan || class == BlockClass::Nan {
        return nan();
    }
    let inf = |neg: bool| special_out(FP32.infinity(neg).unwrap_or(0), Flags::NONE);
    match (class, cu.class == Class::Infinite) {
        (BlockClass::Inf(n), true) if n != cu.sign => return nan(),
        (BlockClass::Inf(n), _) => return inf(n),
        (_, true) => return inf(cu.sign),
        _ => {}
    }
    let flags = if s.invalid {
        Flags::INVALID
    } else {
        Flags::NONE
    };
    let zero_scale = scale.class == ScaleClass::Zero;
    let block = Mag {
        neg: (s.sum < 0) ^ scale.neg,
        mag: if zero_scale {
            0
        } else {
            s.sum.unsigned_abs() * u128::from(scale.sig)
        },
        exp: BLOCK_SUM_LSB + scale.exp,
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
        scale_exp: scale.exp,
        scale_sig: scale.sig,
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
            // Exact zero: -0 only if c and every scaled term are -0 (no cancellation of
            // nonzero terms, no +0 term). A term's sign is its product's times the scale's.
            let terms_neg = if scale.neg { !s.any_neg } else { !s.any_pos };
            let cancelled = s.nonzero && !zero_scale;
            return zero(cu.sign && terms_neg && !cancelled);
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
