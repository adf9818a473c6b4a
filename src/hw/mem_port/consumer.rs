//! The consumer (scope `mem.consumer`): reads the next step's lanes from shared memory (one
//! read request: the A rows and B columns of `w` elements at swizzled addresses, for a sparse
//! A also the metadata rows on a chunk's first step) once the stage's `full` barrier has
//! completed the phase of this use (`try_wait.parity`). The data returns one cycle after the
//! read is accepted and is offered to the core straight from shared memory's read register
//! (`got_ops`), or from the hold registers (`hold_a_<i>`, `hold_b_<j>`, `hold_e_<i>`) while
//! the core is not ready. A step's read is issued in the cycle the previous step is taken, so
//! a conflict-free stream feeds one step a cycle. A stage is released (`released`) when its
//! last step has been read. The C fetch's words ride in the same request (`rq_busy` is the
//! request's: one not accepted is presented again unchanged).
//!
//! A step whose lanes exceed one request (a tall or wide array, wide lanes: more than 32
//! lanes) is read in *beats* (`MemLayout::beats`): consecutive requests of whole lane groups
//! (an A row, a B column, a metadata row), `rd_beat` counting them. Each beat's data, the
//! cycle after it is accepted (`got_beat`, `off_beat`), is written into the hold registers of
//! its rows and columns (and a metadata row into `e_row_<i>`); the cycle after the last beat
//! lands, the step is offered from the hold registers (`held`). A layout whose steps all fit
//! one request has no beat registers and reads exactly as before.
//!
//! What it serves beside A and B is its [`PortExtras`] type: nothing for a dense layout, the
//! 2:4 selects (decoded from the metadata rows) for a sparse one, the block scales for a
//! block-scaled one. A block-scaled chunk's first step also reads each row's `KC / bs` scales
//! of the chunk (its XA slot) and each column's (its XB slot) into `xa_row_<i>` and
//! `xb_row_<j>`, which hold them for the chunk's later steps; every step takes the byte of its
//! K-block from them (or from the read data on the first step), and while held or assembled
//! from beats the step's scales sit in `hold_xa_<i>`, `hold_xb_<j>`.

use super::host::{lanes_of, le_u128};
use super::layout::{lane_bytes, MemLayout, OperandLayout, E_ROW_BYTES};
use crate::hw::config::CoreConfig;
use crate::hw::extras::{BlockScales, EdgeExtras, SparseSelects};
use crate::hw::feeder::LaneGroup;
use crate::hw::memory::SmemLane;
use crate::hw::port::StepOperands;
use crate::hw::schedule::Schedule;
use crate::rtl::{Display, Module, Reg, Result as RtlResult, Visitor, Wide};

/// The extras a memory-fed port can serve: none (`()`, a dense layout), the 2:4 selects
/// read beside A ([`SparseSelects`], a sparse layout) or the block scales read beside A and
/// B ([`BlockScales`], a block-scaled layout). Their values are *side slots*: the mesh
/// rows' first (selects, or A's scales), then the mesh columns' (B's scales).
pub trait PortExtras<const W: usize>: EdgeExtras<W> {
    /// Side slot `slot`'s value.
    fn side(&self, slot: usize) -> u64;
    /// Sets side slot `slot`'s value (a slot these extras do not carry is ignored).
    fn set_side(&mut self, slot: usize, v: u64);
}

impl<const W: usize> PortExtras<W> for () {
    #[inline]
    fn side(&self, _slot: usize) -> u64 {
        0
    }
    #[inline]
    fn set_side(&mut self, _slot: usize, _v: u64) {}
}

impl<const W: usize> PortExtras<W> for SparseSelects {
    #[inline]
    fn side(&self, slot: usize) -> u64 {
        self.meta.get(slot).copied().unwrap_or(0)
    }
    #[inline]
    fn set_side(&mut self, slot: usize, v: u64) {
        if let Some(m) = self.meta.get_mut(slot) {
            *m = v;
        }
    }
}

