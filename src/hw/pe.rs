//! The processing element: operands in from the left (A) and the top (B), passed on through
//! registers; a two-stage dot-product datapath of width `W` into one of two FP32
//! accumulators; a column shift path through the idle accumulator for C preload and drain.
//!
//! Pipeline (`L` = [`crate::hw::PIPELINE_LATENCY`] = 1):
//! - cycle `t` (stage 1): `a_in`/`b_in` enter; the `W` lanes are multiplied exactly
//!   ([`stage1_multiply`]) and the products latched in `s1_prod` with the control word in
//!   `s1_ctl`; `a_in`/`b_in` are latched in `a_out`/`b_out` for the right/lower neighbour.
//! - cycle `t + 1` (stage 2): specials, alignment, add, normalise and round of `s1_prod` into
//!   accumulator `acc_<set>` ([`stage2_accumulate`]); the result is latched at the edge.
//!
//! NVIDIA block FMA with `w < n`: a block spans `n / w` steps. On every step but the block's
//! last (control bit `fire` low), stage 2 copies the step's products into the block buffer
//! (`gather_<k>` registers, `gather_n` filled); on the last step it runs the block FMA over the
//! buffer plus this step's products, then empties the buffer. The accumulator changes once per
//! block, exactly as the block FMA of the functional model.
//!
//! Integer mode ([`AccMode::Int`]): the same two stages over [`super::pe_int`]: stage 1
//! multiplies the lanes exactly into `s1_prod`, stage 2 adds them to the int32 held in
//! `acc_<set>` and wraps or clamps the sum back into it.
//!
//! A PE does not know where it sits: the mesh wires its inputs.
//!
//! 2:4 sparse mode ([`Pe::with_mode`], [`SparseFront`]): the PE also registers the metadata
//! beside `a_out` (`meta_in` -> `meta_out`, passed right like `a_ctl`), its B bus is
//! `max(2w, 4)` lanes wide, and stage 1 multiplies each kept A lane by the B lane its 2-bit
//! select (`sel_<t>`) names within the lane's group of four (`b_sel`, the multiplexer
//! outputs; see [`crate::hw::pe_datapath::b_operand_select`]).
//!
//! MX block-scaled mode ([`Pe::with_fronts`], [`MxFront`]): the block scales travel
//! beside the operands (`a_scale` right with A, `b_scale` down with B) and stage 2 sums each
//! K-block of 32 exactly in `blk_sum`, then on the block's `fire` step applies the scales as
//! an exponent add and adds into the accumulator with one rounding (see [`crate::hw::pe_mx`]).

use super::mx_feeder::MxSpec;
use super::pe_datapath::{
    pack_product, set_lane, stage1_multiply, stage2_accumulate, unpack_product, CoreConfig,
    PRODUCT_BITS,
};
use super::pe_int::{
    pack_int_product, stage1_int_multiply, stage2_int_accumulate, unpack_int_product,
};
use super::pe_mx::MxFront;
use crate::numerics::dot::step::NO_PRODUCT;
use crate::numerics::dot::{AccMode, MultiplyStage, MAX_LANES};
use crate::numerics::flags::Flags;
use crate::numerics::multiply::Product;
use crate::rtl::{Display, Module, Reg, Result, Visitor, Wide, Wire};

/// Control word travelling with A: number of valid lanes (0..=32).
pub const CTL_LANES: u16 = 0x3F;
/// Control bit: the last step of a tile.
pub const CTL_LAST: u16 = 1 << 6;
/// Control bit: the last step of an NVIDIA block (fire the block FMA).
pub const CTL_FIRE: u16 = 1 << 7;
/// Control bit: the accumulator set of this tile.
pub const CTL_SET: u16 = 1 << 8;
/// Control bit: this row carries data (the A row is inside the problem).
pub const CTL_VALID: u16 = 1 << 9;
/// Width of the control word.
pub const CTL_BITS: u32 = 10;

/// The control bundle travelling with A (`a_ctl`, and `s1_ctl` in stage 1), as typed fields;
/// [`ACtl::pack`] gives the traced 10-bit word ([`CTL_BITS`]):
///
/// | bits | field   | constant      |
/// |------|---------|---------------|
/// | 5:0  | `lanes` | [`CTL_LANES`] |
/// | 6    | `last`  | [`CTL_LAST`]  |
/// | 7    | `fire`  | [`CTL_FIRE`]  |
/// | 8    | `set`   | [`CTL_SET`]   |
/// | 9    | `valid` | [`CTL_VALID`] |
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ACtl {
    /// Valid lanes of this step (0..=32).
    pub lanes: u8,
    /// The last step of a tile.
    pub last: bool,
    /// The last step of an NVIDIA block: fire the block FMA.
    pub fire: bool,
    /// The accumulator set of this tile.
    pub set: bool,
    /// This row carries data (the A row is inside the problem).
    pub valid: bool,
}

