//! Switching activity: for every bit of every traced signal, how often it toggled and how long
//! it spent at 1, written as SAIF 2.0 (the Switching Activity Interchange Format that power
//! tools read).
//!
//! [`Activity`] is a sink like the waveform writers: the sampling pass hands it the same change
//! stream (each traced signal's value whenever it differs from the last one written), so its
//! counts are those of the VCD the same run writes, by construction, and a test recomputes
//! them from the VCD with its own reader. Per change it XORs the old and new values: each set
//! bit is a toggle (`TC`). The time at 1 (`T1`) is kept as a running sum over the same toggles:
//! a bit that rises at time `t` subtracts `t`, one that falls adds `t`, and at the end a bit
//! still at 1 adds the end time (a bit at 1 initially subtracts the start), so the sum is the
//! total of its intervals at 1 (wrapping arithmetic, exact since the total fits). The work is
//! per toggled bit, none for a signal that holds its value.
//!
//! Conventions (as a VCD-to-SAIF converter applies them to our waves): the duration runs from
//! the first traced cycle's start to the end of the last one; each signal's first value is its
//! initial state, not a toggle; no signal is ever X or Z, so `TX` is 0 and `T0 + T1` is the
//! duration for every bit; `clk` rises at each cycle's start and falls at its middle.

use std::collections::HashMap;
use std::fmt::Write as _;
use std::io::Write;

use super::{Decl, Sink, SinkError};

/// Toggle counts and time at 1 of every bit of the traced signals, counted from the changes the
/// sampling pass reports.
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
}

/// The counts of one traced signal.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SignalActivity {
    /// Its hierarchical name (`top.mesh.pe_0_0.acc_0`).
    pub path: String,
    /// Width in bits.
    pub width: u32,
    /// Per bit, bit 0 first: how many times it toggled (SAIF `TC`).
    pub toggles: Vec<u64>,
    /// Per bit, bit 0 first: the time it spent at 1, in nanoseconds (SAIF `T1`).
    pub high_ns: Vec<u64>,
}

impl SignalActivity {
    /// Toggles of every bit together.
    pub fn total_toggles(&self) -> u64 {
        self.toggles.iter().sum()
    }
}

/// The switching activity of a traced run (see [`crate::rtl::TraceConfig::saif`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ActivityReport {
    /// The SAIF file written.
    pub saif: std::path::PathBuf,
    /// The traced time in nanoseconds (SAIF `DURATION`).
    pub duration_ns: u64,
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
    /// (`u32::MAX`: none), as for the waveform writers.
    pub fn new(decls: &[Decl], slots: &[u32]) -> Self {
        let (mut bits, mut words) = (0u32, 0u32);
        let (mut bit_base, mut word_base, mut width) = (Vec::new(), Vec::new(), Vec::new());
        for d in decls {
            bit_base.push(bits);
            word_base.push(words);
            width.push(d.width);
            bits += d.width;
            words += d.width.div_ceil(64);
        }
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
        }
    }

    /// The counts at `end_time` (the end of the last traced cycle), per declaration.
    pub fn report(
        &self,
        decls: &[Decl],
        end_time: u64,
        saif: std::path::PathBuf,
    ) -> ActivityReport {
        let start = self.start.unwrap_or(end_time);
        let signals = decls
            .iter()
            .enumerate()
            .map(|(d, decl)| {
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
                let mut path = decl.scope.join(".");
                path.push('.');
                path.push_str(&decl.name);
                SignalActivity {
                    path,
                    width: decl.width,
                    toggles: self.toggles[b..b + w].to_vec(),
                    high_ns: high,
                }
            })
            .collect();
        ActivityReport {
            saif,
            duration_ns: end_time - start,
            signals,
        }
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
        for s in &d.scope {
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
