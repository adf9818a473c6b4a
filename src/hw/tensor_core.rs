//! The top: `tensor_core` = controller + operand port + A/B edge skew + 4 x 4 mesh + C
//! command skew + result de-skew + output register. `clk` and `rst` come from the engine.
//!
//! Per cycle: the operand port ([`OperandPort`], a clocked block) offers the next step
//! (`valid`); the controller is `ready` or not from its registers; on `take` the step's A lane
//! groups (one per row) and B lane groups (one per column) enter the skew, otherwise a bubble
//! does. The controller's registers also give this cycle's column-0 shift command. The skew
//! delays row `i` by `i` and column `j` by `j` cycles; the mesh moves A right
//! and B down one PE per cycle. The shift command and the C row it loads are skewed by `j`
//! per column; the words leaving the bottom of column `j` are de-skewed by `C - 1 - j`, so a
//! whole row of D reaches the output register (`d_out_<j>`, `d_tag`) at once.
//!
//! With a 2:4 sparse port ([`OperandPort::sparse`]) the mesh is built in
//! sparse mode and the metadata enters each row through its own skew (`meta_skew`, the same
//! per-row depths as `a_skew`), so it reaches every PE in the same cycle as its A values.
//! With an MX port ([`OperandPort::mx`]) the mesh is built in MX mode and the block scales
//! (E8M0, or E4M3 for NVFP4) enter through `xa_skew` (per row, beside A) and `xb_skew` (per
//! column, beside B); the schedule's `fire` bit then marks the last step of every K-block (32
//! elements, 16 for NVFP4). NVFP4's FP32 tensor scales sit in two configuration registers,
//! `a_tscale` and `b_tscale`, constant for the run; their product is formed once and every
//! PE's scale multiplier takes it as a static input.

use super::config::{CoreConfig, MxSpec};
use super::controller::{Controller, CtlState, PortStatus, ShiftCmd};
use super::feeder::{OperandFeeder, TileBuffer};
use super::mesh::{EdgeSides, Mesh};
use super::pe::{ACtl, ShiftIn};
use super::port::{IdealPort, OperandPort, PortIo};
use super::schedule::Schedule;
use super::skew::Skew;
use super::{HwError, COLS, ROWS};
use crate::numerics::dot::{AccMode, MAX_LANES};
use crate::numerics::flags::Flags;
use crate::numerics::format::{
    Format, ACC_FORMATS, E2M1, E2M3, E3M2, E4M3, E5M2, FP32, INPUT_FORMATS,
};
use crate::numerics::int::pair_ok;
use crate::rtl::{Design, Display, Input, Module, Reg, Visitor, Wide};

/// One row of D leaving the output register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DRow {
    /// The tile.
    pub tile: usize,
    /// The row within the tile (0..R).
    pub row: usize,
    /// One FP32 result per mesh column.
    pub values: [u32; COLS],
}

/// The blocks of the top whose combinational updates [`TensorCore::set_eval_order`] orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Block {
    /// The controller FSM.
    Controller,
    /// The operand port.
    Port,
    /// The A-row skew.
    ASkew,
    /// The B-column skew.
    BSkew,
    /// The 2:4 metadata skew (sparse mode).
    MetaSkew,
    /// The skew of the shift commands and C words.
    CSkew,
    /// The PE mesh.
    Mesh,
    /// The result de-skew.
    DeSkew,
    /// The output register (`d_out_<j>`, `d_tag`).
    Output,
}

/// Every block, in the default evaluation order.
pub const BLOCKS: [Block; 9] = [
    Block::Controller,
    Block::Port,
    Block::ASkew,
    Block::BSkew,
    Block::MetaSkew,
    Block::CSkew,
    Block::Mesh,
    Block::DeSkew,
    Block::Output,
];

/// The tag beside a row of D (`d_tag`, and the tag words of the de-skew registers), as typed
/// fields; [`DTag::pack`] gives the traced 64-bit word:
///
/// | bits  | field   | meaning                                          |
/// |-------|---------|--------------------------------------------------|
/// | 0     | `valid` | the row holds a result                           |
/// | 2:1   | `row`   | row of the tile (0..[`ROWS`])                    |
/// | 3     | `last`  | the run's last row                               |
/// | 31:8  | `tile`  | output tile of the row (24 bits)                 |
///
/// Other bits are zero.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DTag {
    /// The row holds a result.
    pub valid: bool,
    /// Row of the tile.
    pub row: usize,
    /// The run's last row.
    pub last: bool,
    /// Output tile of the row.
    pub tile: usize,
}

