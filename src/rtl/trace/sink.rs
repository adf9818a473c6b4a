//! What the tracer and its writers share: the time step, a declared variable and the walk of
//! the scope tree, the writer interface and its error, and where a signal's value lies in the
//! snapshot. The tracer (`trace/mod.rs`) builds on these and drives the writers (`vcd`, `fst`,
//! `saif`, `power`, `gtkw`), which build on these alone.

use std::sync::Arc;

use crate::rtl::module::SignalKind;
use crate::rtl::signal::{Display, Labels};

/// Simulated time units per clock cycle (the timescale is 1 ns: a nominal 100 MHz clock).
pub const PERIOD: u64 = 10;

/// One declared trace variable, in declaration order (`clk`, `rst`, then the selected signals).
#[derive(Clone)]
pub(in crate::rtl) struct Decl {
    pub scope: Arc<[String]>,
    pub name: String,
    pub width: u32,
    pub kind: SignalKind,
    pub labels: Labels,
    pub display: Display,
    pub overview: bool,
    /// A real-valued signal (the power trace), not a bit vector.
    pub real: bool,
}

/// A step in declaring the scope tree.
pub(in crate::rtl) enum ScopeEvent<'a> {
    Enter(&'a str),
    Leave,
    Var(usize, &'a Decl),
}

/// Walks declarations in order, entering and leaving scopes as the scope path changes.
pub(in crate::rtl) fn walk_scopes<'a>(
    decls: &'a [Decl],
    mut f: impl FnMut(ScopeEvent<'a>) -> std::result::Result<(), SinkError>,
) -> std::result::Result<(), SinkError> {
    let mut cur: Vec<&str> = Vec::new();
    for (i, d) in decls.iter().enumerate() {
        let common = cur
            .iter()
            .zip(d.scope.iter())
            .take_while(|(a, b)| **a == b.as_str())
            .count();
        while cur.len() > common {
            cur.pop();
            f(ScopeEvent::Leave)?;
        }
        for s in &d.scope[common..] {
            cur.push(s);
            f(ScopeEvent::Enter(s))?;
        }
        f(ScopeEvent::Var(i, d))?;
    }
    for _ in 0..cur.len() {
        f(ScopeEvent::Leave)?;
    }
    Ok(())
}

/// A sink failure, before the tracer adds the path.
#[derive(Debug)]
pub(in crate::rtl) enum SinkError {
    Io(&'static str, std::io::Error),
    Fst(String),
}

/// A waveform writer. Its calls name a signal by *slot*: 0 is `clk`, 1 is `rst`, `2 + i` is
/// design signal `i` in visit order. At construction each slot is given its declaration, or
/// none for a signal the trace does not select: the writer ignores a change of such a slot, so
/// the sampling pass needs no per-signal selection test (it compares every signal).
pub(in crate::rtl) trait Sink {
    /// Starts time `t` (strictly increasing).
    fn time(&mut self, t: u64) -> std::result::Result<(), SinkError>;
    /// Opens the initial-value block (VCD `$dumpvars`).
    fn begin_dump(&mut self) -> std::result::Result<(), SinkError>;
    /// Closes the initial-value block.
    fn end_dump(&mut self) -> std::result::Result<(), SinkError>;
    /// Records a value of `width` bits (little-endian words) of slot `slot`.
    fn change(
        &mut self,
        slot: usize,
        width: u32,
        words: &[u64],
    ) -> std::result::Result<(), SinkError>;
    /// Writes the final time and flushes everything to disk.
    fn finish(self: Box<Self>, end_time: u64) -> std::result::Result<(), SinkError>;
}

/// Where one design signal's value lies in the snapshot.
#[derive(Clone, Copy)]
pub(in crate::rtl) struct Place {
    /// Its first word.
    pub off: u32,
    /// Its words ([`crate::rtl::Bundle::WORDS`]).
    pub words: u32,
}
