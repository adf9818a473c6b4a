//! Switching activity: for every bit of every traced signal, how often it toggled and how long
//! it spent at 1, written as SAIF 2.0 (the Switching Activity Interchange Format that power
//! tools read).
//!
//! [`Activity`] counts from the tracer's snapshot, the value of every design signal each traced
//! cycle, and so sees the change stream the VCD and FST writers get: its counts are those of
//! the VCD the same run writes, by construction, and a test recomputes them from the VCD with
//! its own reader. It works a 64-bit word at a time, as a counter in hardware would:
//!
//! - A word whose value holds costs one comparison.
//! - A word that changed adds its toggled bits (`old ^ new`) into a *bit-sliced* counter:
//!   sixteen words per snapshot word, plane `p` holding bit `p` of each of its 64 bits'
//!   counts, added with the ripple of a row of half adders (`sum = plane ^ carry`,
//!   `carry = plane & carry`) that stops when no carry is left, so most additions touch
//!   one or two planes (`TC`).
//! - The time at 1 (`T1`) is counted the same way, lazily: when a word changes, its old
//!   value has held since its last change, `d` cycles, and is added `d` times (one ripple per
//!   set bit of `d`, one for the usual `d = 1`).
//! - Every 65,535 cycles (before a 16-bit count could wrap) and at the end, the planes are
//!   emptied into per-bit totals.
//!
//! `clk` and `rst` are counted bit by bit from the tracer's calls, as a sink's changes.
//!
//! Conventions (as a VCD-to-SAIF converter applies them to our waves): the duration runs from
//! the first traced cycle's start to the end of the last one; each signal's first value is its
//! initial state, not a toggle; no signal is ever X or Z, so `TX` is 0 and `T0 + T1` is the
//! duration for every bit; `clk` rises at each cycle's start and falls at its middle.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;

use super::sink::{Decl, Place, Sink, SinkError, PERIOD};
use crate::rtl::table::SignalKind;

/// Planes of the low bit-sliced counters: counts up to 15, merged every [`MERGE_EVERY`] cycles.
const LOW: usize = 4;
const MERGE_EVERY: u32 = (1 << LOW) - 1;
/// Planes of the high bit-sliced counters: counts up to 2^16 - 1 between two drains, and
/// cycles between drains (no bit toggles, or is at 1, more often than once a cycle).
const PLANES: usize = 16;
const DRAIN_EVERY: u64 = (1 << PLANES) - 1 - MERGE_EVERY as u64;

/// Toggle counts and time at 1 of every bit of the traced signals: `clk` and `rst` from the
/// changes the tracer reports, the design signals from its snapshot.
pub(in crate::rtl) struct Activity {
    /// Per slot: its declaration, or `u32::MAX` for a signal the trace does not select.
    slot_decl: Vec<u32>,
    /// Per declaration: its first bit in `toggles`/`high`, its first word in `last`, its width.
    bit_base: Vec<u32>,
    word_base: Vec<u32>,
    width: Vec<u32>,
    /// Per declaration: whether its initial value has been seen.
    seen: Vec<bool>,
    /// Per declaration, `words(width)` words: its current value.
    last: Vec<u64>,
    /// Per bit (declarations in order, bit 0 first): toggles, and the running sum of its time
    /// at 1 (the end time still to be added for a bit at 1 now; wrapping).
    toggles: Vec<u64>,
    high: Vec<u64>,
    /// The current time, and the first one seen.
    now: u64,
    start: Option<u64>,
    /// The design signals' counters.
    snap: SnapCounts,
}

/// The counters of the design signals, a snapshot word at a time (see the module's text).
struct SnapCounts {
    /// Per declaration: the design signal it is (its place in the snapshot), if any.
    places: Vec<Option<Place>>,
    /// Per snapshot word: the cycle its value was last changed (or counted up to).
    since: Vec<u64>,
    /// Per snapshot word: the low toggle counter's planes, then the low at-1 counter's.
    low: Vec<[u64; 2 * LOW]>,
    /// Per snapshot word: the high toggle and at-1 counters.
    toggle_planes: Vec<[u64; PLANES]>,
    high_planes: Vec<[u64; PLANES]>,
    /// Per snapshot word, per bit: the drained totals (toggles; cycles at 1).
    toggles: Vec<[u64; 64]>,
    high_cycles: Vec<[u64; 64]>,
    /// Whether every bit is counted; else only `word_toggles`.
    per_bit: bool,
    /// Per snapshot word: its toggles, all bits together (counted when not `per_bit`).
    word_toggles: Vec<u64>,
    /// The first cycle counted; cycles since the last merge; the last drain.
    first: Option<u64>,
    unmerged: u32,
    drained: u64,
}

