//! The floating-point datapath ([`FpPath`]: `ieee`, `fused`, `nvidia`) as hardware stages
//! over the numerics stage functions.
//!
//! - Stage 1 ([`FpPath::multiply`]): unpack and multiply the `W` lanes exactly
//!   ([`stage_multiply`]); the products are held unpacked in the stage-1 register
//!   ([`Products`]); its trace encoding packs each into one 64-bit word ([`pack_product`]).
//! - Stage 2 ([`stage2_accumulate`]): specials, alignment, add, leading-zero count,
//!   normalise and round into the accumulator (FP32 or FP16: `CoreConfig::acc`), per mode, by
//!   calling [`stage_accumulate_acc`] (the same composition the functional `dot` uses):
//!   `ieee` ([`ieee::fma`] per lane, in order), `fused` ([`fused::stage_align`] ->
//!   [`fused::stage_add`] -> [`fused::stage_normalize_round`]), `nvidia` ([`nvidia::step`]:
//!   block FMAs of `n` products, chained when `w >= n`, or one block over the gathered
//!   products when `w < n`). Its [`StepRecord`] holds every field the PE registers and traces.
//!
//! NVIDIA block FMA with `w < n`: a block spans `n / w` steps. On every step but the block's
//! last (control bit `fire` low), stage 2 copies the step's products into the block buffer
//! (`gather_<k>` registers, `gather_n` filled); on the last step it runs the block FMA over the
//! buffer plus this step's products, then empties the buffer. The accumulator changes once per
//! block, exactly as the block FMA of the functional model.
//!
//! No arithmetic is done here beyond moving fields: every numeric result comes from
//! `numerics::dot`.

use super::{lane_masked, ACtl, Datapath, Stage1Lanes, Stage2Out};
pub use crate::hw::config::CoreConfig;
use crate::numerics::dot::cdna;
use crate::numerics::dot::nvidia::block_bits_acc;
use crate::numerics::dot::step::NO_PRODUCT;
#[cfg(doc)]
use crate::numerics::dot::{fused, ieee, nvidia};
use crate::numerics::dot::{
    stage_accumulate_acc, stage_multiply, AccMode, MultiplyStage, StepRecord, MAX_LANES,
};
use crate::numerics::fixed::{
    ieee_chain_bits, ieee_chain_record, lane_multiplier, E4m3E5m2Pair, E4m3Pair, E5m2E4m3Pair,
    E5m2Pair, Fp16Pair, IeeeAcc, InlineUnit, InlinedPair, LaneMultiplier,
};
use crate::numerics::flags::{Flags, RoundingMode};
use crate::numerics::format::Format;
use crate::numerics::multiply::{Product, ProductClass};
use crate::rtl::{low_mask_u64, Reg, RegFile, Result, Value, Visitor, Wide};

/// Bits of one packed product in the stage-1 register's trace encoding (`sig` 24,
/// `exp_sum` 12, `frac_bits` 6, `class` 2, `sign` 1, `invalid` 1).
pub const PRODUCT_BITS: u32 = 46;

const EXP_BIAS: i32 = 2048;

/// Packs a product into one word of the stage-1 register's trace encoding.
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

/// Unpacks a word written by [`pack_product`].
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

/// True if `p` fits the 46 bits of its register word (every product a multiplier makes):
/// the register holds nothing the packed word could not.
#[inline]
fn fits_word(p: &Product) -> bool {
    unpack_product(pack_product(p)) == *p
}

/// The stage-1 register of a floating-point (or MX) PE: this step's exact products, held
/// unpacked; lanes `lanes..` are empty. Traced as one [`pack_product`] word per lane (empty
/// lanes 0), so the waveform shows the packed layout.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Products<const W: usize> {
    /// Valid lanes.
    pub lanes: usize,
    /// The products (`products[lanes..]` unused).
    pub products: [Product; W],
}

impl<const W: usize> Default for Products<W> {
    fn default() -> Self {
        Self {
            lanes: 0,
            products: [NO_PRODUCT; W],
        }
    }
}

impl<const W: usize> Products<W> {
    /// The bundle of the first `lanes` of `products`.
    #[inline]
    pub fn new(products: [Product; W], lanes: usize) -> Self {
        let lanes = lanes.min(W);
        debug_assert!(products[..lanes].iter().all(fits_word));
        Self { lanes, products }
    }

    /// The valid products.
    #[inline]
    pub fn valid(&self) -> &[Product] {
        &self.products[..self.lanes.min(W)]
    }
}

