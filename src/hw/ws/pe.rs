//! The weight-stationary processing element: A (with its datapath's side value: a 2:4 sparse
//! row's selects) in from the left and passed on through a register, as in the
//! output-stationary PE; two weight registers (`w_0`, `w_1`, the datapath's B bus each: `w`
//! lanes, or `2w` in sparse mode; double-buffered) loaded down the column; a partial sum in from the PE
//! above, the datapath's two stages adding this PE's products to it, and the result
//! (`psum`) passed down.
//!
//! Pipeline (`L` = [`crate::hw::PIPELINE_LATENCY`] = 1), for a row of A reaching the PE in
//! cycle `t`:
//! - cycle `t` (stage 1): the datapath multiplies A's `w` lanes by the weight set the row's
//!   control word names (`set`) and latches the products in `s1_prod`; A moves on to
//!   `a_out`;
//! - cycle `t + 1` (stage 2): the partial sum from above (the upper PE's `psum`, which that
//!   PE computed in cycle `t`, or at the top the identity) plus the registered products,
//!   through the datapath's own step, into `psum`. A row with no lanes for this PE (K ended
//!   above it) or no weight (a column past N) passes the partial sum on unchanged.
//!
//! Energy probes ([`WsPe::set_energy_probes`], on only in a run that estimates energy): two
//! wires showing the multiplier's operands, `a_mul` (A's lanes) and `w_mul` (the weight set
//! the row multiplies by), each 0 in a cycle the PE forms no product (operand isolation).
//! Their toggles are the multiplier's input activity `--energy` charges (`docs/energy.md`);
//! without probes they are not declared, so the waves are unchanged.
//!
//! The weight load (`WIn`): while `en` is high, weight set `set` of every PE of the column
//! takes the one above it (`w_<set>`, `wv_<set>`), the top PE the column's input: `R` cycles
//! load a column, bottom row first. The other set is untouched, so a pass computes on one set
//! while the next pass's weights load into the other.

use crate::hw::dataflow::ws::Weights;
use crate::hw::dataflow::Hold;
use crate::hw::pe::{ACtl, Datapath, ExpSums, SigProducts, Stage2Out, Stage2Wires, CTL_BITS};
use crate::hw::CoreConfig;
use crate::numerics::flags::Flags;
use crate::rtl::{Display, Module, RegBank, Result, Visitor, Wide, Wire};

/// The weight-load input of a PE in one cycle, with the side value `H` held beside the
/// weights (an MX block scale's code by default).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WIn<const W: usize, H = u8> {
    /// Load this cycle: weight set `set` takes `value` and `valid`.
    pub en: bool,
    /// Which weight set loads.
    pub set: bool,
    /// The weight lanes from above (the upper PE's `w_<set>`, or the column's input).
    pub value: Wide<W>,
    /// The weight is inside the problem (a column past N or lanes past K load invalid).
    pub valid: bool,
    /// The side value held with the weight (an MX block scale; 0 for a datapath that holds
    /// none).
    pub side: H,
}

/// The registers of a stationary PE, committed as one bank (named for the weight-stationary
/// dataflow; [`Hold`] names them in the waves).
#[derive(Clone, Copy, Debug)]
struct WsRegs<const W: usize, S1: Copy, H: Copy> {
    a_out: Wide<W>,
    a_ctl: ACtl,
    w: [Wide<W>; 2],
    wv: [bool; 2],
    /// The side value held with each weight set (MX only in `ws`; declared for the waves
    /// only where the datapath holds one).
    w_scale: [H; 2],
    s1_prod: S1,
    s1_ctl: ACtl,
    s1_row: bool,
    psum: u32,
    psum_vld: bool,
    flags: u8,
    hazard: bool,
}

/// The positions of the bank's fields, in declaration order.
mod field {
    pub const A_OUT: usize = 0;
    pub const A_CTL: usize = 1;
    pub const W_0: usize = 2;
    pub const WV_0: usize = 3;
    pub const W_1: usize = 4;
    pub const WV_1: usize = 5;
    pub const S1_PROD: usize = 6;
    pub const S1_CTL: usize = 7;
    pub const S1_ROW: usize = 8;
    pub const PSUM: usize = 9;
    pub const PSUM_VLD: usize = 10;
    pub const FLAGS: usize = 11;
    pub const HAZARD: usize = 12;
    pub const W_SCALE_0: usize = 13;
    pub const W_SCALE_1: usize = 14;
}