impl ACtl {
    /// The traced control word.
    pub const fn pack(self) -> u16 {
        (self.lanes as u16 & CTL_LANES)
            | if self.last { CTL_LAST } else { 0 }
            | if self.fire { CTL_FIRE } else { 0 }
            | if self.set { CTL_SET } else { 0 }
            | if self.valid { CTL_VALID } else { 0 }
    }

    /// The bundle of a control word written by [`ACtl::pack`].
    pub const fn unpack(w: u16) -> ACtl {
        ACtl {
            lanes: (w & CTL_LANES) as u8,
            last: w & CTL_LAST != 0,
            fire: w & CTL_FIRE != 0,
            set: w & CTL_SET != 0,
            valid: w & CTL_VALID != 0,
        }
    }
}

/// The column shift path's input to a PE this cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShiftIn {
    /// Shift this cycle: the idle accumulator `acc_<set>` takes `value`.
    pub en: bool,
    /// Which accumulator set shifts.
    pub set: bool,
    /// The value from above (the PE above's `acc_<set>`, or C at the top edge).
    pub value: u32,
}

/// One processing element with `W` lanes.
pub struct Pe<const W: usize> {
    name: String,
    cfg: CoreConfig,
    a_in: Wire<Wide<W>>,
    b_in: Wire<Wide<W>>,
    a_out: Reg<Wide<W>>,
    a_ctl: Reg<u16>,
    b_out: Reg<Wide<W>>,
    b_vld: Reg<bool>,
    s1_prod: Reg<Wide<W>>,
    s1_ctl: Reg<u16>,
    exp_sum: Wire<Wide<W>>,
    sig_product: Wire<Wide<W>>,
    acc_0: Reg<u32>,
    acc_1: Reg<u32>,
    acc: Wire<u32>,
    max_exp: Wire<u16>,
    align_shift: Wire<u16>,
    sticky: Wire<bool>,
    lzc: Wire<u16>,
    round_inc: Wire<bool>,
    special: Wire<bool>,
    gather: Vec<Reg<u64>>,
    gather_n: Reg<u8>,
    flags: Reg<u8>,
    done: Reg<bool>,
    hazard: Reg<bool>,
    sparse: Option<SparseFront<W>>,
    mx: Option<MxFront>,
}

/// The 2:4 selection front of a sparse PE: the metadata register travelling with A and the
/// B-side multiplexers' traced selects and outputs.
pub struct SparseFront<const W: usize> {
    meta_in: Wire<u64>,
    meta_out: Reg<u64>,
    sel: Vec<Wire<u8>>,
    b_sel: Wire<Wide<W>>,
}

/// Lanes of the B bus in 2:4 sparse mode for `width` kept values a step: the `ceil(w / 2)`
/// groups of four dense K positions their metadata indexes (`2w`, at least 4).
pub const fn sparse_b_lanes(width: usize) -> usize {
    if width < 2 {
        4
    } else {
        2 * width
    }
}

impl<const W: usize> Pe<W> {
    /// A PE named `name` (the mesh names them `pe_<row>_<col>`).
    pub fn new(name: String, cfg: CoreConfig) -> Result<Self> {
        Self::with_mode(name, cfg, false)
    }

    /// A PE named `name`, in 2:4 sparse mode if `sparse` (see the module documentation).
    pub fn with_mode(name: String, cfg: CoreConfig, sparse: bool) -> Result<Self> {
        Self::with_fronts(name, cfg, sparse, None)
    }

