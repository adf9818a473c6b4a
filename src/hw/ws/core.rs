//! The weight-stationary top (scope `tensor_core`): controller + A-row skew + weight-load
//! skew + `R x C` weight-stationary mesh + tag delay and skew + accumulator block + result
//! de-skew + output register, fed from an operand store (an ideal shared memory: one read
//! port per edge lane, as [`crate::hw::IdealPort`]).
//!
//! Per cycle the controller may load one row of weights (`C` lane groups of B, one per
//! column, skewed by column as B is in the output-stationary core) and feed one row of A (`R`
//! lane groups, one per array row, skewed by row). The row's tag enters `tag_delay`, `R + L`
//! stages, so it leaves beside column 0's partial sum at the bottom of the array; there the
//! first fold reads the row of C, and tag and C word are skewed by column (`acc_skew`) to
//! meet each column's partial sum. The accumulator block's D words are de-skewed by
//! `C - 1 - j` into one row in the output register (`d_out_<j>`, `d_tag`), exactly as the
//! output-stationary core delivers D.

use super::accum::{AccIn, AccNext, Accumulator, WsTag};
use super::controller::{WsController, WsState};
use super::extras::{RowFeed, WsExtras};
use super::mesh::StationaryMesh;
use super::pe::WIn;
use super::schedule::WsSchedule;
use super::supply::{WsIo, WsSupply};
use crate::hw::config::CoreConfig;
use crate::hw::controller::index_bits;
use crate::hw::core::check::check_ws_rules;
use crate::hw::core::output::OutputRegister;
use crate::hw::core::top::Edge;
use crate::hw::core::{CoreTop, DRow, DTag, RunMonitors};
use crate::hw::dataflow::ws::Weights;
use crate::hw::dataflow::Hold;
use crate::hw::extras::{EdgeExtras, SideStage};
use crate::hw::feeder::{OperandFeeder, Traffic};
use crate::hw::pe::{ACtl, CTL_BITS};
use crate::hw::wave_filter::tag_filter;
use crate::hw::{HwError, PIPELINE_LATENCY};
use crate::numerics::dot::ws::psum_identity;
use crate::numerics::flags::Flags;
use crate::rtl::{Design, Display, Input, Module, Visitor, Wide};

use crate::hw::skew::Skew;

/// The weight-load control word beside each column's weight lanes in `w_skew`: bit 0 `en`,
/// bit 1 `set`, bit 2 `valid`.
fn wl_word(en: bool, set: bool, valid: bool) -> u8 {
    u8::from(en) | u8::from(set) << 1 | u8::from(valid) << 2
}

/// The buffers passed between the top's blocks in one cycle (wires, sized when built).
struct WsEdges<const W: usize, H> {
    a_edge: Vec<(Wide<W>, ACtl)>,
    w_cols: Vec<(Wide<W>, u8)>,
    w_edge: Vec<WIn<W, H>>,
    tag0: Vec<(u64, bool)>,
    c_row: Vec<u32>,
    acc_cols: Vec<(u64, u32)>,
    acc_in: Vec<AccIn>,
    d_in: Vec<(u32, u64)>,
    d_row: Vec<(u32, u64)>,
    acc_next: AccNext,
}

/// The blocks of the weight-stationary top whose combinational updates
/// [`WsCore::set_eval_order`] orders.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WsBlock {
    /// The controller FSM.
    Controller,
    /// The A-row skew.
    ASkew,
    /// The weight-load skew.
    WSkew,
    /// The row tag's delay.
    TagDelay,
    /// The skew of tags and C words to the accumulator columns.
    AccSkew,
    /// The PE mesh.
    Mesh,
    /// The accumulator block.
    Accum,
    /// The result de-skew.
    DeSkew,
    /// The output register.
    Output,
}

/// Every block of the weight-stationary top, in the default evaluation order.
pub const WS_BLOCKS: [WsBlock; 9] = [
    WsBlock::Controller,
    WsBlock::ASkew,
    WsBlock::WSkew,
    WsBlock::TagDelay,
    WsBlock::AccSkew,
    WsBlock::Mesh,
    WsBlock::Accum,
    WsBlock::DeSkew,
    WsBlock::Output,
];

/// The side stage of the weight-stationary core over the operand store `F`.
type SideOf<const W: usize, F> = <<F as OperandFeeder<W>>::Extras as EdgeExtras<W>>::Stage;