/// One stationary PE with `W` lanes and datapath `D`, keeping what `S` holds (weights by
/// default).
pub struct WsPe<const W: usize, D: Datapath<W>, S: Hold<W> = Weights> {
    name: String,
    a_in: Wire<Wide<W>>,
    psum_in: Wire<u32>,
    regs: RegBank<WsRegs<W, D::Stage1, S::HeldSide>>,
    exp_sum: Wire<ExpSums<D::Stage1>>,
    sig_product: Wire<SigProducts<D::Stage1>>,
    stage2: Stage2Wires,
    /// The energy probes: the multiplier's A and weight operands (declared only with
    /// `probes`).
    a_mul: Wire<Wide<W>>,
    w_mul: Wire<Wide<W>>,
    probes: bool,
    path: D,
    /// Some wave-only wire of this PE is observed.
    shows: bool,
}

impl<const W: usize, D: Datapath<W>, S: Hold<W>> WsPe<W, D, S> {
    /// A PE named `name` around `path`, built for `cfg`.
    pub fn new(name: String, cfg: &CoreConfig, path: D) -> Result<Self> {
        let w = W as u32;
        let (disp_a, disp_b) = if path.hex_lanes() {
            (Display::Hex, Display::Hex)
        } else {
            (
                cfg.operand_display(S::stream_fmt(cfg)),
                cfg.operand_display(S::held_fmt(cfg)),
            )
        };
        // The streaming bus and the held registers: `w` lanes each, but the datapath's B bus
        // (in 2:4 sparse mode the dense groups of four K positions each pair of kept A values
        // selects from) where B is the operand.
        let (bits_a, bits_b) = (
            S::stream_fmt(cfg).width() * S::stream_lanes(D::b_lanes()) as u32,
            S::held_fmt(cfg).width() * S::held_lanes(D::b_lanes()) as u32,
        );
        let (sa, sw) = (S::STREAM, S::HELD);
        let acc_bits = cfg.acc.width();
        let regs = RegBank::new(WsRegs {
            a_out: Wide::ZERO,
            a_ctl: ACtl::default(),
            w: [Wide::ZERO; 2],
            wv: [false; 2],
            w_scale: [Default::default(); 2],
            s1_prod: D::Stage1::default(),
            s1_ctl: ACtl::default(),
            s1_row: false,
            psum: 0,
            psum_vld: false,
            flags: 0,
            hazard: false,
        })
        // Declared in the order of `field`.
        .field(format!("{sa}_out"), bits_a, |r| &r.a_out)?
        .with_display(disp_a)
        .field(format!("{sa}_ctl"), CTL_BITS, |r| &r.a_ctl)?
        .with_display(Display::Filter("ctl"))
        .field(format!("{sw}_0"), bits_b, |r| &r.w[0])?
        .with_display(disp_b)
        .in_overview()
        .field(format!("{sw}v_0"), 1, |r| &r.wv[0])?
        .field(format!("{sw}_1"), bits_b, |r| &r.w[1])?
        .with_display(disp_b)
        .in_overview()
        .field(format!("{sw}v_1"), 1, |r| &r.wv[1])?
        .field("s1_prod", 64 * w, |r| &r.s1_prod)?
        .with_display(cfg.product_display())
        .field("s1_ctl", CTL_BITS, |r| &r.s1_ctl)?
        .with_display(Display::Filter("ctl"))
        .field("s1_row", 1, |r| &r.s1_row)?
        .field("psum", acc_bits, |r| &r.psum)?
        .with_display(cfg.acc_display())
        .in_overview()
        .field("psum_vld", 1, |r| &r.psum_vld)?
        .field("flags", 4, |r| &r.flags)?
        .field("hazard", 1, |r| &r.hazard)?;
        // The side value held with each set (an MX weight's block scale, E8M0 or E4M3 code).
        let regs = match S::held_side::<D>(cfg) {
            Some((side, bits)) => regs
                .field(format!("{sw}_{side}_0"), bits, |r| &r.w_scale[0])?
                .with_display(Display::Hex)
                .field(format!("{sw}_{side}_1"), bits, |r| &r.w_scale[1])?
                .with_display(Display::Hex),
            None => regs,
        };
        Ok(Self {
            name,
            a_in: Wire::new(format!("{sa}_in"), bits_a, Wide::ZERO)?
                .with_display(disp_a)
                .in_overview(),
            psum_in: Wire::new("psum_in", acc_bits, 0)?.with_display(cfg.acc_display()),
            regs,
            exp_sum: Wire::new("exp_sum", 16 * w, ExpSums::default())?,
            sig_product: Wire::new("sig_product", 32 * w, SigProducts::default())?,
            stage2: Stage2Wires::new()?,
            a_mul: Wire::new(format!("{sa}_mul"), bits_a, Wide::ZERO)?.with_display(disp_a),
            w_mul: Wire::new(format!("{sw}_mul"), bits_b, Wide::ZERO)?.with_display(disp_b),
            probes: false,
            path,
            shows: true,
        })
    }