impl<const W: usize> PortExtras<W> for BlockScales {
    #[inline]
    fn side(&self, slot: usize) -> u64 {
        let rows = self.a.len();
        let x = if slot < rows {
            self.a.get(slot)
        } else {
            self.b.get(slot - rows)
        };
        x.copied().map_or(0, u64::from)
    }
    #[inline]
    fn set_side(&mut self, slot: usize, v: u64) {
        let rows = self.a.len();
        let x = if slot < rows {
            self.a.get_mut(slot)
        } else {
            self.b.get_mut(slot - rows)
        };
        if let Some(x) = x {
            *x = v as u8;
        }
    }
}

/// The consumer (see the module documentation).
pub struct Consumer<const W: usize, X: PortExtras<W>> {
    lay: MemLayout,
    sched: Schedule,
    width: usize,
    a_bits: u32,
    b_bits: u32,
    /// The step the next read asks for: tile and step within it.
    rd_tile: Reg<u32>,
    rd_step: Reg<u32>,
    /// Chunks whose every step has been read (their stages are free).
    released: Reg<u32>,
    /// The read request was not accepted: present it again unchanged.
    rq_busy: Reg<bool>,
    /// The pending request carries a step's lanes.
    rq_ops: Reg<bool>,
    /// A step's lanes are in shared memory's read register this cycle.
    got_ops: Reg<bool>,
    /// The step offered to the core: tile and step within it.
    off_tile: Reg<u32>,
    off_step: Reg<u32>,
    /// The offered step is in the hold registers.
    held: Reg<bool>,
    hold_a: Vec<Reg<Wide<W>>>,
    hold_b: Vec<Reg<Wide<W>>>,
    /// The offered step's side values while held: a sparse row's selects (`hold_e_<i>`), or
    /// the scales of each row then each column (`hold_xa_<i>`, `hold_xb_<j>`).
    hold_e: Vec<Reg<u64>>,
    /// A sparse chunk's metadata rows, or a block-scaled chunk's scale rows of each row then
    /// each column, read on its first step, for its later steps.
    e_row: Vec<Reg<u128>>,
    /// Side slots of the rows and of the columns ([`MemLayout::side_slots`]).
    sides: (usize, usize),
    /// Beats (several requests per step) in this layout: the beat registers exist.
    beats: bool,
    /// The beat of the step the next read asks for.
    rd_beat: Reg<u8>,
    /// A beat of a several-beat step is in shared memory's read register this cycle.
    got_beat: Reg<bool>,
    /// That beat's number.
    off_beat: Reg<u8>,
    /// The step decoded for the hold registers (a buffer, not a register).
    scratch: StepOperands<W, X>,
}