    /// A PE named `name`, in 2:4 sparse mode if `sparse`, in MX block-scaled mode if `mx`
    /// names what the core is built for (see the module documentation).
    pub fn with_fronts(
        name: String,
        cfg: CoreConfig,
        sparse: bool,
        mx: Option<MxSpec>,
    ) -> Result<Self> {
        let w = W as u32;
        // MXINT8 lanes are integers: hex in the waves, as in the integer mode.
        let (disp_a, disp_b) = match mx {
            Some(spec) if spec.int8() => (Display::Hex, Display::Hex),
            _ => (
                cfg.operand_display(cfg.fmt_a),
                cfg.operand_display(cfg.fmt_b),
            ),
        };
        let b_lanes = if sparse { sparse_b_lanes(W) as u32 } else { w };
        let sparse = if sparse {
            Some(SparseFront {
                meta_in: Wire::new("meta_in", 2 * w, 0)?.with_display(Display::Filter("meta")),
                meta_out: Reg::new("meta_out", 2 * w, 0)?.with_display(Display::Filter("meta")),
                sel: (0..W)
                    .map(|t| Ok(Wire::new(format!("sel_{t}"), 2, 0u8)?.with_display(Display::Dec)))
                    .collect::<Result<Vec<_>>>()?,
                b_sel: Wire::new("b_sel", cfg.fmt_b.width() * w, Wide::ZERO)?.with_display(disp_b),
            })
        } else {
            None
        };
        let gather_lanes = if cfg.gathers() {
            cfg.block().min(MAX_LANES) - cfg.width
        } else {
            0
        };
        let gather = (0..gather_lanes)
            .map(|k| Reg::new(format!("gather_{k}"), PRODUCT_BITS, 0u64))
            .collect::<Result<Vec<_>>>()?;
        Ok(Self {
            name,
            cfg,
            a_in: Wire::new("a_in", cfg.fmt_a.width() * w, Wide::ZERO)?
                .with_display(disp_a)
                .in_overview(),
            b_in: Wire::new("b_in", cfg.fmt_b.width() * b_lanes, Wide::ZERO)?
                .with_display(disp_b)
                .in_overview(),
            a_out: Reg::new("a_out", cfg.fmt_a.width() * w, Wide::ZERO)?.with_display(disp_a),
            a_ctl: Reg::new("a_ctl", CTL_BITS, 0)?.with_display(Display::Filter("ctl")),
            b_out: Reg::new("b_out", cfg.fmt_b.width() * b_lanes, Wide::ZERO)?.with_display(disp_b),
            b_vld: Reg::new("b_vld", 1, false)?,
            s1_prod: Reg::new("s1_prod", 64 * w, Wide::ZERO)?,
            s1_ctl: Reg::new("s1_ctl", CTL_BITS, 0)?.with_display(Display::Filter("ctl")),
            exp_sum: Wire::new("exp_sum", 16 * w, Wide::ZERO)?,
            sig_product: Wire::new("sig_product", 32 * w, Wide::ZERO)?,
            // The accumulator registers are as wide as the accumulator format (32 or 16).
            acc_0: Reg::new("acc_0", cfg.acc.width(), 0)?
                .with_display(cfg.acc_display())
                .in_overview(),
            acc_1: Reg::new("acc_1", cfg.acc.width(), 0)?
                .with_display(cfg.acc_display())
                .in_overview(),
            acc: Wire::new("acc", cfg.acc.width(), 0)?.with_display(cfg.acc_display()),
            max_exp: Wire::new("max_exp", 16, 0)?,
            align_shift: Wire::new("align_shift", 16, 0)?.with_display(Display::Dec),
            sticky: Wire::new("sticky", 1, false)?,
            lzc: Wire::new("lzc", 16, 0)?.with_display(Display::Dec),
            round_inc: Wire::new("round_inc", 1, false)?,
            special: Wire::new("special", 1, false)?,
            gather,
            gather_n: Reg::new("gather_n", 6, 0)?.with_display(Display::Dec),
            flags: Reg::new("flags", 4, 0)?,
            done: Reg::new("done", 1, false)?,
            hazard: Reg::new("hazard", 1, false)?,
            sparse,
            mx: match mx {
                Some(spec) => Some(MxFront::new(&spec)?),
                None => None,
            },
        })
    }

    /// The block scales leaving right (A's) and down (B's) (register outputs; 0 unless MX).
    #[inline]
    pub fn scales_out(&self) -> (u8, u8) {
        self.mx
            .as_ref()
            .map_or((0, 0), |f| (f.a_scale_out(), f.b_scale_out()))
    }

    /// The metadata leaving to the right (register output; 0 in dense mode).
    #[inline]
    pub fn meta_out(&self) -> u64 {
        self.sparse.as_ref().map_or(0, |f| f.meta_out.q())
    }

    /// True if the PE was built in 2:4 sparse mode.
    pub fn is_sparse(&self) -> bool {
        self.sparse.is_some()
    }

    /// A leaving to the right: data and control word (register outputs).
    #[inline]
    pub fn a_out(&self) -> (Wide<W>, u16) {
        (self.a_out.q(), self.a_ctl.q())
    }