/// The stationary tensor core with `W`-lane PEs over the operand store `F` (dense, 2:4
/// sparse or block-scaled: its extras, [`WsExtras`]), its PEs holding what `S` holds (the
/// weights by default).
pub struct WsCore<const W: usize, F: WsSupply<W>, S: Hold<W> = Weights>
where
    F::Extras: WsExtras<W>,
{
    cfg: CoreConfig,
    sched: WsSchedule,
    feeder: F,
    identity: u32,
    start: Input<bool>,
    controller: WsController,
    a_skew: Skew<Wide<W>, ACtl>,
    /// What travels beside A (a sparse row's selects, `meta_skew`; nothing when dense).
    side: SideOf<W, F>,
    /// The side values entering `side` this cycle, and one step's extras as the feeder
    /// gives them.
    side_in: F::Extras,
    side_step: F::Extras,
    w_skew: Skew<Wide<W>, u8>,
    tag_delay: Skew<u64, bool>,
    acc_skew: Skew<u64, u32>,
    mesh: <F::Extras as WsExtras<W>>::Array<S>,
    accum: Accumulator,
    d_deskew: Skew<u32, u64>,
    out: OutputRegister,
    row_bits: u32,
    e: WsEdges<W, S::HeldSide>,
    order: [WsBlock; 9],
}

