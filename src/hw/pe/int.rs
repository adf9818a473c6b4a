//! The integer datapath ([`IntPath`], [`AccMode::Int`](crate::numerics::dot::AccMode::Int)),
//! in the same two pipeline stages as the floating-point one, over the stage functions of
//! [`crate::numerics::int`]:
//!
//! - Stage 1 ([`IntPath::stage1`](super::Datapath::stage1)): each lane of the A and B buses
//!   is extended and multiplied exactly ([`product`]); the stage-1 register `s1_prod` holds
//!   the products ([`IntProducts`], traced as one 17-bit two's-complement word a lane,
//!   [`pack_int_product`]); the `sig_product` wire shows them (32 bits a lane,
//!   sign-extended).
//! - Stage 2 ([`stage2_int_accumulate`]): the adder tree over the registered products plus
//!   the accumulator register's int32, exact, then narrowed back into the register (wrapped
//!   or clamped: [`accumulate`]). The accumulator registers `acc_0`/`acc_1` hold int32 bits;
//!   C shifts in and D drains out through them unchanged.
//!
//! No IEEE flags arise; the floating-point stage-2 wires (`max_exp`, `align_shift`, ...)
//! read 0.

use super::fp::gather_count;
use super::{lane, ACtl, Datapath, Stage1Lanes, Stage2Out};
use crate::numerics::int::{accumulate, product, IntMode, IntStep, PRODUCT_BITS};
use crate::rtl::{Reg, Result, Value, Visitor, Wide};

/// Packs an exact product (17-bit two's complement) into a word of `s1_prod`'s trace
/// encoding.
#[inline]
pub const fn pack_int_product(p: i64) -> u64 {
    (p as u64) & ((1 << PRODUCT_BITS) - 1)
}

/// Unpacks a word of `s1_prod`'s trace encoding: sign-extends its low 17 bits.
#[inline]
pub const fn unpack_int_product(w: u64) -> i64 {
    let shift = 64 - PRODUCT_BITS;
    ((w << shift) as i64) >> shift
}

/// The stage-1 register of an integer PE: the exact products of the valid lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntProducts<const W: usize> {
    /// Valid lanes.
    pub lanes: usize,
    /// The products (`products[lanes..]` are 0).
    pub products: [i64; W],
}

impl<const W: usize> Default for IntProducts<W> {
    fn default() -> Self {
        Self {
            lanes: 0,
            products: [0; W],
        }
    }
}

impl<const W: usize> Stage1Lanes for IntProducts<W> {
    const LANES: usize = W;
    #[inline]
    fn exp_sum(&self, _k: usize) -> u64 {
        0
    }
    #[inline]
    fn sig(&self, k: usize) -> u64 {
        self.products[k] as u64
    }
}

impl<const W: usize> Value for IntProducts<W> {
    const CAPACITY: u32 = 64 * W as u32;
    const WORDS: usize = W;
    #[inline(always)]
    fn mask(self, _width: u32) -> Self {
        self
    }
    fn to_words(&self, out: &mut [u64]) {
        for (o, &p) in out.iter_mut().zip(&self.products) {
            *o = pack_int_product(p);
        }
    }
    fn from_words(words: &[u64]) -> Self {
        let mut products = [0i64; W];
        for (p, &w) in products.iter_mut().zip(words) {
            *p = unpack_int_product(w);
        }
        Self { lanes: W, products }
    }
}

/// The integer datapath of one PE: the mode (formats, overflow rule), fixed when built.
pub struct IntPath {
    mode: IntMode,
    gather_n: Reg<super::fp::GatherCount>,
}

impl IntPath {
    /// The datapath of an integer core in `mode`.
    pub fn new(mode: IntMode) -> Result<Self> {
        Ok(Self {
            mode,
            gather_n: gather_count()?,
        })
    }
}

impl<const W: usize> Datapath<W> for IntPath {
    type SideA = ();
    type SideB = ();
    type Stage1 = IntProducts<W>;

    #[inline]
    fn side_b(_: u8) {}

    #[inline]
    fn side_a(_: u64) {}

    fn hex_lanes(&self) -> bool {
        false
    }

    #[inline]
    fn pass(&mut self, _: (), _: ()) {}

    #[inline]
    fn side_out(&self) -> ((), ()) {
        ((), ())
    }

    #[inline]
    fn stage1(&mut self, a: &Wide<W>, b: &Wide<W>, lanes: usize, _: ()) -> IntProducts<W> {
        let lanes = lanes.min(W);
        let mut products = [0i64; W];
        let im = &self.mode;
        for (k, slot) in products.iter_mut().enumerate().take(lanes) {
            *slot = product(im.a, lane(a, k, im.a.bits), im.b, lane(b, k, im.b.bits));
        }
        IntProducts { lanes, products }
    }

    #[inline]
    fn stage1_idle(&mut self) {}

    #[inline]
    fn stage2(&mut self, s1: &IntProducts<W>, c1: ACtl, acc: u32) -> Option<Stage2Out> {
        let lanes = usize::from(c1.lanes()).min(W);
        let st = stage2_int_accumulate(&self.mode, &s1.products[..lanes], acc);
        Some(Stage2Out {
            acc: st.acc as u32,
            ..Stage2Out::default()
        })
    }

    #[inline]
    fn stage2_idle(&mut self) {}

    fn visit_gather<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.gather_n);
    }
}

/// Stage 2: the registered products added to the accumulator's int32 (`acc`, its bits)
/// and narrowed back by the mode's overflow rule.
#[inline]
pub fn stage2_int_accumulate(im: &IntMode, products: &[i64], acc: u32) -> IntStep {
    accumulate(acc as i32, products, im.overflow)
}