impl<const W: usize> Stage1Lanes for Products<W> {
    const LANES: usize = W;
    #[inline]
    fn exp_sum(&self, k: usize) -> u64 {
        if k < self.lanes {
            self.products[k].exp_sum as u64
        } else {
            0
        }
    }
    #[inline]
    fn sig(&self, k: usize) -> u64 {
        if k < self.lanes {
            self.products[k].sig
        } else {
            0
        }
    }
}

impl<const W: usize> Value for Products<W> {
    const CAPACITY: u32 = 64 * W as u32;
    const WORDS: usize = W;
    #[inline(always)]
    fn mask(self, _width: u32) -> Self {
        self
    }
    fn to_words(&self, out: &mut [u64]) {
        for (k, o) in out.iter_mut().enumerate().take(W) {
            *o = if k < self.lanes {
                pack_product(&self.products[k])
            } else {
                0
            };
        }
    }
    fn from_words(words: &[u64]) -> Self {
        let mut products = [NO_PRODUCT; W];
        for (p, &w) in products.iter_mut().zip(words) {
            *p = unpack_product(w);
        }
        Self { lanes: W, products }
    }
}

/// One word of the NVIDIA block buffer (`gather_<k>`): a product, traced as its
/// [`pack_product`] word.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct ProductWord(pub Product);

impl Default for ProductWord {
    fn default() -> Self {
        ProductWord(unpack_product(0))
    }
}

impl Value for ProductWord {
    const CAPACITY: u32 = PRODUCT_BITS;
    const WORDS: usize = 1;
    // A block-buffer slot is written once per block.
    const WRITTEN_RARELY: bool = true;
    #[inline(always)]
    fn mask(self, _width: u32) -> Self {
        self
    }
    fn to_words(&self, out: &mut [u64]) {
        out[0] = pack_product(&self.0);
    }
    fn from_words(words: &[u64]) -> Self {
        ProductWord(unpack_product(words.first().copied().unwrap_or(0)))
    }
}

/// The floating-point datapath of one PE: the core's formats and mode, fixed when it is
/// built, and the NVIDIA block buffer.
pub struct FpPath<const FLUSH: bool = false> {
    cfg: CoreConfig,
    multipliers: LaneMultipliers,
    /// In `ieee` mode, the accumulator format the FMA chain is built for (`None` in the other
    /// modes): [`ieee_chain_record`] for a PE whose stage-2 wires are observed,
    /// [`ieee_chain_bits`] (no trace fields) for one whose are not.
    ieee: Option<IeeeAcc>,
    gathers: bool,
    /// The block buffer (`gather_<k>`): a register file written one step's lanes a cycle.
    gather: RegFile<ProductWord>,
    gather_n: Reg<GatherCount>,
}

/// Whether a core built for `cfg` reads subnormal A and B as zero (the AMD CDNA2 input flush,
/// [`cdna::flushes_inputs`]): such a core is built with [`FpPath<true>`], every other with
/// [`FpPath`], so the choice is made once, when the core is built, and no other core carries
/// the check.
pub fn flushes_inputs(cfg: &CoreConfig) -> bool {
    matches!(cfg.mode, AccMode::Nvidia(p) if cdna::flushes_inputs(p.rule))
}

impl<const FLUSH: bool> FpPath<FLUSH> {
    /// The datapath of a core built for `cfg` (`ieee`, `fused` or `nvidia`). `FLUSH` must be
    /// [`flushes_inputs`]`(cfg)`: a mismatch is refused.
    pub fn new(cfg: &CoreConfig) -> Result<Self> {
        if FLUSH != flushes_inputs(cfg) {
            return Err(crate::rtl::RtlError::Elaboration(format!(
                "the floating-point datapath for {} mode is `FpPath<{}>`",
                cfg.mode.name(),
                !FLUSH
            )));
        }
        Self::build(cfg)
    }

    fn build(cfg: &CoreConfig) -> Result<Self> {
        let gather_lanes = if cfg.gathers() {
            cfg.block().min(MAX_LANES) - cfg.width
        } else {
            0
        };
        let gather = RegFile::new(
            (0..gather_lanes)
                .map(|k| {
                    Ok(
                        Reg::new(format!("gather_{k}"), PRODUCT_BITS, ProductWord::default())?
                            .with_display(crate::rtl::Display::Filter("prod")),
                    )
                })
                .collect::<Result<Vec<_>>>()?,
        );
        Ok(Self {
            cfg: *cfg,
            multipliers: LaneMultipliers::new(cfg.fmt_a, cfg.fmt_b),
            ieee: match cfg.mode {
                AccMode::Ieee => IeeeAcc::of(cfg.acc),
                _ => None,
            },
            gathers: cfg.gathers(),
            gather,
            gather_n: gather_count()?,
        })
    }

