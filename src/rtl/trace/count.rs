//! Toggle totals counted where the values are: what an energy estimate reads
//! ([`crate::rtl::TraceConfig::counting`]), without the snapshot of every signal that a SAIF's
//! per-bit counts or the power trace need.
//!
//! A signal's toggles are the bits in which its values at two consecutive traced cycles
//! differ. Where they are compared depends on where the values live:
//!
//! - **Field registers** (the fields of a register bank, the stages of delay lines: most of a
//!   core's registers) are compared in batches. Each traced cycle, a bank keeps a copy of its
//!   whole output record (one copy, whatever its number of fields) and delay lines a copy of
//!   their stages' outputs; every batch of traced cycles ([`batch_cycles`]: as many as keep
//!   the copies within [`KEPT_BYTES`]), and at the end, one pass compares
//!   each field's consecutive kept values in a tight loop, adds their population counts to
//!   the field's total and keeps only the last record, the next batch's first.
//! - **A register's next value shown as a wire** ([`crate::rtl::NextWire`]) is compared in the
//!   same batches: at each traced cycle but a reset cycle it equals what the register holds at
//!   the next one, so its values are the bank's kept outputs from the second on. At a reset
//!   cycle (where the register takes its reset value instead) and at a window's last cycle the
//!   batch is compared at once and the wire's value read where it is, the bank's next record;
//!   at the end of a run, the last value is the register's output after the last edge.
//! - **A register of its own, a wire or an input** is compared each traced cycle with its value
//!   at the last one, kept beside its total.
//!
//! Either way the first traced value is a state, not a toggle, and the totals equal those of
//! the snapshot comparison (a test checks them signal by signal through resets and windows).
//! A wire nobody observes ([`crate::rtl::Wire::is_observed`]: one the trace does not select,
//! until the simulator observes every wire) is not computed in the combinational phase and
//! takes no counter: the pass skips it at the cost of one flag test.

use super::super::bank::{RareBank, RegBank};
use super::super::bundle::{clear_above, Bundle};
use super::super::delay::{stage_at_end, DelayLines};
use super::super::module::{Cold, ColdPass, Link, Module, Sealed, SignalAccess, Visitor};
use super::super::reg::Reg;
use super::super::table::{SignalInfo, SignalKind};
use super::super::value::Value;
use super::super::wire::{Input, NextWire, Wire};

/// The most bytes of field-register outputs kept before they are compared: a batch is as many
/// traced cycles as fit (within [`BATCH_CYCLES`]). The batch pass costs a visit of the whole
/// design whatever the batch's length, so a longer batch spreads it over more cycles; but the
/// copies it compares are written one cycle at a time and read back at its end, and a batch
/// larger than the processor's second-level cache is read from further away. Measured on the
/// 4 x 4 FP16 core (`docs/performance.md`): ~1.3 KB a cycle at w = 1 ran best at 256 to 512
/// cycles, ~3.5 KB at w = 4 near 96; this budget gives each about that.
const KEPT_BYTES: usize = 384 << 10;

/// The shortest and the longest batch, in traced cycles.
const BATCH_CYCLES: (u32, u32) = (32, 512);

/// A batch's length in traced cycles for a design whose banks and delay lines keep `bytes` a
/// cycle.
fn batch_cycles(bytes: usize) -> u32 {
    let (shortest, longest) = BATCH_CYCLES;
    let fit = KEPT_BYTES / bytes.max(1);
    u32::try_from(fit)
        .unwrap_or(longest)
        .clamp(shortest, longest)
}

/// One counted signal's counter.
#[derive(Clone, Copy)]
struct Cell {
    /// Its toggles so far.
    total: u64,
    /// A one-word signal compared each cycle: its last traced value. A wider one: where its
    /// words start in [`ToggleTotals::wide`].
    last: u64,
    /// A one-word signal: the bits its width keeps. A wider one: its width.
    mask: u64,
    /// Counted (a wire the trace does not select has a counter once every wire is observed,
    /// but is not counted).
    counted: bool,
    /// A register's next value ([`Kind::Next`]): `last` holds a value already.
    seen: bool,
    /// A register's next value: the next value the kept outputs show is one already compared
    /// (read where it was, at a reset cycle or a window's last cycle).
    skip: bool,
    /// A register of a type written rarely: neither written nor reset in the last traced
    /// cycle, so its output still holds the last value compared.
    held: bool,
}

impl Cell {
    /// A counter of a signal whose bits `mask` describes, counted or not.
    fn new(mask: u64, counted: bool) -> Self {
        Self {
            total: 0,
            last: 0,
            mask,
            counted,
            seen: false,
            skip: false,
            held: false,
        }
    }
}

/// What a design signal is, for the counters.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A field of a register bank or a stage register of delay lines (compared in batches).
    Field,
    /// A register of its own or an input (compared each cycle).
    Own,
    /// A wire (compared each cycle while observed).
    Wire,
    /// A register's next value shown as a wire (compared in batches, from the kept outputs).
    Next,
}