impl<const W: usize, F: WsSupply<W>, S: Hold<W>> WsCore<W, F, S>
where
    F::Extras: WsExtras<W>,
{
    /// A weight-stationary core for `cfg` (its dataflow `ws`, its width `W`) over `feeder`.
    pub fn new(cfg: CoreConfig, feeder: F) -> Result<Self, HwError> {
        check_ws_rules(&cfg, S::DATAFLOW)?;
        let (m, n, k) = feeder.dims();
        let spec = feeder.spec();
        <F::Extras as EdgeExtras<W>>::check(&cfg, &spec, k)?;
        <F::Extras as WsExtras<W>>::check_ws(&cfg, &spec)?;
        if m == 0 || n == 0 || k == 0 {
            return Err(HwError::Unsupported("a zero dimension".into()));
        }
        let sched = WsSchedule::for_core(&cfg, m, n, k);
        if sched.d_tiles() + 2 >= 1 << 24 || sched.passes() >= 1 << 31 {
            return Err(HwError::Unsupported(format!(
                "{} output tiles (at most 2^24 - 3)",
                sched.d_tiles()
            )));
        }
        let (rows, cols) = (cfg.rows(), cfg.cols());
        let b_lanes = <F::Extras as WsExtras<W>>::b_lanes();
        let row_bits = index_bits(rows);
        let depth_in: Vec<usize> = (0..rows).collect();
        let depth_col: Vec<usize> = (0..cols).collect();
        let depth_out: Vec<usize> = (0..cols).rev().collect();
        let lanes = |f: crate::numerics::format::Format| cfg.operand_display(f);
        let (a_disp, b_disp) = match cfg.mode {
            crate::numerics::dot::AccMode::Int(_) => (Display::Hex, Display::Hex),
            _ => (lanes(S::stream_fmt(&cfg)), lanes(S::held_fmt(&cfg))),
        };
        Ok(Self {
            cfg,
            sched,
            feeder,
            identity: psum_identity(&cfg.mode, cfg.acc),
            start: Input::new("start", 1, false)?,
            controller: WsController::new(sched)?,
            a_skew: Skew::new(
                S::STREAM_SKEW,
                &depth_in,
                S::stream_fmt(&cfg).width() * S::stream_lanes(b_lanes) as u32,
                CTL_BITS,
            )?
            .with_display(a_disp, Display::Filter("ctl")),
            side: <F::Extras as EdgeExtras<W>>::stage(&cfg, &spec, &depth_in, &depth_col)?,
            side_in: <F::Extras as EdgeExtras<W>>::sized(rows, cols),
            side_step: <F::Extras as EdgeExtras<W>>::sized(rows, cols),
            w_skew: Skew::new(
                S::HELD_SKEW,
                &depth_col,
                S::held_fmt(&cfg).width() * S::held_lanes(b_lanes) as u32,
                3,
            )?
            .with_display(b_disp, Display::Hex),
            tag_delay: Skew::new("tag_delay", &[rows + PIPELINE_LATENCY as usize], 64, 1)?,
            acc_skew: Skew::new("acc_skew", &depth_col, 64, cfg.acc.width())?
                .with_display(Display::Hex, cfg.acc_display()),
            mesh: <F::Extras as WsExtras<W>>::ws_mesh(&cfg, &spec)?,
            accum: Accumulator::new(cfg.mode, cfg.acc, cols, sched.chunk_rows)?,
            d_deskew: Skew::new("d_deskew", &depth_out, cfg.acc.width(), 64)?
                .with_display(cfg.acc_display(), Display::Filter(tag_filter(row_bits))),
            out: OutputRegister::new(&cfg, row_bits)?,
            row_bits,
            e: WsEdges {
                a_edge: vec![Default::default(); rows],
                w_cols: vec![Default::default(); cols],
                w_edge: vec![WIn::default(); cols],
                tag0: vec![(0, false)],
                c_row: vec![0; cols],
                acc_cols: vec![(0, 0); cols],
                acc_in: vec![AccIn::default(); cols],
                d_in: vec![(0, 0); cols],
                d_row: vec![(0, 0); cols],
                acc_next: AccNext::new(cols),
            },
            order: WS_BLOCKS,
        })
    }

    /// Sets the order in which the blocks' combinational updates run each cycle (every
    /// permutation gives the same registers, wires and waveform: `tests/hw/eval_order.rs`).
    /// Returns `false`, changing nothing, if `order` is not a permutation of [`WS_BLOCKS`].
    pub fn set_eval_order(&mut self, order: [WsBlock; 9]) -> bool {
        let ok = WS_BLOCKS.iter().all(|b| order.contains(b));
        if ok {
            self.order = order;
        }
        ok
    }

    /// Declares (or not) the energy probes of the PEs (the multipliers' operands) and of the
    /// accumulator block (its adders' inputs): wires that exist only for an energy estimate
    /// (`docs/energy.md`), so that a run without it keeps its waves. Set before the design
    /// is elaborated (before the simulator is built).
    pub fn set_energy_probes(&mut self, on: bool) {
        self.mesh.energy_probes(on);
        self.accum.set_energy_probes(on);
    }

    /// Asserts `start`.
    pub fn start(&mut self) {
        self.start.set(true);
    }

    /// True once the last row of D has left.
    pub fn is_done(&self) -> bool {
        self.controller.state() == WsState::Done
    }

    /// The schedule.
    pub fn schedule(&self) -> &WsSchedule {
        &self.sched
    }

    /// The configuration.
    pub fn config(&self) -> &CoreConfig {
        &self.cfg
    }

    /// The operand store.
    pub fn feeder(&self) -> &F {
        &self.feeder
    }

    /// The controller (read-only: for monitors).
    pub fn controller(&self) -> &WsController {
        &self.controller
    }

    /// The mesh (read-only: for monitors).
    pub fn mesh(&self) -> &<F::Extras as WsExtras<W>>::Array<S> {
        &self.mesh
    }

    /// The row of D in the output register this cycle, if any.
    pub fn d_row(&self) -> Option<DRow<'_>> {
        self.out.d_row(self.row_bits)
    }

    /// OR of the IEEE flags the PEs and the accumulator block raised.
    pub fn flags(&self) -> Flags {
        self.mesh.pe_flags() | self.accum.flags()
    }

    /// The schedule wanted to load a weight row or feed a row of A this cycle and the supply
    /// did not have it (a monitor for the stall count; never on an ideal store).
    pub fn stalled(&self) -> bool {
        let f = &self.feeder;
        let c = &self.controller;
        (c.load().is_some() && c.load_when(f.w_ready()).is_none())
            || (c.feed().is_some() && c.feed_when(|a, b| f.a_ready(a, b)).is_none())
    }

    /// A timing fault, if any: a PE's load hit the set a row was multiplying by (its sticky
    /// `hazard` register), or a partial sum reached the accumulator block without its tag or
    /// the other way round.
    pub fn hazard(&self) -> Option<String> {
        self.mesh.pe_hazard().or_else(|| {
            self.accum
                .misaligned()
                .then(|| "accum (a partial sum apart from its tag)".into())
        })
    }
}

impl<const W: usize, F: WsSupply<W>, S: Hold<W>> Module for WsCore<W, F, S>
where
    F::Extras: WsExtras<W>,
{
    fn name(&self) -> &str {
        "tensor_core"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.input(&mut self.start);
        v.child(&mut self.controller);
        v.child(&mut self.a_skew);
        self.side.visit(v);
        v.child(&mut self.w_skew);
        v.child(&mut self.tag_delay);
        v.child(&mut self.acc_skew);
        v.child(&mut self.mesh);
        v.child(&mut self.accum);
        v.child(&mut self.d_deskew);
        self.out.visit(v);
        self.feeder.visit_supply(v);
    }
}