    /// Stage 1 proper: the exact products of `lanes` lanes, A's from `a_bus`, B's as `b_of`
    /// selects them (lane `k` of the B bus, or the 2:4 select's pick).
    #[inline]
    pub fn multiply<const W: usize>(
        &self,
        a_bus: &Wide<W>,
        lanes: usize,
        b_of: impl Fn(usize) -> u64,
    ) -> Products<W> {
        let mut out = self.multipliers.products(a_bus, lanes, &b_of);
        if FLUSH {
            self.multipliers.flush_lanes(a_bus, &b_of, &mut out);
        }
        out
    }

    /// The AMD CDNA2 input flush on one cycle's products (subnormal A or B read as zero),
    /// outside the multiplier array's lane loop; only a `FLUSH` datapath has it.
    #[inline(always)]
    fn flush_if_cdna2<const W: usize>(&self, a: &Wide<W>, b: &Wide<W>, out: &mut Products<W>) {
        if FLUSH {
            let (wb, mb) = (self.multipliers.lane_bits.1, self.multipliers.lane_masks.1);
            self.multipliers
                .flush_lanes(a, &|k| lane_masked(b, k, wb, mb), out);
        }
    }

    /// The B operand format.
    #[inline]
    pub fn fmt_b(&self) -> Format {
        self.cfg.fmt_b
    }

    /// The block buffer's step: on a step of an NVIDIA block that does not fire, stores the
    /// step's `lanes` products after the `gather_n` already held and returns true (the block
    /// FMA fires later); otherwise does nothing and returns false.
    #[inline]
    fn gather_step<const W: usize>(&mut self, s1: &Products<W>, c1: ACtl, lanes: usize) -> bool {
        if !self.gathers || c1.fire() {
            return false;
        }
        let n_gathered = usize::from(self.gather_n.q().0);
        for (k, p) in s1.products[..lanes].iter().enumerate() {
            self.gather.set_d(n_gathered + k, ProductWord(*p));
        }
        self.gather_n.set_d(GatherCount((n_gathered + lanes) as u8));
        true
    }

    /// The products of the block firing this step into `block`: the buffer's (`gather_n` of
    /// them) followed by the step's `lanes`, as `nvidia::step` forms `gathered ++ m` (at most
    /// `n` in all: the buffer holds `n - w`). Returns how many.
    #[inline]
    fn block_products<const W: usize>(
        &self,
        s1: &Products<W>,
        lanes: usize,
        block: &mut [Product; MAX_LANES],
    ) -> usize {
        let g = usize::from(self.gather_n.q().0).min(self.gather.len());
        for (k, slot) in block[..g].iter_mut().enumerate() {
            *slot = self.gather.q(k).0;
        }
        let t = (g + lanes).min(MAX_LANES);
        block[g..t].copy_from_slice(&s1.products[..t - g]);
        t
    }
}

/// The stage-1 multiplier array of a floating-point (or MX) PE: one exact multiplier per
/// lane, built for the core's format pair when the core is built
/// ([`lane_multiplier`], or an [`InlinedPair`]'s unit), with the lane widths of the A and B
/// buses.
#[derive(Clone, Copy, Debug)]
pub struct LaneMultipliers {
    fmt_a: Format,
    fmt_b: Format,
    /// Bits of one A lane and one B lane on the operand buses.
    lane_bits: (u32, u32),
    /// The masks of those low bits (the lane decoders' masks).
    lane_masks: (u64, u64),
    /// The multiplier built for the pair (`None`: a format outside the table, multiplied by
    /// the format-generic unit).
    unit: Option<LaneMultiplier>,
    /// The pair's unit inlined into the lane loop (FP16 x FP16 and the FP8 pairs), not
    /// called.
    inlined: Option<InlinedPair>,
}

impl LaneMultipliers {
    /// The multiplier array for `fmt_a x fmt_b`.
    pub fn new(fmt_a: Format, fmt_b: Format) -> Self {
        Self {
            fmt_a,
            fmt_b,
            lane_bits: (fmt_a.width(), fmt_b.width()),
            lane_masks: (low_mask_u64(fmt_a.width()), low_mask_u64(fmt_b.width())),
            unit: lane_multiplier(fmt_a, fmt_b),
            inlined: InlinedPair::of(fmt_a, fmt_b),
        }
    }

