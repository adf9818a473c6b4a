//! Delay lines: shift registers of given depths (a skew buffer's lanes), every stage a
//! register of the waves, held so that the clock edge moves a lane in constant time.

use std::borrow::Cow;

use super::bank::{fits, BankField};
use super::bundle::Bundle;
use super::error::{Result, RtlError};
use super::signal::{Display, SignalMeta};

/// Spare rows of the storage above the deepest lane's stages: the window slides down one
/// row an edge and is moved back up once every this many edges.
const SLACK: usize = 32;

/// A lane of depth 0: no stage.
const NO_STAGE: usize = usize::MAX;

/// Shift registers of record type `E`, one lane per entry of the depths they are built
/// with: at every rising edge stage `k > 0` of a lane takes stage `k - 1`'s output and stage
/// 0 takes the lane's input (driven with [`DelayLines::set_inputs`], or in place through
/// [`DelayLines::inputs_mut`] and [`DelayLines::latch_inputs`]; an input not driven in a cycle
/// holds its last value, as a register's `d` does).
/// Each stage is a register (or, for a record, several: each field declared with
/// [`DelayLines::field`] is one) of the signal table and the waves, with the rules of a
/// register: block code reads the stages' outputs ([`DelayLines::q`], [`DelayLines::out`]),
/// which change only at the edge.
///
/// What differs from one register per stage is the cost of the edge. The storage is a grid
/// of rows, one column per lane: stage `k` of lane `j` sits at row `top + k`, column `j`,
/// where `top` is the window's first row; the inputs are written into row `top - 1`, which no
/// stage occupies. The edge then moves every stage of every lane by moving `top` down one
/// row (the input row becomes stage 0, stage `k` becomes stage `k + 1`, and the deepest
/// lane's last stage leaves the window), whatever the depths, where a register per stage
/// would copy every stage. When `top` reaches the first row, the window is copied back to
/// the top of the grid (32 rows up).
///
/// ```
/// use tensorcore_rtl::rtl::DelayLines;
/// // Two lanes: depth 0 (a wire) and depth 2.
/// let mut dl = DelayLines::new(0u8, &[0, 2]);
/// dl.field(|lane, k| format!("d{lane}_{k}"), 8, |e: &u8| e).unwrap();
/// dl.set_inputs(&[5, 7]);
/// assert_eq!(dl.out(1), Some(0)); // latched only at the rising edge
/// assert_eq!(dl.out(0), None); // a lane of depth 0 has no stage
/// assert_eq!(dl.stages(), 2);
/// ```
///
/// The block's `visit` presents each stage's fields with [`crate::rtl::Visitor::delay_reg`]
/// (stage by stage, lane after lane, in declaration order within a stage) and then the lines
/// once with [`crate::rtl::Visitor::delay`].
#[derive(Debug, Clone)]
pub struct DelayLines<E: Copy + 'static> {
    /// Lanes (columns of the grid).
    lanes: usize,
    /// Per lane: its last stage's offset from the window's first cell (`(depth - 1) * lanes
    /// + lane`), or [`NO_STAGE`].
    tail: Vec<usize>,
    /// The grid, row after row.
    buf: Vec<E>,
    /// The window's first row.
    top: usize,
    /// Rows of stages (the deepest lane's depth).
    depth: usize,
    /// The inputs were set since the last edge.
    driven: bool,
    reset: E,
    /// Per stage (lane after lane): its lane and position.
    stage_at: Vec<(usize, usize)>,
    /// Per stage: its cell's offset from the window's first cell (`k * lanes + lane`).
    cells: Vec<usize>,
    /// Per declared field, per stage: its width and descriptor.
    fields: Vec<Vec<BankField>>,
    /// Per declared field: its width (every stage's).
    widths: Vec<u32>,
    /// What the toggle counter keeps of the traced cycles since it last read them (empty
    /// unless a trace counts toggle totals): the window's rows at the first (every stage's
    /// output, [`DelayLines::kept_row`] entries), then stage 0's row (one entry a lane) at
    /// each later one. A stage takes the one before it at every edge but a reset edge, which
    /// the counter reads before, so the later stages' values are stage 0's, delayed.
    history: Vec<E>,
    /// The window's rows at the traced cycle before the kept ones (as the counter rebuilt
    /// them when it last read them), or empty.
    carry: Vec<E>,
    /// Per declared field: the toggles the counter found for the stage it read last.
    chain: Vec<u64>,
}