/// The counters of the design signals: one per field register and register's next value
/// (the batch pass's, in visit order), and one per register of its own, input and observed
/// wire (the cycle pass's).
pub(in crate::rtl) struct ToggleTotals {
    /// Per design signal (visit order): its kind (learnt at the first cycle), and whether
    /// the trace selects it.
    kinds: Vec<(Kind, bool)>,
    selected: Vec<bool>,
    /// Per design signal: its words, and the bits a one-word signal keeps (a wider one's
    /// width).
    storage: Vec<usize>,
    masks: Vec<u64>,
    /// The cycle pass's counters and the batch pass's.
    cells: Vec<Cell>,
    fields: Vec<Cell>,
    wide: Vec<u64>,
    /// The last values of the batch pass's wider counters (a register's next value of more
    /// than one word).
    field_wide: Vec<u64>,
    /// Room for an encoded value of the widest signal.
    scratch: Vec<u64>,
    /// Every wire has a counter (the simulator observes every wire).
    all_wires: bool,
    /// What the stages of shift chains found in the batch being compared ([`Link`]).
    chains: Vec<Option<ChainEnd>>,
    /// Traced cycles whose field outputs are kept and not yet compared, and how many a batch
    /// holds (as asked, or set at the first traced cycle).
    kept: u32,
    batch: u32,
    batch_asked: Option<u32>,
    /// The counters are laid out (at the first traced cycle).
    started: bool,
}

impl ToggleTotals {
    /// Counters for the design signals of `table` (visit order), whose values take `storage`
    /// words each; `selected` says which the trace counts (every register is counted,
    /// reported or not). A batch holds `batch` traced cycles (at least 1), or as many as
    /// [`batch_cycles`] says.
    pub fn new(
        table: &[SignalInfo],
        storage: &[usize],
        selected: &[bool],
        batch: Option<u32>,
    ) -> Self {
        let masks = table
            .iter()
            .zip(storage)
            .map(|(s, &store)| {
                if store == 1 {
                    u64::MAX >> (64 - s.width.clamp(1, 64))
                } else {
                    u64::from(s.width)
                }
            })
            .collect();
        let max_words = storage.iter().copied().max().unwrap_or(1).max(1);
        Self {
            kinds: Vec::new(),
            selected: selected.to_vec(),
            storage: storage.to_vec(),
            masks,
            cells: Vec::new(),
            fields: Vec::new(),
            wide: Vec::new(),
            field_wide: Vec::new(),
            scratch: vec![0; 2 * max_words],
            all_wires: false,
            chains: Vec::new(),
            kept: 0,
            batch: BATCH_CYCLES.0,
            batch_asked: batch.map(|n| n.max(1)),
            started: false,
        }
    }

    /// Whether design signal `i` has a counter of the cycle pass.
    fn in_cycle_pass(&self, i: usize) -> bool {
        match self.kinds[i] {
            (Kind::Field | Kind::Next, _) => false,
            (Kind::Own, _) => true,
            (Kind::Wire, selected) => selected || self.all_wires,
        }
    }

    /// Builds the cycle pass's counters, keeping the counts and last values of `old` (the
    /// counters of the layout before, each with its design signal).
    fn lay_out(&mut self, old: &[(usize, Cell)]) {
        let mut old = old.iter().peekable();
        let mut cells = Vec::new();
        let mut wide = Vec::new();
        for i in 0..self.kinds.len() {
            if !self.in_cycle_pass(i) {
                continue;
            }
            let store = self.storage[i];
            let kept = old.next_if(|(j, _)| *j == i).map(|(_, c)| *c);
            let last = match (store, kept) {
                (1, Some(k)) => k.last,
                (1, None) => 0,
                _ => {
                    let at = wide.len();
                    let from = kept.map_or(0..0, |k| k.last as usize..k.last as usize + store);
                    match self.wide.get(from) {
                        Some(words) if words.len() == store => wide.extend_from_slice(words),
                        _ => wide.resize(at + store, 0),
                    }
                    at as u64
                }
            };
            cells.push(Cell {
                total: kept.map_or(0, |k| k.total),
                last,
                ..Cell::new(
                    self.masks[i],
                    self.kinds[i].0 != Kind::Wire || self.kinds[i].1,
                )
            });
        }
        self.cells = cells;
        self.wide = wide;
    }

    /// The cycle pass's counters with the design signal each belongs to.
    fn indexed(&self) -> Vec<(usize, Cell)> {
        (0..self.kinds.len())
            .filter(|&i| self.in_cycle_pass(i))
            .zip(self.cells.iter().copied())
            .collect()
    }

    /// Every wire is observed from now on: each gets a counter (a wire the trace does not
    /// select is not counted).
    pub fn observe_all(&mut self) {
        if self.all_wires {
            return;
        }
        let old = self.indexed();
        self.all_wires = true;
        if self.started {
            self.lay_out(&old);
        }
    }