    /// Zeroes the finite products of lanes whose A (from `a_bus`) or B (`b_of`) is subnormal.
    #[cold]
    #[inline(never)]
    fn flush_lanes<const W: usize>(
        &self,
        a_bus: &Wide<W>,
        b_of: &impl Fn(usize) -> u64,
        out: &mut Products<W>,
    ) {
        let (wa, ma) = (self.lane_bits.0, self.lane_masks.0);
        let lanes = out.lanes.min(W);
        let mut a = [0u64; W];
        let mut b = [0u64; W];
        for k in 0..lanes {
            a[k] = lane_masked(a_bus, k, wa, ma);
            b[k] = b_of(k);
        }
        cdna::flush_subnormal_operands(
            self.fmt_a,
            self.fmt_b,
            &a[..lanes],
            &b[..lanes],
            &mut out.products[..lanes],
        );
    }

    /// The exact products of the first `lanes` lanes of the A and B buses.
    #[inline(always)]
    pub fn bus_products<const W: usize>(
        &self,
        a_bus: &Wide<W>,
        b_bus: &Wide<W>,
        lanes: usize,
    ) -> Products<W> {
        let (wb, mb) = (self.lane_bits.1, self.lane_masks.1);
        self.products(a_bus, lanes, |k| lane_masked(b_bus, k, wb, mb))
    }

    /// [`LaneMultipliers::bus_products`] written into `out` (lanes `lanes..` left as they
    /// were: no reader looks at them).
    #[inline(always)]
    pub fn bus_products_into<const W: usize>(
        &self,
        a_bus: &Wide<W>,
        b_bus: &Wide<W>,
        lanes: usize,
        out: &mut Products<W>,
    ) {
        let lanes = lanes.min(W);
        let (wa, ma) = (self.lane_bits.0, self.lane_masks.0);
        let (wb, mb) = (self.lane_bits.1, self.lane_masks.1);
        let b_of = |k| lane_masked(b_bus, k, wb, mb);
        let into = |mul: &dyn Fn(u64, u64) -> Product, out: &mut Products<W>| {
            for (k, p) in out.products.iter_mut().enumerate().take(lanes) {
                *p = mul(lane_masked(a_bus, k, wa, ma), b_of(k));
            }
            out.lanes = lanes;
            debug_assert!(out.valid().iter().all(fits_word));
        };
        match (self.inlined, self.unit) {
            (Some(InlinedPair::Fp16), _) => fixed_lanes::<W, Fp16Pair>(a_bus, b_bus, lanes, out),
            (Some(InlinedPair::E4m3), _) => fixed_lanes::<W, E4m3Pair>(a_bus, b_bus, lanes, out),
            (Some(InlinedPair::E5m2), _) => fixed_lanes::<W, E5m2Pair>(a_bus, b_bus, lanes, out),
            (Some(InlinedPair::E4m3E5m2), _) => {
                fixed_lanes::<W, E4m3E5m2Pair>(a_bus, b_bus, lanes, out)
            }
            (Some(InlinedPair::E5m2E4m3), _) => {
                fixed_lanes::<W, E5m2E4m3Pair>(a_bus, b_bus, lanes, out)
            }
            (None, Some(mul)) => into(&mul, out),
            (None, None) => *out = self.bus_products(a_bus, b_bus, lanes),
        }
    }

    /// The exact products of `lanes` lanes, A's from `a_bus`, B's as `b_of` selects them
    /// (subnormal operands read as zero if the array flushes them).
    #[inline(always)]
    pub fn products<const W: usize>(
        &self,
        a_bus: &Wide<W>,
        lanes: usize,
        b_of: impl Fn(usize) -> u64,
    ) -> Products<W> {
        self.exact_products(a_bus, lanes, &b_of)
    }