/// Adds `carry` (one bit per position) into the bit-sliced counter from plane `from` up,
/// stopping when no carry is left.
#[inline(always)]
fn ripple(planes: &mut [u64; PLANES], from: usize, mut carry: u64) {
    for plane in &mut planes[from..] {
        let held = *plane;
        *plane = held ^ carry;
        carry &= held;
        if carry == 0 {
            return;
        }
    }
    debug_assert!(false, "a bit-sliced counter overflowed before its drain");
}

/// Adds `value` (one bit per position) `times` times into the bit-sliced counter.
fn ripple_times(planes: &mut [u64; PLANES], value: u64, mut times: u64) {
    let mut plane = 0;
    while times != 0 {
        if times & 1 == 1 {
            ripple(planes, plane, value);
        }
        times >>= 1;
        plane += 1;
    }
}

/// Adds `carry` into a low counter: four half adders, no branch (it never overflows between
/// merges).
#[inline(always)]
fn add_low(planes: &mut [u64], mut carry: u64) {
    for plane in planes {
        let held = *plane;
        *plane = held ^ carry;
        carry &= held;
    }
}

/// Adds the low counter `low` (a 4-bit number per position) into the high counter `high` and
/// clears it: four full adders (`sum = a ^ b ^ carry`, `carry = majority`), then the carry's
/// ripple.
#[inline(always)]
fn add_number(high: &mut [u64; PLANES], low: &mut [u64]) {
    let mut carry = 0;
    for (h, l) in high.iter_mut().zip(low.iter_mut()) {
        let (a, b) = (*h, std::mem::take(l));
        *h = a ^ b ^ carry;
        carry = (a & b) | (carry & (a ^ b));
    }
    if carry != 0 {
        ripple(high, LOW, carry);
    }
}

/// Empties a bit-sliced counter into per-bit totals.
fn drain(planes: &mut [u64; PLANES], totals: &mut [u64; 64]) {
    for (p, plane) in planes.iter_mut().enumerate() {
        let mut ones = std::mem::take(plane);
        while ones != 0 {
            totals[ones.trailing_zeros() as usize] += 1 << p;
            ones &= ones - 1;
        }
    }
}

impl SnapCounts {
    fn new(words: usize, places: Vec<Option<Place>>, per_bit: bool) -> Self {
        // The per-bit counters only when they are used.
        let bit_words = if per_bit { words } else { 0 };
        Self {
            places,
            since: vec![0; bit_words],
            low: vec![[0; 2 * LOW]; bit_words],
            toggle_planes: vec![[0; PLANES]; bit_words],
            high_planes: vec![[0; PLANES]; bit_words],
            toggles: vec![[0; 64]; bit_words],
            high_cycles: vec![[0; 64]; bit_words],
            per_bit,
            word_toggles: vec![0; words],
            first: None,
            unmerged: 0,
            drained: 0,
        }
    }

    /// Counts cycle `cycle`, whose values are `cur`, the last cycle's being `prev`.
    #[inline(never)]
    fn cycle(&mut self, cycle: u64, cur: &[u64], prev: &[u64]) {
        if self.first.is_none() {
            // The initial values: a state, not a toggle.
            self.first = Some(cycle);
            self.drained = cycle;
            self.since.fill(cycle);
            return;
        }
        debug_assert!(self.per_bit, "the totals are counted by `count_totals`");
        let words = cur
            .iter()
            .zip(prev)
            .zip(&mut self.since)
            .zip(self.low.iter_mut().zip(&mut self.high_planes));
        for (((&new, &old), since), (low, high)) in words {
            let toggled = new ^ old;
            if toggled == 0 {
                continue;
            }
            let (low_toggles, low_high) = low.split_at_mut(LOW);
            add_low(low_toggles, toggled);
            // `old` held from `since` until now: one cycle when it changes every cycle.
            let held = cycle - *since;
            if held == 1 {
                add_low(low_high, old);
            } else if old != 0 {
                ripple_times(high, old, held);
            }
            *since = cycle;
        }
        self.unmerged += 1;
        if self.unmerged == MERGE_EVERY {
            self.merge();
            if cycle - self.drained >= DRAIN_EVERY {
                self.drain(cycle + 1, cur);
            }
        }
    }

