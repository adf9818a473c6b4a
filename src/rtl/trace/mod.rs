//! Waveform tracing: configuration, signal selection, change detection and the sinks (VCD, FST)
//! plus the GTKWave save file.
//!
//! Tracing is a separate pass over the design ([`Sample`], a [`Visitor`]) run once per traced
//! cycle after the combinational phase; with tracing off it is never run. Every design signal's
//! last value is kept in one flat array in visit order (a wide value in a separate word
//! buffer); the pass compares each signal with it and hands every signal that differs to the
//! sink at once, in visit order, by its *slot* (its position after `clk` and `rst`), and the
//! VCD sink formats its line there and then. The sink maps each slot to its declaration, or to
//! none for a signal the globs leave out, whose changes it drops: the pass reads no selection
//! and no id. The sink is picked once per cycle, so the pass is compiled for each sink. Sinks stream to a temporary
//! beside `NAME` (`crate::rtl::file::OutputFile`) that is put in place when the run finishes
//! cleanly and the command commits its outputs, and removed when writing fails.

mod count;
mod fst;
pub(crate) mod glob;
mod gtkw;
mod power;
mod saif;
mod sink;
mod vcd;

pub use power::{Charge, PowerModel, PowerTrace};
pub use saif::{ActivityReport, SignalActivity};
pub use sink::PERIOD;

use std::io::BufWriter;
use std::path::PathBuf;
use std::sync::Arc;

use super::bank::{encode_field, RareBank, RegBank};
use super::bundle::{clear_above, Bundle};
use super::delay::DelayLines;
use super::error::{Result, RtlError};
use super::file::OutputFile;
use super::module::{Module, Sealed, Visitor};
use super::reg::Reg;
use super::signal::Display;
use super::table::{SignalInfo, SignalKind};
use super::value::Value;
use super::wire::{Input, NextWire, Wire};
use sink::{Decl, Place, Sink, SinkError};

/// Waveform file format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TraceFormat {
    /// Value Change Dump (text; opens everywhere).
    Vcd,
    /// Fast Signal Trace (compressed binary; for large runs).
    Fst,
    /// No waveform: the trace only counts switching activity, and `path` is its SAIF file
    /// ([`TraceConfig::activity`]).
    Saif,
}

/// What to trace and where (what a CLI `--vcd`/`--fst`/`--trace-glob`/`--trace-window` maps to).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceConfig {
    /// The waveform file to write (e.g. `run.vcd`). A `.gtkw` save file is written beside it.
    pub path: PathBuf,
    /// VCD or FST.
    pub format: TraceFormat,
    /// Hierarchical globs selecting signals (see [`TraceConfig::glob`]); empty traces everything.
    pub globs: Vec<String>,
    /// Trace only cycles `from..to` (half open); `None` traces the whole run.
    pub window: Option<(u64, u64)>,
    /// Write the GTKWave save file (`NAME.gtkw`) beside the waveform.
    pub gtkw: bool,
    /// The run's expected length in cycles, for the VCD size estimate ([`TraceConfig::budget`]).
    pub expected_cycles: Option<u64>,
    /// Refuse (before writing) a VCD whose estimated size exceeds this many bytes.
    pub max_bytes: Option<u64>,
    /// Also count the switching activity of the traced signals and write it to this SAIF file
    /// ([`TraceConfig::saif`]).
    pub saif: Option<PathBuf>,
    /// Count the switching activity (and report it in [`TraceSummary::activity`]) even when
    /// no SAIF file is written ([`TraceConfig::counting`], [`TraceConfig::count`]).
    pub count: bool,
    /// Write each cycle's power per block into the VCD as real-valued signals
    /// ([`TraceConfig::power`]).
    pub power: Option<PowerTrace>,
    /// Ask the design to declare its energy probes: wires that exist only for an energy
    /// estimate ([`TraceConfig::energy_probes`]).
    pub probes: bool,
    /// Select every register, besides the signals the globs select
    /// ([`TraceConfig::registers`]).
    pub registers: bool,
    /// The toggle counter's batch length in traced cycles ([`TraceConfig::counting_batch`];
    /// `None`: chosen from what the design keeps a cycle).
    pub batch: Option<u32>,
}

impl TraceConfig {
    /// Trace everything to a VCD file.
    pub fn vcd(path: impl Into<PathBuf>) -> Self {
        Self {
            path: path.into(),
            format: TraceFormat::Vcd,
            globs: Vec::new(),
            window: None,
            gtkw: true,
            expected_cycles: None,
            max_bytes: None,
            saif: None,
            count: false,
            power: None,
            probes: false,
            registers: false,
            batch: None,
        }
    }

    /// Trace everything to an FST file.
    pub fn fst(path: impl Into<PathBuf>) -> Self {
        Self {
            format: TraceFormat::Fst,
            ..Self::vcd(path)
        }
    }

    /// No waveform, only the switching activity of the selected signals (every bit's toggle
    /// count and time at 1), written to the SAIF file `path` when the run finishes.
    pub fn activity(path: impl Into<PathBuf>) -> Self {
        Self {
            format: TraceFormat::Saif,
            gtkw: false,
            ..Self::vcd(path)
        }
    }

    /// No waveform and no file: the switching activity of the selected signals is counted and
    /// reported in [`TraceSummary::activity`] only (what an energy estimate reads).
    pub fn counting() -> Self {
        Self {
            count: true,
            ..Self::activity(PathBuf::new())
        }
    }

    /// Also counts the switching activity of the traced signals, reported in
    /// [`TraceSummary::activity`], whether or not a SAIF file is written.
    pub fn count(mut self) -> Self {
        self.count = true;
        self
    }