    /// B leaving downwards: data and valid (register outputs).
    #[inline]
    pub fn b_out(&self) -> (Wide<W>, bool) {
        (self.b_out.q(), self.b_vld.q())
    }

    /// Accumulator `set` (register output): what the shift path passes down.
    #[inline]
    pub fn acc_q(&self, set: bool) -> u32 {
        if set {
            self.acc_1.q()
        } else {
            self.acc_0.q()
        }
    }

    /// High for one cycle after stage 2 handled the last step of a tile.
    pub fn done(&self) -> bool {
        self.done.q()
    }

    /// The IEEE flags raised so far (sticky).
    pub fn flags(&self) -> Flags {
        let f = self.flags.q();
        Flags {
            invalid: f & 8 != 0,
            overflow: f & 4 != 0,
            underflow: f & 2 != 0,
            inexact: f & 1 != 0,
        }
    }

    /// True if the shift path and stage 2 ever wrote the same accumulator in one cycle.
    pub fn hazard(&self) -> bool {
        self.hazard.q()
    }

    /// The combinational phase: stage 1 on the inputs, stage 2 on the stage-1 register, the
    /// pass-through registers and the shift path.
    #[inline]
    pub fn comb(&mut self, a_in: Wide<W>, a_ctl: u16, b_in: Wide<W>, b_vld: bool, shift: ShiftIn) {
        self.comb_with_meta(a_in, a_ctl, 0, b_in, b_vld, shift);
    }

    /// [`Pe::comb`] with the metadata arriving beside A (`meta_in`: the left neighbour's
    /// `meta_out`, or the edge); ignored by a dense PE.
    #[inline]
    pub fn comb_with_meta(
        &mut self,
        a_in: Wide<W>,
        a_ctl: u16,
        meta_in: u64,
        b_in: Wide<W>,
        b_vld: bool,
        shift: ShiftIn,
    ) {
        self.comb_full(a_in, a_ctl, meta_in, 0, b_in, b_vld, 0, shift);
    }