    /// The exact products of `lanes` lanes (no flush).
    #[inline(always)]
    fn exact_products<const W: usize>(
        &self,
        a_bus: &Wide<W>,
        lanes: usize,
        b_of: &impl Fn(usize) -> u64,
    ) -> Products<W> {
        let lanes = lanes.min(W);
        let (wa, ma) = (self.lane_bits.0, self.lane_masks.0);
        if self.inlined == Some(InlinedPair::Fp16) {
            let a_lane = (
                Fp16Pair::FMT_A.width(),
                low_mask_u64(Fp16Pair::FMT_A.width()),
            );
            return each_lane(a_bus, lanes, a_lane, b_of, Fp16Pair::multiply);
        }
        if let Some(mul) = self.unit {
            return each_lane(a_bus, lanes, (wa, ma), b_of, mul);
        }
        let mut a = [0u64; W];
        let mut b = [0u64; W];
        for k in 0..lanes {
            a[k] = lane_masked(a_bus, k, wa, ma);
            b[k] = b_of(k);
        }
        let m = stage_multiply::<W>(self.fmt_a, self.fmt_b, &a[..lanes], &b[..lanes]);
        Products::new(m.products, m.lanes)
    }
}

/// The products of the first `lanes` lanes through the inlined unit `U` into `out`: the lane
/// widths are `U`'s formats' (constants), so each lane decoder is a shift and a mask. All `W`
/// multipliers run, as in hardware (lanes `lanes..` hold the products of whatever the buses
/// carry there, which no reader looks at), so the loop has a constant trip count.
#[inline(always)]
fn fixed_lanes<const W: usize, U: InlineUnit>(
    a_bus: &Wide<W>,
    b_bus: &Wide<W>,
    lanes: usize,
    out: &mut Products<W>,
) {
    let (wa, wb) = (U::FMT_A.width(), U::FMT_B.width());
    let (ma, mb) = (low_mask_u64(wa), low_mask_u64(wb));
    for (k, p) in out.products.iter_mut().enumerate() {
        *p = U::multiply(lane_masked(a_bus, k, wa, ma), lane_masked(b_bus, k, wb, mb));
    }
    out.lanes = lanes;
    debug_assert!(out.valid().iter().all(fits_word));
}

/// Each of the first `lanes` lanes' multiplier `mul` on its A lane (of `bits` bits under
/// `mask` on `a_bus`) and the B value `b_of` gives.
#[inline(always)]
fn each_lane<const W: usize>(
    a_bus: &Wide<W>,
    lanes: usize,
    (bits, mask): (u32, u64),
    b_of: &impl Fn(usize) -> u64,
    mul: impl Fn(u64, u64) -> Product,
) -> Products<W> {
    let mut products = [NO_PRODUCT; W];
    for (k, p) in products.iter_mut().enumerate().take(lanes) {
        *p = mul(lane_masked(a_bus, k, bits, mask), b_of(k));
    }
    Products::new(products, lanes)
}

/// The block buffer's fill count register (`gather_n`; every datapath has one, only the
/// NVIDIA gather writes it).
pub(super) fn gather_count() -> Result<Reg<GatherCount>> {
    Ok(Reg::new("gather_n", 6, GatherCount(0))?.with_display(crate::rtl::Display::Dec))
}

/// The value of the block buffer's fill count (`gather_n`): the products it holds. Only the
/// NVIDIA gather writes it (a datapath that never gathers leaves it at its reset value), so
/// its register notes each write ([`Value::WRITTEN_RARELY`]): the clock edge copies it only
/// after a write, and a toggle count compares it only then.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct GatherCount(pub u8);

impl Value for GatherCount {
    const CAPACITY: u32 = u8::BITS;
    const WORDS: usize = 1;
    const WRITTEN_RARELY: bool = true;
    #[inline]
    fn mask(self, width: u32) -> Self {
        GatherCount(self.0.mask(width))
    }
    #[inline(always)]
    fn mask_low(self, width: u32, low: u64) -> Self {
        GatherCount(self.0.mask_low(width, low))
    }
    #[inline]
    fn to_words(&self, out: &mut [u64]) {
        self.0.to_words(out);
    }
    #[inline]
    fn from_words(words: &[u64]) -> Self {
        GatherCount(u8::from_words(words))
    }
}

/// The stage-2 wires of a floating-point step record.
#[inline]
pub(super) fn stage2_out(r: &StepRecord) -> Stage2Out {
    Stage2Out {
        acc: r.bits,
        flags: r.flags.to_bits(),
        max_exp: r.max_exp as u16,
        align_shift: r.align_shift as u16,
        sticky: r.sticky,
        lzc: r.lzc as u16,
        round_inc: r.round.round_inc,
        special: r.special,
    }
}

impl<const W: usize, const FLUSH: bool> Datapath<W> for FpPath<FLUSH> {
    type SideA = ();
    type SideB = ();
    type Stage1 = Products<W>;