    /// Sets how many traced cycles the toggle counter keeps the registers' outputs before it
    /// compares them (at least 1). The totals are the same whatever the length; only the
    /// cost differs. By default it is chosen from the bytes the design keeps a cycle, as many
    /// cycles as fit a budget sized for the processor's second-level cache
    /// (`docs/performance.md`); tests set short ones to cross many batch boundaries.
    pub fn counting_batch(mut self, cycles: u32) -> Self {
        self.batch = Some(cycles.max(1));
        self
    }

    /// Also writes, into a VCD, each traced cycle's power per block of `model` as a real-valued
    /// signal `power.<block>` in watts, and their sum `power.total` (every design signal
    /// takes part, selected or not; an FST or a SAIF alone has no power signals).
    pub fn power(mut self, model: std::sync::Arc<dyn PowerModel>) -> Self {
        self.power = Some(PowerTrace(model));
        self
    }

    /// Also asks the design for its energy probes: wires a block declares only for an energy
    /// estimate, showing an arithmetic unit's inputs that no other signal carries (the
    /// weight-stationary core's multiplier operands and accumulator adder inputs,
    /// `docs/energy.md`). They are traced and counted like every signal; a run without them
    /// has the same registers and results, and waves without those wires.
    pub fn energy_probes(mut self) -> Self {
        self.probes = true;
        self
    }

    /// Whether this trace counts switching activity (a SAIF is written, or counting was asked
    /// for).
    pub fn counts_activity(&self) -> bool {
        self.count || self.saif_path().is_some()
    }

    /// Also writes the switching activity of the traced signals (the same signals and cycles
    /// as the waveform) to the SAIF file `path`: the toggle counts equal those of the
    /// waveform's value changes.
    pub fn saif(mut self, path: impl Into<PathBuf>) -> Self {
        match self.format {
            TraceFormat::Saif => self.path = path.into(),
            _ => self.saif = Some(path.into()),
        }
        self
    }

    /// The SAIF file this trace writes, if any.
    pub fn saif_path(&self) -> Option<&std::path::Path> {
        match self.format {
            // A counting-only trace has no path.
            TraceFormat::Saif if self.path.as_os_str().is_empty() => None,
            TraceFormat::Saif => Some(&self.path),
            _ => self.saif.as_deref(),
        }
    }

    /// Adds a hierarchical glob: `*` matches any characters (dots too), `?` one character, and the
    /// pattern must match a run of whole name components, so `mesh.pe_0_*` selects every signal
    /// under `tensor_core.mesh.pe_0_0`, `..pe_0_1`, ... and `acc` every signal named `acc`.
    /// `clk` and `rst` are always traced.
    pub fn glob(mut self, pattern: impl Into<String>) -> Self {
        self.globs.push(pattern.into());
        self
    }

    /// Traces only cycles `from..to`.
    pub fn window(mut self, from: u64, to: u64) -> Self {
        self.window = Some((from, to));
        self
    }

    /// Refuses a VCD trace whose size, estimated from the selected signals and `cycles` (the
    /// run's expected length, cut to the window), exceeds `max_bytes`: the tracer then fails
    /// before writing anything ([`RtlError::TraceTooLarge`]). FST traces are not limited.
    pub fn budget(mut self, cycles: u64, max_bytes: u64) -> Self {
        self.expected_cycles = Some(cycles);
        self.max_bytes = Some(max_bytes);
        self
    }

    /// The estimated size in bytes of a VCD of `cycles` cycles of the signals `table` holds
    /// that this configuration selects: per cycle the clock edges and time stamps, and about
    /// half the selected signals changing (a measured 45 % for a full GEMM trace), each
    /// taking its width in digits plus an identifier and separators.
    pub fn estimate_vcd_bytes(&self, table: &[SignalInfo], cycles: u64) -> u64 {
        let (from, to) = self.window.unwrap_or((0, u64::MAX));
        let traced = cycles.min(to).saturating_sub(from);
        let per_cycle: u64 = table
            .iter()
            .zip(self.selection(table))
            .filter(|&(_, selected)| selected)
            .map(|(s, _)| u64::from(s.width) + 4)
            .sum::<u64>()
            / 2
            + 24;
        traced.saturating_mul(per_cycle)
    }

    /// Selects every register of the design besides the signals the globs select (with no
    /// glob, the registers alone): what an energy estimate counts, every register and the
    /// few wires that carry an arithmetic unit's inputs (`docs/energy.md`). The wires left
    /// out are neither counted nor, with no waveform asking for them, computed.
    pub fn registers(mut self) -> Self {
        self.registers = true;
        self
    }

    /// Whether the glob list selects `path` (registers aside: see
    /// [`TraceConfig::selects_signal`]).
    pub fn selects(&self, path: &str) -> bool {
        (self.globs.is_empty() && !self.registers)
            || self.globs.iter().any(|g| glob::selects(g, path))
    }

    /// Whether this trace selects signal `s`: a register when [`TraceConfig::registers`]
    /// says so, else as the globs say.
    pub fn selects_signal(&self, s: &SignalInfo) -> bool {
        self.selection(std::slice::from_ref(s)).contains(&true)
    }

