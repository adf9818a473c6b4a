//! The PE's dot-product datapath as hardware stages over the numerics stage functions.
//!
//! - Stage 1 ([`stage1_multiply`]): unpack and multiply the `W` lanes exactly
//!   ([`stage_multiply`]); the products are packed into one 64-bit word per lane
//!   ([`pack_product`]) for the stage-1 pipeline register.
//! - Stage 2 ([`stage2_accumulate`]): specials, alignment, add, leading-zero count,
//!   normalise and round into the accumulator (FP32 or FP16: `CoreConfig::acc`), per mode, by calling
//!   [`stage_accumulate_acc`] (the same composition the functional `dot` uses): `ieee`
//!   ([`ieee::fma`] per lane, in order), `fused` ([`fused::stage_align`] ->
//!   [`fused::stage_add`] -> [`fused::stage_normalize_round`]), `nvidia` ([`nvidia::step`]:
//!   block FMAs of `n` products, chained when `w >= n`, or one block over the gathered
//!   products when `w < n`). Its [`StepRecord`] holds every field the PE registers and traces.
//!
//! No arithmetic is done here beyond moving fields: every numeric result comes from
//! `numerics::dot`.

pub use super::config::CoreConfig;
#[cfg(doc)]
use crate::numerics::dot::{fused, ieee, nvidia};
use crate::numerics::dot::{stage_accumulate_acc, stage_multiply, MultiplyStage, StepRecord};
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::Format;
use crate::numerics::multiply::{Product, ProductClass};
use crate::rtl::Wide;

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

/// Lane `k` of a bus of `bits`-wide lanes (1..=64 bits; a lane may cross a 64-bit word,
/// as 6-bit FP6 and 19-bit TF32 lanes do), read through [`Wide::field`].
#[inline]
pub fn lane<const N: usize>(bus: &Wide<N>, k: usize, bits: u32) -> u64 {
    bus.field(k * bits as usize, bits as usize)
}

/// Writes lane `k` of a bus of `bits`-wide lanes (the low `bits` bits of `v`) through
/// [`Wide::set_field`].
#[inline]
pub fn set_lane<const N: usize>(bus: &mut Wide<N>, k: usize, bits: u32, v: u64) {
    bus.set_field(k * bits as usize, bits as usize, v);
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
pub fn b_operand_select<const N: usize>(
    b_bus: &Wide<N>,
    k: usize,
    fmt_b: Format,
    meta: Option<u64>,
) -> u64 {
    match meta {
        None => lane(b_bus, k, fmt_b.width()),
        Some(m) => {
            let index = ((m >> (2 * k)) & 3) as usize;
            lane(b_bus, 4 * (k / 2) + index, fmt_b.width())
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
    a_bus: &Wide<W>,
    b_bus: &Wide<W>,
    lanes: usize,
    meta: Option<u64>,
) -> Stage1<W> {
    let mut a = [0u64; W];
    let mut b = [0u64; W];
    let lanes = lanes.min(W);
    let wa = cfg.fmt_a.width();
    for k in 0..lanes {
        a[k] = lane(a_bus, k, wa);
        b[k] = b_operand_select(b_bus, k, cfg.fmt_b, meta);
    }
    Stage1 {
        m: stage_multiply::<W>(cfg.fmt_a, cfg.fmt_b, &a[..lanes], &b[..lanes]),
        b_sel: b,
    }
}

/// Stage 2: accumulates this step's products (`m`) into `c` through
/// [`stage_accumulate_acc`], the one composition of the numerics stages; the PE registers and
/// traces the fields of the returned [`StepRecord`].
///
/// `gathered` holds the products an NVIDIA block collected on its earlier steps (empty
/// unless the PE gathers, `w < n`); the block FMA then runs over `gathered ++ m`.
/// With `w >= n` one step runs `w / n` chained block FMAs ([`nvidia::step`]). `Exact` mode
/// never reaches here.
#[inline]
pub fn stage2_accumulate<const W: usize>(
    cfg: &CoreConfig,
    m: &MultiplyStage<W>,
    gathered: &[Product],
    c: u32,
) -> StepRecord {
    stage_accumulate_acc(
        &cfg.mode,
        RoundingMode::NearestEven,
        cfg.acc,
        m,
        gathered,
        c,
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 6-bit (FP6) and 19-bit (TF32) lanes packed into a bus and read back, including the
    /// lanes that cross a 64-bit word; each lane's bits checked one by one.
    #[test]
    fn lanes_cross_words() {
        for bits in [6u32, 19] {
            let mut bus = Wide::<4>::ZERO;
            let lanes = 256 / bits as usize;
            let v = |k: usize| (k as u64 * 0x2545_F491 + 0x1F) & ((1 << bits) - 1);
            for k in 0..lanes {
                set_lane(&mut bus, k, bits, v(k) | 1 << bits);
            }
            for k in 0..lanes {
                assert_eq!(lane(&bus, k, bits), v(k), "{bits}-bit lane {k}");
                let lo = k * bits as usize;
                for i in 0..bits as usize {
                    let bit = (bus.words()[(lo + i) / 64] >> ((lo + i) % 64)) & 1;
                    assert_eq!(bit, (v(k) >> i) & 1, "{bits}-bit lane {k} bit {i}");
                }
            }
        }
    }
}