    /// Declares (or not) the energy probes `a_mul` and `w_mul` (see the module's
    /// documentation); set before the design is elaborated.
    pub fn set_energy_probes(&mut self, on: bool) {
        self.probes = on;
    }

    /// A leaving to the right: data and control bundle (register outputs).
    #[inline]
    pub fn a_out(&self) -> (Wide<W>, ACtl) {
        let q = self.regs.q();
        (q.a_out, q.a_ctl)
    }

    /// What leaves to the right beside A (the datapath's side register: a 2:4 sparse row's
    /// selects; nothing for a dense one).
    #[inline]
    pub fn side_out(&self) -> S::StreamSide<D> {
        S::stream_out(&self.path)
    }

    /// Weight set `set` and its valid bit (register outputs): what the load passes down.
    #[inline]
    pub fn weight(&self, set: bool) -> (Wide<W>, bool) {
        let q = self.regs.q();
        let s = usize::from(set);
        (q.w[s], q.wv[s])
    }

    /// The side value held with weight set `set` (register output; 0 unless one is held).
    #[inline]
    pub fn weight_side(&self, set: bool) -> S::HeldSide {
        self.regs.q().w_scale[usize::from(set)]
    }

    /// The partial sum leaving downwards and whether it carries a row (register outputs).
    #[inline]
    pub fn psum(&self) -> (u32, bool) {
        let q = self.regs.q();
        (q.psum, q.psum_vld)
    }

    /// True if a weight load ever wrote the set a row was multiplying by (sticky).
    pub fn hazard(&self) -> bool {
        self.regs.q().hazard
    }

    /// The IEEE flags raised so far (sticky).
    pub fn flags(&self) -> Flags {
        Flags::from_bits(self.regs.q().flags)
    }