    /// [`TraceConfig::selects_signal`] of every signal of `table`. Most signals no glob can
    /// select are told so from their names before their path is built: a glob selects only
    /// paths holding its last component, when that has no wildcard
    /// ([`glob::required_component`]), and those are looked for once per scope (the signals
    /// of a module share theirs).
    pub(in crate::rtl) fn selection(&self, table: &[SignalInfo]) -> Vec<bool> {
        let required: Option<Vec<&str>> = self
            .globs
            .iter()
            .map(|g| glob::required_component(g))
            .collect();
        // No glob, or one that may select any path: every path is worth building.
        let (any_path, lasts) = match required {
            Some(lasts) if !self.globs.is_empty() => (false, lasts),
            _ => (true, Vec::new()),
        };
        let holds_a_last = |part: &str| part.split('.').any(|c| lasts.contains(&c));
        let mut scope_holds: Option<(&Arc<[String]>, bool)> = None;
        table
            .iter()
            .map(|s| {
                if self.registers && s.kind == SignalKind::Reg {
                    return true;
                }
                let possible = any_path || {
                    let in_scope = match scope_holds {
                        Some((scope, holds)) if Arc::ptr_eq(scope, &s.scope) => holds,
                        _ => {
                            let holds = s.scope.iter().any(|part| holds_a_last(part));
                            scope_holds = Some((&s.scope, holds));
                            holds
                        }
                    };
                    in_scope || holds_a_last(&s.name)
                };
                possible && self.selects(&s.path())
            })
            .collect()
    }
}

/// What a finished trace wrote.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TraceSummary {
    /// The waveform file (the SAIF file when the trace wrote no waveform).
    pub path: PathBuf,
    /// The GTKWave save file, if written.
    pub gtkw: Option<PathBuf>,
    /// Size of the waveform file in bytes.
    pub bytes: u64,
    /// Cycles written.
    pub cycles: u64,
    /// Signals traced (including `clk` and `rst`).
    pub signals: usize,
    /// The switching activity, when the trace counted it (a SAIF was asked for).
    pub activity: Option<ActivityReport>,
}

/// A one-word signal's last written value before its first sample: bits above every width
/// below 64 set, which no encoded value (clear above its width) equals, so the first sample
/// writes every such signal without a flag test. A 64-bit signal tests the first-sample flag.
const UNWRITTEN: u64 = u64::MAX;

/// Where the sampling pass sends a changed signal, in visit order: the VCD formatter, inline
/// (the traced runs' hot path), or the FST writer through one out-of-line call. One type for
/// both, so every block has one waveform sampling pass rather than one per format (a second
/// copy was a twelfth of the library's compile time). `slot` as in [`Sink`]; a slot with no
/// declaration is ignored.
enum Record<'a> {
    Vcd(&'a mut vcd::VcdSink),
    Fst(FstRecord<'a>),
}

impl Record<'_> {
    /// Slot `slot`, a one-word signal of `width` bits, now holds `word`.
    #[inline(always)]
    fn word(&mut self, slot: u32, width: u32, word: u64) {
        match self {
            Record::Vcd(s) => s.word(slot, width, word),
            Record::Fst(f) => f.words(slot, width, &[word]),
        }
    }

    /// Slot `slot`, a signal of `width` bits, now holds `words`.
    #[inline(always)]
    fn words(&mut self, slot: u32, width: u32, words: &[u64]) {
        match self {
            Record::Vcd(s) => s.words(slot, width, words),
            Record::Fst(f) => f.words(slot, width, words),
        }
    }
}

/// The FST sink during a sampling pass: it stops at its first error, which the tracer reports
/// after the pass.
struct FstRecord<'a> {
    sink: &'a mut fst::FstSink,
    error: Option<SinkError>,
}

impl FstRecord<'_> {
    #[inline(never)]
    fn words(&mut self, slot: u32, width: u32, words: &[u64]) {
        if self.error.is_none() {
            if let Err(e) = self.sink.change(slot as usize, width, words) {
                self.error = Some(e);
            }
        }
    }
}

/// The per-cycle tracing pass: compares each selected signal with its last written value and
/// records the ones that changed, in visit order. It compares every design signal, selected
/// or not (an unselected one's slot is ignored by the sink), so it reads no selection.
struct Sample<'a, 'r> {
    /// The next signal's position in visit order.
    index: usize,
    /// Per signal: its last written value (a one-word signal), else where its words start in
    /// `wide`.
    last: &'a mut [u64],
    wide: &'a mut [u64],
    scratch: &'a mut [u64],
    out: &'a mut Record<'r>,
    /// The first sample: every signal is written.
    force: bool,
}

impl Sample<'_, '_> {
    /// A register's, wire's or input's value: its bits are clear above the width when its
    /// type says so, else cleared here.
    #[inline(always)]
    fn signal<T: Bundle>(&mut self, v: T, width: u32) {
        self.signal_by(v, width, !T::CLEAN_ABOVE_WIDTH);
    }

    /// Signal `v` of `width` bits, its bits above the width cleared first when `clear`.
    #[inline(always)]
    fn signal_by<T: Bundle>(&mut self, v: T, width: u32, clear: bool) {
        let i = self.index;
        self.index = i + 1;
        // Signal `i`'s slot, after `clk` and `rst`.
        let slot = i as u32 + 2;
        let Some(last) = self.last.get_mut(i) else {
            return;
        };
        if T::WORDS == 1 {
            // One word: compared in a register. Before the first sample `last` holds
            // `UNWRITTEN`, which only a 64-bit value can equal.
            let mut cur = [0u64; 1];
            v.encode(&mut cur);
            let cur = if clear {
                // A one-word signal has 1..=64 bits: keep the low `width`.
                cur[0] & (u64::MAX >> (64u32.wrapping_sub(width) & 63))
            } else {
                cur[0]
            };
            if *last != cur || (T::CAPACITY >= 64 && self.force) {
                *last = cur;
                // A type that holds one bit is a one-bit signal.
                let width = if T::CAPACITY == 1 { 1 } else { width };
                self.out.word(slot, width, cur);
            }
            return;
        }
        let off = *last as usize;
        let cur = &mut self.scratch[..T::WORDS];
        v.encode(cur);
        if clear {
            clear_above(cur, width);
        }
        let last = &mut self.wide[off..off + T::WORDS];
        if self.force || *last != *cur {
            last.copy_from_slice(cur);
            self.out.words(slot, width, last);
        }
    }
}