    /// The totals mode's cycle `cycle`: clears the bits above each signal's width in `cur`
    /// (`mask`) as it adds each word's toggled bits against `prev` to its total, in one pass
    /// with no branch.
    fn count_totals(&mut self, cycle: u64, cur: &mut [u64], prev: &[u64], mask: &[u64]) {
        if self.first.is_none() {
            // The initial values: a state, not a toggle.
            self.first = Some(cycle);
            for (c, &m) in cur.iter_mut().zip(mask) {
                *c &= m;
            }
            return;
        }
        // Slices of one length, indexed together (no bounds test in the loop).
        let n = cur.len().min(prev.len()).min(mask.len());
        let (cur, prev, mask) = (&mut cur[..n], &prev[..n], &mask[..n]);
        let totals = &mut self.word_toggles[..n];
        for i in 0..n {
            let new = cur[i] & mask[i];
            cur[i] = new;
            totals[i] += u64::from((new ^ prev[i]).count_ones());
        }
    }

    /// Adds every low counter into its high one and clears it.
    #[inline(never)]
    fn merge(&mut self) {
        let words = self
            .low
            .iter_mut()
            .zip(self.toggle_planes.iter_mut().zip(&mut self.high_planes));
        for (low, (toggle, high)) in words {
            let (low_toggles, low_high) = low.split_at_mut(LOW);
            add_number(toggle, low_toggles);
            add_number(high, low_high);
        }
        self.unmerged = 0;
    }

    /// Settles every word's time at 1 up to `until` (its value `cur` since its last change)
    /// and empties the counters into the totals (with `per_bit`; nothing to do without).
    fn drain(&mut self, until: u64, cur: &[u64]) {
        if !self.per_bit {
            return;
        }
        self.merge();
        for (w, &value) in cur.iter().enumerate() {
            if value != 0 {
                ripple_times(&mut self.high_planes[w], value, until - self.since[w]);
            }
            self.since[w] = until;
            drain(&mut self.toggle_planes[w], &mut self.toggles[w]);
            drain(&mut self.high_planes[w], &mut self.high_cycles[w]);
        }
        self.drained = until;
    }
}

/// The counts of one traced signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalActivity {
    /// Its hierarchical name (`top.mesh.pe_0_0.acc_0`).
    pub path: String,
    /// Width in bits.
    pub width: u32,
    /// Whether it is a register (else a wire or an input).
    pub register: bool,
    /// Toggles of every bit together.
    pub total: u64,
    /// Per bit, bit 0 first: how many times it toggled (SAIF `TC`); empty when only the
    /// totals were counted ([`ActivityReport::per_bit`]).
    pub toggles: Vec<u64>,
    /// Per bit, bit 0 first: the time it spent at 1, in nanoseconds (SAIF `T1`); empty when
    /// only the totals were counted.
    pub high_ns: Vec<u64>,
}

impl SignalActivity {
    /// Toggles of every bit together.
    pub fn total_toggles(&self) -> u64 {
        self.total
    }
}

/// The switching activity of a traced run (see [`crate::rtl::TraceConfig::saif`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityReport {
    /// The SAIF file written (`None` when the activity was only counted).
    pub saif: Option<std::path::PathBuf>,
    /// The traced time in nanoseconds (SAIF `DURATION`).
    pub duration_ns: u64,
    /// Whether every bit's toggles and time at 1 were counted (a SAIF was asked for); else
    /// only each signal's toggle total ([`SignalActivity::total`]), which is cheaper.
    pub per_bit: bool,
    /// Every traced signal (`clk` and `rst` first), in the order of the waves.
    pub signals: Vec<SignalActivity>,
}

impl ActivityReport {
    /// Toggles of every traced bit together.
    pub fn total_toggles(&self) -> u64 {
        self.signals.iter().map(SignalActivity::total_toggles).sum()
    }

