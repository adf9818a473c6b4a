//! The block-scale front of a PE in MX mode ([`crate::hw::pe::Pe::with_fronts`]): the E8M0
//! scales travelling with the operands and the block-sum registers of stage 2.
//!
//! - `a_scale` (8 bits) latches the scale arriving beside A and passes it right with `a_out`;
//!   `b_scale` latches the one beside B and passes it down with `b_out`. They change with
//!   every step, so in the cycle stage 2 handles a step they hold that step's scales (as
//!   `s1_ctl` holds its control word): no further pipeline register is needed.
//! - Stage 2 adds the step's exact products into the block state
//!   ([`block_accumulate`]): `blk_sum` (the exact fixed-point block sum, 72 bits two's
//!   complement, LSB `2^-32`), `blk_cls` (special class), `blk_nz` (a nonzero product),
//!   `blk_pz` (a `+0` product), `blk_inv` (a product raised invalid). On a step whose `fire`
//!   bit is set (the last of a K-block of 32) it fires the block ([`block_fire`]): the exponent
//!   add `scale_exp = a_scale + b_scale - 254` (traced) and one FP32 round-to-nearest-even add
//!   into the accumulator; the block registers return to zero.
//!
//! The semantics are `fused` MX ([`crate::numerics::mx_dot::MxDotMode::Fused`]).

use crate::numerics::multiply::Product;
use crate::numerics::mx_block::{
    block_accumulate, block_fire, BlockClass, BlockFire, BlockState, BLOCK_SUM_BITS,
};
use crate::rtl::{Display, Reg, Result, Visitor, Wire};

/// The MX registers and wires of one PE.
pub struct MxFront {
    a_scale: Reg<u8>,
    b_scale: Reg<u8>,
    blk_sum: Reg<u128>,
    blk_cls: Reg<u8>,
    blk_nz: Reg<bool>,
    blk_pz: Reg<bool>,
    blk_inv: Reg<bool>,
    scale_exp: Wire<u16>,
}

impl MxFront {
    /// The front's registers at reset.
    pub fn new() -> Result<Self> {
        Ok(Self {
            a_scale: Reg::new("a_scale", 8, 0)?,
            b_scale: Reg::new("b_scale", 8, 0)?,
            blk_sum: Reg::new("blk_sum", BLOCK_SUM_BITS, 0)?.with_display(Display::SignedDec),
            blk_cls: Reg::new("blk_cls", 2, 0)?,
            blk_nz: Reg::new("blk_nz", 1, false)?,
            blk_pz: Reg::new("blk_pz", 1, false)?,
            blk_inv: Reg::new("blk_inv", 1, false)?,
            scale_exp: Wire::new("scale_exp", 16, 0)?.with_display(Display::SignedDec),
        })
    }

    /// A's scale leaving to the right (register output).
    #[inline]
    pub fn a_scale_out(&self) -> u8 {
        self.a_scale.q()
    }

    /// B's scale leaving downwards (register output).
    #[inline]
    pub fn b_scale_out(&self) -> u8 {
        self.b_scale.q()
    }

    /// The scales arriving this cycle pass on through the registers.
    #[inline]
    pub fn pass(&mut self, a_scale: u8, b_scale: u8) {
        self.a_scale.set_d(a_scale);
        self.b_scale.set_d(b_scale);
    }

    fn state(&self) -> BlockState {
        BlockState {
            sum: BlockState::sum_from_bits(self.blk_sum.q()),
            class: BlockClass::from_code(self.blk_cls.q()),
            nonzero: self.blk_nz.q(),
            pos_zero: self.blk_pz.q(),
            invalid: self.blk_inv.q(),
        }
    }

    fn load(&mut self, s: &BlockState) {
        self.blk_sum.set_d(s.sum_bits());
        self.blk_cls.set_d(s.class.code());
        self.blk_nz.set_d(s.nonzero);
        self.blk_pz.set_d(s.pos_zero);
        self.blk_inv.set_d(s.invalid);
    }

    /// Stage 2 in MX mode for a valid step: adds `products` into the block registers; when
    /// `fire`, fires the block with this step's scales into the accumulator value `c` and
    /// returns the result (the block registers clear).
    #[inline]
    pub fn stage2(&mut self, products: &[Product], fire: bool, c: u32) -> Option<BlockFire> {
        let s = block_accumulate(self.state(), products);
        if fire {
            let out = block_fire(&s, self.a_scale.q(), self.b_scale.q(), c);
            self.load(&BlockState::default());
            self.scale_exp.set(out.scale_exp as u16);
            Some(out)
        } else {
            self.load(&s);
            self.scale_exp.set(0);
            None
        }
    }

    /// Stage 2 idle this cycle: its wire reads 0.
    #[inline]
    pub fn idle(&mut self) {
        self.scale_exp.set(0);
    }

    /// Visits the front's registers and wires.
    pub fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.a_scale);
        v.reg(&mut self.b_scale);
        v.reg(&mut self.blk_sum);
        v.reg(&mut self.blk_cls);
        v.reg(&mut self.blk_nz);
        v.reg(&mut self.blk_pz);
        v.reg(&mut self.blk_inv);
        v.wire(&mut self.scale_exp);
    }
}