const TAG_VALID: u64 = 1;
const TAG_ROW_SHIFT: u32 = 1;
const TAG_LAST: u64 = 1 << 3;
const TAG_TILE_SHIFT: u32 = 8;
const TAG_TILE_MASK: u64 = 0xFF_FFFF;
/// The row field is two bits wide: one row index of the mesh.
const TAG_ROW_MASK: u64 = 3;
const _: () = assert!(ROWS as u64 - 1 <= TAG_ROW_MASK);

impl DTag {
    /// The traced tag word.
    pub const fn pack(self) -> u64 {
        (if self.valid { TAG_VALID } else { 0 })
            | ((self.row as u64 & TAG_ROW_MASK) << TAG_ROW_SHIFT)
            | (if self.last { TAG_LAST } else { 0 })
            | ((self.tile as u64 & TAG_TILE_MASK) << TAG_TILE_SHIFT)
    }

    /// The tag of a word written by [`DTag::pack`].
    pub const fn unpack(w: u64) -> DTag {
        DTag {
            valid: w & TAG_VALID != 0,
            row: ((w >> TAG_ROW_SHIFT) & TAG_ROW_MASK) as usize,
            last: w & TAG_LAST != 0,
            tile: ((w >> TAG_TILE_SHIFT) & TAG_TILE_MASK) as usize,
        }
    }
}

/// The tensor core with `W`-lane PEs, fed through the operand port `P` (by default the
/// zero-latency [`IdealPort`] over a [`TileBuffer`]).
pub struct TensorCore<const W: usize, P: OperandPort<W> = IdealPort<TileBuffer>> {
    cfg: CoreConfig,
    sched: Schedule,
    port: P,
    start: Input<bool>,
    controller: Controller,
    a_skew: Skew<Wide<W>, ACtl, ROWS>,
    b_skew: Skew<Wide<W>, bool, COLS>,
    meta_skew: Option<Skew<u64, bool, ROWS>>,
    xa_skew: Option<Skew<u8, bool, ROWS>>,
    xb_skew: Option<Skew<u8, bool, COLS>>,
    a_tscale: Option<Reg<u32>>,
    b_tscale: Option<Reg<u32>>,
    c_skew: Skew<u64, u32, COLS>,
    mesh: Mesh<W>,
    d_deskew: Skew<u32, u64, COLS>,
    d_out: Vec<Reg<u32>>,
    d_tag: Reg<u64>,
    order: [Block; 9],
}

impl<const W: usize> TensorCore<W> {
    /// A tensor core for `cfg` (whose `width` must equal `W`) fed from `buffer` through the
    /// zero-latency port.
    pub fn new(cfg: CoreConfig, buffer: TileBuffer) -> Result<Self, HwError> {
        Self::with_feeder(cfg, buffer)
    }
}

impl<const W: usize, F: OperandFeeder<W>> TensorCore<W, IdealPort<F>> {
    /// A tensor core for `cfg` fed from any [`OperandFeeder`] through the zero-latency port.
    pub fn with_feeder(cfg: CoreConfig, feeder: F) -> Result<Self, HwError> {
        let sched = schedule_of(&cfg, &feeder.dims())?;
        let port = IdealPort::new(feeder, sched.tiles(), sched.steps)?;
        Self::with_port(cfg, port)
    }
}

/// The schedule of a `(m, n, k)` problem on a core built for `cfg`.
fn schedule_of(cfg: &CoreConfig, dims: &(usize, usize, usize)) -> Result<Schedule, HwError> {
    let (m, n, k) = *dims;
    if m == 0 || n == 0 || k == 0 {
        return Err(HwError::Unsupported("a zero dimension".into()));
    }
    Ok(Schedule::new(m, n, k, cfg.width, cfg.block()))
}

