//! The PE's dot-product datapath as hardware stages over the numerics stage functions.
//!
//! - Stage 1 ([`stage1_multiply`]): unpack and multiply the `W` lanes exactly
//!   ([`stage_multiply`]); the products are packed into one 64-bit word per lane
//!   ([`pack_product`]) for the stage-1 pipeline register.
//! - Stage 2 ([`stage2_accumulate`]): specials, alignment, add, leading-zero count,
//!   normalise and round into the FP32 accumulator, per accumulation mode:
//!   `ieee` ([`ieee::fma`] per lane, in order), `fused` ([`fused::stage_align`] ->
//!   [`fused::stage_add`] -> [`fused::stage_normalize_round`]), `nvidia` (block FMAs of `n`
//!   products through [`nvidia::stage_align`] -> [`nvidia::stage_add`] ->
//!   [`nvidia::stage_normalize_round`], or [`nvidia::block`] for the Blackwell FP8 rule).
//!
//! No arithmetic is done here beyond moving fields: every numeric result comes from
//! `numerics::dot`.

use crate::numerics::dot::step::NO_PRODUCT;
use crate::numerics::dot::{
    fused, ieee, nvidia, stage_multiply, stage_special, AccMode, BlockRule, MultiplyStage,
    NvidiaParams, MAX_LANES,
};
use crate::numerics::flags::Flags;
use crate::numerics::format::Format;
use crate::numerics::multiply::{Product, ProductClass};

/// How a tensor core is built: operand formats, accumulation mode, products per PE step.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreConfig {
    /// Format of A.
    pub fmt_a: Format,
    /// Format of B.
    pub fmt_b: Format,
    /// Accumulation mode (`exact` is a reference only and cannot be built).
    pub mode: AccMode,
    /// Products per PE step `w` (1, 2, 4, 8, 16 or 32).
    pub width: usize,
    /// The accumulator (output) format: FP32, or FP16 (C and D are FP16 patterns; the
    /// accumulator registers are 16 bits wide).
    pub acc: Format,
}

impl CoreConfig {
    /// The NVIDIA block size `n` (0 for other modes).
    pub fn block(&self) -> usize {
        match self.mode {
            AccMode::Nvidia(p) => p.block,
            _ => 0,
        }
    }

    /// True if an NVIDIA block spans several steps (`w < n`), so the PE gathers products in
    /// its block buffer and fires the block FMA on the block's last step.
    pub fn gathers(&self) -> bool {
        self.block() > self.width
    }
}

/// Bits of one packed product in the stage-1 register (`sig` 24, `exp_sum` 12, `frac_bits`
/// 6, `class` 2, `sign` 1, `invalid` 1).
pub const PRODUCT_BITS: u32 = 46;

const EXP_BIAS: i32 = 2048;

/// Packs a product into one word of the stage-1 register.
#[inline]
pub fn pack_product(p: &Product) -> u64 {
    debug_assert!(p.sig < (1 << 24));
    let class = match p.class {
        ProductClass::Zero => 0u64,
        ProductClass::Finite => 1,
        ProductClass::Infinite => 2,
        ProductClass::Nan => 3,
    };
    (p.sig & 0xFF_FFFF)
        | ((((p.exp_sum + EXP_BIAS) as u64) & 0xFFF) << 24)
        | (u64::from(p.frac_bits & 0x3F) << 36)
        | (class << 42)
        | (u64::from(p.sign) << 44)
        | (u64::from(p.flags.invalid) << 45)
}

/// Unpacks a word of the stage-1 register.
#[inline]
pub fn unpack_product(w: u64) -> Product {
    let class = match (w >> 42) & 3 {
        0 => ProductClass::Zero,
        1 => ProductClass::Finite,
        2 => ProductClass::Infinite,
        _ => ProductClass::Nan,
    };
    Product {
        sign: (w >> 44) & 1 == 1,
        class,
        exp_sum: ((w >> 24) & 0xFFF) as i32 - EXP_BIAS,
        sig: w & 0xFF_FFFF,
        frac_bits: ((w >> 36) & 0x3F) as u32,
        flags: if (w >> 45) & 1 == 1 {
            Flags::INVALID
        } else {
            Flags::NONE
        },
    }
}

/// Lane `k` of a bus of `bits`-wide lanes (8 or 16 bits: a lane never crosses a word).
#[inline]
pub fn lane(words: &[u64], k: usize, bits: u32) -> u64 {
    let lo = k * bits as usize;
    let mask = (1u64 << bits) - 1;
    (words[lo / 64] >> (lo % 64)) & mask
}

