//! The top: `tensor_core` = controller + operand port + A/B edge skew + `R x C` mesh + C
//! command skew + result de-skew + output register. `clk` and `rst` come from the engine.
//! The geometry (`R`, `C`; 4 x 4 today) is a value of the configuration: every lane count,
//! skew depth, field width and buffer below is sized from it when the core is built (the
//! per-cycle buffers once, never in the clock loop).
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
//! What the port sends beside the operands is its [`OperandPort::Extras`] type
//! ([`crate::hw::extras`]), and that type builds the rest: the mesh's datapath and one skew
//! stage for the extras, with the same per-lane depths as `a_skew` (rows) and `b_skew`
//! (columns), so they reach every PE in the same cycle as their operands. A 2:4 sparse port
//! gets the sparse mesh and `meta_skew` (the selects beside A); an MX port gets the MX mesh,
//! `xa_skew` and `xb_skew` (the block scales beside A and B: E8M0, or E4M3 for NVFP4), NVFP4's
//! tensor-scale registers `a_tscale` and `b_tscale`, and the schedule's `fire` bit marks the
//! last step of every K-block (32 elements, 16 for NVFP4); a dense port gets the
//! floating-point or integer mesh of the mode and no side skew.

use super::config::{CoreConfig, Dataflow};
use super::controller::{index_bits, Controller, CtlState, PortStatus, ShiftCmd};
use super::core::bundles::d_row_of;
use super::core::output::OutputRegister;
use super::core::top::Edge;
use super::core::{CoreTop, DRow, DTag, RunMonitors};
use super::extras::{EdgeExtras, SideStage};
use super::feeder::{OperandFeeder, TileBuffer, Traffic};
use super::mesh::Mesh;
use super::pe::{ACtl, ShiftIn};
use super::port::{IdealPort, OperandPort, PortIo, StepOperands};
use super::schedule::Schedule;
use super::skew::Skew;
use super::wave_filter::tag_filter;
use super::HwError;
use crate::numerics::flags::Flags;
use crate::numerics::format::Format;
use crate::rtl::{Design, Display, Input, Module, Visitor, Wide};

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
    /// The skew stage of what travels beside the operands (the port's extras: the 2:4
    /// selects, or the block scales; nothing for a dense port).
    SideSkew,
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
    Block::SideSkew,
    Block::CSkew,
    Block::Mesh,
    Block::DeSkew,
    Block::Output,
];

/// The values passed between the top's blocks in one cycle, one entry per mesh row or column:
/// buffers sized when the core is built and rewritten every cycle (wires, not registers).
struct EdgeBuffers<const W: usize> {
    /// A with its control bundle out of `a_skew`, at the mesh's left edge (it enters the
    /// skew through [`Skew::inputs`], as do the values below).
    a_edge: Vec<(Wide<W>, ACtl)>,
    /// B with its valid bit out of `b_skew`, at the mesh's top edge.
    b_edge: Vec<(Wide<W>, bool)>,
    /// The C row a shift window reads this cycle.
    c_row: Vec<u32>,
    /// Shift command word and C word out of `c_skew`, per column.
    c_cols: Vec<(u64, u32)>,
    /// The column shift path's input to each column's top PE.
    shift: Vec<ShiftIn>,
    /// The de-skewed row of the words leaving the bottom of each column, with their tags.
    d_row: Vec<(u32, u64)>,
}

impl<const W: usize> EdgeBuffers<W> {
    fn new(rows: usize, cols: usize) -> Self {
        Self {
            a_edge: vec![Default::default(); rows],
            b_edge: vec![Default::default(); cols],
            c_row: vec![0; cols],
            c_cols: vec![(0, 0); cols],
            shift: vec![ShiftIn::default(); cols],
            d_row: vec![(0, 0); cols],
        }
    }
}

/// The skew stage of port `P`'s extras.
type Stage<const W: usize, P> = <<P as OperandPort<W>>::Extras as EdgeExtras<W>>::Stage;