impl<const W: usize, F: WsSupply<W>, S: Hold<W>> Design for WsCore<W, F, S>
where
    F::Extras: WsExtras<W>,
{
    fn comb(&mut self) {
        let (rows, cols) = (self.sched.rows, self.sched.cols);
        let sched = self.sched;
        let e = &mut self.e;
        let feeder = &self.feeder;
        let load = self.controller.load_when(feeder.w_ready());
        let feed = self
            .controller
            .feed_when(|first, last| feeder.a_ready(first, last));

        // The weight load: array row `R - 1 - k` of the pass's weight tile, one lane group a
        // column (step `fold * R + row` of K in the feeder's numbering).
        let w_in = &mut self.w_skew.inputs()[..cols];
        let mut load_at = None;
        match load {
            Some((p, k)) => {
                let pass = sched.pass(p);
                let step = pass.fold * rows + (rows - 1 - k);
                for (j, slot) in w_in.iter_mut().enumerate() {
                    let g = self.feeder.b(pass.col_tile, j, step);
                    *slot = (g.bits, wl_word(true, p & 1 == 1, g.lanes > 0));
                }
                load_at = Some((pass.col_tile, step));
            }
            None => w_in.fill(Default::default()),
        }
        // Beside the weights, what the supply loads with them (an MX block scale).
        <F::Extras as WsExtras<W>>::load(
            &self.feeder,
            load_at,
            &mut self.side_step,
            &mut self.side_in,
        );
        self.w_skew.out(&mut e.w_cols);

        // The A feed: row `i` of the array takes the `w` elements of K of its fold's step.
        let a_in = &mut self.a_skew.inputs()[..rows];
        let tag_in = &mut self.tag_delay.inputs()[0];
        let mut feed_at = None;
        match feed {
            Some((p, s)) => {
                let pass = sched.pass(p);
                let m = pass.chunk * sched.chunk_rows + s;
                let (tile, row) = sched.d_tile(m, pass.col_tile);
                for (i, slot) in a_in.iter_mut().enumerate() {
                    let g = self.feeder.a(tile, row, pass.fold * rows + i);
                    let ctl = ACtl::new(g.lanes as u8, true, true, p & 1 == 1, true);
                    *slot = (g.bits, ctl);
                }
                feed_at = Some(RowFeed {
                    tile,
                    row,
                    first: pass.fold * rows,
                });
                let tag = WsTag {
                    valid: true,
                    first: pass.first,
                    last: pass.last,
                    end: p + 1 == sched.passes() && s + 1 == pass.rows,
                    addr: s,
                    row,
                    tile,
                };
                *tag_in = (tag.pack(), false);
            }
            None => {
                a_in.fill(Default::default());
                *tag_in = (0, false);
            }
        }
        self.a_skew.out(&mut e.a_edge);
        // Beside each array row's A, the side values of its own step.
        <F::Extras as WsExtras<W>>::gather(
            &self.feeder,
            feed_at,
            &mut self.side_step,
            &mut self.side_in,
        );
        let taken = <F::Extras as WsExtras<W>>::taken(feed.is_some(), load.is_some());
        self.side.settle(taken, &self.side_in);
        for (j, (wl, &(value, word))) in e.w_edge.iter_mut().zip(&e.w_cols).enumerate() {
            *wl = WIn {
                en: word & 1 != 0,
                set: word & 2 != 0,
                value,
                valid: word & 4 != 0,
                side: S::held_code(<F::Extras as WsExtras<W>>::load_side(&self.side, j)),
            };
        }

        // At the bottom of column 0: the row's tag, and C on its first fold.
        self.tag_delay.out(&mut e.tag0);
        let tag0 = WsTag::unpack(e.tag0[0].0);
        let reads_c = tag0.valid && tag0.first;
        if reads_c {
            self.feeder.c_row(tag0.tile, tag0.row, &mut e.c_row);
        }
        let acc_in = &mut self.acc_skew.inputs()[..cols];
        for (j, slot) in acc_in.iter_mut().enumerate() {
            *slot = (e.tag0[0].0, if reads_c { e.c_row[j] } else { 0 });
        }
        self.acc_skew.out(&mut e.acc_cols);
        for (j, (i, &(tag, c))) in e.acc_in.iter_mut().zip(&e.acc_cols).enumerate() {
            *i = AccIn {
                tag,
                c,
                psum: self.mesh.bottom_psum(j),
            };
        }
        self.accum
            .settle(&e.acc_in, self.row_bits, &mut e.d_in, &mut e.acc_next);
        self.d_deskew.inputs()[..cols].copy_from_slice(&e.d_in);
        self.d_deskew.out(&mut e.d_row);
        let out_last = DTag::unpack(self.out.d_tag.q(), self.row_bits).last;
        let done = self.feeder.done(out_last);

        // Update: every block computes its registers' next values and its wires from the
        // settled values above, in any order (`set_eval_order`; tested by shuffling).
        for &block in &self.order {
            match block {
                WsBlock::Controller => self.controller.comb(self.start.get(), done, load, feed),
                WsBlock::ASkew => {
                    self.a_skew.shift_in();
                    self.side.shift_in();
                }
                WsBlock::WSkew => self.w_skew.shift_in(),
                WsBlock::TagDelay => self.tag_delay.shift_in(),
                WsBlock::AccSkew => self.acc_skew.shift_in(),
                WsBlock::Mesh => self.mesh.comb_edges(
                    &e.a_edge,
                    <F::Extras as WsExtras<W>>::row_sides(&self.side),
                    &e.w_edge,
                    self.identity,
                ),
                WsBlock::Accum => self.accum.update(&e.acc_next),
                WsBlock::DeSkew => self.d_deskew.shift_in(),
                WsBlock::Output => {
                    let (d_out_in, _) = self.out.d_out.drive_beside_outputs();
                    OutputRegister::load(d_out_in, &mut self.out.d_tag, &e.d_row);
                }
            }
        }
        // The supply's update from the settled cycle (nothing for an ideal store).
        let d_row = self.out.d_row(self.row_bits);
        self.feeder.tick(&WsIo {
            load: load.is_some(),
            feed: feed.map(|(p, _)| {
                let pass = sched.pass(p);
                (pass.first, pass.last)
            }),
            c_read: reads_c,
            d_row,
        });
    }

    fn progress(&self) -> Option<u64> {
        Some(self.controller.timer())
    }

    fn state(&self) -> String {
        format!(
            "controller.state={:?} timer={} load={:?} feed={:?}",
            self.controller.state(),
            self.controller.timer(),
            self.controller.load(),
            self.controller.feed()
        )
    }
}