impl Sealed for Sample<'_, '_> {}
impl Visitor for Sample<'_, '_> {
    #[inline(always)]
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>) {
        self.signal(r.q(), r.width());
    }
    #[inline(always)]
    fn wire<T: Bundle>(&mut self, w: &mut Wire<T>) {
        self.signal(w.get(), w.width());
    }
    #[inline(always)]
    fn input<T: Value>(&mut self, i: &mut Input<T>) {
        self.signal(i.get(), i.width());
    }
    #[inline(always)]
    fn bank_reg<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        i: usize,
        get: impl Fn(&S) -> &T,
    ) {
        let width = b.field_meta(i).width;
        let v = *get(b.q());
        // A field holds a value of its width (a bank's contract, checked here in debug
        // builds as every observer does); the waves show its low `width` bits regardless.
        if cfg!(debug_assertions) {
            encode_field(&v, width, &mut vec![0; T::WORDS]);
        }
        self.signal_by(v, width, true);
    }
    #[inline(always)]
    fn bank_next<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        w: &mut NextWire<T>,
        get: impl Fn(&S) -> &T,
    ) {
        // As the field's value is shown (its low `width` bits).
        self.signal_by(*get(b.d()), w.width(), true);
    }
    #[inline(always)]
    fn bank<S: Copy + 'static>(&mut self, _b: &mut RegBank<S>) {}
    #[inline(always)]
    fn rare_bank<S: Copy + 'static>(&mut self, _b: &mut RareBank<S>) {}
    #[inline(always)]
    fn delay_reg<E: Copy + 'static, T: Bundle>(
        &mut self,
        dl: &mut DelayLines<E>,
        stage: usize,
        field: usize,
        get: impl Fn(&E) -> &T,
    ) {
        // As a register's (a stage's fields fit their widths, as a register's value does).
        self.signal(*get(&dl.q_of(stage)), dl.field_width(field));
    }
    #[inline(always)]
    fn delay<E: Copy + 'static>(&mut self, _dl: &mut DelayLines<E>) {}
}

/// The sampling pass: every design signal's encoded value, stored at its place in the
/// snapshot (visit order, [`Bundle::WORDS`] words each). It stores and compares nothing
/// else, reads no width and no selection, and so is the same for every sink: each block has
/// one sampling pass whatever is traced.
struct Snap<'a> {
    /// Where the next signal's words start.
    pos: usize,
    cur: &'a mut [u64],
}

impl Snap<'_> {
    /// A register's, wire's or input's value: encoded as it stands (bits above the width are
    /// cleared afterwards, for every signal at once). A plain one-word value (an integer, a
    /// flag) is stored inline; a record, whose encoding packs fields, goes through one
    /// out-of-line copy per type rather than a copy at each signal of every block's pass
    /// (that was 8 s of the library's cold build).
    #[inline(always)]
    fn signal<T: Bundle>(&mut self, v: T) {
        if T::CLEAN_ABOVE_WIDTH && T::WORDS == 1 {
            let p = self.pos;
            self.pos = p + 1;
            if let Some(w) = self.cur.get_mut(p) {
                let mut word = [0u64; 1];
                v.encode(&mut word);
                *w = word[0];
            }
        } else {
            self.record(v);
        }
    }

    /// A record's (or a wide value's) words.
    #[inline(never)]
    fn record<T: Bundle>(&mut self, v: T) {
        let p = self.pos;
        self.pos = p + T::WORDS;
        if let Some(words) = self.cur.get_mut(p..p + T::WORDS) {
            v.encode(words);
        }
    }
}

impl Sealed for Snap<'_> {}
impl Visitor for Snap<'_> {
    #[inline(always)]
    fn reg<T: Bundle>(&mut self, r: &mut Reg<T>) {
        self.signal(r.q());
    }
    #[inline(always)]
    fn wire<T: Bundle>(&mut self, w: &mut Wire<T>) {
        self.signal(w.get());
    }
    #[inline(always)]
    fn input<T: Value>(&mut self, i: &mut Input<T>) {
        self.signal(i.get());
    }
    #[inline(always)]
    fn bank_reg<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        i: usize,
        get: impl Fn(&S) -> &T,
    ) {
        let v = *get(b.q());
        // A field holds a value of its width (a bank's contract, checked here in debug
        // builds as every observer does); the waves show its low `width` bits regardless.
        if cfg!(debug_assertions) {
            encode_field(&v, b.field_meta(i).width, &mut vec![0; T::WORDS]);
        }
        self.signal(v);
    }
    #[inline(always)]
    fn bank_next<S: Copy + 'static, T: Bundle>(
        &mut self,
        b: &mut RegBank<S>,
        _w: &mut NextWire<T>,
        get: impl Fn(&S) -> &T,
    ) {
        self.signal(*get(b.d()));
    }
    #[inline(always)]
    fn bank<S: Copy + 'static>(&mut self, _b: &mut RegBank<S>) {}
    #[inline(always)]
    fn rare_bank<S: Copy + 'static>(&mut self, _b: &mut RareBank<S>) {}
    #[inline(always)]
    fn delay_reg<E: Copy + 'static, T: Bundle>(
        &mut self,
        dl: &mut DelayLines<E>,
        stage: usize,
        _field: usize,
        get: impl Fn(&E) -> &T,
    ) {
        self.signal(*get(&dl.q_of(stage)));
    }
    #[inline(always)]
    fn delay<E: Copy + 'static>(&mut self, _dl: &mut DelayLines<E>) {}
}