    /// Counts one traced cycle of `top`, after its combinational phase: one in which reset
    /// is asserted (`rst`), or the window's last (`last`), compares the batch at once.
    pub fn cycle<M: Module>(&mut self, top: &mut M, rst: bool, last: bool) {
        let first = !self.started;
        if first {
            self.start(top);
        }
        top.visit(&mut CyclePass {
            cells: self.cells.iter_mut(),
            wide: &mut self.wide,
            scratch: &mut self.scratch,
            rst,
        });
        if first {
            // A signal's first traced value is a state, not a toggle.
            for c in &mut self.cells {
                c.total = 0;
            }
        }
        self.kept += 1;
        if rst || last {
            self.compare_fields(top, Mode::AtCycle);
        } else if self.kept >= self.batch {
            self.compare_fields(top, Mode::Batch);
        }
    }

    /// Learns each signal's kind, lays out the counters and empties any outputs a bank or
    /// delay lines kept from an earlier run.
    fn start<M: Module>(&mut self, top: &mut M) {
        let mut learn = Learn {
            selected: &self.selected,
            kinds: Vec::with_capacity(self.selected.len()),
        };
        Cold::run(top, &mut learn);
        self.kinds = learn.kinds;
        self.fields.clear();
        self.field_wide.clear();
        for (i, &(kind, selected)) in self.kinds.iter().enumerate() {
            let store = self.storage[i];
            match kind {
                Kind::Field => self.fields.push(Cell::new(self.masks[i], true)),
                Kind::Next => {
                    let mut cell = Cell::new(self.masks[i], selected);
                    if store > 1 {
                        cell.last = self.field_wide.len() as u64;
                        self.field_wide.resize(self.field_wide.len() + store, 0);
                    }
                    self.fields.push(cell);
                }
                Kind::Own | Kind::Wire => {}
            }
        }
        self.lay_out(&[]);
        // Two visits: the first empties what was kept and sums what a cycle keeps, the
        // second makes room for a batch.
        let mut chains = Vec::new();
        let mut empty = FieldPass {
            cells: None,
            wide: &mut [],
            scratch: &mut [],
            mode: Mode::End,
            walked: [None; WALKED],
            chains: &mut chains,
            kept_bytes: 0,
            reserve: 0,
        };
        top.visit(&mut empty);
        self.batch = self
            .batch_asked
            .unwrap_or_else(|| batch_cycles(empty.kept_bytes));
        empty.reserve = self.batch as usize + 1;
        top.visit(&mut empty);
        self.started = true;
    }

    /// Compares the kept field outputs (and, as `mode` says, the next values where they are)
    /// and keeps only the last, or none at the end.
    #[inline(never)]
    fn compare_fields<M: Module>(&mut self, top: &mut M, mode: Mode) {
        self.chains.clear();
        top.visit(&mut FieldPass {
            cells: Some(self.fields.iter_mut()),
            wide: &mut self.field_wide,
            scratch: &mut self.scratch,
            mode,
            walked: [None; WALKED],
            chains: &mut self.chains,
            kept_bytes: 0,
            reserve: 0,
        });
        self.kept = 0;
    }

    /// Ends the count (after the last traced cycle's edge, with no cycle run since unless the
    /// window had ended): compares what the fields kept, and leaves the design holding none.
    pub fn drain<M: Module>(&mut self, top: &mut M) {
        if self.started {
            self.compare_fields(top, Mode::End);
        }
    }

    /// Each design signal's toggles between the first and the last traced cycle (0 for a
    /// wire with no counter).
    pub fn finish(self) -> Vec<u64> {
        let mut totals = vec![0; self.kinds.len()];
        for (i, c) in self.indexed() {
            totals[i] = c.total;
        }
        let fields =
            (0..self.kinds.len()).filter(|&i| matches!(self.kinds[i].0, Kind::Field | Kind::Next));
        for (i, c) in fields.zip(&self.fields) {
            totals[i] = c.total;
        }
        totals
    }
}

/// Learns each design signal's kind.
struct Learn<'a> {
    selected: &'a [bool],
    kinds: Vec<(Kind, bool)>,
}

impl ColdPass for Learn<'_> {
    fn signal(&mut self, kind: SignalKind, s: &mut dyn SignalAccess) {
        let i = self.kinds.len();
        let k = match kind {
            SignalKind::Reg if s.is_field() => Kind::Field,
            SignalKind::Wire if s.is_next() => Kind::Next,
            SignalKind::Wire => Kind::Wire,
            _ => Kind::Own,
        };
        self.kinds
            .push((k, self.selected.get(i).copied().unwrap_or(false)));
    }
}

/// A value `v` against the last one its counter keeps (in the cell, or from `cell.last` on in
/// `wide`): the toggles, and `v` kept as the last.
#[inline(never)]
fn record_toggles<T: Bundle>(v: &T, cell: &mut Cell, wide: &mut [u64], cur: &mut [u64]) -> u32 {
    let cur = &mut cur[..T::WORDS];
    v.encode(cur);
    if T::WORDS == 1 {
        let now = cur[0] & cell.mask;
        let n = (now ^ cell.last).count_ones();
        cell.last = now;
        return n;
    }
    if !T::CLEAN_ABOVE_WIDTH {
        clear_above(cur, cell.mask as u32);
    }
    let off = cell.last as usize;
    let Some(last) = wide.get_mut(off..off + T::WORDS) else {
        return 0;
    };
    let n = last
        .iter()
        .zip(cur.iter())
        .map(|(p, q)| (p ^ q).count_ones())
        .sum();
    last.copy_from_slice(cur);
    n
}