    /// [`Pe::comb_with_meta`] with the block scale codes arriving beside A (`a_scale`) and B
    /// (`b_scale`); ignored unless the PE was built in MX mode.
    #[inline]
    #[allow(clippy::too_many_arguments)] // one argument per input port of the PE
    pub fn comb_full(
        &mut self,
        a_in: Wide<W>,
        a_ctl: u16,
        meta_in: u64,
        a_scale: u8,
        b_in: Wide<W>,
        b_vld: bool,
        b_scale: u8,
        shift: ShiftIn,
    ) {
        let cfg = self.cfg;
        if let Some(f) = self.mx.as_mut() {
            f.pass(a_scale, b_scale);
        }
        // Sparse: the metadata passes on beside A; it drives this PE's B multiplexers.
        let meta = match self.sparse.as_mut() {
            Some(f) => {
                f.meta_in.set(meta_in);
                f.meta_out.set_d(meta_in);
                Some(meta_in)
            }
            None => None,
        };
        // Operands pass on to the neighbours through registers.
        self.a_in.set(a_in);
        self.b_in.set(b_in);
        self.a_out.set_d(a_in);
        self.a_ctl.set_d(a_ctl);
        self.b_out.set_d(b_in);
        self.b_vld.set_d(b_vld);

        // Stage 1: multiply (only when both operands carry data).
        let ctl = ACtl::unpack(a_ctl);
        let lanes = usize::from(ctl.lanes);
        let valid = ctl.valid && b_vld && lanes > 0;
        self.s1_ctl.set_d(ACtl { valid, ..ctl }.pack());
        let int_mode = match cfg.mode {
            AccMode::Int(im) => Some(im),
            _ => None,
        };
        if let (true, Some(im)) = (valid, int_mode) {
            // Integer stage 1 (see `pe_int`): exact products into `s1_prod`.
            let p = stage1_int_multiply::<W>(&im, &a_in, &b_in, lanes);
            let mut prod = [0u64; W];
            let mut sigs = Wide::<W>::ZERO;
            for (k, &pk) in p.iter().enumerate().take(lanes) {
                prod[k] = pack_int_product(pk);
                set_lane(&mut sigs, k, 32, pk as u64);
            }
            self.s1_prod.set_d(Wide::from_words_array(prod));
            self.exp_sum.set(Wide::ZERO);
            self.sig_product.set(sigs);
        } else if valid && self.mx.as_ref().is_some_and(MxFront::int8) {
            // MXINT8 stage 1: 8 x 8-bit integer multipliers, products as the block adder
            // takes them.
            let products = MxFront::int8_products::<W>(&a_in, &b_in, lanes);
            self.register_products(&products[..lanes.min(W)]);
        } else if valid {
            let s1 = stage1_multiply::<W>(&cfg, &a_in, &b_in, lanes, meta);
            if let (Some(f), Some(m)) = (self.sparse.as_mut(), meta) {
                let mut picked = Wide::<W>::ZERO;
                for (t, s) in f.sel.iter_mut().enumerate() {
                    if t < lanes {
                        s.set(((m >> (2 * t)) & 3) as u8);
                        set_lane(&mut picked, t, cfg.fmt_b.width(), s1.b_sel[t]);
                    } else {
                        s.set(0);
                    }
                }
                f.b_sel.set(picked);
            }
            self.register_products(s1.m.valid());
        } else {
            // Operand isolation: an idle stage's combinational outputs read 0 (in hardware the
            // inputs are gated), so no wire shows a stale value from an earlier cycle.
            self.exp_sum.set(Wide::ZERO);
            self.sig_product.set(Wide::ZERO);
            if let Some(f) = self.sparse.as_mut() {
                for s in f.sel.iter_mut() {
                    s.set(0);
                }
                f.b_sel.set(Wide::ZERO);
            }
        }

        // Stage 2: accumulate the registered products.
        let c1 = ACtl::unpack(self.s1_ctl.q());
        self.done.set_d(c1.last);
        let set = c1.set;
        let mut writes_acc = false;
        // Stage-2 wires read 0 unless the accumulation below drives them this cycle.
        self.acc.set(0);
        self.max_exp.set(0);
        self.align_shift.set(0);
        self.sticky.set(false);
        self.lzc.set(0);
        self.round_inc.set(false);
        self.special.set(false);
        if let Some(f) = self.mx.as_mut() {
            f.idle();
        }
        if c1.valid && self.mx.is_some() {
            writes_acc = self.stage2_mx(c1);
        } else if let (true, Some(im)) = (c1.valid, int_mode) {
            // Integer stage 2 (see `pe_int`): adder tree plus the int32 accumulator, narrowed.
            let lanes = usize::from(c1.lanes).min(W);
            let words = self.s1_prod.q();
            let mut products = [0i64; W];
            for (k, p) in products.iter_mut().enumerate().take(lanes) {
                *p = unpack_int_product(words.words()[k]);
            }
            let st = stage2_int_accumulate(&im, &products[..lanes], self.acc_q(set));
            writes_acc = true;
            let bits = st.acc as u32;
            if set {
                self.acc_1.set_d(bits);
            } else {
                self.acc_0.set_d(bits);
            }
            self.acc.set(bits);
        } else if c1.valid {
            let lanes = usize::from(c1.lanes).min(W);
            let words = self.s1_prod.q();
            let mut products = [NO_PRODUCT; W];
            for (k, p) in products.iter_mut().enumerate().take(lanes) {
                *p = unpack_product(words.words()[k]);
            }
            let n_gathered = usize::from(self.gather_n.q());
            if cfg.gathers() && !c1.fire {
                // Block buffer: collect this step's products, the block FMA fires later.
                for (k, p) in products[..lanes].iter().enumerate() {
                    if let Some(r) = self.gather.get_mut(n_gathered + k) {
                        r.set_d(pack_product(p));
                    }
                }
                self.gather_n.set_d((n_gathered + lanes) as u8);
            } else {
                let m = MultiplyStage::<W>::from_products(&products[..lanes]);
                let g = n_gathered.min(self.gather.len());
                let out = if g == 0 {
                    stage2_accumulate::<W>(&cfg, &m, &[], self.acc_q(set))
                } else {
                    let mut gathered = [NO_PRODUCT; MAX_LANES];
                    for (slot, r) in gathered.iter_mut().zip(&self.gather[..g]) {
                        *slot = unpack_product(r.q());
                    }
                    stage2_accumulate::<W>(&cfg, &m, &gathered[..g], self.acc_q(set))
                };
                writes_acc = true;
                if set {
                    self.acc_1.set_d(out.bits);
                } else {
                    self.acc_0.set_d(out.bits);
                }
                self.flags.set_d(self.flags.q() | out.flags.to_bits());
                self.gather_n.set_d(0);
                self.acc.set(out.bits);
                self.max_exp.set(out.max_exp as u16);
                self.align_shift.set(out.align_shift as u16);
                self.sticky.set(out.sticky);
                self.lzc.set(out.lzc as u16);
                self.round_inc.set(out.round.round_inc);
                self.special.set(out.special);
            }
        }

        // Column shift path through the idle accumulator set.
        if shift.en {
            if writes_acc && shift.set == set {
                self.hazard.set_d(true);
            }
            if shift.set {
                self.acc_1.set_d(shift.value);
            } else {
                self.acc_0.set_d(shift.value);
            }
        }
    }
}