    /// Toggles summed per scope, for every scope that holds a traced signal at any depth, in
    /// the order the scopes first appear (`top`, `top.mesh`, `top.mesh.pe_0_0`, ...).
    pub fn by_scope(&self) -> Vec<(String, u64)> {
        let mut order: Vec<String> = Vec::new();
        let mut sums: HashMap<String, u64> = HashMap::new();
        for s in &self.signals {
            let n = s.total_toggles();
            let mut scope = s.path.as_str();
            let mut chain = Vec::new();
            while let Some(dot) = scope.rfind('.') {
                scope = &scope[..dot];
                chain.push(scope);
            }
            for sc in chain.into_iter().rev() {
                match sums.get_mut(sc) {
                    Some(v) => *v += n,
                    None => {
                        order.push(sc.to_string());
                        sums.insert(sc.to_string(), n);
                    }
                }
            }
        }
        order
            .into_iter()
            .map(|s| {
                let n = sums[&s];
                (s, n)
            })
            .collect()
    }
}

impl Activity {
    /// Counters for the declarations `decls`; `slots` gives each slot's declaration
    /// (`u32::MAX`: none), as for the waveform writers, and `places` each design signal's
    /// place in the snapshot. `per_bit`: count every bit's toggles and time at 1 (for a SAIF),
    /// else only each signal's toggle total.
    pub fn new(decls: &[Decl], slots: &[u32], places: &[Place], per_bit: bool) -> Self {
        let (mut bits, mut words) = (0u32, 0u32);
        let (mut bit_base, mut word_base, mut width) = (Vec::new(), Vec::new(), Vec::new());
        for d in decls {
            bit_base.push(bits);
            word_base.push(words);
            width.push(d.width);
            bits += d.width;
            words += d.width.div_ceil(64);
        }
        let mut decl_place = vec![None; decls.len()];
        for (i, place) in places.iter().enumerate() {
            if let Some(&d) = slots.get(i + 2) {
                if let Some(p) = decl_place.get_mut(d as usize) {
                    *p = Some(*place);
                }
            }
        }
        let snap_words = places.iter().map(|p| (p.off + p.words) as usize).max();
        Self {
            slot_decl: slots.to_vec(),
            bit_base,
            word_base,
            width,
            seen: vec![false; decls.len()],
            last: vec![0; words as usize],
            toggles: vec![0; bits as usize],
            high: vec![0; bits as usize],
            now: 0,
            start: None,
            snap: SnapCounts::new(snap_words.unwrap_or(0), decl_place, per_bit),
        }
    }

    /// Counts the design signals of cycle `cycle` from the tracer's snapshot: `cur` this
    /// cycle's values as sampled, `prev` the last cycle's (ignored on the first sample,
    /// `first`), `mask` the bits each word's signal keeps. Clears the bits above the widths
    /// in `cur` (in the same pass as the count when only totals are counted).
    pub fn cycle(&mut self, cycle: u64, cur: &mut [u64], prev: &[u64], mask: &[u64], first: bool) {
        debug_assert_eq!(first, self.snap.first.is_none());
        if self.snap.per_bit {
            for (c, &m) in cur.iter_mut().zip(mask) {
                *c &= m;
            }
            self.snap.cycle(cycle, cur, prev);
        } else {
            self.snap.count_totals(cycle, cur, prev, mask);
        }
    }

    /// Sets the toggle totals of the design signals, counted elsewhere (one per design signal,
    /// at the places this counter was built with): what a totals-only trace counts at the
    /// registers themselves.
    pub fn set_totals(&mut self, totals: Vec<u64>) {
        debug_assert!(!self.snap.per_bit);
        self.snap.word_toggles = totals;
    }

    /// Sets `clk`'s counts for `cycles` traced cycles (a totals-only trace does not report
    /// each of its edges): it rises at each cycle's start and falls at its middle, so it
    /// toggles `2 * cycles - 1` times (the first rise is its initial state) and is at 1 for
    /// half of each cycle.
    pub fn set_clock(&mut self, cycles: u64) {
        let bit = self.bit_base[0] as usize;
        self.toggles[bit] = (2 * cycles).saturating_sub(1);
        self.high[bit] = cycles * (PERIOD / 2);
        self.seen[0] = true;
        self.last[self.word_base[0] as usize] = 0;
    }