/// The pass of every traced cycle: compares each register of its own, input and observed
/// wire with its last value, and has each bank and each set of delay lines keep its outputs.
struct CyclePass<'a> {
    cells: std::slice::IterMut<'a, Cell>,
    wide: &'a mut [u64],
    scratch: &'a mut [u64],
    /// Reset is asserted in this cycle (every register takes its reset value at the edge).
    rst: bool,
}

impl CyclePass<'_> {
    /// The next signal compared each cycle, a wire, holds `v` (a wire the trace does not
    /// select has a counter once every wire is observed, but is not counted).
    #[inline(always)]
    fn compare_wire<T: Bundle>(&mut self, v: T) {
        if self.cells.as_slice().first().is_some_and(|c| c.counted) {
            self.compare(v);
        } else {
            self.cells.next();
        }
    }

    /// The next signal compared each cycle, a register or an input (always counted), holds
    /// `v`.
    #[inline(always)]
    fn compare<T: Bundle>(&mut self, v: T) {
        if let Some(cell) = self.cells.next() {
            count_into(cell, v, self.wide, self.scratch);
        }
    }
}

/// `v` compared with the last value `cell` keeps ([`record_toggles`], inline for a clean
/// one-word value), its toggles added to the cell's total.
#[inline(always)]
fn count_into<T: Bundle>(cell: &mut Cell, v: T, wide: &mut [u64], scratch: &mut [u64]) {
    let n = if T::WORDS == 1 && T::CLEAN_ABOVE_WIDTH {
        let mut cur = [0u64; 1];
        v.encode(&mut cur);
        let n = (cell.last ^ cur[0]).count_ones();
        cell.last = cur[0];
        n
    } else {
        record_toggles(&v, cell, wide, scratch)
    };
    cell.total += u64::from(n);
}

impl Sealed for CyclePass<'_> {}
impl Visitor for CyclePass<'_> {
    // A wire nobody observes takes no counter: a block may leave such wires out.
    const OBSERVED_WIRES_ONLY: bool = true;

    #[inline(always)]
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>) {
        if !T::WRITTEN_RARELY {
            self.compare(r.q());
            return;
        }
        // A register written rarely that was neither written nor reset since the last
        // traced cycle holds the value compared then (a cell starts not held, and a layout
        // that rebuilds the cells compares once more).
        let Some(cell) = self.cells.next() else {
            return;
        };
        if !std::mem::replace(&mut cell.held, !(r.written() || self.rst)) {
            count_into(cell, r.q(), self.wide, self.scratch);
        }
    }
    #[inline(always)]
    fn wire<T: Bundle>(&mut self, w: &mut Wire<T>) {
        // A wire nobody observes has no counter (and holds a stale value).
        if w.is_observed() {
            self.compare_wire(w.get());
        }
    }
    #[inline(always)]
    fn input<T: Value>(&mut self, i: &mut Input<T>) {
        self.compare(i.get());
    }
    #[inline(always)]
    fn bank_reg<S: Copy + 'static, T: Bundle>(
        &mut self,
        _b: &mut RegBank<S>,
        _i: usize,
        _get: impl Fn(&S) -> &T,
    ) {
    }
    #[inline(always)]
    fn bank_next<S: Copy + 'static, T: Bundle>(
        &mut self,
        _b: &mut RegBank<S>,
        _w: &mut NextWire<T>,
        _get: impl Fn(&S) -> &T,
    ) {
        // Compared in batches, from the bank's kept outputs.
    }
    #[inline(always)]
    fn bank<S: Copy + 'static>(&mut self, b: &mut RegBank<S>) {
        b.record_q();
    }
    #[inline(always)]
    fn rare_bank<S: Copy + 'static>(&mut self, b: &mut RareBank<S>) {
        b.bank_mut().record_q();
    }
    #[inline(always)]
    fn delay_reg<E: Copy + 'static, T: Bundle>(
        &mut self,
        _dl: &mut DelayLines<E>,
        _stage: usize,
        _field: usize,
        _get: impl Fn(&E) -> &T,
    ) {
    }
    #[inline(always)]
    fn delay<E: Copy + 'static>(&mut self, dl: &mut DelayLines<E>) {
        dl.record_q();
    }
}

/// The toggles of one field (read by `get`) between consecutive kept records (`kept`, in
/// order), below its width (`mask`: the bits a one-word field keeps, a wider one's width).
#[inline(always)]
fn field_toggles<S, T: Bundle>(kept: &[S], mask: u64, get: impl Fn(&S) -> &T) -> u64 {
    if !(T::WORDS == 1 && T::CLEAN_ABOVE_WIDTH) {
        return record_field_toggles(kept.iter().map(get), mask);
    }
    let word = |s: &S| {
        let mut x = [0u64; 1];
        get(s).encode(&mut x);
        x[0]
    };
    let Some((first, rest)) = kept.split_first() else {
        return 0;
    };
    let mut prev = word(first);
    let mut n = 0u64;
    for s in rest {
        let cur = word(s);
        n += u64::from((prev ^ cur).count_ones());
        prev = cur;
    }
    n
}