    #[inline]
    fn side_b(_: u8) {}

    #[inline]
    fn side_a(_: u64) {}

    #[inline]
    fn pass(&mut self, _: (), _: ()) {}

    #[inline]
    fn side_out(&self) -> ((), ()) {
        ((), ())
    }

    #[inline(always)]
    fn stage1(&mut self, a: &Wide<W>, b: &Wide<W>, lanes: usize, _: ()) -> Products<W> {
        let mut out = self.multipliers.bus_products(a, b, lanes);
        self.flush_if_cdna2(a, b, &mut out);
        out
    }

    #[inline(always)]
    fn stage1_into(
        &mut self,
        a: &Wide<W>,
        b: &Wide<W>,
        lanes: usize,
        _: (),
        out: &mut Products<W>,
    ) {
        self.multipliers.bus_products_into(a, b, lanes, out);
        self.flush_if_cdna2(a, b, out);
    }

    #[inline]
    fn stage1_idle(&mut self) {}

    #[inline]
    fn stage2(&mut self, s1: &Products<W>, c1: ACtl, acc: u32) -> Option<Stage2Out> {
        let lanes = usize::from(c1.lanes()).min(W);
        if let Some(acc_fmt) = self.ieee {
            // `ieee`: the FMA chain over this step's products (no block buffer in this mode);
            // a valid step has at least one lane.
            debug_assert!(c1.lanes() >= 1);
            return Some(stage2_out(&ieee_chain_record(
                acc_fmt,
                &s1.products[..lanes.max(1)],
                acc,
            )));
        }
        if self.gather_step(s1, c1, lanes) {
            return None;
        }
        let g = usize::from(self.gather_n.q().0).min(self.gather.len());
        let out = if g == 0 {
            let m = MultiplyStage::<W>::from_products(&s1.products[..lanes]);
            stage2_accumulate::<W>(&self.cfg, &m, &[], acc)
        } else {
            let mut block = [NO_PRODUCT; MAX_LANES];
            let t = self.block_products(s1, lanes, &mut block);
            let m = MultiplyStage::<MAX_LANES>::from_products(&block[..t]);
            stage2_accumulate::<MAX_LANES>(&self.cfg, &m, &[], acc)
        };
        self.gather_n.set_d(GatherCount(0));
        Some(stage2_out(&out))
    }

    #[inline(always)]
    fn stage2_acc(&mut self, s1: &Products<W>, c1: ACtl, acc: u32) -> Option<(u32, u8)> {
        let lanes = usize::from(c1.lanes()).min(W);
        // A valid step has at least one lane (stage 1 marks a step of none idle), so a
        // one-lane core's chain is one FMA, with no loop around it. The FP32 accumulator (the
        // common one) is tested first.
        debug_assert!(c1.lanes() >= 1);
        if self.ieee == Some(IeeeAcc::Fp32) {
            let products = &s1.products[..lanes.max(1)];
            return Some(ieee_chain_bits(IeeeAcc::Fp32, products, acc));
        }
        if let Some(acc_fmt) = self.ieee {
            let products = &s1.products[..lanes.max(1)];
            return Some(ieee_chain_bits(acc_fmt, products, acc));
        }
        if let AccMode::Nvidia(params) = self.cfg.mode {
            let n = params.block.clamp(1, MAX_LANES);
            if self.gathers || lanes <= n {
                // One block this step (or none yet): its bits without the trace record.
                if self.gather_step(s1, c1, lanes) {
                    return None;
                }
                let mut block = [NO_PRODUCT; MAX_LANES];
                let t = self.block_products(s1, lanes, &mut block);
                self.gather_n.set_d(GatherCount(0));
                let (bits, flags) = block_bits_acc(&params, &block[..t], acc, self.cfg.acc);
                return Some((bits, flags.to_bits()));
            }
        }
        self.stage2(s1, c1, acc).map(|o| (o.acc, o.flags))
    }

    #[inline]
    fn stage2_idle(&mut self) {}

    #[inline]
    fn visit_gather<V: Visitor>(&mut self, v: &mut V) {
        v.reg_file(&mut self.gather);
        v.reg(&mut self.gather_n);
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

/// True if `mode` runs on the floating-point datapath.
pub const fn is_fp(mode: &AccMode) -> bool {
    matches!(mode, AccMode::Ieee | AccMode::Fused | AccMode::Nvidia(_))
}
