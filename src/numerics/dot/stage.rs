//! The stages and types every accumulation mode shares: the exact multiply stage, the
//! specials stage, the step record a PE registers and traces, the alignment of a term onto a
//! block's grid, and the most lanes a step takes.
//!
//! The per-mode files (`ieee`, `fused`, `nvidia`, `cdna`) and the integer datapath build on
//! these; [`super::step`], the dispatch over the modes, builds on them. A step takes up to `W`
//! lanes (`a[k]`, `b[k]`, `k < lanes`) and the FP32 accumulator `c`. Lanes past `lanes` are
//! masked: they hold no data and take part in nothing (no product, no maximum exponent, no zero
//! sign). Stage outputs are plain `Copy` structs sized by `W`, so a clocked model can keep them
//! in pipeline registers; nothing allocates.

use crate::numerics::flags::Flags;
use crate::numerics::format::{Class, Format, FP32};
use crate::numerics::multiply::{multiply, Product, ProductClass};
use crate::numerics::round::RoundTrace;
use crate::numerics::unpack::unpack;

/// The largest number of products one dot-product step takes (`w` or the block size `n`).
pub const MAX_LANES: usize = 32;

/// The canonical FP32 NaN every mode returns (`0x7FC00000`).
pub const FP32_NAN: u32 = 0x7FC0_0000;

/// A zero product, used for masked lanes of a stage register.
pub const NO_PRODUCT: Product = Product {
    sign: false,
    class: ProductClass::Zero,
    exp_sum: 0,
    sig: 0,
    frac_bits: 0,
    flags: Flags::NONE,
};

/// Output of the multiply stage: per lane the exact product (`sign`, `class`, `exp_sum`,
/// `sig` = the significand product with `frac_bits` fraction bits).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MultiplyStage<const W: usize> {
    /// Valid lanes (`products[lanes..]` are masked).
    pub lanes: usize,
    /// The exact products.
    pub products: [Product; W],
    /// OR of the products' flags (invalid for 0 x Inf or a signaling NaN input).
    pub flags: Flags,
}

/// Multiplies lane by lane: `a[k] * b[k]` exactly for `k < a.len()`.
///
/// `a` and `b` must have the same length, at most `W` (checked in debug builds; extra
/// entries of the longer slice are ignored).
#[inline(always)]
pub fn stage_multiply<const W: usize>(
    fmt_a: Format,
    fmt_b: Format,
    a: &[u64],
    b: &[u64],
) -> MultiplyStage<W> {
    debug_assert!(a.len() == b.len() && a.len() <= W);
    let lanes = a.len().min(b.len()).min(W);
    let mut products = [NO_PRODUCT; W];
    let mut flags = Flags::NONE;
    for k in 0..lanes {
        let p = multiply(fmt_a, a[k], fmt_b, b[k]);
        flags |= p.flags;
        products[k] = p;
    }
    MultiplyStage {
        lanes,
        products,
        flags,
    }
}

impl<const W: usize> MultiplyStage<W> {
    /// The valid products.
    pub fn valid(&self) -> &[Product] {
        &self.products[..self.lanes]
    }
}

/// Output of the specials stage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SpecialStage {
    /// `Some(bits)` if a NaN or an infinity decides the result.
    pub result: Option<u32>,
    /// `invalid` for +Inf with -Inf, 0 x Inf or a signaling NaN; otherwise empty.
    pub flags: Flags,
}

/// Specials first, over `c` and all valid products at once: any NaN gives NaN; +Inf with
/// -Inf gives NaN (invalid); otherwise any infinity gives that signed infinity.
pub fn stage_special<const W: usize>(m: &MultiplyStage<W>, c: u32) -> SpecialStage {
    stage_special_acc(m, c, FP32)
}

/// [`stage_special`] for an accumulator `c` in format `acc` (FP32 or FP16): the result is
/// `acc`'s canonical NaN or signed infinity.
#[inline(always)]
pub fn stage_special_acc<const W: usize>(
    m: &MultiplyStage<W>,
    c: u32,
    acc: Format,
) -> SpecialStage {
    stage_special_of(m.valid(), m.flags, c, acc)
}