/// [`field_toggles`] of one stage's field in delay lines' kept rows (`kept`, `row` entries
/// a row, the stage's at `at` in each): the values at `at`, `at + row`, ..., walked by index.
#[inline(always)]
fn column_toggles<E, T: Bundle>(
    kept: &[E],
    at: usize,
    row: usize,
    mask: u64,
    get: impl Fn(&E) -> &T,
) -> u64 {
    if !(T::WORDS == 1 && T::CLEAN_ABOVE_WIDTH) {
        let column = kept.get(at..).unwrap_or_default();
        return record_field_toggles(column.iter().step_by(row).map(get), mask);
    }
    let word = |e: &E| {
        let mut x = [0u64; 1];
        get(e).encode(&mut x);
        x[0]
    };
    let Some(first) = kept.get(at) else {
        return 0;
    };
    let mut prev = word(first);
    let (mut n, mut i) = (0u64, at + row);
    while i < kept.len() {
        let cur = word(&kept[i]);
        n += u64::from((prev ^ cur).count_ones());
        prev = cur;
        i += row;
    }
    n
}

/// [`field_toggles`] of a record or a wide value, out of line (a record's encoding packs
/// fields): the values encoded into two buffers by turns.
#[inline(never)]
fn record_field_toggles<'e, T: Bundle>(mut values: impl Iterator<Item = &'e T>, mask: u64) -> u64 {
    // Two buffers of the value's words: on the stack for a value of up to 8 words.
    let (mut small, mut large) = ([[0u64; 8]; 2], [Vec::new(), Vec::new()]);
    let mut bufs: [&mut [u64]; 2] = if T::WORDS <= 8 {
        let [x, y] = &mut small;
        [&mut x[..T::WORDS], &mut y[..T::WORDS]]
    } else {
        large[0].resize(T::WORDS, 0);
        large[1].resize(T::WORDS, 0);
        let [x, y] = &mut large;
        [&mut x[..], &mut y[..]]
    };
    let encode = |v: &T, out: &mut [u64]| {
        v.encode(out);
        if T::WORDS == 1 {
            out[0] &= mask;
        } else if !T::CLEAN_ABOVE_WIDTH {
            clear_above(out, mask as u32);
        }
    };
    let Some(first) = values.next() else {
        return 0;
    };
    encode(first, bufs[0]);
    let mut n = 0u64;
    for (k, v) in values.enumerate() {
        let (a, b) = bufs.split_at_mut(1);
        let (prev, cur) = if k % 2 == 0 {
            (&*a[0], &mut *b[0])
        } else {
            (&*b[0], &mut *a[0])
        };
        encode(v, cur);
        n += prev
            .iter()
            .zip(cur.iter())
            .map(|(p, q)| u64::from((p ^ q).count_ones()))
            .sum::<u64>();
    }
    n
}

/// When the batch pass runs.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Mode {
    /// At the end of a batch of traced cycles.
    Batch,
    /// At a traced cycle after its combinational phase, in which reset is asserted or which
    /// is the window's last: a register's next value is read where it is, the bank's next
    /// record, and not from the output the register will hold.
    AtCycle,
    /// At the end of the count, after the last traced cycle's edge: a register's next value
    /// at that cycle is the output it holds now (unless read at the cycle itself). Keeps no
    /// output.
    End,
}

/// The batch pass: each field register's kept outputs compared, and each register's next
/// value's (the outputs from the second on, and as [`Mode`] says the value where it is), the
/// kept outputs then emptied but for the last (none at the [`Mode::End`]). With no counters
/// it only empties them.
struct FieldPass<'a> {
    cells: Option<std::slice::IterMut<'a, Cell>>,
    /// The last values of the wider next-value counters.
    wide: &'a mut [u64],
    scratch: &'a mut [u64],
    mode: Mode,
    /// The batch totals of the bank fields whose next values were walked in this bank, for
    /// the fields' own counters (a field's pairs are its next value's, and one or two more).
    walked: [Option<(FieldKey, u64)>; WALKED],
    /// Per chain link id: what the stage presented last under it found in this batch.
    chains: &'a mut Vec<Option<ChainEnd>>,
    /// The bytes the banks and delay lines visited keep a traced cycle (summed as they are
    /// visited, for the batch's length).
    kept_bytes: usize,
    /// Traced cycles a batch keeps, to make room for in each bank and delay lines (0: none).
    reserve: usize,
}

/// What a stage of a shift chain ([`Link`]) found in a batch, for the stage after it: its
/// total, the encoded values it held at the batch's first, second-to-last and last kept
/// cycles, and what they were counted as.
struct ChainEnd {
    total: u64,
    first: u64,
    before_last: u64,
    last: u64,
    kept: usize,
    ty: std::any::TypeId,
    mask: u64,
    /// Every kept value, to check the link at every cycle.
    #[cfg(debug_assertions)]
    values: Vec<u64>,
}