/// Writes lane `k` of a bus of `bits`-wide lanes.
#[inline]
pub fn set_lane(words: &mut [u64], k: usize, bits: u32, v: u64) {
    let lo = k * bits as usize;
    let mask = (1u64 << bits) - 1;
    let w = &mut words[lo / 64];
    *w = (*w & !(mask << (lo % 64))) | ((v & mask) << (lo % 64));
}

/// **Sparsity hook** (B-side operand select). Returns the B value that multiplies A lane
/// `k` of this step. Dense mode (`meta = None`): lane `k` of the B bus, unchanged.
///
/// 2:4 sparse mode (`meta = Some(indices)`, see [`crate::hw::sparse_feeder`]): the metadata
/// (2 bits per kept A value, `2w` bits a step: for even `w` exactly the concatenated nibbles of
/// the step's `w / 2` groups) travels with A in the PE's `meta_out` register and arrives here;
/// the B bus carries the step's groups of four dense K positions (`max(2w, 4)` lanes), and
/// this 4:1 multiplexer picks, for kept A value `k` (group `k / 2` of the bus), the B lane
/// `4 * (k / 2) + index_k`. Nothing else in the PE changes: the multiply stage sees `w`
/// (A, selected B) pairs as in dense mode.
#[inline]
pub fn b_operand_select(b_words: &[u64], k: usize, fmt_b: Format, meta: Option<u64>) -> u64 {
    match meta {
        None => lane(b_words, k, fmt_b.width()),
        Some(m) => {
            let index = ((m >> (2 * k)) & 3) as usize;
            lane(b_words, 4 * (k / 2) + index, fmt_b.width())
        }
    }
}

/// The named signals of stage 1 for one step (what the PE registers and traces).
#[derive(Clone, Copy, Debug)]
pub struct Stage1<const W: usize> {
    /// The exact products of the valid lanes.
    pub m: MultiplyStage<W>,
    /// The B operand of each valid lane (the output of [`b_operand_select`]: in sparse mode
    /// the multiplexer outputs, traced as `b_sel`).
    pub b_sel: [u64; W],
}

/// Stage 1: the exact products of `lanes` lanes of the A and B buses (`meta`: the 2:4
/// metadata in sparse mode, `None` in dense mode; see [`b_operand_select`]).
#[inline]
pub fn stage1_multiply<const W: usize>(
    cfg: &CoreConfig,
    a_words: &[u64],
    b_words: &[u64],
    lanes: usize,
    meta: Option<u64>,
) -> Stage1<W> {
    let mut a = [0u64; W];
    let mut b = [0u64; W];
    let lanes = lanes.min(W);
    let wa = cfg.fmt_a.width();
    for k in 0..lanes {
        a[k] = lane(a_words, k, wa);
        b[k] = b_operand_select(b_words, k, cfg.fmt_b, meta);
    }
    Stage1 {
        m: stage_multiply::<W>(cfg.fmt_a, cfg.fmt_b, &a[..lanes], &b[..lanes]),
        b_sel: b,
    }
}

/// The named signals of stage 2 (the accumulation) for one step.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Stage2 {
    /// The new FP32 accumulator.
    pub bits: u32,
    /// IEEE flags raised.
    pub flags: Flags,
    /// True if NaN/Inf decided the result (specials stage).
    pub special: bool,
    /// Alignment reference exponent (of the last addition or block).
    pub max_exp: i32,
    /// Alignment shift of lane 0's term (of the last addition or block).
    pub align_shift: i32,
    /// Bits dropped by the alignment (`sticky` in `ieee`, `dropped` in `nvidia`).
    pub sticky: bool,
    /// Leading-zero count of the normalisation (of the last rounding).
    pub lzc: u32,
    /// The rounding incremented the significand (of the last rounding).
    pub round_inc: bool,
}

fn special(bits: u32, flags: Flags) -> Stage2 {
    Stage2 {
        bits,
        flags,
        special: true,
        ..Stage2::default()
    }
}