impl<const W: usize, F: WsSupply<W>, S: Hold<W>> CoreTop for WsCore<W, F, S>
where
    F::Extras: WsExtras<W>,
{
    fn config(&self) -> &CoreConfig {
        &self.cfg
    }
    fn dims(&self) -> (usize, usize, usize) {
        self.feeder.dims()
    }
    fn d_columns(&self) -> bool {
        S::D_COLUMNS
    }
    fn tile_origin(&self, tile: usize) -> (usize, usize) {
        self.sched.tile_origin(tile)
    }
    fn output_tiles(&self) -> usize {
        self.sched.d_tiles()
    }
    fn scheduled_cycles(&self) -> u64 {
        self.sched.total_cycles()
    }
    fn start(&mut self) {
        WsCore::start(self)
    }
    fn is_done(&self) -> bool {
        WsCore::is_done(self)
    }
    fn d_row(&self) -> Option<DRow<'_>> {
        WsCore::d_row(self)
    }
    fn error(&self) -> Option<String> {
        self.feeder.error()
    }
    fn smem_read_bytes(&self) -> u64 {
        self.feeder.smem_read_bytes()
    }
    fn traffic(&self) -> Option<Traffic> {
        self.feeder.traffic()
    }
    fn hazard(&self) -> Option<String> {
        WsCore::hazard(self)
    }
    fn flags(&self) -> Flags {
        WsCore::flags(self)
    }
    fn set_energy_probes(&mut self, on: bool) {
        WsCore::set_energy_probes(self, on)
    }
    /// Before the edge: a cycle in which the schedule wanted a row the supply did not have
    /// counts as a stall.
    fn monitor_edge(&self, edge: Edge, m: &mut RunMonitors) {
        if edge == Edge::Before {
            m.stall_cycles += u64::from(self.stalled());
        }
    }
    /// The controller's count of cycles that fed a row of A.
    fn monitor_end(&self, m: &mut RunMonitors) {
        m.compute_cycles = self.controller.feed_cycles();
    }
}