impl<const W: usize, P: OperandPort<W>> TensorCore<W, P> {
    /// A tensor core for `cfg` (whose `width` must equal `W`) with any operand port.
    pub fn with_port(cfg: CoreConfig, port: P) -> Result<Self, HwError> {
        let mx = port.mx();
        match &mx {
            Some(spec) => check_mx_config::<W>(&cfg, spec, port.dims().2)?,
            None => check_config::<W>(&cfg)?,
        }
        let mut sched = schedule_of(&cfg, &port.dims())?;
        if let Some(spec) = &mx {
            sched.block = spec.block();
        }
        let lane_display = |fmt: Format| match &mx {
            Some(spec) if spec.int8() => Display::Hex,
            _ => cfg.operand_display(fmt),
        };
        // NVFP4's tensor scales: configuration registers, constant for the run.
        let tensor_scale = |name: &'static str, bits: Option<u32>| -> crate::rtl::Result<_> {
            Ok(match bits {
                Some(b) => Some(Reg::new(name, 32, b)?.with_display(Display::Real)),
                None => None,
            })
        };
        let a_tscale = tensor_scale("a_tscale", mx.and_then(|s| s.a_tensor))?;
        let b_tscale = tensor_scale("b_tscale", mx.and_then(|s| s.b_tensor))?;
        if sched.tiles() + 2 >= 1 << 24 {
            return Err(HwError::Unsupported(format!(
                "{} tiles (at most 2^24 - 3)",
                sched.tiles()
            )));
        }
        let w = W as u32;
        let sparse = port.sparse();
        let b_lanes = if sparse {
            super::pe::sparse_b_lanes(W) as u32
        } else {
            w
        };
        let mut depth_in = [0usize; ROWS];
        for (i, d) in depth_in.iter_mut().enumerate() {
            *d = i;
        }
        let mut depth_col = [0usize; COLS];
        let mut depth_out = [0usize; COLS];
        for j in 0..COLS {
            depth_col[j] = j;
            depth_out[j] = COLS - 1 - j;
        }
        Ok(Self {
            cfg,
            sched,
            port,
            start: Input::new("start", 1, false)?,
            controller: Controller::new(sched)?,
            a_skew: Skew::new(
                "a_skew",
                depth_in,
                cfg.fmt_a.width() * w,
                super::pe::CTL_BITS,
            )?
            .with_display(lane_display(cfg.fmt_a), Display::Filter("ctl")),
            b_skew: Skew::new("b_skew", depth_col, cfg.fmt_b.width() * b_lanes, 1)?
                .with_display(lane_display(cfg.fmt_b), Display::Hex),
            meta_skew: if sparse {
                Some(
                    Skew::new("meta_skew", depth_in, 2 * w, 1)?
                        .with_display(Display::Filter("meta"), Display::Hex),
                )
            } else {
                None
            },
            xa_skew: match &mx {
                Some(spec) => Some(
                    Skew::new("xa_skew", depth_in, 8, 1)?
                        .with_display(Display::Filter(spec.scale_format().name), Display::Hex),
                ),
                None => None,
            },
            xb_skew: match &mx {
                Some(spec) => Some(
                    Skew::new("xb_skew", depth_col, 8, 1)?
                        .with_display(Display::Filter(spec.scale_format().name), Display::Hex),
                ),
                None => None,
            },
            a_tscale,
            b_tscale,
            // C and D words are as wide as the accumulator format (32, or 16 for FP16).
            c_skew: Skew::new("c_skew", depth_col, 64, cfg.acc.width())?
                .with_display(Display::Hex, cfg.acc_display()),
            mesh: Mesh::build(&cfg, sparse, mx)?,
            d_deskew: Skew::new("d_deskew", depth_out, cfg.acc.width(), 64)?
                .with_display(cfg.acc_display(), Display::Filter("tag")),
            d_out: (0..COLS)
                .map(|j| {
                    Ok(Reg::new(format!("d_out_{j}"), cfg.acc.width(), 0u32)?
                        .with_display(cfg.acc_display())
                        .in_overview())
                })
                .collect::<crate::rtl::Result<Vec<_>>>()?,
            d_tag: Reg::new("d_tag", 64, 0)?
                .with_display(Display::Filter("tag"))
                .in_overview(),
            order: BLOCKS,
        })
    }

    /// Asserts `start` (call before the first step after reset).
    pub fn start(&mut self) {
        self.start.set(true);
    }

    /// True once the controller reached `Done` (every result row has left).
    pub fn is_done(&self) -> bool {
        self.controller.state() == CtlState::Done
    }

    /// Cycles the controller was ready for a step the port did not offer (its counter).
    pub fn stall_cycles(&self) -> u64 {
        self.controller.stall_cycles()
    }

    /// Cycles a due shift window waited for the port (the controller's counter).
    pub fn window_wait_cycles(&self) -> u64 {
        self.controller.window_wait_cycles()
    }

    /// The controller's state.
    pub fn ctl_state(&self) -> CtlState {
        self.controller.state()
    }

    /// Cycles since the controller left `Idle`.
    pub fn timer(&self) -> u64 {
        self.controller.timer()
    }

    /// The schedule being run.
    pub fn schedule(&self) -> &Schedule {
        &self.sched
    }

    /// The configuration.
    pub fn config(&self) -> &CoreConfig {
        &self.cfg
    }

    /// Sets the order in which the blocks' combinational updates run each cycle. Every
    /// permutation of [`BLOCKS`] gives the same registers, wires and waveform (the engine's
    /// contract; `tests/hw/waves.rs` shuffles it). Returns `false`, changing nothing, if
    /// `order` is not a permutation of [`BLOCKS`].
    pub fn set_eval_order(&mut self, order: [Block; 9]) -> bool {
        let ok = BLOCKS.iter().all(|b| order.contains(b));
        if ok {
            self.order = order;
        }
        ok
    }

    /// The operand port (read-only: for monitors and counters).
    pub fn port(&self) -> &P {
        &self.port
    }

    /// The mesh (read-only: for monitors).
    pub fn mesh(&self) -> &Mesh<W> {
        &self.mesh
    }

    /// The row of D in the output register this cycle, if any.
    pub fn d_row(&self) -> Option<DRow> {
        let tag = DTag::unpack(self.d_tag.q());
        if !tag.valid {
            return None;
        }
        let mut values = [0u32; COLS];
        for (v, r) in values.iter_mut().zip(&self.d_out) {
            *v = r.q();
        }
        Some(DRow {
            tile: tag.tile,
            row: tag.row,
            values,
        })
    }

    /// OR of the IEEE flags every PE raised.
    pub fn flags(&self) -> Flags {
        self.mesh.flags()
    }

    /// The name of a PE that saw an accumulator hazard, if any.
    pub fn hazard(&self) -> Option<String> {
        self.mesh.hazard()
    }
}