/// One NVIDIA block FMA (`m.lanes <= n` products plus `c`), through the named stages.
#[inline]
fn block_fma<const V: usize>(p: &NvidiaParams, m: &MultiplyStage<V>, c: u32) -> Stage2 {
    let sp = stage_special(m, c);
    if let Some(bits) = sp.result {
        return special(bits, sp.flags);
    }
    match p.rule {
        BlockRule::Truncating => {
            let al = nvidia::stage_align(p, m, c);
            let s = nvidia::stage_add(&al);
            let r = nvidia::stage_normalize_round(p, &s);
            Stage2 {
                bits: r.bits as u32,
                flags: r.flags | sp.flags,
                special: false,
                max_exp: al.max_exp,
                align_shift: al.align_shift[0],
                sticky: al.dropped,
                lzc: r.trace.lzc,
                round_inc: r.trace.round_inc,
            }
        }
        BlockRule::ExactThenRne | BlockRule::HalfSteps => {
            let r = nvidia::block(p, m, c);
            Stage2 {
                bits: r.bits,
                flags: r.flags,
                special: false,
                max_exp: r.max_exp,
                align_shift: 0,
                sticky: false,
                lzc: r.round.lzc,
                round_inc: r.round.round_inc,
            }
        }
    }
}

/// A multiply stage of `V` lanes holding `products` (at most `V`).
#[inline]
fn regroup<const V: usize>(products: &[Product]) -> MultiplyStage<V> {
    let mut m = MultiplyStage {
        lanes: products.len().min(V),
        products: [NO_PRODUCT; V],
        flags: Flags::NONE,
    };
    for (slot, p) in m.products.iter_mut().zip(products) {
        *slot = *p;
        m.flags |= p.flags;
    }
    m
}

/// Stage 2: accumulates this step's products (`m`) into `c`.
///
/// `gathered` holds the products an NVIDIA block collected on its earlier steps (empty
/// unless the PE gathers, `w < n`); the block FMA then runs over `gathered ++ m`.
/// With `w >= n` one step runs `w / n` chained block FMAs. `Exact` mode never reaches here.
#[inline]
pub fn stage2_accumulate<const W: usize>(
    cfg: &CoreConfig,
    m: &MultiplyStage<W>,
    gathered: &[Product],
    c: u32,
) -> Stage2 {
    match &cfg.mode {
        AccMode::Ieee => {
            let mut out = Stage2 {
                bits: c,
                ..Stage2::default()
            };
            let mut flags = Flags::NONE;
            for p in m.valid() {
                let c_special = out.bits & 0x7F80_0000 == 0x7F80_0000;
                let f = ieee::fma(out.bits, p);
                flags |= f.flags;
                out = Stage2 {
                    bits: f.bits,
                    flags,
                    special: c_special
                        || matches!(p.class, ProductClass::Nan | ProductClass::Infinite),
                    max_exp: f.align.max_exp,
                    align_shift: f.align.align_shift as i32,
                    sticky: f.align.sticky,
                    lzc: f.round.lzc,
                    round_inc: f.round.round_inc,
                };
            }
            out
        }
        AccMode::Fused | AccMode::Exact => {
            let sp = stage_special(m, c);
            if let Some(bits) = sp.result {
                return special(bits, sp.flags);
            }
            let al = fused::stage_align(m, c);
            let s = fused::stage_add(m, &al, c);
            let r = fused::stage_normalize_round(&s);
            Stage2 {
                bits: r.bits as u32,
                flags: r.flags | sp.flags,
                special: false,
                max_exp: al.max_exp,
                align_shift: al.align_shift[0] as i32,
                sticky: s.sum.sticky,
                lzc: s.wide_lzc,
                round_inc: r.trace.round_inc,
            }
        }
        AccMode::Nvidia(p) => {
            if !gathered.is_empty() {
                let mut all = [NO_PRODUCT; MAX_LANES];
                let g = gathered.len().min(MAX_LANES);
                all[..g].copy_from_slice(&gathered[..g]);
                let v = m.valid();
                let t = (g + v.len()).min(MAX_LANES);
                all[g..t].copy_from_slice(&v[..t - g]);
                return block_fma(p, &regroup::<MAX_LANES>(&all[..t]), c);
            }
            let n = p.block.clamp(1, MAX_LANES);
            if n >= m.lanes {
                return block_fma(p, m, c);
            }
            let mut acc = c;
            let mut flags = Flags::NONE;
            let mut out = Stage2::default();
            for chunk in m.valid().chunks(n) {
                out = block_fma(p, &regroup::<W>(chunk), acc);
                acc = out.bits;
                flags |= out.flags;
            }
            out.flags = flags;
            out
        }
    }
}