    /// The combinational phase: `a`, its control word and its side value (a sparse row's
    /// selects) from the left, the partial sum `psum_in` from above (the upper PE's `psum`,
    /// or the identity at the top), the weight load `wl`. Whether stage 2 has a row is the
    /// PE's own `s1_row` register: the upper PE's `psum_vld` says the same of the same row.
    #[inline]
    pub fn comb(
        &mut self,
        a: Wide<W>,
        ctl: ACtl,
        side: S::StreamSide<D>,
        psum_in: u32,
        wl: WIn<W, S::HeldSide>,
    ) {
        let shows = self.shows;
        // The side value passes on beside A through the datapath's register; beside it the
        // side value held with the weight set this row multiplies by (MX), for stage 2.
        let w_side = self.weight_side(ctl.set());
        S::pass(&mut self.path, side, w_side);
        if shows {
            self.a_in.set(a);
            self.psum_in.set(psum_in);
        }
        let regs = &mut self.regs;
        regs.set(|r| &mut r.a_out, a);
        regs.set(|r| &mut r.a_ctl, ctl);
        if wl.en {
            let s = usize::from(wl.set);
            regs.set(|r| &mut r.w[s], wl.value);
            regs.set(|r| &mut r.wv[s], wl.valid);
            if S::holds_side::<D>() {
                regs.set(|r| &mut r.w_scale[s], wl.side);
            }
        }

        // Stage 1: multiply A by the row's weight set (a row with lanes and a weight).
        let (w_bus, w_valid) = self.weight(ctl.set());
        let lanes = usize::from(ctl.lanes());
        let compute = ctl.valid() && w_valid && lanes > 0;
        let regs = &mut self.regs;
        // A load into the set a row multiplies by in the same cycle is a schedule fault
        // (never expected: the controller loads a set only once its last row has passed).
        if wl.en && ctl.valid() && wl.set == ctl.set() {
            regs.set(|r| &mut r.hazard, true);
        }
        regs.set(|r| &mut r.s1_ctl, ctl.with_valid(compute));
        regs.set(|r| &mut r.s1_row, ctl.valid());
        if compute {
            let s1 = S::stage1(&mut self.path, &a, &w_bus, lanes, side, w_side);
            self.regs.set(|r| &mut r.s1_prod, s1);
            if shows {
                self.exp_sum.set(ExpSums(s1));
                self.sig_product.set(SigProducts(s1));
                if self.probes {
                    self.a_mul.set(a);
                    self.w_mul.set(w_bus);
                }
            }
        } else {
            self.path.stage1_idle();
            if shows {
                self.exp_sum.set(ExpSums::default());
                self.sig_product.set(SigProducts::default());
                if self.probes {
                    self.a_mul.set(Wide::ZERO);
                    self.w_mul.set(Wide::ZERO);
                }
            }
        }

        // Stage 2: the partial sum from above plus the registered products.
        let (c1, row, flags_q) = {
            let q = self.regs.q();
            (q.s1_ctl, q.s1_row, q.flags)
        };
        let out = if !c1.valid() {
            self.path.stage2_idle();
            if shows {
                self.stage2.show(&Stage2Out::default());
            }
            None
        } else if shows {
            let q = self.regs.q();
            let o = self.path.stage2(&q.s1_prod, c1, psum_in);
            self.stage2.show(&o.unwrap_or_default());
            o.map(|o| (o.acc, o.flags))
        } else {
            let q = self.regs.q();
            self.path.stage2_acc(&q.s1_prod, c1, psum_in)
        };
        let regs = &mut self.regs;
        let psum = match out {
            Some((acc, flags)) => {
                if flags != 0 {
                    regs.set(|r| &mut r.flags, flags_q | flags);
                }
                acc
            }
            // A row this PE adds nothing to passes on; no row leaves 0 (operand isolation).
            None if row => psum_in,
            None => 0,
        };
        regs.set(|r| &mut r.psum, psum);
        regs.set(|r| &mut r.psum_vld, row);
    }
}

impl<const W: usize, D: Datapath<W>, S: Hold<W>> Module for WsPe<W, D, S> {
    fn name(&self) -> &str {
        &self.name
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        use field::*;
        let regs = &mut self.regs;
        v.wire(&mut self.a_in);
        v.bank_reg(regs, A_OUT, |r| &r.a_out);
        v.bank_reg(regs, A_CTL, |r| &r.a_ctl);
        self.path.visit_a_side(v);
        v.bank_reg(regs, W_0, |r| &r.w[0]);
        v.bank_reg(regs, WV_0, |r| &r.wv[0]);
        v.bank_reg(regs, W_1, |r| &r.w[1]);
        v.bank_reg(regs, WV_1, |r| &r.wv[1]);
        if S::holds_side::<D>() {
            v.bank_reg(regs, W_SCALE_0, |r| &r.w_scale[0]);
            v.bank_reg(regs, W_SCALE_1, |r| &r.w_scale[1]);
        }
        if self.probes {
            v.wire(&mut self.a_mul);
            v.wire(&mut self.w_mul);
        }
        v.bank_reg(regs, S1_PROD, |r| &r.s1_prod);
        v.bank_reg(regs, S1_CTL, |r| &r.s1_ctl);
        v.bank_reg(regs, S1_ROW, |r| &r.s1_row);
        v.wire(&mut self.exp_sum);
        v.wire(&mut self.sig_product);
        v.wire(&mut self.psum_in);
        self.stage2.visit(v);
        self.path.visit_b_side(v);
        self.path.visit_gather(v);
        v.bank_reg(regs, PSUM, |r| &r.psum);
        v.bank_reg(regs, PSUM_VLD, |r| &r.psum_vld);
        v.bank_reg(regs, FLAGS, |r| &r.flags);
        v.bank_reg(regs, HAZARD, |r| &r.hazard);
        v.bank(regs);
    }
    fn observed(&mut self) {
        self.shows = self.a_in.is_observed()
            || self.psum_in.is_observed()
            || self.exp_sum.is_observed()
            || self.sig_product.is_observed()
            || self.stage2.is_observed()
            || (self.probes && (self.a_mul.is_observed() || self.w_mul.is_observed()));
        self.path.observed();
    }
}