/// [`stage_special_acc`] over the products `products` whose flags OR to `product_flags`.
#[inline(always)]
pub fn stage_special_of(
    products: &[Product],
    product_flags: Flags,
    c: u32,
    acc: Format,
) -> SpecialStage {
    let cu = unpack(acc, c as u64);
    let mut flags = product_flags;
    if acc.is_signaling_nan(c as u64) {
        flags.invalid = true;
    }
    let mut nan = cu.is_nan();
    let (mut pos_inf, mut neg_inf) = (false, false);
    if cu.class == Class::Infinite {
        if cu.sign {
            neg_inf = true
        } else {
            pos_inf = true
        }
    }
    for p in products {
        match p.class {
            ProductClass::Nan => nan = true,
            ProductClass::Infinite if p.sign => neg_inf = true,
            ProductClass::Infinite => pos_inf = true,
            _ => {}
        }
    }
    let nan_bits = acc.canonical_nan() as u32;
    let result = if nan {
        Some(nan_bits)
    } else if pos_inf && neg_inf {
        flags.invalid = true;
        Some(nan_bits)
    } else if pos_inf {
        Some(acc.infinity(false).unwrap_or(acc.canonical_nan()) as u32)
    } else if neg_inf {
        Some(acc.infinity(true).unwrap_or(acc.canonical_nan()) as u32)
    } else {
        None
    };
    SpecialStage { result, flags }
}

/// The record of one dot-product step: the new accumulator and the named fields of the
/// stages that produced it, the same for every mode (what a clocked PE registers and traces:
/// see [`crate::hw::pe::fp::stage2_accumulate`]).
///
/// Per mode, "last" means the last FMA of an `ieee` chain, the last block of a chained
/// `nvidia` step; every field is 0/false when the specials stage decided (except `special`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct StepRecord {
    /// The new accumulator (an FP32 pattern, or an FP16 one in the low 16 bits).
    pub bits: u32,
    /// IEEE flags raised by the step (OR over its FMAs or blocks).
    pub flags: Flags,
    /// True if NaN or Inf decided the (last) result in the specials stage.
    pub special: bool,
    /// Alignment reference exponent of the (last) addition (0 when specials decided).
    pub max_exp: i32,
    /// Alignment shift of lane 0's term (`ieee`: the adder's shift of the last FMA; `fused`:
    /// the left shift into the wide register; `nvidia` truncating blocks: the right shift
    /// onto the block grid; 0 for the Blackwell FP8 rule).
    pub align_shift: i32,
    /// Bits dropped by the alignment: `sticky` of the `ieee` adder or of the `fused` wide
    /// window, `dropped` of a truncating `nvidia` block (false for the Blackwell FP8 rule).
    pub sticky: bool,
    /// Leading-zero count of the normalisation: the wide register's in `fused`/`exact`,
    /// `round.lzc` otherwise.
    pub lzc: u32,
    /// The normalise-round fields of the (last) rounding (`round_inc`, ...).
    pub round: RoundTrace,
}

/// The former name of [`StepRecord`], kept so existing call sites compile.
pub type StepResult = StepRecord;

impl StepRecord {
    /// A result decided by the specials stage.
    pub const fn special(bits: u32, flags: Flags) -> StepRecord {
        StepRecord {
            special: true,
            ..StepRecord::idle(bits, flags)
        }
    }

    /// A step that did no arithmetic (no valid lane in `ieee`): `c` passes through.
    pub const fn idle(bits: u32, flags: Flags) -> StepRecord {
        StepRecord {
            bits,
            flags,
            special: false,
            max_exp: 0,
            align_shift: 0,
            sticky: false,
            lzc: 0,
            round: RoundTrace::IDLE,
        }
    }
}

impl<const W: usize> MultiplyStage<W> {
    /// A multiply stage holding `products` (at most `W`; extra ones are dropped), with their
    /// flags ORed: how a block buffer's products re-enter the datapath.
    pub fn from_products(products: &[Product]) -> MultiplyStage<W> {
        let mut m = MultiplyStage {
            lanes: products.len().min(W),
            products: [NO_PRODUCT; W],
            flags: Flags::NONE,
        };
        for (slot, p) in m.products.iter_mut().zip(products) {
            *slot = *p;
            m.flags |= p.flags;
        }
        m
    }
}

/// Truncates `sig * 2^lsb_exp` to the grid `2^grid_lsb`: returns (shift, value, dropped).
pub fn align_term(sig: u64, lsb_exp: i32, grid_lsb: i32) -> (i32, u64, bool) {
    let shift = grid_lsb - lsb_exp;
    if shift <= 0 {
        (shift, sig << (-shift) as u32, false)
    } else if shift >= 64 {
        (shift, 0, sig != 0)
    } else {
        (shift, sig >> shift, sig & ((1u64 << shift) - 1) != 0)
    }
}