/// The tensor core with `W`-lane PEs, fed through the operand port `P` (by default the
/// zero-latency [`IdealPort`] over a [`TileBuffer`]).
pub struct TensorCore<const W: usize, P: OperandPort<W> = IdealPort<TileBuffer>> {
    cfg: CoreConfig,
    sched: Schedule,
    port: P,
    start: Input<bool>,
    controller: Controller,
    a_skew: Skew<Wide<W>, ACtl>,
    b_skew: Skew<Wide<W>, bool>,
    sides: Stage<W, P>,
    c_skew: Skew<u64, u32>,
    mesh: <P::Extras as EdgeExtras<W>>::Mesh,
    d_deskew: Skew<u32, u64>,
    /// The step taken this cycle, as the port wrote it (a buffer, not a register).
    ops: StepOperands<W, P::Extras>,
    edges: EdgeBuffers<W>,
    /// Widths of a row index (the shift command's `x`, the tag's `row`): `clog2(R)`.
    row_bits: u32,
    /// The output registers `d_out_<j>`: one stage per column, so that their outputs are one
    /// row ([`DelayLines::stage_row`]) for [`DRow`].
    out: OutputRegister,
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
    Ok(Schedule::for_core(cfg, m, n, k, cfg.block()))
}

impl<const W: usize, P: OperandPort<W>> TensorCore<W, P> {
    /// A tensor core for `cfg` (whose `width` must equal `W`) with any operand port.
    pub fn with_port(cfg: CoreConfig, port: P) -> Result<Self, HwError> {
        if cfg.dataflow() != Dataflow::Os {
            return Err(HwError::Unsupported(format!(
                "the output-stationary memory port in {} (the weight-stationary core is \
                 fed by its own memory-fed supply, hw::ws::mem::WsMemoryPort)",
                cfg.dataflow()
            )));
        }
        let spec = port.spec();
        let block = P::Extras::check(&cfg, &spec, port.dims().2)?;
        let mut sched = schedule_of(&cfg, &port.dims())?;
        sched.block = block;
        let lane_display = |fmt: Format| P::Extras::lane_display(&cfg, &spec, fmt);
        if sched.tiles() + 2 >= 1 << 24 {
            return Err(HwError::Unsupported(format!(
                "{} tiles (at most 2^24 - 3)",
                sched.tiles()
            )));
        }
        let w = W as u32;
        let b_lanes = <P::Extras as EdgeExtras<W>>::Mesh::b_lanes() as u32;
        let (rows, cols) = (cfg.rows(), cfg.cols());
        // Row `i` of A waits `i` cycles, column `j` of B (and its shift commands) `j`, and the
        // word leaving column `j` waits `C - 1 - j` to meet the rest of its row.
        let depth_in: Vec<usize> = (0..rows).collect();
        let depth_col: Vec<usize> = (0..cols).collect();
        let depth_out: Vec<usize> = (0..cols).rev().collect();
        Ok(Self {
            cfg,
            sched,
            port,
            start: Input::new("start", 1, false)?,
            controller: Controller::new(sched)?,
            a_skew: Skew::new(
                "a_skew",
                &depth_in,
                cfg.fmt_a.width() * w,
                super::pe::CTL_BITS,
            )?
            .with_display(lane_display(cfg.fmt_a), Display::Filter("ctl")),
            b_skew: Skew::new("b_skew", &depth_col, cfg.fmt_b.width() * b_lanes, 1)?
                .with_display(lane_display(cfg.fmt_b), Display::Hex),
            sides: P::Extras::stage(&cfg, &spec, &depth_in, &depth_col)?,
            // C and D words are as wide as the accumulator format (32, or 16 for FP16).
            c_skew: Skew::new("c_skew", &depth_col, 64, cfg.acc.width())?
                .with_display(Display::Hex, cfg.acc_display()),
            mesh: P::Extras::mesh(&cfg, &spec)?,
            d_deskew: Skew::new("d_deskew", &depth_out, cfg.acc.width(), 64)?.with_display(
                cfg.acc_display(),
                Display::Filter(tag_filter(index_bits(rows))),
            ),
            ops: StepOperands::new(rows, cols),
            edges: EdgeBuffers::new(rows, cols),
            row_bits: index_bits(rows),
            out: OutputRegister::new(&cfg, index_bits(rows))?,
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
    pub fn mesh(&self) -> &<P::Extras as EdgeExtras<W>>::Mesh {
        &self.mesh
    }

    /// The row of D in the output register this cycle, if any.
    pub fn d_row(&self) -> Option<DRow<'_>> {
        self.out.d_row(self.row_bits)
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
        self.sides.visit(v);
        v.child(&mut self.c_skew);
        v.child(&mut self.mesh);
        v.child(&mut self.d_deskew);
        self.out.visit(v);
    }
}

impl<const W: usize, P: OperandPort<W>> Design for TensorCore<W, P> {
    fn comb(&mut self) {
        // Settle: every value passed between blocks this cycle, computed from register
        // outputs, the ports' registers and the start input only (no block is updated yet).
        let rows = self.sched.rows;
        let row_bits = self.row_bits;
        let e = &mut self.edges;
        let valid = self.port.valid();
        let status = PortStatus {
            valid,
            c_ready: self.port.c_ready(self.controller.next_window()),
            d_ready: self.port.d_ready(),
            finished: self.port.finished(),
        };
        let out_last = DTag::unpack(self.out.d_tag.q(), row_bits).last;
        let cmd = self.controller.shift_cmd(status.c_ready, status.d_ready);
        let ready = self.controller.ready(cmd);
        let take = ready && valid;

        // Operand feed at the array's edges (the skews' inputs): the taken step, or a bubble.
        let cols = self.sched.cols;
        let a_in = &mut self.a_skew.inputs()[..rows];
        let b_in = &mut self.b_skew.inputs()[..cols];
        if take {
            let (tile, step) = self.controller.feed_addr();
            self.port.operands(&mut self.ops);
            let sc = self.sched.step_ctl(step);
            let set = tile & 1 == 1;
            let a = &self.ops.a[..rows];
            for i in 0..rows {
                let g = a[i];
                let ctl = ACtl::new(g.lanes as u8, sc.last, sc.fire, set, g.lanes > 0);
                a_in[i] = (g.bits, ctl);
            }
            let b = &self.ops.b[..cols];
            for j in 0..cols {
                b_in[j] = (b[j].bits, b[j].lanes > 0);
            }
        } else {
            a_in.fill(Default::default());
            b_in.fill(Default::default());
        }
        self.sides.settle(take, &self.ops.extras);
        self.a_skew.out(&mut e.a_edge);
        self.b_skew.out(&mut e.b_edge);

        // Column shift commands with the C row they load, skewed by column.
        let c_read = (cmd.en && cmd.c_valid).then_some((cmd.c_tile, rows - 1 - cmd.x));
        if let Some((tile, row)) = c_read {
            self.port.c_row(tile, row, &mut e.c_row);
        }
        let word = cmd.pack(row_bits);
        let (c_in, c_row) = (&mut self.c_skew.inputs()[..cols], &e.c_row[..cols]);
        for j in 0..cols {
            // The C word is 0 in a cycle that reads no C row.
            c_in[j] = (word, if c_read.is_some() { c_row[j] } else { 0 });
        }
        self.c_skew.out(&mut e.c_cols);

        // The drained results (from the bottom PEs' accumulators) with their tags, de-skewed
        // into one row.
        let d_in = &mut self.d_deskew.inputs()[..cols];
        let (shift, c_cols) = (&mut e.shift[..cols], &e.c_cols[..cols]);
        for j in 0..cols {
            let (w, c) = c_cols[j];
            let cj = ShiftCmd::unpack(w, row_bits);
            shift[j] = ShiftIn {
                en: cj.en,
                set: cj.set,
                value: c,
            };
            let tag = if cj.en && cj.d_valid {
                DTag {
                    valid: true,
                    row: rows - 1 - cj.x,
                    last: cj.last,
                    tile: cj.d_tile,
                }
                .pack(row_bits)
            } else {
                0
            };
            d_in[j] = (self.mesh.bottom(j, cj.set), tag);
        }
        self.d_deskew.out(&mut e.d_row);
        // The output registers: their outputs (read by the port) and their inputs (driven by
        // the output block below).
        let (d_out_in, d_out_q) = self.out.d_out.drive_beside_outputs();
        let io = PortIo {
            take,
            ready,
            c_read,
            d_row: d_row_of(self.out.d_tag.q(), row_bits, d_out_q),
            d_claim: (cmd.en && cmd.x == 0 && cmd.d_valid).then_some(cmd.d_tile),
            c_next: Some(self.controller.next_window()).filter(|&t| t < self.sched.tiles()),
        };

        // Update: every block computes its registers' next values and its wires from the
        // settled values above, in any order (`set_eval_order`; tested by shuffling).
        for &block in &self.order {
            match block {
                Block::Controller => {
                    self.controller
                        .comb(self.start.get(), out_last, status, ready, cmd);
                }
                Block::Port => self.port.comb(&io),
                Block::ASkew => self.a_skew.shift_in(),
                Block::BSkew => self.b_skew.shift_in(),
                Block::SideSkew => self.sides.shift_in(),
                Block::CSkew => self.c_skew.shift_in(),
                Block::Mesh => {
                    self.mesh.comb(
                        &e.a_edge,
                        self.sides.edge_a(),
                        &e.b_edge,
                        self.sides.edge_b(),
                        &e.shift,
                    );
                }
                Block::DeSkew => self.d_deskew.shift_in(),
                Block::Output => {
                    OutputRegister::load(d_out_in, &mut self.out.d_tag, &e.d_row);
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
            self.controller.ready(self.controller.shift_cmd(
                self.port.c_ready(self.controller.next_window()),
                self.port.d_ready()
            )),
            self.port.valid()
        )
    }
}

impl<const W: usize, P: OperandPort<W>> CoreTop for TensorCore<W, P> {
    fn config(&self) -> &CoreConfig {
        &self.cfg
    }
    fn dims(&self) -> (usize, usize, usize) {
        self.port.dims()
    }
    fn tile_origin(&self, tile: usize) -> (usize, usize) {
        self.sched.tile_origin(tile)
    }
    fn output_tiles(&self) -> usize {
        self.sched.tiles()
    }
    fn scheduled_cycles(&self) -> u64 {
        self.sched.total_cycles()
    }
    fn start(&mut self) {
        TensorCore::start(self)
    }
    fn is_done(&self) -> bool {
        TensorCore::is_done(self)
    }
    fn d_row(&self) -> Option<DRow<'_>> {
        TensorCore::d_row(self)
    }
    fn error(&self) -> Option<String> {
        self.port.error()
    }
    fn smem_read_bytes(&self) -> u64 {
        self.port.smem_read_bytes()
    }
    fn traffic(&self) -> Option<Traffic> {
        self.port.traffic()
    }
    fn hazard(&self) -> Option<String> {
        TensorCore::hazard(self)
    }
    fn flags(&self) -> Flags {
        TensorCore::flags(self)
    }
    /// Before the edge: a cycle in `Compute` counts; after it: the first tile's latency,
    /// when the bottom-right PE wrote tile 0's last step.
    fn monitor_edge(&self, edge: Edge, m: &mut RunMonitors) {
        match edge {
            Edge::Before => m.compute_cycles += u64::from(self.ctl_state() == CtlState::Compute),
            Edge::After => {
                if m.first_tile_cycles.is_none()
                    && self.mesh.done(self.sched.rows - 1, self.sched.cols - 1)
                {
                    m.first_tile_cycles = Some(self.timer() - self.sched.feed_start());
                }
            }
        }
    }
    /// The controller's stall and window-wait counters and the port's overlap count.
    fn monitor_end(&self, m: &mut RunMonitors) {
        m.stall_cycles = self.stall_cycles();
        m.window_wait_cycles = self.window_wait_cycles();
        m.overlap_cycles = self.port.overlap_cycles();
    }
}
