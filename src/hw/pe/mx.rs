//! The MX block-scaled datapath of a PE ([`MxPath`]): the block scales travelling with the
//! operands and the block-sum registers of stage 2.
//!
//! - `a_scale` (8 bits) latches the scale code arriving beside A (E8M0 for the MX formats,
//!   E4M3 for NVFP4) and passes it right with `a_out`; `b_scale` latches the one beside B and
//!   passes it down with `b_out`. They change with every step, so in the cycle stage 2 handles
//!   a step they hold that step's scales (as `s1_ctl` holds its control word): no further
//!   pipeline register is needed.
//! - Stage 1 multiplies elements as the core's formats say; for MXINT8 it is an 8 x 8-bit
//!   integer multiplier ([`int8_product`]: `q_a q_b` with its LSB at `2^-12`).
//! - Stage 2 adds the step's exact products into the block state
//!   ([`block_accumulate`]): `blk_sum` (the exact fixed-point block sum, 72 bits two's
//!   complement, LSB `2^-32`), `blk_cls` (special class), `blk_nz` (a nonzero product),
//!   `blk_z` (a zero product), `blk_pos`/`blk_neg` (a product of sign `+`/`-`), `blk_inv` (a
//!   product raised invalid). On a step whose `fire` bit is set (the last of a K-block) it
//!   fires the block ([`block_fire`]): the scale multiplier forms `a_scale x b_scale x T`
//!   (`T` the core's tensor-scale product, 1 without tensor scales) as `scale_sig` times
//!   `2^scale_exp` (for E8M0 scales `scale_sig` is 1 and `scale_exp = a_scale + b_scale -
//!   254`, an exponent add; for E4M3 scales a 4 x 4-bit significand multiply beside it), and
//!   one FP32 round-to-nearest-even add puts the scaled block into the accumulator; the block
//!   registers return to zero.
//!
//! The semantics are `fused` MX ([`crate::numerics::mx_dot::MxDotMode::Fused`]).

use super::fp::{gather_count, LaneMultipliers, Products};
use super::{lane, ACtl, Datapath, Stage2Out};
use crate::hw::config::{CoreConfig, MxSpec};
use crate::numerics::format::Format;
use crate::numerics::multiply::Product;
use crate::numerics::mx_block::{
    block_accumulate, block_fire, int8_product, BlockClass, BlockFire, BlockState, ScaleFactor,
    BLOCK_SUM_BITS,
};
use crate::rtl::{Display, Reg, RegBank, Result, Visitor, Wide, Wire};

/// The registers of the MX datapath, as one record (a [`RegBank`]: committed with one copy
/// at the edge). Each field is a register of the waves, named as listed in [`MxPath::new`].
#[derive(Clone, Copy, Debug, Default)]
struct MxRegs {
    /// The block scale beside A (`a_scale`).
    a_scale: u8,
    /// The block scale beside B (`b_scale`).
    b_scale: u8,
    /// The block sum, [`BLOCK_SUM_BITS`] bits two's complement (`blk_sum`).
    blk_sum: u128,
    /// The block's special class code (`blk_cls`).
    blk_cls: u8,
    /// A nonzero product (`blk_nz`).
    blk_nz: bool,
    /// A zero product (`blk_z`).
    blk_z: bool,
    /// A product of sign `+` (`blk_pos`).
    blk_pos: bool,
    /// A product of sign `-` (`blk_neg`).
    blk_neg: bool,
    /// A product raised invalid (`blk_inv`).
    blk_inv: bool,
}

/// The positions of the bank's fields, in declaration order.
mod field {
    pub const A_SCALE: usize = 0;
    pub const B_SCALE: usize = 1;
    pub const BLK_SUM: usize = 2;
    pub const BLK_CLS: usize = 3;
    pub const BLK_NZ: usize = 4;
    pub const BLK_Z: usize = 5;
    pub const BLK_POS: usize = 6;
    pub const BLK_NEG: usize = 7;
    pub const BLK_INV: usize = 8;
}

/// The MX datapath of one PE: its registers and wires.
pub struct MxPath {
    multipliers: LaneMultipliers,
    gather_n: Reg<super::fp::GatherCount>,
    scale_fmt: Format,
    int8: bool,
    tensor: ScaleFactor,
    regs: RegBank<MxRegs>,
    scale_sig: Wire<u64>,
    scale_exp: Wire<u16>,
}

