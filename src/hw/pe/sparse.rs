//! The 2:4 sparse front of a PE ([`Sparse`]): a B-side select in front of the
//! floating-point datapath.
//!
//! The metadata (2 bits per kept A value, `2w` bits a step: for even `w` exactly the
//! concatenated nibbles of the step's `w / 2` groups; see [`crate::hw::sparse_feeder`])
//! travels with A: it enters on `meta_in` and passes right through the `meta_out` register
//! beside `a_out`. The B bus is [`sparse_b_lanes`] lanes wide: the step's groups of four
//! dense K positions. For kept A value `k` (group `k / 2` of the bus) the 4:1 multiplexer
//! ([`b_operand_select`]) picks the B lane `4 * (k / 2) + index_k`; its selects are traced
//! as `sel_<k>` and its outputs as `b_sel`. Nothing else in the PE changes: the multiply
//! stage sees `w` (A, selected B) pairs as in dense mode, and stage 2 is the floating-point
//! one.

use super::fp::{FpPath, Products};
use super::{lane, set_lane, ACtl, Datapath, Stage2Out};
use crate::hw::config::CoreConfig;
use crate::numerics::format::Format;
use crate::rtl::{Display, Reg, Result, Visitor, Wide, Wire};

/// Lanes of the B bus in 2:4 sparse mode for `width` kept values a step: the `ceil(w / 2)`
/// groups of four dense K positions their metadata indexes (`2w`, at least 4).
pub const fn sparse_b_lanes(width: usize) -> usize {
    if width < 2 {
        4
    } else {
        2 * width
    }
}

/// **Sparsity hook** (B-side operand select): the B value that multiplies kept A lane `k`
/// of this step, lane `4 * (k / 2) + index_k` of the B bus (`index_k` the 2-bit field `k`
/// of `meta`).
#[inline]
pub fn b_operand_select<const N: usize>(
    b_bus: &Wide<N>,
    k: usize,
    fmt_b: Format,
    meta: u64,
) -> u64 {
    let index = ((meta >> (2 * k)) & 3) as usize;
    lane(b_bus, 4 * (k / 2) + index, fmt_b.width())
}

/// The 2:4 sparse datapath: the metadata register, the B-side multiplexers and the
/// floating-point datapath behind them.
pub struct Sparse<const W: usize> {
    inner: FpPath,
    meta_in: Wire<u64>,
    meta_out: Reg<u64>,
    sel: Vec<Wire<u8>>,
    b_sel: Wire<Wide<W>>,
    /// Whether anything observes the select wires (`sel_<t>`, `b_sel`): noted when the
    /// engine decides ([`Datapath::observed`]).
    shows_select: bool,
}

impl<const W: usize> Sparse<W> {
    /// The sparse datapath of a core built for `cfg` (`W` kept values a step).
    pub fn new(cfg: &CoreConfig) -> Result<Self> {
        let w = cfg.width as u32;
        Ok(Self {
            inner: FpPath::new(cfg)?,
            meta_in: Wire::new("meta_in", 2 * w, 0)?.with_display(Display::Filter("meta")),
            meta_out: Reg::new("meta_out", 2 * w, 0)?.with_display(Display::Filter("meta")),
            sel: (0..cfg.width)
                .map(|t| Ok(Wire::new(format!("sel_{t}"), 2, 0u8)?.with_display(Display::Dec)))
                .collect::<Result<Vec<_>>>()?,
            b_sel: Wire::new("b_sel", cfg.fmt_b.width() * w, Wide::ZERO)?
                .with_display(cfg.operand_display(cfg.fmt_b)),
            // A wire outside a simulator is observed.
            shows_select: true,
        })
    }
}

impl<const W: usize> Datapath<W> for Sparse<W> {
    type SideA = u64;
    type SideB = ();
    type Stage1 = Products<W>;

    fn b_lanes() -> usize {
        sparse_b_lanes(W)
    }

    #[inline]
    fn side_b(_: u8) {}

    #[inline]
    fn side_a(meta: u64) -> u64 {
        meta
    }

    fn side_a_reg() -> Option<(&'static str, u32)> {
        Some(("meta", 2 * W as u32))
    }

    #[inline]
    fn pass(&mut self, meta: u64, _: ()) {
        // The metadata passes on beside A; it drives this PE's B multiplexers.
        self.meta_in.set(meta);
        self.meta_out.set_d(meta);
    }

    #[inline]
    fn side_out(&self) -> (u64, ()) {
        (self.meta_out.q(), ())
    }

    // Returned and copied: building the selected products in place measured slower here.
    const BUILDS_IN_PLACE: bool = false;

    #[inline]
    fn stage1(&mut self, a: &Wide<W>, b: &Wide<W>, lanes: usize, meta: u64) -> Products<W> {
        let fmt_b = self.inner.fmt_b();
        let lanes = lanes.min(W);
        let s1 = self
            .inner
            .multiply(a, lanes, |k| b_operand_select(b, k, fmt_b, meta));
        if !self.shows_select {
            return s1;
        }
        let mut picked = Wide::<W>::ZERO;
        for (t, s) in self.sel.iter_mut().enumerate() {
            if t < lanes {
                s.set(((meta >> (2 * t)) & 3) as u8);
                set_lane(
                    &mut picked,
                    t,
                    fmt_b.width(),
                    b_operand_select(b, t, fmt_b, meta),
                );
            } else {
                s.set(0);
            }
        }
        self.b_sel.set(picked);
        s1
    }

    #[inline]
    fn stage1_idle(&mut self) {
        if !self.shows_select {
            return;
        }
        for s in self.sel.iter_mut() {
            s.set(0);
        }
        self.b_sel.set(Wide::ZERO);
    }

    #[inline]
    fn stage2(&mut self, s1: &Products<W>, c1: ACtl, acc: u32) -> Option<Stage2Out> {
        Datapath::<W>::stage2(&mut self.inner, s1, c1, acc)
    }

    #[inline]
    fn stage2_acc(&mut self, s1: &Products<W>, c1: ACtl, acc: u32) -> Option<(u32, u8)> {
        Datapath::<W>::stage2_acc(&mut self.inner, s1, c1, acc)
    }

    #[inline]
    fn stage2_idle(&mut self) {}

    fn visit_a_side<V: Visitor>(&mut self, v: &mut V) {
        v.wire(&mut self.meta_in);
        v.reg(&mut self.meta_out);
        for s in &mut self.sel {
            v.wire(s);
        }
        v.wire(&mut self.b_sel);
    }

    fn visit_gather<V: Visitor>(&mut self, v: &mut V) {
        Datapath::<W>::visit_gather(&mut self.inner, v);
    }

    fn observed(&mut self) {
        self.shows_select = self.sel.iter().any(|s| s.is_observed()) || self.b_sel.is_observed();
    }
}