impl<const W: usize, X: PortExtras<W>> Consumer<W, X> {
    pub(super) fn new(cfg: &CoreConfig, lay: MemLayout, sched: Schedule) -> RtlResult<Self> {
        let b_lanes = lay.b_step_lanes(W);
        let (rows, cols) = sched.array();
        let sides = lay.side_slots();
        let reg32 = |name: &'static str| Reg::new(name, 32, 0u32);
        Ok(Self {
            lay,
            sched,
            width: cfg.width,
            a_bits: cfg.fmt_a.width(),
            b_bits: cfg.fmt_b.width(),
            rd_tile: reg32("rd_tile")?,
            rd_step: reg32("rd_step")?,
            released: reg32("released")?,
            rq_busy: Reg::new("rq_busy", 1, false)?,
            rq_ops: Reg::new("rq_ops", 1, false)?,
            got_ops: Reg::new("got_ops", 1, false)?,
            off_tile: reg32("off_tile")?,
            off_step: reg32("off_step")?,
            held: Reg::new("held", 1, false)?,
            hold_a: (0..rows)
                .map(|i| {
                    Reg::new(
                        format!("hold_a_{i}"),
                        cfg.fmt_a.width() * W as u32,
                        Wide::ZERO,
                    )
                })
                .collect::<RtlResult<_>>()?,
            hold_b: (0..cols)
                .map(|j| {
                    Reg::new(
                        format!("hold_b_{j}"),
                        cfg.fmt_b.width() * b_lanes as u32,
                        Wide::ZERO,
                    )
                })
                .collect::<RtlResult<_>>()?,
            hold_e: if lay.is_mx() {
                (0..sides.0 + sides.1)
                    .map(|x| {
                        let name = if x < sides.0 {
                            format!("hold_xa_{x}")
                        } else {
                            format!("hold_xb_{}", x - sides.0)
                        };
                        Reg::new(name, 8, 0u64)
                    })
                    .collect::<RtlResult<_>>()?
            } else {
                (0..sides.0)
                    .map(|i| {
                        Ok(Reg::new(format!("hold_e_{i}"), 2 * W as u32, 0u64)?
                            .with_display(Display::Filter("meta")))
                    })
                    .collect::<RtlResult<_>>()?
            },
            e_row: if lay.is_mx() {
                (0..sides.0 + sides.1)
                    .map(|x| {
                        let name = if x < sides.0 {
                            format!("xa_row_{x}")
                        } else {
                            format!("xb_row_{}", x - sides.0)
                        };
                        Reg::new(name, 8 * lay.x_bytes, 0u128)
                    })
                    .collect::<RtlResult<_>>()?
            } else {
                (0..sides.0)
                    .map(|i| Reg::new(format!("e_row_{i}"), 8 * E_ROW_BYTES, 0u128))
                    .collect::<RtlResult<_>>()?
            },
            sides,
            beats: lay.max_beats > 1,
            rd_beat: Reg::new("rd_beat", 8, 0u8)?,
            got_beat: Reg::new("got_beat", 1, false)?,
            off_beat: Reg::new("off_beat", 8, 0u8)?,
            scratch: StepOperands::new(rows, cols),
        })
    }

    /// Rows and columns of tile `tile` inside the problem.
    fn inside(&self, tile: usize) -> (usize, usize) {
        let (r0, c0) = self.sched.tile_origin(tile);
        (
            (self.lay.m - r0).min(self.sched.rows),
            (self.lay.n - c0).min(self.sched.cols),
        )
    }

    /// The beat the next read asks for (0 in a layout without beats).
    fn rd_beat(&self) -> usize {
        if self.beats {
            usize::from(self.rd_beat.q())
        } else {
            0
        }
    }

    /// A beat of a several-beat step returned this cycle.
    fn got_beat(&self) -> bool {
        self.beats && self.got_beat.q()
    }

    /// The side value of step `step` (`la` valid lanes) from a side row `e`: the selects of
    /// its lanes from a metadata row, or its K-block's scale from a row of scales.
    fn selects_of(&self, e: u128, step: usize, la: usize) -> u64 {
        let kk = self.lay.kept_offset(step, self.width);
        if let OperandLayout::Mx { block } = self.lay.operands {
            return (e >> (8 * (kk / block))) as u64 & 0xFF;
        }
        let mask = if la >= 32 {
            u64::MAX
        } else {
            (1u64 << (2 * la)) - 1
        };
        (e >> (2 * kk)) as u64 & mask
    }

    /// Side slot `x` is inside the problem in a tile with `inside` rows and columns in it.
    fn side_inside(&self, x: usize, (rows_in, cols_in): (usize, usize)) -> bool {
        if x < self.sides.0 {
            x < rows_in
        } else {
            x - self.sides.0 < cols_in
        }
    }

    /// A step's lanes are in shared memory's read register (offered fresh).
    #[inline]
    pub(super) fn fresh(&self) -> bool {
        self.got_ops.q()
    }

    /// The port offers a step (fresh or held).
    #[inline]
    pub(super) fn valid(&self) -> bool {
        self.fresh() || self.held.q()
    }

    /// The read request is being presented again.
    pub(super) fn busy(&self) -> bool {
        self.rq_busy.q()
    }