/// A shift-register stage's batch total from the stage before it (`before`: a delay line's
/// stage, or a [`Link`]ed field): between two kept cycles it takes what that stage held, so
/// its pairs are that stage's shifted one cycle back, which adds `added` (the pair of the two
/// stages at the batch's first kept cycle) and drops `dropped` (theirs at its last), a pair
/// of the sum `before` counts.
#[inline(always)]
fn from_stage_before(before: u64, added: u64, dropped: u64) -> u64 {
    debug_assert!(before + added >= dropped);
    (before + added).wrapping_sub(dropped)
}

/// One field's batch total over its bank's kept outputs (`kept`), as [`field_toggles`], for a
/// stage of a shift chain (`link`); what it found is noted under the link's id.
///
/// Between two kept cycles (a reset cycle ends a batch, so only the first edge can be a reset
/// edge) the stage takes what the stage before it held, so its pairs are that stage's shifted
/// one cycle: its total is the stage before's, plus the pair of the two at the first kept
/// cycle, less theirs at the last. The claim is checked where the formula leans on it, at the
/// first and the last edge (and, in a debug build, at every edge); where it does not hold,
/// or for a value of more than one word, the values are walked.
#[inline(always)]
fn linked_total<S, T: Bundle>(
    chains: &mut Vec<Option<ChainEnd>>,
    kept: &[S],
    mask: u64,
    get: impl Fn(&S) -> &T,
    link: Link,
) -> u64 {
    let id = link.id as usize;
    if id >= chains.len() {
        chains.resize_with(id + 1, || None);
    }
    let n = kept.len();
    if !(T::WORDS == 1 && T::CLEAN_ABOVE_WIDTH) || n < 2 {
        chains[id] = None;
        return field_toggles(kept, mask, get);
    }
    let word = |s: &S| {
        let mut x = [0u64; 1];
        get(s).encode(&mut x);
        x[0]
    };
    let (first, second) = (word(&kept[0]), word(&kept[1]));
    let (before_last, last) = (word(&kept[n - 2]), word(&kept[n - 1]));
    let ty = std::any::TypeId::of::<T>();
    let before = link
        .from
        .and_then(|f| chains.get(f as usize))
        .and_then(|c| c.as_ref());
    let derived = before
        .filter(|u| {
            u.ty == ty
                && u.mask == mask
                && u.kept == n
                && second == u.first
                && last == u.before_last
        })
        .map(|u| {
            #[cfg(debug_assertions)]
            for (m, v) in u.values.iter().enumerate().take(n - 1).skip(1) {
                debug_assert_eq!(
                    word(&kept[m + 1]),
                    *v,
                    "a chain link's claim fails at kept cycle {m}"
                );
            }
            let added = u64::from((first ^ u.first).count_ones());
            let dropped = u64::from((last ^ u.last).count_ones());
            from_stage_before(u.total, added, dropped)
        });
    let total = derived.unwrap_or_else(|| field_toggles(kept, mask, &get));
    chains[id] = Some(ChainEnd {
        total,
        first,
        before_last,
        last,
        kept: n,
        ty,
        mask,
        #[cfg(debug_assertions)]
        values: kept.iter().map(word).collect(),
    });
    total
}

/// Bank fields a [`FieldPass`] remembers the batch totals of.
const WALKED: usize = 4;

/// Which field of which bank a batch total belongs to: where the field of the first kept
/// record sits (the kept records are the bank's own), its type and the bits it keeps.
#[derive(Clone, Copy, PartialEq, Eq)]
struct FieldKey {
    at: usize,
    ty: std::any::TypeId,
    mask: u64,
}

impl FieldKey {
    /// The key of the field `get` reads of the records `kept`, counted with `mask` (none if
    /// nothing is kept).
    #[inline(always)]
    fn of<S, T: Bundle>(kept: &[S], mask: u64, get: impl Fn(&S) -> &T) -> Option<Self> {
        let first = kept.first()?;
        Some(Self {
            at: std::ptr::from_ref(get(first)) as usize,
            ty: std::any::TypeId::of::<T>(),
            mask,
        })
    }
}