/// The open waveform writer.
enum Wave {
    Vcd(Box<vcd::VcdSink>),
    Fst(Box<fst::FstSink>),
}

/// The open sinks: the waveform writer and the activity counter (with the snapshot it
/// counts from, or, for toggle totals alone, the counters kept where the values are), either
/// or both.
struct Writer {
    wave: Option<Wave>,
    activity: Option<Box<saif::Activity>>,
    snapshot: Option<Snapshot>,
    totals: Option<count::ToggleTotals>,
    power: Option<Power>,
}

impl Writer {
    /// Runs `f` on every open sink (the waveform's first).
    fn each(
        &mut self,
        mut f: impl FnMut(&mut dyn Sink) -> std::result::Result<(), SinkError>,
    ) -> std::result::Result<(), SinkError> {
        match self.wave.as_mut() {
            Some(Wave::Vcd(s)) => f(&mut **s)?,
            Some(Wave::Fst(s)) => f(&mut **s)?,
            None => {}
        }
        if let Some(a) = self.activity.as_mut() {
            f(&mut **a)?;
        }
        Ok(())
    }

    /// Where the waveform's sampling pass sends its changes (none without a waveform).
    fn record(&mut self) -> Option<Record<'_>> {
        match self.wave.as_mut()? {
            Wave::Vcd(v) => Some(Record::Vcd(v)),
            Wave::Fst(f) => Some(Record::Fst(FstRecord {
                sink: f,
                error: None,
            })),
        }
    }
}

/// The switching-activity counter's view of the design: every signal's value this cycle and
/// the last (see [`Snap`]).
struct Snapshot {
    /// Per design signal: where it lies in the snapshot.
    places: Vec<Place>,
    /// Per snapshot word: the bits of it its signal's width keeps.
    mask: Vec<u64>,
    cur: Vec<u64>,
    prev: Vec<u64>,
}

impl Snapshot {
    /// The snapshot of the signals of `table` (`storage`: each one's words).
    fn new(table: &[SignalInfo], storage: &[usize]) -> Self {
        let mut places = Vec::with_capacity(table.len());
        let mut mask = Vec::with_capacity(table.len());
        for (s, &store) in table.iter().zip(storage) {
            places.push(Place {
                off: mask.len() as u32,
                words: store as u32,
            });
            for w in 0..store as u32 {
                let bits = s.width.saturating_sub(64 * w).min(64);
                mask.push(if bits == 0 {
                    0
                } else {
                    u64::MAX >> (64 - bits)
                });
            }
        }
        Self {
            places,
            cur: vec![0; mask.len()],
            prev: vec![0; mask.len()],
            mask,
        }
    }

    /// Takes this cycle's snapshot of every design signal as sampled (the last cycle's moves
    /// to `prev`); the bits above each width are cleared next, by the activity counter as it
    /// counts ([`saif::Activity::cycle`]) or by [`Snapshot::clear_above_widths`].
    fn take<M: Module>(&mut self, top: &mut M) {
        std::mem::swap(&mut self.cur, &mut self.prev);
        top.visit(&mut Snap {
            pos: 0,
            cur: &mut self.cur,
        });
    }

    /// Clears the bits above each signal's width in this cycle's snapshot.
    fn clear_above_widths(&mut self) {
        for (c, m) in self.cur.iter_mut().zip(&self.mask) {
            *c &= *m;
        }
    }
}

/// The selection and the change-detection state the sampling pass reads.
struct State {
    /// Per design signal (visit order): its declaration id, or `u32::MAX` when not traced.
    ids: Vec<u32>,
    /// Per design signal (traced or not): its last written value, or where its words start
    /// in `wide` (see [`Sample`]).
    last: Vec<u64>,
    wide: Vec<u64>,
    scratch: Vec<u64>,
}

impl State {
    /// The sampling pass into `out`.
    fn pass<M: Module>(&mut self, top: &mut M, out: &mut Record<'_>, force: bool) {
        top.visit(&mut Sample {
            index: 0,
            last: &mut self.last,
            wide: &mut self.wide,
            scratch: &mut self.scratch,
            out,
            force,
        });
    }
}

/// An open trace: selection, change-detection state and the sinks.
pub(in crate::rtl) struct Tracer {
    sink: Option<Writer>,
    /// The SAIF file and its output, when the trace counts activity.
    saif: Option<(PathBuf, OutputFile)>,
    state: State,
    window: (u64, u64),
    dumped: bool,
    last_rst: bool,
    end_time: u64,
    cycles: u64,
    path: PathBuf,
    out: Option<OutputFile>,
    decls: Vec<Decl>,
    /// The waveform's declarations: `decls` and the power signals, if any.
    wave_decls: Vec<Decl>,
    config: TraceConfig,
}

/// The power trace of an open VCD: the sums and the first power signal's slot.
struct Power {
    sums: power::PowerSums,
    first_slot: u32,
}