/// The element formats an MX core takes (the MX specification's FP8, FP6 and FP4 elements).
pub const MX_ELEMENT_FORMATS: [Format; 5] = [E4M3, E5M2, E2M3, E3M2, E2M1];

/// Checks that `cfg` can run the block-scaled `spec` with `W` lanes and inner dimension `k`:
/// A and B pair up ([`MxSpec::check`]), a width dividing the block size, `fused` mode (the
/// MX semantics the PE implements), FP32 accumulation, lane formats matching the block
/// formats' elements, `k` a multiple of the block size.
pub fn check_mx_config<const W: usize>(
    cfg: &CoreConfig,
    spec: &MxSpec,
    k: usize,
) -> Result<(), HwError> {
    spec.check()?;
    let bs = spec.block();
    if cfg.width != W || !W.is_power_of_two() || W > MAX_LANES || W > bs {
        return Err(HwError::Unsupported(format!(
            "width {} in a {W}-lane core with {} (the width must divide its blocks of {bs})",
            cfg.width, spec.a
        )));
    }
    if cfg.mode != AccMode::Fused {
        return Err(HwError::Unsupported(format!(
            "MX in {} mode (the tensor core's MX datapath is fused)",
            cfg.mode.name()
        )));
    }
    if cfg.acc != FP32 {
        return Err(HwError::Unsupported(format!(
            "MX with {} accumulation (the MX datapath accumulates in FP32)",
            cfg.acc.name
        )));
    }
    for (f, lanes) in [(spec.a, cfg.fmt_a), (spec.b, cfg.fmt_b)] {
        let want = MxSpec::lane_format(f);
        if lanes != want || !(spec.int8() || MX_ELEMENT_FORMATS.contains(&lanes)) {
            return Err(HwError::Unsupported(format!(
                "{f} with {} lanes (its elements travel as {})",
                lanes.name, want.name
            )));
        }
    }
    if !k.is_multiple_of(bs) {
        return Err(HwError::Unsupported(format!(
            "{} with K = {k} (K must be a multiple of {bs})",
            spec.a
        )));
    }
    Ok(())
}