impl FieldPass<'_> {
    /// A field register's batch: its total remembered from its next value's walk, else
    /// `total` of its kept values (walked, or found from the stage before it in its chain)
    /// and its mask.
    #[inline(always)]
    fn field_batch<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        get: impl Fn(&S) -> &T,
        total: impl FnOnce(&mut Vec<Option<ChainEnd>>, &[S], u64) -> u64,
    ) {
        let Some(mask) = self
            .cells
            .as_ref()
            .and_then(|c| c.as_slice().first())
            .map(|c| c.mask)
        else {
            return;
        };
        let kept = b.history();
        let walked = FieldKey::of(kept, mask, &get).and_then(|key| self.take_walked(key));
        let n = walked.unwrap_or_else(|| total(self.chains, kept, mask));
        if let Some(cell) = self.next() {
            cell.total += n;
        }
    }

    /// A register's next value's batch, its field's pairs found once for both by `total` (as
    /// in [`FieldPass::field_batch`]).
    #[inline(always)]
    fn next_batch<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        get: impl Fn(&S) -> &T,
        total: impl FnOnce(&mut Vec<Option<ChainEnd>>, &[S], u64) -> u64,
    ) {
        let mode = self.mode;
        let Some(&Cell { counted, mask, .. }) =
            self.cells.as_ref().and_then(|c| c.as_slice().first())
        else {
            return;
        };
        if !counted {
            self.next();
            return;
        }
        let history = b.history();
        let field = total(self.chains, history, mask);
        let Some(cell) = self.cells.as_mut().and_then(|c| c.next()) else {
            return;
        };
        let (wide, cur) = (&mut *self.wide, &mut *self.scratch);
        // Outside a reset cycle the next value is the output the register holds at the next
        // traced cycle: the kept outputs from the second on (the first is the last batch's,
        // or the first traced cycle's output), less one already compared where it was. Their
        // pairs are the field's (walked once, and remembered for the field's own counter)
        // less the first, or the first two.
        let mut within = field;
        let mut outputs = history.get(1..).unwrap_or_default();
        if let [h0, h1, ..] = history {
            within -= pair_toggles(get(h0), get(h1), mask);
        }
        if cell.skip && !outputs.is_empty() {
            cell.skip = false;
            if let [h1, h2, ..] = outputs {
                within -= pair_toggles(get(h1), get(h2), mask);
            }
            outputs = &outputs[1..];
        }
        let mut n = 0;
        if let Some((first, rest)) = outputs.split_first() {
            // The first against the last compared, kept as the last; the rest pair by pair,
            // and the last of them kept (the pair before it is counted, so what keeping it
            // compares is dropped).
            n += next_toggles(get(first), cell, wide, cur);
            if let Some(last) = rest.last() {
                n += within;
                record_toggles(get(last), cell, wide, cur);
            }
        }
        if let Some(key) = FieldKey::of(history, mask, &get) {
            if let Some(free) = self.walked.iter_mut().find(|w| w.is_none()) {
                *free = Some((key, field));
            }
        }
        match mode {
            Mode::Batch => {}
            Mode::AtCycle => {
                // Read where it is; the output the edge latches (a reset value, or a value
                // past the window) is not this one, and is skipped.
                n += next_toggles(get(b.d()), cell, wide, cur);
                cell.skip = true;
            }
            Mode::End => {
                if !std::mem::take(&mut cell.skip) {
                    n += next_toggles(get(b.q()), cell, wide, cur);
                }
            }
        }
        cell.total += n;
    }

    /// The batch total of a field remembered by its key, forgotten once read.
    #[inline(always)]
    fn take_walked(&mut self, key: FieldKey) -> Option<u64> {
        self.walked
            .iter_mut()
            .find(|w| w.is_some_and(|(k, _)| k == key))
            .and_then(|w| w.take())
            .map(|(_, n)| n)
    }

    /// The next field's counter, if counting.
    #[inline(always)]
    fn next(&mut self) -> Option<&mut Cell> {
        self.cells.as_mut().and_then(|c| c.next())
    }

    /// Empties what `b` kept but for its last output (none at the end).
    #[inline(always)]
    fn trim_bank<S: Copy + 'static>(&self, b: &mut RegBank<S>) {
        b.keep_last(self.mode != Mode::End);
    }
}

/// A register's next value `v` against the last one its counter (`cell`) keeps
/// ([`record_toggles`]; `cur` room for its words): the toggles (none before the first), and
/// `v` kept as the last. Runs a few times a batch, not per cycle.
#[inline]
fn next_toggles<T: Bundle>(v: &T, cell: &mut Cell, wide: &mut [u64], cur: &mut [u64]) -> u64 {
    let n = u64::from(record_toggles(v, cell, wide, cur));
    if std::mem::replace(&mut cell.seen, true) {
        n
    } else {
        0
    }
}