impl Tracer {
    /// Opens the file and writes the header for the signals `config` selects.
    pub fn open(
        config: &TraceConfig,
        top_name: &str,
        table: &[SignalInfo],
        storage: &[usize],
    ) -> Result<Self> {
        let window = config.window.unwrap_or((0, u64::MAX));
        // Timestamps are `cycle * PERIOD`: a window starting where that overflows is refused.
        if window.1 <= window.0 || window.0.checked_mul(PERIOD).is_none() {
            return Err(RtlError::BadWindow {
                from: window.0,
                to: window.1,
            });
        }
        if let (TraceFormat::Vcd, Some(cycles), Some(limit)) =
            (config.format, config.expected_cycles, config.max_bytes)
        {
            let estimate = config.estimate_vcd_bytes(table, cycles);
            if estimate > limit {
                return Err(RtlError::TraceTooLarge { estimate, limit });
            }
        }
        let path = config.path.clone();
        let io_err = |action, source| RtlError::TraceIo {
            path: path.clone(),
            action,
            source,
        };
        // Regular files are written to a temporary and renamed at the run's commit; special files
        // (a pipe, /dev/null, /dev/full) are written in place; symlinks are followed.
        let mut wave_out = None;
        if config.format != TraceFormat::Saif {
            let mut out = OutputFile::create(&path).map_err(|e| io_err("create", e))?;
            if config.format == TraceFormat::Fst && out.is_special() {
                // The FST writer seeks back to patch its header: a device or pipe cannot hold it.
                return Err(RtlError::Fst {
                    path: path.clone(),
                    message: "an FST needs a regular file (it is written with seeks); use --vcd for a pipe or device".into(),
                });
            }
            let file = out.take_file().map_err(|e| io_err("create", e))?;
            wave_out = Some((out, file));
        }
        // The SAIF is written whole when the run finishes; its file is opened now, so that a
        // path that cannot be written fails before the run.
        let saif = match config.saif_path() {
            Some(p) => {
                let p = p.to_path_buf();
                let out = OutputFile::create(&p).map_err(|e| RtlError::TraceIo {
                    path: p.clone(),
                    action: "create",
                    source: e,
                })?;
                Some((p, out))
            }
            None => None,
        };

        let top: Arc<[String]> = Arc::from([top_name.to_string()]);
        let mut decls = vec![
            Decl {
                scope: top.clone(),
                name: "clk".into(),
                width: 1,
                kind: SignalKind::Wire,
                labels: &[],
                display: Display::Hex,
                overview: true,
                real: false,
            },
            Decl {
                scope: top,
                name: "rst".into(),
                width: 1,
                kind: SignalKind::Wire,
                labels: &[],
                display: Display::Hex,
                overview: true,
                real: false,
            },
        ];
        let selection = config.selection(table);
        if !config.globs.is_empty() && !selection.contains(&true) {
            return Err(RtlError::NoSignalMatches {
                globs: config.globs.clone(),
            });
        }
        let mut ids = Vec::with_capacity(table.len());
        let mut last = Vec::with_capacity(table.len());
        let mut wide = 0usize;
        let mut max_words = 1usize;
        for ((s, &store), &selected) in table.iter().zip(storage).zip(&selection) {
            // Every signal is compared, selected or not; a wide one's value lives in the wide
            // buffer, from `wide` on.
            last.push(if store == 1 { UNWRITTEN } else { wide as u64 });
            if store > 1 {
                wide += store;
            }
            max_words = max_words.max(store);
            if selected {
                ids.push(decls.len() as u32);
                decls.push(Decl {
                    scope: s.scope.clone(),
                    name: s.name.clone(),
                    width: s.width,
                    kind: s.kind,
                    labels: s.labels,
                    display: s.display,
                    overview: s.overview,
                    real: false,
                });
            } else {
                ids.push(u32::MAX);
            }
        }
        // Each slot's declaration: `clk`, `rst`, then the design signals'.
        let slots: Vec<u32> = [0, 1].into_iter().chain(ids.iter().copied()).collect();
        // The power signals: a VCD's only, one per block of the model and their total, after
        // every design signal (their slots follow the design signals').
        let power_model = match (&config.power, config.format) {
            (Some(p), TraceFormat::Vcd) => Some(p.0.clone()),
            _ => None,
        };
        let mut power_decls = Vec::new();
        if let Some(model) = &power_model {
            let scope: Arc<[String]> = Arc::from([top_name.to_string(), "power".to_string()]);
            for name in model.blocks().into_iter().chain(["total".to_string()]) {
                power_decls.push(Decl {
                    scope: scope.clone(),
                    name,
                    width: 64,
                    kind: SignalKind::Wire,
                    labels: &[],
                    display: Display::Hex,
                    overview: false,
                    real: true,
                });
            }
        }
        let power_slot = slots.len() as u32;
        // A waveform's declarations (the power signals after the design's); none without one.
        let (mut wave_decls, mut wave_slots) = match wave_out {
            Some(_) => (decls.clone(), slots.clone()),
            None => (Vec::new(), Vec::new()),
        };
        if wave_out.is_some() {
            for d in &power_decls {
                wave_slots.push(wave_decls.len() as u32);
                wave_decls.push(d.clone());
            }
        }
        let (out, wave) = match wave_out {
            Some((out, file)) => {
                let writer = BufWriter::with_capacity(1 << 16, file);
                let wave = match config.format {
                    TraceFormat::Fst => {
                        fst::FstSink::new(writer, &decls, &slots, window.0 * PERIOD)
                            .map(|s| Wave::Fst(Box::new(s)))
                    }
                    _ => vcd::VcdSink::new(writer, &wave_decls, &wave_slots)
                        .map(|s| Wave::Vcd(Box::new(s))),
                };
                (Some(out), Some(wave))
            }
            None => (None, None),
        };
        // Every bit for a SAIF; the toggle totals alone suffice otherwise, and are counted
        // where the values are (`count`) unless the power trace takes a snapshot anyway.
        let per_bit = config.saif_path().is_some();
        let totals_alone = config.counts_activity() && !per_bit && power_model.is_none();
        let snapshot = ((config.counts_activity() && !totals_alone) || power_model.is_some())
            .then(|| Snapshot::new(table, storage));
        let totals = totals_alone.then(|| {
            let selected: Vec<bool> = ids.iter().map(|&id| id != u32::MAX).collect();
            count::ToggleTotals::new(table, storage, &selected, config.batch)
        });
        let activity = match (&snapshot, &totals) {
            (Some(snap), _) if config.counts_activity() => Some(Box::new(saif::Activity::new(
                &decls,
                &slots,
                &snap.places,
                per_bit,
            ))),
            (_, Some(_)) => {
                // One total per design signal, at its place in visit order.
                let places: Vec<Place> = (0..table.len() as u32)
                    .map(|off| Place { off, words: 1 })
                    .collect();
                Some(Box::new(saif::Activity::new(
                    &decls, &slots, &places, false,
                )))
            }
            _ => None,
        };
        let power = match (&power_model, &snapshot) {
            (Some(model), Some(snap)) => Some(Power {
                sums: power::PowerSums::new(model.as_ref(), table, &snap.places),
                first_slot: power_slot,
            }),
            _ => None,
        };
        let mut tracer = Self {
            sink: None,
            saif,
            state: State {
                ids,
                last,
                wide: vec![0; wide],
                scratch: vec![0; max_words],
            },
            window,
            dumped: false,
            last_rst: false,
            end_time: window.0 * PERIOD,
            cycles: 0,
            path,
            out,
            decls,
            wave_decls,
            config: config.clone(),
        };
        let wave = match wave {
            Some(Ok(w)) => Some(w),
            Some(Err(e)) => return Err(tracer.fail(e)),
            None => None,
        };
        tracer.sink = Some(Writer {
            wave,
            activity,
            snapshot,
            totals,
            power,
        });
        Ok(tracer)
    }