/// Checks that `cfg` can be built with `W` lanes.
pub fn check_config<const W: usize>(cfg: &CoreConfig) -> Result<(), HwError> {
    if cfg.width != W || !W.is_power_of_two() || W > MAX_LANES {
        return Err(HwError::Unsupported(format!(
            "width {} in a {W}-lane core",
            cfg.width
        )));
    }
    if let AccMode::Int(im) = cfg.mode {
        // Integer lanes travel in containers of their width (`IntFormat::container`).
        if cfg.fmt_a != im.a.container() || cfg.fmt_b != im.b.container() || !pair_ok(im.a, im.b) {
            return Err(HwError::Unsupported(format!(
                "{} x {} integers with {} x {} lanes",
                im.a, im.b, cfg.fmt_a.name, cfg.fmt_b.name
            )));
        }
        return Ok(());
    }
    for f in [cfg.fmt_a, cfg.fmt_b] {
        if !INPUT_FORMATS.contains(&f) {
            return Err(HwError::Unsupported(format!("{} inputs", f.name)));
        }
    }
    if !ACC_FORMATS.contains(&cfg.acc) {
        return Err(HwError::Unsupported(format!(
            "{} accumulators (fp32 or fp16)",
            cfg.acc.name
        )));
    }
    match cfg.mode {
        AccMode::Exact => Err(HwError::Unsupported(
            "exact mode is a reference (one rounding over all of K), not a datapath".into(),
        )),
        AccMode::Nvidia(p) if p.block == 0 || p.block > MAX_LANES || !p.block.is_power_of_two() => {
            Err(HwError::Unsupported(format!(
                "NVIDIA block size {} (a power of two up to 32)",
                p.block
            )))
        }
        _ => Ok(()),
    }
}

impl<const W: usize, P: OperandPort<W>> Module for TensorCore<W, P> {
    fn name(&self) -> &str {
        "tensor_core"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.input(&mut self.start);
        v.child(&mut self.controller);
        v.child(&mut self.port);
        v.child(&mut self.a_skew);
        v.child(&mut self.b_skew);
        if let Some(m) = self.meta_skew.as_mut() {
            v.child(m);
        }
        if let Some(x) = self.xa_skew.as_mut() {
            v.child(x);
        }
        if let Some(x) = self.xb_skew.as_mut() {
            v.child(x);
        }
        if let Some(r) = self.a_tscale.as_mut() {
            v.reg(r);
        }
        if let Some(r) = self.b_tscale.as_mut() {
            v.reg(r);
        }
        v.child(&mut self.c_skew);
        v.child(&mut self.mesh);
        v.child(&mut self.d_deskew);
        for r in &mut self.d_out {
            v.reg(r);
        }
        v.reg(&mut self.d_tag);
    }
}