impl<E: Copy + 'static> DelayLines<E> {
    /// Lanes of the given depths, every stage and input at `reset` (declare the stages'
    /// registers with [`DelayLines::field`]).
    pub fn new(reset: E, depths: &[usize]) -> Self {
        let lanes = depths.len();
        let depth = depths.iter().copied().max().unwrap_or(0);
        let stage_at: Vec<(usize, usize)> = depths
            .iter()
            .enumerate()
            .flat_map(|(lane, &d)| (0..d).map(move |k| (lane, k)))
            .collect();
        let tail = depths
            .iter()
            .enumerate()
            .map(|(lane, &d)| {
                if d == 0 {
                    NO_STAGE
                } else {
                    (d - 1) * lanes + lane
                }
            })
            .collect();
        Self {
            lanes,
            tail,
            buf: vec![reset; (depth + SLACK) * lanes],
            top: SLACK,
            depth,
            driven: false,
            reset,
            cells: stage_at.iter().map(|&(lane, k)| k * lanes + lane).collect(),
            stage_at,
            fields: Vec::new(),
            widths: Vec::new(),
            history: Vec::new(),
            carry: Vec::new(),
            chain: Vec::new(),
        }
    }

    /// Declares one register in every stage: field `get` of the record, `width` bits, named
    /// `name(lane, k)` for stage `k` of lane `lane`. Fails if `width` is 0 or more than `T`
    /// holds, or if the reset value does not fit in `width` bits.
    pub fn field<T: Bundle>(
        &mut self,
        name: impl Fn(usize, usize) -> String,
        width: u32,
        get: impl Fn(&E) -> &T,
    ) -> Result<()> {
        let mut metas = Vec::with_capacity(self.stage_at.len());
        for &(lane, k) in &self.stage_at {
            let meta = SignalMeta::new::<T>(Cow::Owned(name(lane, k)), width)?;
            if !fits(get(&self.reset), width) {
                return Err(RtlError::ResetTooWide {
                    name: meta.name.into_owned(),
                    width,
                });
            }
            metas.push(BankField { width, meta });
        }
        self.fields.push(metas);
        self.widths.push(width);
        self.chain.push(0);
        Ok(())
    }

    /// Sets how waveform viewers show field `field` (in declaration order) of every stage.
    pub fn set_display(&mut self, field: usize, display: Display) {
        for f in self.fields.get_mut(field).into_iter().flatten() {
            f.meta.display = display;
        }
    }

    /// Puts field `field` (in declaration order) of every stage in the overview save file.
    pub fn set_overview(&mut self, field: usize) {
        for f in self.fields.get_mut(field).into_iter().flatten() {
            f.meta.overview = true;
        }
    }

    /// Lanes.
    pub fn lanes(&self) -> usize {
        self.lanes
    }

    /// Stages of every lane together (the number of registers of each declared field).
    pub fn stages(&self) -> usize {
        self.stage_at.len()
    }

    /// Drives the lanes' inputs (one entry per lane): what each lane's stage 0 latches at
    /// the next rising edge. Every declared field must fit its width. A lane of depth 0 has
    /// no stage: its entry is not used. Inputs not driven in a cycle hold their last value.
    #[inline(always)]
    pub fn set_inputs(&mut self, inputs: &[E]) {
        self.inputs_mut().copy_from_slice(inputs);
        self.latch_inputs();
    }

    /// Stage `k`'s outputs of every lane, as one row (every lane at least `k + 1` deep).
    #[inline(always)]
    pub fn stage_row(&self, k: usize) -> &[E] {
        debug_assert!(self
            .tail
            .iter()
            .all(|&t| t != NO_STAGE && t / self.lanes >= k));
        let at = (self.top + k) * self.lanes;
        &self.buf[at..at + self.lanes]
    }

    /// The lanes' input wires, one entry per lane, to drive in place: what each lane's stage
    /// 0 latches at the next edge once [`DelayLines::latch_inputs`] says they were driven
    /// this cycle (else the inputs hold their last value). Every declared field must fit its
    /// width.
    #[inline(always)]
    pub fn inputs_mut(&mut self) -> &mut [E] {
        let at = (self.top - 1) * self.lanes;
        &mut self.buf[at..at + self.lanes]
    }

    /// Lane `lane`'s input wire as driven (or set) this cycle.
    #[inline(always)]
    pub fn input(&self, lane: usize) -> E {
        self.buf[(self.top - 1) * self.lanes + lane]
    }

    /// The inputs written through [`DelayLines::inputs_mut`] were driven this cycle: the
    /// next edge latches them.
    #[inline(always)]
    pub fn latch_inputs(&mut self) {
        self.driven = true;
    }

    /// The lanes' inputs, to drive in place (as [`DelayLines::set_inputs`] does: the caller
    /// writes every entry, as it drives every input wire in a cycle), beside stage 0's
    /// outputs ([`DelayLines::stage_row`]), for a block whose logic reads the registers'
    /// outputs in the cycle it drives their inputs.
    #[inline(always)]
    pub fn drive_beside_outputs(&mut self) -> (&mut [E], &[E]) {
        debug_assert!(self.tail.iter().all(|&t| t != NO_STAGE));
        self.latch_inputs();
        let lanes = self.lanes;
        let (before, from) = self.buf.split_at_mut(self.top * lanes);
        let at = before.len() - lanes;
        (&mut before[at..], &from[..lanes])
    }

    /// Lane `lane`'s last stage's output (latched at the last rising edge), or `None` for a
    /// lane of depth 0.
    #[inline(always)]
    pub fn out(&self, lane: usize) -> Option<E> {
        match self.tail[lane] {
            NO_STAGE => None,
            t => Some(self.buf[self.top * self.lanes + t]),
        }
    }

    /// Stage `k`'s output of lane `lane` (`k` below the lane's depth).
    #[inline]
    pub fn q(&self, lane: usize, k: usize) -> E {
        self.buf[(self.top + k) * self.lanes + lane]
    }

    /// Stage `stage`'s output (stages counted lane after lane); engine-only.
    #[inline]
    pub(in crate::rtl) fn q_of(&self, stage: usize) -> E {
        self.buf[self.top * self.lanes + self.cells[stage]]
    }

    /// What the toggle counter kept ([`DelayLines::record_q`]) and the rows it carried over
    /// from the last time it read them (empty if none), and per declared field its running
    /// total; engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn kept(&mut self) -> (&mut Vec<E>, &mut Vec<E>, &mut [u64]) {
        (&mut self.history, &mut self.carry, &mut self.chain)
    }

    /// Entries of the window's rows: every lane's cells down to the deepest lane's depth
    /// (stage `k` of lane `j` at `k * lanes + j`); engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn kept_row(&self) -> usize {
        self.depth * self.lanes
    }

    /// Stage `stage`'s lane, position in it, and the lane's depth; engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn stage_place(&self, stage: usize) -> (usize, usize, usize) {
        let (lane, k) = self.stage_at[stage];
        (lane, k, self.tail[lane] / self.lanes + 1)
    }

    /// Makes room for the stage outputs of `cycles` traced cycles at once (the toggle
    /// counter's batch: the window's rows, then stage 0's row a cycle), so that keeping them
    /// never moves the ones kept; engine-only.
    pub(in crate::rtl) fn reserve_kept(&mut self, cycles: usize) {
        let room = self.kept_row() + cycles.saturating_sub(1) * self.lanes;
        self.history
            .reserve(room.saturating_sub(self.history.len()));
    }

    /// Keeps this cycle's stage outputs for the toggle counter: at the first cycle since it
    /// last read them the window's rows, copied whole (a shallow lane's cells below its depth
    /// are copied and never read), at a later one stage 0's row; engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn record_q(&mut self) {
        let at = self.top * self.lanes;
        let n = if self.history.is_empty() {
            self.depth * self.lanes
        } else {
            self.lanes
        };
        if let Some(rows) = self.buf.get(at..at + n) {
            self.history.extend_from_slice(rows);
        }
    }

    /// The toggle counter has read what was kept: the window's rows at the last kept cycle
    /// are carried over for the next pair (if `carry`: not at the end of the count), and
    /// nothing else is kept; engine-only.
    pub(in crate::rtl) fn carry_over(&mut self, carry: bool) {
        self.carry.clear();
        let row = self.kept_row();
        if carry && row > 0 && self.history.len() >= row {
            let (first, rows) = self.history.split_at(row);
            let n = rows.len() / self.lanes;
            self.carry.extend_from_slice(first);
            for stage in 0..self.stage_at.len() {
                let (lane, k, depth) = self.stage_place(stage);
                self.carry[k * self.lanes + lane] =
                    *stage_at_end(first, rows, (lane, k, depth), self.lanes, n);
            }
        }
        self.history.clear();
    }

    /// Stage `stage`'s next value: its lane's input, or the stage before it; engine-only.
    pub(in crate::rtl) fn d_of(&self, stage: usize) -> E {
        match self.stage_at[stage] {
            (lane, 0) if self.driven => self.buf[(self.top - 1) * self.lanes + lane],
            (lane, 0) => self.q(lane, 0),
            (lane, k) => self.q(lane, k - 1),
        }
    }

    /// The reset record; engine-only.
    pub(in crate::rtl) fn reset_value(&self) -> &E {
        &self.reset
    }

    /// Declared field `field`'s width and descriptor in stage `stage`; engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn field_meta(&self, field: usize, stage: usize) -> &BankField {
        &self.fields[field][stage]
    }

    /// Declared field `field`'s width (every stage's); engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn field_width(&self, field: usize) -> u32 {
        self.widths[field]
    }

    /// The common rising edge: every lane shifts by one stage. Engine-only.
    #[inline(always)]
    pub(in crate::rtl) fn commit_fast(&mut self) {
        if !std::mem::take(&mut self.driven) {
            self.hold_inputs();
        }
        self.top -= 1;
        if self.top == 0 {
            self.recentre();
        }
    }

    /// The rising edge under reset (every stage and input takes the reset value) or not.
    /// Engine-only.
    pub(in crate::rtl) fn commit(&mut self, rst: bool) {
        if rst {
            self.buf.fill(self.reset);
            self.driven = true;
        }
        self.commit_fast();
    }

    /// Inputs not driven this cycle hold their last value (what stage 0 latched at the last
    /// edge): copied into the input row.
    #[inline(never)]
    fn hold_inputs(&mut self) {
        let at = self.top * self.lanes;
        self.buf.copy_within(at..at + self.lanes, at - self.lanes);
    }

    /// Moves the window back up to row [`SLACK`], so it can slide down again; out of line,
    /// as it runs once every [`SLACK`] edges.
    #[inline(never)]
    fn recentre(&mut self) {
        let n = self.depth * self.lanes;
        self.buf.copy_within(0..n, SLACK * self.lanes);
        self.top = SLACK;
    }
}

/// Stage `k` of a lane of depth `depth` at the last of the cycles kept for the toggle counter
/// (`first`: the window's rows at the first, then `n` rows of stage 0, `lanes` entries each):
/// between two kept cycles every stage takes the one before it, so it holds what stage 0 held
/// `k` cycles before (the lane's values, oldest first, are the stages at the first kept cycle
/// from the deepest up, then stage 0 at each later one).
#[inline(always)]
pub(in crate::rtl) fn stage_at_end<'e, E>(
    first: &'e [E],
    rows: &'e [E],
    (lane, k, depth): (usize, usize, usize),
    lanes: usize,
    n: usize,
) -> &'e E {
    let at = depth - 1 - k + n;
    if at < depth {
        &first[(depth - 1 - at) * lanes + lane]
    } else {
        &rows[(at - depth) * lanes + lane]
    }
}