    /// Chunks released.
    pub(super) fn released(&self) -> u32 {
        self.released.q()
    }

    /// The tile the next read is for.
    pub(super) fn read_tile(&self) -> usize {
        self.rd_tile.q() as usize
    }

    /// Bytes of the fresh step's lanes at the front of shared memory's read data (0 when no
    /// step returned): the C words of the same read follow them.
    pub(super) fn returned_step_bytes(&self) -> usize {
        let beat = if self.fresh() {
            0
        } else if self.got_beat() {
            usize::from(self.off_beat.q())
        } else {
            return 0;
        };
        let (t, s) = (self.off_tile.q() as usize, self.off_step.q() as usize);
        self.lay.beat_bytes(self.inside(t), s, self.width, beat)
    }

    /// Side row `r` (a metadata row, or a row's or column's scales) a step takes its side
    /// value from: that of its read (first step of a chunk) or the `e_row_<r>` (`xa_row_<i>`,
    /// `xb_row_<j>`) register, which holds it from the chunk's first step on (0 for a row
    /// past M or a column past N).
    fn e_row(&self, tile: usize, step: usize, data: &[u8], r: usize) -> u128 {
        let bytes = self.lay.e_step_bytes(step, self.width) as usize;
        if bytes == 0 {
            return self.e_row.get(r).map_or(0, |reg| reg.q());
        }
        let inside @ (rows_in, cols_in) = self.inside(tile);
        if !self.side_inside(r, inside) {
            return 0;
        }
        let w = self.width;
        // Side slot `r` is read after every row's side bytes if it is a column's.
        let slot = if r < self.sides.0 {
            r
        } else {
            rows_in + r - self.sides.0
        };
        let at = rows_in * lane_bytes(self.lay.esa, w) as usize
            + cols_in * lane_bytes(self.lay.esb, self.lay.b_step_lanes(w)) as usize
            + slot * bytes;
        le_u128(&data[at..at + bytes])
    }

    /// Decodes the bytes of step `step` of tile `tile` (as laid out by
    /// [`MemLayout::step_lanes`]) into lane groups and, for a sparse A, the selects.
    fn decode(&self, tile: usize, step: usize, data: &[u8], o: &mut StepOperands<W, X>) {
        let lay = &self.lay;
        let w = self.width;
        let (r0, c0) = self.sched.tile_origin(tile);
        let (la, lb) = lay.step_valid_lanes(step, w, W);
        let mut at = 0usize;
        for (es, bits, lanes, span, limit, first, groups) in [
            (lay.esa, self.a_bits, la, w, lay.m, r0, &mut o.a),
            (
                lay.esb,
                self.b_bits,
                lb,
                lay.b_step_lanes(w),
                lay.n,
                c0,
                &mut o.b,
            ),
        ] {
            for (r, g) in groups.iter_mut().enumerate() {
                if first + r >= limit {
                    *g = LaneGroup::default();
                    continue;
                }
                *g = LaneGroup {
                    bits: lanes_of(&data[at..], es, bits, lanes),
                    lanes,
                };
                at += lane_bytes(es, span) as usize;
            }
        }
        let inside = self.inside(tile);
        for x in 0..self.sides.0 + self.sides.1 {
            let v = if self.side_inside(x, inside) {
                self.selects_of(self.e_row(tile, step, data, x), step, la)
            } else {
                0
            };
            o.extras.set_side(x, v);
        }
    }