    /// Removes the incomplete file and turns a sink error into an [`RtlError`].
    fn fail(&mut self, e: SinkError) -> RtlError {
        self.sink = None;
        // Dropping the uncommitted outputs removes their partial files.
        self.out = None;
        self.saif = None;
        match e {
            SinkError::Io(action, source) => RtlError::TraceIo {
                path: self.path.clone(),
                action,
                source,
            },
            SinkError::Fst(message) => RtlError::Fst {
                path: self.path.clone(),
                message,
            },
        }
    }

    /// Per design signal (visit order): whether this trace writes it.
    pub fn selected(&self) -> Vec<bool> {
        self.state.ids.iter().map(|&id| id != u32::MAX).collect()
    }

    /// The simulator now observes every wire (a peek, a settle): the toggle counters, which
    /// skip a wire nobody observes, give each wire a counter.
    pub fn observing_all(&mut self) {
        if let Some(totals) = self.sink.as_mut().and_then(|w| w.totals.as_mut()) {
            totals.observe_all();
        }
    }

    /// Whether `cycle` lies in the window.
    #[inline(always)]
    pub fn active(&self, cycle: u64) -> bool {
        cycle >= self.window.0 && cycle < self.window.1
    }

    /// Records cycle `cycle` (after its combinational phase).
    pub fn sample<M: Module>(&mut self, cycle: u64, rst: bool, top: &mut M) -> Result<()> {
        let Some(writer) = self.sink.as_mut() else {
            return Err(RtlError::TraceClosed);
        };
        let t = cycle * PERIOD;
        let force = !self.dumped;
        let last_rst = self.last_rst;
        if let (None, Some(totals), Some(a)) = (
            &writer.wave,
            writer.totals.as_mut(),
            writer.activity.as_mut(),
        ) {
            // Toggle totals alone: `clk` is counted from the number of traced cycles when
            // the trace finishes (`Activity::set_clock`), `rst` at its changes.
            let res = a.time(t).and_then(|()| {
                if force || rst != last_rst {
                    a.change(1, 1, &[u64::from(rst)])?;
                }
                Ok(())
            });
            if let Err(e) = res {
                return Err(self.fail(e));
            }
            let last = cycle + 1 >= self.window.1;
            totals.cycle(top, rst, last);
            self.sampled(t, rst);
            return Ok(());
        }
        let mut res = writer.each(|sink| {
            sink.time(t)?;
            if force {
                sink.begin_dump()?;
            }
            sink.change(0, 1, &[1])?;
            if force || rst != last_rst {
                sink.change(1, 1, &[u64::from(rst)])?;
            }
            Ok(())
        });
        if res.is_ok() {
            // The toggle totals beside a waveform (an FST, or a VCD without power signals).
            if let Some(totals) = writer.totals.as_mut() {
                totals.cycle(top, rst, cycle + 1 >= self.window.1);
            }
            // The counter's and the power trace's snapshot (its own pass: the waveform's
            // formats as it compares).
            if let Some(snap) = writer.snapshot.as_mut() {
                snap.take(top);
                match writer.activity.as_mut() {
                    Some(a) => a.cycle(cycle, &mut snap.cur, &snap.prev, &snap.mask, force),
                    None => snap.clear_above_widths(),
                }
                if let Some(p) = writer.power.as_mut() {
                    p.sums.cycle(&snap.cur, &snap.prev, force);
                }
            }
            // The VCD lines are formatted during the pass itself.
            if let Some(mut rec) = writer.record() {
                self.state.pass(top, &mut rec, force);
                if let Record::Fst(FstRecord { error: Some(e), .. }) = rec {
                    res = Err(e);
                }
            }
            // The power signals after the design's, each written when it changes.
            if let (Some(p), Some(Wave::Vcd(v))) = (writer.power.as_mut(), writer.wave.as_mut()) {
                let first = p.first_slot;
                p.sums.changes(force, |i, w| v.real(first + i as u32, w));
            }
        }
        if res.is_ok() {
            res = writer.each(|sink| {
                if force {
                    sink.end_dump()?;
                }
                sink.time(t + PERIOD / 2)?;
                sink.change(0, 1, &[0])
            });
        }
        match res {
            Ok(()) => {
                self.sampled(t, rst);
                Ok(())
            }
            Err(e) => Err(self.fail(e)),
        }
    }