impl<const W: usize> Pe<W> {
    /// Stage 1's floating-point outputs: `products` (one per lane) into the `s1_prod`
    /// register, their exponent sums and significand products onto the traced wires.
    #[inline]
    fn register_products(&mut self, products: &[Product]) {
        let mut prod = [0u64; W];
        let mut exps = Wide::<W>::ZERO;
        let mut sigs = Wide::<W>::ZERO;
        for (k, p) in products.iter().enumerate() {
            prod[k] = pack_product(p);
            set_lane(&mut exps, k, 16, p.exp_sum as u64);
            set_lane(&mut sigs, k, 32, p.sig);
        }
        self.s1_prod.set_d(Wide::from_words_array(prod));
        self.exp_sum.set(exps);
        self.sig_product.set(sigs);
    }

    /// Stage 2 in MX mode: the registered products into the block registers, and on `fire`
    /// the scaled block sum into the accumulator. Returns true if the accumulator is written.
    #[inline]
    fn stage2_mx(&mut self, c1: ACtl) -> bool {
        let lanes = usize::from(c1.lanes).min(W);
        let words = self.s1_prod.q();
        let mut products = [NO_PRODUCT; W];
        for (k, p) in products.iter_mut().enumerate().take(lanes) {
            *p = unpack_product(words.words()[k]);
        }
        let c = self.acc_q(c1.set);
        let Some(out) = self
            .mx
            .as_mut()
            .and_then(|f| f.stage2(&products[..lanes], c1.fire, c))
        else {
            return false;
        };
        let bits = out.out.bits as u32;
        if c1.set {
            self.acc_1.set_d(bits);
        } else {
            self.acc_0.set_d(bits);
        }
        self.flags.set_d(self.flags.q() | out.out.flags.to_bits());
        self.acc.set(bits);
        self.round_inc.set(out.out.trace.round_inc);
        self.special.set(out.special);
        true
    }
}

impl<const W: usize> Module for Pe<W> {
    fn name(&self) -> &str {
        &self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.wire(&mut self.a_in);
        v.wire(&mut self.b_in);
        v.reg(&mut self.a_out);
        v.reg(&mut self.a_ctl);
        if let Some(f) = self.sparse.as_mut() {
            v.wire(&mut f.meta_in);
            v.reg(&mut f.meta_out);
            for s in &mut f.sel {
                v.wire(s);
            }
            v.wire(&mut f.b_sel);
        }
        v.reg(&mut self.b_out);
        v.reg(&mut self.b_vld);
        if let Some(f) = self.mx.as_mut() {
            f.visit(v);
        }
        v.reg(&mut self.s1_prod);
        v.reg(&mut self.s1_ctl);
        v.wire(&mut self.exp_sum);
        v.wire(&mut self.sig_product);
        v.reg(&mut self.acc_0);
        v.reg(&mut self.acc_1);
        v.wire(&mut self.acc);
        v.wire(&mut self.max_exp);
        v.wire(&mut self.align_shift);
        v.wire(&mut self.sticky);
        v.wire(&mut self.lzc);
        v.wire(&mut self.round_inc);
        v.wire(&mut self.special);
        for r in &mut self.gather {
            v.reg(r);
        }
        v.reg(&mut self.gather_n);
        v.reg(&mut self.flags);
        v.reg(&mut self.done);
        v.reg(&mut self.hazard);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bundle packs to the documented bit positions and unpacks every 10-bit word back.
    #[test]
    fn a_ctl_layout() {
        let all = ACtl {
            lanes: 32,
            last: true,
            fire: true,
            set: true,
            valid: true,
        };
        assert_eq!(all.pack(), 32 | 1 << 6 | 1 << 7 | 1 << 8 | 1 << 9);
        let fire = ACtl {
            fire: true,
            ..ACtl::default()
        };
        assert_eq!(fire.pack(), 0b00_1000_0000);
        for w in 0..1u16 << CTL_BITS {
            assert_eq!(ACtl::unpack(w).pack(), w, "{w:#05x}");
        }
    }
}