impl MxPath {
    /// The datapath's registers at reset, for a core built for `cfg` (its lane formats) and
    /// `spec` (its scale format, its element kind, and the tensor-scale product the top
    /// forms once and broadcasts).
    pub fn new(cfg: &CoreConfig, spec: &MxSpec) -> Result<Self> {
        // The scale codes decode through the wave filter of their format (E8M0 or E4M3).
        let scale_display = Display::Filter(spec.scale_format().name);
        let regs = RegBank::new(MxRegs::default())
            // Declared in the order of `field`.
            .field("a_scale", 8, |r| &r.a_scale)?
            .with_display(scale_display)
            .field("b_scale", 8, |r| &r.b_scale)?
            .with_display(scale_display)
            .field("blk_sum", BLOCK_SUM_BITS, |r| &r.blk_sum)?
            .with_display(Display::Filter("blksum"))
            .field("blk_cls", 2, |r| &r.blk_cls)?
            .field("blk_nz", 1, |r| &r.blk_nz)?
            .field("blk_z", 1, |r| &r.blk_z)?
            .field("blk_pos", 1, |r| &r.blk_pos)?
            .field("blk_neg", 1, |r| &r.blk_neg)?
            .field("blk_inv", 1, |r| &r.blk_inv)?;
        Ok(Self {
            multipliers: LaneMultipliers::new(cfg.fmt_a, cfg.fmt_b),
            gather_n: gather_count()?,
            scale_fmt: spec.scale_format(),
            int8: spec.int8(),
            tensor: spec.tensor_product(),
            regs,
            scale_sig: Wire::new("scale_sig", 64, 0)?.with_display(Display::Dec),
            scale_exp: Wire::new("scale_exp", 16, 0)?.with_display(Display::SignedDec),
        })
    }

    /// True if stage 1 multiplies MXINT8 integers ([`MxPath::int8_products`]).
    #[inline]
    pub fn int8(&self) -> bool {
        self.int8
    }

    /// Stage 1 for MXINT8: the exact products of the first `lanes` 8-bit lanes of the buses
    /// (the other slots hold zero products).
    #[inline]
    pub fn int8_products<const W: usize>(
        a_bus: &Wide<W>,
        b_bus: &Wide<W>,
        lanes: usize,
    ) -> [Product; W] {
        let mut p = [int8_product(0, 0); W];
        for (k, slot) in p.iter_mut().enumerate().take(lanes.min(W)) {
            *slot = int8_product(lane(a_bus, k, 8) as u8, lane(b_bus, k, 8) as u8);
        }
        p
    }

    #[inline(always)]
    fn state(&self) -> BlockState {
        let q = self.regs.q();
        BlockState {
            sum: BlockState::sum_from_bits(q.blk_sum),
            class: BlockClass::from_code(q.blk_cls),
            nonzero: q.blk_nz,
            zero: q.blk_z,
            any_pos: q.blk_pos,
            any_neg: q.blk_neg,
            invalid: q.blk_inv,
        }
    }

    #[inline(always)]
    fn load(&mut self, s: &BlockState) {
        let r = &mut self.regs;
        r.set(|r| &mut r.blk_sum, s.sum_bits());
        r.set(|r| &mut r.blk_cls, s.class.code());
        r.set(|r| &mut r.blk_nz, s.nonzero);
        r.set(|r| &mut r.blk_z, s.zero);
        r.set(|r| &mut r.blk_pos, s.any_pos);
        r.set(|r| &mut r.blk_neg, s.any_neg);
        r.set(|r| &mut r.blk_inv, s.invalid);
    }

    /// The scale multiplier: this step's two block scales times the tensor-scale product.
    #[inline]
    fn scale_product(&self) -> ScaleFactor {
        let x = |code: u8| ScaleFactor::decode(self.scale_fmt, u64::from(code));
        let q = self.regs.q();
        x(q.a_scale) * x(q.b_scale) * self.tensor
    }