    /// The counts at `end_time` (the end of the last traced cycle), per declaration; `last`
    /// is the snapshot of the last traced cycle.
    pub fn report(
        &mut self,
        decls: &[Decl],
        end_time: u64,
        last: &[u64],
        saif: Option<std::path::PathBuf>,
    ) -> ActivityReport {
        let start = self.start.unwrap_or(end_time);
        if self.snap.first.is_some() {
            self.snap.drain(end_time / PERIOD, last);
        }
        let signals = decls
            .iter()
            .enumerate()
            .map(|(d, decl)| {
                let per_bit = self.snap.per_bit;
                let (total, toggles, high_ns) = match self.snap.places.get(d).copied().flatten() {
                    Some(place) if !per_bit => {
                        let words = place.off as usize..(place.off + place.words) as usize;
                        (
                            self.snap.word_toggles[words].iter().sum(),
                            Vec::new(),
                            Vec::new(),
                        )
                    }
                    Some(place) => {
                        let bits = (0..decl.width as usize).map(|i| {
                            let w = place.off as usize + i / 64;
                            (w, i % 64)
                        });
                        let toggles: Vec<u64> =
                            bits.clone().map(|(w, b)| self.snap.toggles[w][b]).collect();
                        let high = bits.map(|(w, b)| self.snap.high_cycles[w][b] * PERIOD);
                        (toggles.iter().sum(), toggles, high.collect())
                    }
                    None => {
                        let (toggles, high) = self.edge_counts(d, end_time);
                        (toggles.iter().sum(), toggles, high)
                    }
                };
                let mut path = decl.scope.join(".");
                path.push('.');
                path.push_str(&decl.name);
                SignalActivity {
                    path,
                    width: decl.width,
                    register: decl.kind == SignalKind::Reg,
                    total,
                    toggles,
                    high_ns,
                }
            })
            .collect();
        ActivityReport {
            saif,
            duration_ns: end_time - start,
            per_bit: self.snap.per_bit,
            signals,
        }
    }

    /// The toggles and time at 1 of declaration `d` counted from the tracer's calls (`clk`,
    /// `rst`), at `end_time`.
    fn edge_counts(&self, d: usize, end_time: u64) -> (Vec<u64>, Vec<u64>) {
        let (b, w) = (self.bit_base[d] as usize, self.width[d] as usize);
        let mut high = self.high[b..b + w].to_vec();
        if self.seen[d] {
            // A bit at 1 now closes its last interval at the end time.
            for (i, h) in high.iter_mut().enumerate() {
                let word = self.last[self.word_base[d] as usize + i / 64];
                if word >> (i % 64) & 1 == 1 {
                    *h = h.wrapping_add(end_time);
                }
            }
        }
        (self.toggles[b..b + w].to_vec(), high)
    }
}