    /// The returned beat of a several-beat step into the hold registers of its rows and
    /// columns (a metadata row into `e_row_<i>` and its selects into `hold_e_<i>`; on a step
    /// without metadata rows, the last beat takes every row's selects from `e_row_<i>`).
    /// Returns whether it was the step's last beat.
    fn absorb_beat(&mut self, data: &[u8]) -> bool {
        let (t, s) = (self.off_tile.q() as usize, self.off_step.q() as usize);
        let beat = usize::from(self.off_beat.q());
        let (lay, w) = (self.lay, self.width);
        let inside @ (rows_in, cols_in) = self.inside(t);
        let (g0, g1) = lay.beat_groups(inside, s, w, beat);
        let (a, b, e, _) = lay.group_bytes(s, w);
        let (la, lb) = lay.step_valid_lanes(s, w, W);
        let mut at = 0usize;
        for x in g0..g1 {
            if x < rows_in {
                self.hold_a[x].set_d(lanes_of(&data[at..], lay.esa, self.a_bits, la));
                at += a as usize;
            } else if x < rows_in + cols_in {
                let j = x - rows_in;
                self.hold_b[j].set_d(lanes_of(&data[at..], lay.esb, self.b_bits, lb));
                at += b as usize;
            } else {
                // A side row: a row's (metadata or scales), then a column's (scales).
                let y = x - rows_in - cols_in;
                let r = if y < rows_in {
                    y
                } else {
                    self.sides.0 + y - rows_in
                };
                let row = le_u128(&data[at..at + e as usize]);
                self.e_row[r].set_d(row);
                let sel = self.selects_of(row, s, la);
                self.hold_e[r].set_d(sel);
                at += e as usize;
            }
        }
        let last = beat + 1 == lay.beats(inside, s, w);
        if last && e == 0 {
            for r in 0..self.e_row.len() {
                if !self.side_inside(r, inside) {
                    continue;
                }
                let sel = self.selects_of(self.e_row[r].q(), s, la);
                self.hold_e[r].set_d(sel);
            }
        }
        last
    }

    /// Writes the offered step's operands into `o`: decoded from shared memory's read data
    /// `data` when fresh, else from the hold registers.
    pub(super) fn operands(&self, data: &[u8], o: &mut StepOperands<W, X>) {
        let (t, s) = (self.off_tile.q() as usize, self.off_step.q() as usize);
        if self.fresh() {
            return self.decode(t, s, data, o);
        }
        let (r0, c0) = self.sched.tile_origin(t);
        let (la, lb) = self.lay.step_valid_lanes(s, self.width, W);
        for (i, g) in o.a.iter_mut().enumerate() {
            let inside = r0 + i < self.lay.m;
            *g = if inside {
                LaneGroup {
                    bits: self.hold_a[i].q(),
                    lanes: la,
                }
            } else {
                LaneGroup::default()
            };
        }
        let inside = self.inside(t);
        for (x, e) in self.hold_e.iter().enumerate() {
            let v = if self.side_inside(x, inside) {
                e.q()
            } else {
                0
            };
            o.extras.set_side(x, v);
        }
        for (j, g) in o.b.iter_mut().enumerate() {
            *g = if c0 + j < self.lay.n {
                LaneGroup {
                    bits: self.hold_b[j].q(),
                    lanes: lb,
                }
            } else {
                LaneGroup::default()
            };
        }
    }

    /// The offered step's side: a sparse chunk's metadata rows kept from its first step, and
    /// the step into the hold registers when the core does not take it. Returns whether the
    /// offer slot is free for the next read's data (taken, or nothing offered).
    pub(super) fn hold(&mut self, take: bool, data: &[u8]) -> bool {
        let valid = self.valid();
        // The last beat of a several-beat step: offered from the hold registers next cycle,
        // so the offer slot is not free for another read's data.
        let completing = self.got_beat() && self.absorb_beat(data);
        if self.fresh() {
            let (t, s) = (self.off_tile.q() as usize, self.off_step.q() as usize);
            if self.lay.e_step_bytes(s, self.width) > 0 {
                for r in 0..self.e_row.len() {
                    let v = self.e_row(t, s, data, r);
                    self.e_row[r].set_d(v);
                }
            }
            if !take {
                let mut ops = std::mem::replace(&mut self.scratch, StepOperands::new(0, 0));
                self.decode(t, s, data, &mut ops);
                for (r, g) in self.hold_a.iter_mut().zip(&ops.a) {
                    r.set_d(g.bits);
                }
                for (r, g) in self.hold_b.iter_mut().zip(&ops.b) {
                    r.set_d(g.bits);
                }
                for (x, r) in self.hold_e.iter_mut().enumerate() {
                    r.set_d(ops.extras.side(x));
                }
                self.scratch = ops;
            }
        }
        self.held.set_d((valid && !take) || completing);
        (take || !valid) && !completing
    }