    /// Stage 2 in MX mode for a valid step: adds `products` into the block registers; when
    /// `fire`, fires the block with this step's scales into the accumulator value `c` and
    /// returns the result (the block registers clear).
    #[inline]
    pub fn block_step(&mut self, products: &[Product], fire: bool, c: u32) -> Option<BlockFire> {
        let s = block_accumulate(self.state(), products);
        if fire {
            let out = block_fire(&s, self.scale_product(), c);
            self.load(&BlockState::default());
            self.scale_sig.set(out.scale_sig);
            self.scale_exp.set(out.scale_exp as u16);
            Some(out)
        } else {
            self.load(&s);
            self.idle();
            None
        }
    }

    /// Stage 2 idle this cycle: its wires read 0.
    #[inline]
    pub fn idle(&mut self) {
        self.scale_sig.set(0);
        self.scale_exp.set(0);
    }
}

impl<const W: usize> Datapath<W> for MxPath {
    type SideA = u8;
    type SideB = u8;
    type Stage1 = Products<W>;

    fn hex_lanes(&self) -> bool {
        // MXINT8 lanes are integers: hex in the waves, as in the integer mode.
        self.int8
    }

    const HOLDS_B_SCALE: bool = true;

    #[inline]
    fn side_b(code: u8) -> u8 {
        code
    }

    #[inline]
    fn side_a(code: u64) -> u8 {
        code as u8
    }

    fn side_a_reg() -> Option<(&'static str, u32)> {
        Some(("scale", 8))
    }

    #[inline]
    fn pass(&mut self, a_scale: u8, b_scale: u8) {
        self.regs.set(|r| &mut r.a_scale, a_scale);
        self.regs.set(|r| &mut r.b_scale, b_scale);
    }

    #[inline]
    fn side_out(&self) -> (u8, u8) {
        let q = self.regs.q();
        (q.a_scale, q.b_scale)
    }

    #[inline]
    fn stage1(&mut self, a: &Wide<W>, b: &Wide<W>, lanes: usize, _: u8) -> Products<W> {
        let lanes = lanes.min(W);
        if self.int8 {
            // MXINT8 stage 1: 8 x 8-bit integer multipliers, products as the block adder
            // takes them.
            return Products::new(MxPath::int8_products::<W>(a, b, lanes), lanes);
        }
        self.multipliers.bus_products(a, b, lanes)
    }

    #[inline(always)]
    fn stage1_into(
        &mut self,
        a: &Wide<W>,
        b: &Wide<W>,
        lanes: usize,
        _: u8,
        out: &mut Products<W>,
    ) {
        let lanes = lanes.min(W);
        if self.int8 {
            *out = Products::new(MxPath::int8_products::<W>(a, b, lanes), lanes);
            return;
        }
        self.multipliers.bus_products_into(a, b, lanes, out);
    }

    #[inline]
    fn stage1_idle(&mut self) {}

    #[inline]
    fn stage2(&mut self, s1: &Products<W>, c1: ACtl, acc: u32) -> Option<Stage2Out> {
        let lanes = usize::from(c1.lanes()).min(W);
        let out = self.block_step(&s1.products[..lanes], c1.fire(), acc)?;
        Some(Stage2Out {
            acc: out.out.bits as u32,
            flags: out.out.flags.to_bits(),
            round_inc: out.out.trace.round_inc,
            special: out.special,
            ..Stage2Out::default()
        })
    }

    #[inline]
    fn stage2_idle(&mut self) {
        self.idle();
    }

    fn visit_b_side<V: Visitor>(&mut self, v: &mut V) {
        use field::*;
        let regs = &mut self.regs;
        v.bank_reg(regs, A_SCALE, |r| &r.a_scale);
        v.bank_reg(regs, B_SCALE, |r| &r.b_scale);
        v.bank_reg(regs, BLK_SUM, |r| &r.blk_sum);
        v.bank_reg(regs, BLK_CLS, |r| &r.blk_cls);
        v.bank_reg(regs, BLK_NZ, |r| &r.blk_nz);
        v.bank_reg(regs, BLK_Z, |r| &r.blk_z);
        v.bank_reg(regs, BLK_POS, |r| &r.blk_pos);
        v.bank_reg(regs, BLK_NEG, |r| &r.blk_neg);
        v.bank_reg(regs, BLK_INV, |r| &r.blk_inv);
        // The bank's edge, after its fields.
        v.bank(regs);
        v.wire(&mut self.scale_sig);
        v.wire(&mut self.scale_exp);
    }

    fn visit_gather<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.gather_n);
    }
}