impl Sink for Activity {
    fn time(&mut self, t: u64) -> Result<(), SinkError> {
        self.now = t;
        self.start.get_or_insert(t);
        Ok(())
    }
    fn begin_dump(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
    fn end_dump(&mut self) -> Result<(), SinkError> {
        Ok(())
    }
    fn change(&mut self, slot: usize, _width: u32, words: &[u64]) -> Result<(), SinkError> {
        let d = match self.slot_decl.get(slot) {
            Some(&d) if d != u32::MAX => d as usize,
            _ => return Ok(()),
        };
        let wb = self.word_base[d] as usize;
        let n = self.width[d].div_ceil(64) as usize;
        let last = &mut self.last[wb..wb + n];
        let bits = self.bit_base[d] as usize;
        let now = self.now;
        if !self.seen[d] {
            // The initial value: a state, not a toggle; a bit at 1 opens an interval.
            self.seen[d] = true;
            for (i, (old, &new)) in last.iter_mut().zip(words).enumerate() {
                let mut ones = new;
                while ones != 0 {
                    let h = &mut self.high[bits + 64 * i + ones.trailing_zeros() as usize];
                    *h = h.wrapping_sub(now);
                    ones &= ones - 1;
                }
                *old = new;
            }
            return Ok(());
        }
        for (i, (old, &new)) in last.iter_mut().zip(words).enumerate() {
            let base = bits + 64 * i;
            let mut toggled = *old ^ new;
            while toggled != 0 {
                let b = toggled.trailing_zeros() as usize;
                self.toggles[base + b] += 1;
                // Rising: the interval at 1 opens now; falling: it closes now.
                let h = &mut self.high[base + b];
                *h = if (new >> b) & 1 == 1 {
                    h.wrapping_sub(now)
                } else {
                    h.wrapping_add(now)
                };
                toggled &= toggled - 1;
            }
            *old = new;
        }
        Ok(())
    }
    fn finish(self: Box<Self>, _end_time: u64) -> Result<(), SinkError> {
        Ok(())
    }
}

/// A SAIF identifier: letters, digits and `_` as they are, any other character escaped.
fn saif_name(name: &str) -> String {
    let mut out = String::with_capacity(name.len());
    for c in name.chars() {
        if !(c.is_ascii_alphanumeric() || c == '_') {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// One instance of the SAIF hierarchy: its nets (signals, as indices into the report) and its
/// child instances, in the order they first appear in the waves.
#[derive(Default)]
struct Instance {
    name: String,
    nets: Vec<usize>,
    children: Vec<Instance>,
}

impl Instance {
    fn child(&mut self, name: &str) -> &mut Instance {
        let i = match self.children.iter().position(|c| c.name == name) {
            Some(i) => i,
            None => {
                self.children.push(Instance {
                    name: name.to_string(),
                    ..Instance::default()
                });
                self.children.len() - 1
            }
        };
        &mut self.children[i]
    }

    fn write(&self, r: &ActivityReport, decls: &[Decl], depth: usize, out: &mut String) {
        let pad = "  ".repeat(depth);
        let _ = writeln!(out, "{pad}(INSTANCE {}", saif_name(&self.name));
        if !self.nets.is_empty() {
            let _ = writeln!(out, "{pad}  (NET");
            for &i in &self.nets {
                let s = &r.signals[i];
                let name = saif_name(&decls[i].name);
                for bit in (0..s.width as usize).rev() {
                    let t1 = s.high_ns[bit];
                    let t0 = r.duration_ns - t1;
                    let tc = s.toggles[bit];
                    let net = if s.width == 1 {
                        name.clone()
                    } else {
                        format!("{name}\\[{bit}\\]")
                    };
                    let _ = writeln!(
                        out,
                        "{pad}    ({net} (T0 {t0}) (T1 {t1}) (TX 0) (TC {tc}) (IG 0))"
                    );
                }
            }
            let _ = writeln!(out, "{pad}  )");
        }
        for c in &self.children {
            c.write(r, decls, depth + 1, out);
        }
        let _ = writeln!(out, "{pad})");
    }
}

/// The SAIF 2.0 text of `report` (whose signals are `decls`, in order): a header (version,
/// direction, the program, the hierarchy divider, a 1 ns timescale and the duration), then the
/// instance tree of the waves with `T0`, `T1`, `TX`, `TC` and `IG` for every bit of every net
/// (a bus bit is `name\[i\]`, the most significant first). No date: the same run writes the
/// same bytes.
pub(in crate::rtl) fn saif_text(report: &ActivityReport, decls: &[Decl]) -> String {
    let mut root = Instance::default();
    for (i, d) in decls.iter().enumerate() {
        let mut node = &mut root;
        for s in d.scope.iter() {
            node = node.child(s);
        }
        node.nets.push(i);
    }
    let mut out = String::new();
    out.push_str("(SAIFILE\n(SAIFVERSION \"2.0\")\n(DIRECTION \"backward\")\n(DESIGN )\n");
    let _ = writeln!(
        out,
        "(PROGRAM_NAME \"tensorcore-rtl\")\n(VERSION \"{}\")\n(DIVIDER / )\n(TIMESCALE 1 ns)\n(DURATION {})",
        env!("CARGO_PKG_VERSION"),
        report.duration_ns
    );
    for top in &root.children {
        top.write(report, decls, 0, &mut out);
    }
    out.push_str(")\n");
    out
}

/// Writes the SAIF text to `w`.
pub(in crate::rtl) fn write_saif(
    w: &mut impl Write,
    report: &ActivityReport,
    decls: &[Decl],
) -> std::io::Result<()> {
    w.write_all(saif_text(report, decls).as_bytes())?;
    w.flush()
}