    /// Notes a traced cycle that started at time `t` with reset `rst`.
    fn sampled(&mut self, t: u64, rst: bool) {
        self.dumped = true;
        self.last_rst = rst;
        self.end_time = t + PERIOD;
        self.cycles += 1;
    }

    /// Ends the toggle count of `top`'s run: the outputs its field registers kept are
    /// compared, and the design keeps none (before [`Tracer::finish`]).
    pub fn drain<M: Module>(&mut self, top: &mut M) {
        if let Some(totals) = self.sink.as_mut().and_then(|w| w.totals.as_mut()) {
            totals.drain(top);
        }
    }

    /// Finishes the file, renames it into place and writes the `.gtkw`; `cycles_run` is the
    /// length of the run. A window that held no cycle of the run is an error (the file is
    /// removed).
    pub fn finish(mut self, cycles_run: u64) -> Result<TraceSummary> {
        let Some(sink) = self.sink.take() else {
            return Err(RtlError::TraceClosed);
        };
        if self.cycles == 0 {
            self.out = None;
            self.saif = None;
            return Err(RtlError::WindowAfterRun {
                from: self.window.0,
                cycles: cycles_run,
            });
        }
        let Writer {
            wave,
            activity,
            snapshot,
            totals,
            power: _,
        } = sink;
        // Without a waveform the sampling did not report `clk`'s edges (see `sample`).
        let clock_by_count = wave.is_none() && totals.is_some();
        let wave_done = match wave {
            Some(Wave::Vcd(s)) => s.finish(self.end_time),
            Some(Wave::Fst(s)) => s.finish(self.end_time),
            None => Ok(()),
        };
        if let Err(e) = wave_done {
            return Err(self.fail(e));
        }
        let activity = match activity {
            Some(mut a) => {
                if let Some(totals) = totals {
                    a.set_totals(totals.finish());
                }
                if clock_by_count {
                    a.set_clock(self.cycles);
                }
                let last = snapshot.as_ref().map_or(&[][..], |s| &s.cur[..]);
                let saif = self.saif.as_ref().map(|(p, _)| p.clone());
                let report = a.report(&self.decls, self.end_time, last, saif);
                if let Some((path, mut out)) = self.saif.take() {
                    let io_err = |action, source| RtlError::TraceIo {
                        path: path.clone(),
                        action,
                        source,
                    };
                    let mut file = out.take_file().map_err(|e| io_err("create", e))?;
                    saif::write_saif(&mut file, &report, &self.decls)
                        .map_err(|e| io_err("write SAIF", e))?;
                    drop(file);
                    out.commit().map_err(|e| io_err("rename into place", e))?;
                }
                Some(report)
            }
            None => None,
        };
        if let Some(out) = self.out.take() {
            out.commit().map_err(|e| RtlError::TraceIo {
                path: self.path.clone(),
                action: "rename into place",
                source: e,
            })?;
        }
        // As the run will leave it (a command-line run commits its outputs at its end).
        let written = super::file::written_metadata(&self.path);
        let bytes = written.as_ref().map(|m| m.len()).unwrap_or(0);
        let gtkw = if self.config.gtkw && written.is_ok_and(|m| m.is_file()) {
            let g = self.path.with_extension("gtkw");
            // Filter files first: a `.gtkw` that names them is only written once they exist.
            for d in self.wave_decls.iter().filter(|d| !d.labels.is_empty()) {
                let f = gtkw::filter_path(&g, d);
                gtkw::write_file(&f, gtkw::filter_text(d).as_bytes()).map_err(|e| {
                    RtlError::TraceIo {
                        path: f.clone(),
                        action: "write GTKWave translate filter file",
                        source: e,
                    }
                })?;
            }
            let start = self.window.0 * PERIOD;
            gtkw::write(&g, gtkw::View::Full, &self.path, &self.wave_decls, start).map_err(
                |e| RtlError::TraceIo {
                    path: g.clone(),
                    action: "write GTKWave save file",
                    source: e,
                },
            )?;
            // The overview, when any traced signal besides clk and rst is marked for it.
            if self.wave_decls.iter().skip(2).any(|d| d.overview) {
                let o = gtkw::overview_path(&g);
                gtkw::write(
                    &o,
                    gtkw::View::Overview,
                    &self.path,
                    &self.wave_decls,
                    start,
                )
                .map_err(|e| RtlError::TraceIo {
                    path: o.clone(),
                    action: "write GTKWave overview save file",
                    source: e,
                })?;
            }
            Some(g)
        } else {
            None
        };
        Ok(TraceSummary {
            path: self.path.clone(),
            gtkw,
            bytes,
            cycles: self.cycles,
            signals: self.decls.len(),
            activity,
        })
    }
}