    /// Whether to read a step's lanes this cycle (pushing them onto `lanes`): the pending
    /// request's choice while it is presented again, else the next beat of a several-beat
    /// step, else when set up, a tile is left, the offer slot frees and the step's chunk has
    /// landed (`landed(g)`).
    pub(super) fn request(
        &self,
        ready_to_work: bool,
        slot_free: bool,
        landed: impl FnOnce(usize) -> bool,
        lanes: &mut Vec<SmemLane>,
    ) -> bool {
        let (rt, rs) = (self.rd_tile.q() as usize, self.rd_step.q() as usize);
        let beat = self.rd_beat();
        let want = if self.busy() {
            self.rq_ops.q()
        } else if beat > 0 {
            true
        } else {
            ready_to_work
                && rt < self.sched.tiles()
                && slot_free
                && landed(self.lay.chunk_of(rt, rs, self.width))
        };
        if want {
            let origin = self.sched.tile_origin(rt);
            self.lay.step_lanes(rt, origin, rs, self.width, beat, lanes);
        }
        want
    }

    /// The request's outcome: `rd_req` presented, `accepted` by shared memory, `want_ops` its
    /// step part. An accepted step (its last beat) advances the read position and may
    /// release its stage.
    pub(super) fn commit(&mut self, rd_req: bool, accepted: bool, want_ops: bool) {
        self.rq_busy.set_d(rd_req && !accepted);
        self.rq_ops.set_d(want_ops);
        let (rt, rs) = (self.rd_tile.q() as usize, self.rd_step.q() as usize);
        let read = accepted && want_ops;
        let beats = if read && self.beats {
            self.lay.beats(self.inside(rt), rs, self.width)
        } else {
            1
        };
        self.got_ops.set_d(read && beats == 1);
        if self.beats {
            self.got_beat.set_d(read && beats > 1);
        }
        if read {
            self.off_tile.set_d(rt as u32);
            self.off_step.set_d(rs as u32);
            if beats > 1 {
                let beat = self.rd_beat();
                self.off_beat.set_d(beat as u8);
                if beat + 1 < beats {
                    self.rd_beat.set_d(beat as u8 + 1);
                    return;
                }
                self.rd_beat.set_d(0);
            }
            let w = self.width;
            let g = self.lay.chunk_of(rt, rs, w);
            let last_step = rs + 1 == self.sched.steps;
            if last_step || self.lay.chunk_of(rt, rs + 1, w) != g {
                self.released.set_d(self.released.q() + 1);
            }
            if last_step {
                self.rd_step.set_d(0);
                self.rd_tile.set_d(rt as u32 + 1);
            } else {
                self.rd_step.set_d(rs as u32 + 1);
            }
        }
    }
}

impl<const W: usize, X: PortExtras<W>> Module for Consumer<W, X> {
    fn name(&self) -> &str {
        "consumer"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.rd_tile);
        v.reg(&mut self.rd_step);
        v.reg(&mut self.released);
        v.reg(&mut self.rq_busy);
        v.reg(&mut self.rq_ops);
        v.reg(&mut self.got_ops);
        v.reg(&mut self.off_tile);
        v.reg(&mut self.off_step);
        v.reg(&mut self.held);
        for r in self.hold_a.iter_mut().chain(self.hold_b.iter_mut()) {
            v.reg(r);
        }
        for r in &mut self.hold_e {
            v.reg(r);
        }
        for r in &mut self.e_row {
            v.reg(r);
        }
        if self.beats {
            v.reg(&mut self.rd_beat);
            v.reg(&mut self.got_beat);
            v.reg(&mut self.off_beat);
        }
    }
}