impl<const W: usize, P: OperandPort<W>> Design for TensorCore<W, P> {
    fn comb(&mut self) {
        // Settle: every value passed between blocks this cycle, computed from register
        // outputs, the ports' registers and the start input only (no block is updated yet).
        let valid = self.port.valid();
        let status = PortStatus {
            valid,
            c_ready: self.port.c_ready(self.controller.next_window()),
            d_ready: self.port.d_ready(),
            finished: self.port.finished(),
        };
        let out_last = DTag::unpack(self.d_tag.q()).last;
        let ready = self.controller.ready();
        let take = ready && valid;
        let cmd = self.controller.shift_cmd(status.c_ready, status.d_ready);

        // Operand feed at the array's edges: the taken step, or a bubble.
        let mut a_in = [(Wide::<W>::ZERO, ACtl::default()); ROWS];
        let mut b_in = [(Wide::<W>::ZERO, false); COLS];
        let mut meta_in = [(0u64, false); ROWS];
        let mut xa_in = [(0u8, false); ROWS];
        let mut xb_in = [(0u8, false); COLS];
        if take {
            let (tile, step) = self.controller.feed_addr();
            let ops = self.port.operands();
            let sc = self.sched.step_ctl(step);
            for (slot, g) in a_in.iter_mut().zip(&ops.a) {
                let ctl = ACtl {
                    lanes: g.lanes as u8,
                    last: sc.last,
                    fire: sc.fire,
                    set: tile & 1 == 1,
                    valid: g.lanes > 0,
                };
                *slot = (g.bits, ctl);
            }
            if self.meta_skew.is_some() {
                for (slot, m) in meta_in.iter_mut().zip(ops.meta) {
                    *slot = (m, true);
                }
            }
            for (slot, g) in b_in.iter_mut().zip(&ops.b) {
                *slot = (g.bits, g.lanes > 0);
            }
            if self.xa_skew.is_some() {
                for (slot, x) in xa_in.iter_mut().zip(ops.a_scale) {
                    *slot = (x, true);
                }
                for (slot, x) in xb_in.iter_mut().zip(ops.b_scale) {
                    *slot = (x, true);
                }
            }
        }
        let a_edge = self.a_skew.out(&a_in);
        let b_edge = self.b_skew.out(&b_in);
        let mut meta_edge = [0u64; ROWS];
        if let Some(skew) = self.meta_skew.as_ref() {
            for (e, (m, _)) in meta_edge.iter_mut().zip(skew.out(&meta_in)) {
                *e = m;
            }
        }

        let mut xa_edge = [0u8; ROWS];
        if let Some(skew) = self.xa_skew.as_ref() {
            for (e, (x, _)) in xa_edge.iter_mut().zip(skew.out(&xa_in)) {
                *e = x;
            }
        }
        let mut xb_edge = [0u8; COLS];
        if let Some(skew) = self.xb_skew.as_ref() {
            for (e, (x, _)) in xb_edge.iter_mut().zip(skew.out(&xb_in)) {
                *e = x;
            }
        }

        // Column shift commands with the C row they load, skewed by column.
        let c_read = (cmd.en && cmd.c_valid).then_some((cmd.c_tile, ROWS - 1 - cmd.x));
        let c_row = match c_read {
            Some((tile, row)) => self.port.c_row(tile, row),
            None => [0; COLS],
        };
        let word = cmd.pack();
        let mut c_in = [(0u64, 0u32); COLS];
        for (j, slot) in c_in.iter_mut().enumerate() {
            *slot = (word, c_row[j]);
        }
        let c_cols = self.c_skew.out(&c_in);
        let mut shift = [ShiftIn::default(); COLS];
        let mut tags = [0u64; COLS];
        for j in 0..COLS {
            let cj = ShiftCmd::unpack(c_cols[j].0);
            shift[j] = ShiftIn {
                en: cj.en,
                set: cj.set,
                value: c_cols[j].1,
            };
            if cj.en && cj.d_valid {
                tags[j] = DTag {
                    valid: true,
                    row: ROWS - 1 - cj.x,
                    last: cj.last,
                    tile: cj.d_tile,
                }
                .pack();
            }
        }

        // The drained results (from the bottom PEs' accumulators), de-skewed into one row.
        let mut d_in = [(0u32, 0u64); COLS];
        for j in 0..COLS {
            d_in[j] = (self.mesh.bottom(j, shift[j].set), tags[j]);
        }
        let row = self.d_deskew.out(&d_in);
        let io = PortIo {
            take,
            ready,
            c_read,
            d_row: self.d_row(),
            d_claim: (cmd.en && cmd.x == 0 && cmd.d_valid).then_some(cmd.d_tile),
            c_next: Some(self.controller.next_window()).filter(|&t| t < self.sched.tiles()),
        };

        // Update: every block computes its registers' next values and its wires from the
        // settled values above, in any order (`set_eval_order`; tested by shuffling).
        for &block in &self.order {
            match block {
                Block::Controller => {
                    self.controller.comb(self.start.get(), out_last, status);
                }
                Block::Port => self.port.comb(&io),
                Block::ASkew => {
                    self.a_skew.shift_in(&a_in);
                    if let Some(skew) = self.xa_skew.as_mut() {
                        skew.shift_in(&xa_in);
                    }
                }
                Block::BSkew => {
                    self.b_skew.shift_in(&b_in);
                    if let Some(skew) = self.xb_skew.as_mut() {
                        skew.shift_in(&xb_in);
                    }
                }
                Block::MetaSkew => {
                    if let Some(skew) = self.meta_skew.as_mut() {
                        skew.shift_in(&meta_in);
                    }
                }
                Block::CSkew => self.c_skew.shift_in(&c_in),
                Block::Mesh => {
                    let sides = EdgeSides {
                        meta: &meta_edge,
                        a_scale: &xa_edge,
                        b_scale: &xb_edge,
                    };
                    self.mesh.comb(&a_edge, sides, &b_edge, &shift);
                }
                Block::DeSkew => self.d_deskew.shift_in(&d_in),
                Block::Output => {
                    for (r, (v, _)) in self.d_out.iter_mut().zip(row.iter()) {
                        r.set_d(*v);
                    }
                    self.d_tag.set_d(row[0].1);
                }
            }
        }
    }

    fn progress(&self) -> Option<u64> {
        Some(self.controller.timer())
    }

    fn state(&self) -> String {
        format!(
            "controller.state={:?} timer={} feed={:?} ready={} port.valid={}",
            self.controller.state(),
            self.controller.timer(),
            self.controller.feed_addr(),
            self.controller.ready(),
            self.port.valid()
        )
    }
}