impl Sealed for FieldPass<'_> {}
impl Visitor for FieldPass<'_> {
    #[inline(always)]
    fn reg<T: Bundle>(&mut self, _r: &mut Reg<T>) {}
    #[inline(always)]
    fn wire<T: Bundle>(&mut self, _w: &mut Wire<T>) {}
    #[inline(always)]
    fn input<T: Value>(&mut self, _i: &mut Input<T>) {}
    #[inline(always)]
    fn bank_reg<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        _i: usize,
        get: impl Fn(&S) -> &T,
    ) {
        self.field_batch(b, &get, |_, kept, mask| field_toggles(kept, mask, &get));
    }
    #[inline(always)]
    fn bank_reg_linked<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        _i: usize,
        get: impl Fn(&S) -> &T,
        link: Link,
    ) {
        self.field_batch(b, &get, |chains, kept, mask| {
            linked_total(chains, kept, mask, &get, link)
        });
    }
    #[inline(always)]
    fn bank_next<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        _w: &mut NextWire<T>,
        get: impl Fn(&S) -> &T,
    ) {
        self.next_batch(b, &get, |_, kept, mask| field_toggles(kept, mask, &get));
    }
    #[inline(always)]
    fn bank_next_linked<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        _w: &mut NextWire<T>,
        get: impl Fn(&S) -> &T,
        link: Link,
    ) {
        self.next_batch(b, &get, |chains, kept, mask| {
            linked_total(chains, kept, mask, &get, link)
        });
    }
    #[inline(always)]
    fn bank<S: Copy + 'static>(&mut self, b: &mut RegBank<S>) {
        self.walked = [None; WALKED];
        self.kept_bytes += std::mem::size_of::<S>();
        self.trim_bank(b);
        if self.reserve > 0 {
            b.reserve_kept(self.reserve);
        }
    }
    #[inline(always)]
    fn rare_bank<S: Copy + 'static>(&mut self, b: &mut RareBank<S>) {
        self.walked = [None; WALKED];
        self.kept_bytes += std::mem::size_of::<S>();
        self.trim_bank(b.bank_mut());
        if self.reserve > 0 {
            b.bank_mut().reserve_kept(self.reserve);
        }
    }
    #[inline(always)]
    fn delay_reg<E: Copy + 'static, T: Bundle>(
        &mut self,
        dl: &mut DelayLines<E>,
        stage: usize,
        field: usize,
        get: impl Fn(&E) -> &T,
    ) {
        let Some(cell) = self.cells.as_mut().and_then(|c| c.next()) else {
            return;
        };
        let (lane, k, depth) = dl.stage_place(stage);
        let (lanes, row) = (dl.lanes(), dl.kept_row());
        let (kept, carry, chain) = dl.kept();
        let Some(chain) = chain.get_mut(field) else {
            return;
        };
        cell.total += stage_toggles(
            kept,
            carry,
            (lane, k, depth),
            (lanes, row),
            cell.mask,
            chain,
            get,
        );
    }
    #[inline(always)]
    fn delay<E: Copy + 'static>(&mut self, dl: &mut DelayLines<E>) {
        self.kept_bytes += dl.lanes() * std::mem::size_of::<E>();
        dl.carry_over(self.mode != Mode::End && self.cells.is_some());
        if self.reserve > 0 {
            dl.reserve_kept(self.reserve);
        }
    }
}

/// The toggles of one field of two values (`mask`: the bits a one-word field keeps, a wider
/// one's width).
#[inline(always)]
fn pair_toggles<T: Bundle>(a: &T, b: &T, mask: u64) -> u64 {
    if T::WORDS == 1 && T::CLEAN_ABOVE_WIDTH {
        let (mut x, mut y) = ([0u64; 1], [0u64; 1]);
        a.encode(&mut x);
        b.encode(&mut y);
        return u64::from((x[0] ^ y[0]).count_ones());
    }
    record_field_toggles([a, b].into_iter(), mask)
}

/// One field's toggles of stage `k` of a lane (of depth `depth`) over the kept cycles of
/// delay lines (`kept`: the window's rows at the first, `row` entries, then stage 0's row of
/// `lanes` entries at each later one), and against the rows carried from before them
/// (`carry`, if any).
///
/// Between two kept cycles every stage takes the one before it (a reset edge ends the kept
/// cycles), so stage `k`'s values are stage `k - 1`'s one cycle later: its pairs are those of
/// stage `k - 1` shifted one cycle back, which adds the pair of the two stages at the first
/// kept cycle and drops theirs at the last. Stage 0's pairs are walked; each deeper stage's
/// total is found from the one before it (`chain`, the field's running total: the lane's
/// stages come in order) with those two pairs.
#[inline(always)]
fn stage_toggles<E, T: Bundle>(
    kept: &[E],
    carry: &[E],
    (lane, k, depth): (usize, usize, usize),
    (lanes, row): (usize, usize),
    mask: u64,
    chain: &mut u64,
    get: impl Fn(&E) -> &T,
) -> u64 {
    if kept.len() < row {
        return 0;
    }
    let (first, rows) = kept.split_at(row);
    let n = rows.len() / lanes.max(1);
    let at = k * lanes + lane;
    let total = if k == 0 {
        match rows.get(lane) {
            Some(next) => {
                pair_toggles(get(&first[lane]), get(next), mask)
                    + column_toggles(rows, lane, lanes, mask, &get)
            }
            None => 0,
        }
    } else {
        let place = (lane, k, depth);
        let above = (lane, k - 1, depth);
        let added = pair_toggles(get(&first[at]), get(&first[at - lanes]), mask);
        let dropped = pair_toggles(
            get(stage_at_end(first, rows, place, lanes, n)),
            get(stage_at_end(first, rows, above, lanes, n)),
            mask,
        );
        from_stage_before(*chain, added, dropped)
    };
    *chain = total;
    match carry.get(at) {
        Some(before) => total + pair_toggles(get(before), get(&first[at]), mask),
        None => total,
    }
}
