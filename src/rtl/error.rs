//! The error type of the cycle engine.

use std::path::PathBuf;

/// Everything that can go wrong while elaborating, simulating or tracing a design.
#[derive(Debug, thiserror::Error)]
pub enum RtlError {
    /// A register, wire or input was declared with a width its storage type cannot hold.
    #[error("signal `{name}`: width {width} is outside 1..={capacity} for its storage type")]
    BadWidth {
        /// The signal's local name.
        name: String,
        /// The width asked for.
        width: u32,
        /// The most bits the storage type holds.
        capacity: u32,
    },
    /// A register's reset value does not fit its declared width.
    #[error("register `{name}`: reset value does not fit in {width} bits")]
    ResetTooWide {
        /// The register's local name.
        name: String,
        /// Its declared width.
        width: u32,
    },
    /// The watchdog saw no progress for `stalled_for` cycles.
    #[error(
        "watchdog: no progress for {stalled_for} cycles, stopped at cycle {cycle}; design state: {state}"
    )]
    Watchdog {
        /// The cycle at which the simulation was stopped.
        cycle: u64,
        /// How many cycles passed without progress.
        stalled_for: u64,
        /// The design's own description of where it is stuck ([`crate::rtl::Design::state`]).
        state: String,
    },
    /// `run_until` reached its cycle limit before the condition held.
    #[error("condition not reached within {max_cycles} cycles (stopped at cycle {cycle})")]
    Timeout {
        /// The limit given.
        max_cycles: u64,
        /// The cycle at which it stopped.
        cycle: u64,
    },
    /// `Design::comb` computed different values when run twice in one cycle (it mutates state
    /// other than registers' `d` and wires).
    #[error(
        "cycle {cycle}: the combinational phase is not repeatable (comb mutates hidden state)"
    )]
    CombNotRepeatable {
        /// The cycle.
        cycle: u64,
    },
    /// A block was asked to elaborate in a form its configuration does not allow (a datapath
    /// type that does not match the arithmetic it was built for).
    #[error("cannot elaborate: {0}")]
    Elaboration(String),
    /// No signal has this hierarchical name.
    #[error("no signal named `{0}`")]
    NoSuchSignal(String),
    /// Two signals in one scope share a name (the waveform would be ambiguous).
    #[error("duplicate signal or scope name `{0}`")]
    DuplicateName(String),
    /// A trace window whose end is not after its start.
    #[error("empty trace window: from cycle {from} to cycle {to}")]
    BadWindow {
        /// First traced cycle.
        from: u64,
        /// First cycle no longer traced.
        to: u64,
    },
    /// Writing a waveform failed (unwritable path, full disk, closed pipe...). The incomplete
    /// file has been removed.
    #[error("trace `{path}`: {action} failed: {source}")]
    TraceIo {
        /// The waveform file.
        path: PathBuf,
        /// What was being done.
        action: &'static str,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The FST writer reported an error. The incomplete file has been removed.
    #[error("trace `{path}`: FST writer failed: {message}")]
    Fst {
        /// The waveform file.
        path: PathBuf,
        /// The writer's message.
        message: String,
    },
    /// The trace globs select no signal of the design (the waveform would hold only the clock).
    #[error("trace globs {globs:?} match no signal of the design")]
    NoSignalMatches {
        /// The globs given.
        globs: Vec<String>,
    },
    /// The run ended before the trace window began: the waveform would hold no cycle. The
    /// incomplete file has been removed.
    #[error("trace window from cycle {from} holds no cycle of the run ({cycles} cycles)")]
    WindowAfterRun {
        /// First cycle of the window.
        from: u64,
        /// Cycles the run simulated.
        cycles: u64,
    },
    /// A VCD trace was estimated to exceed its size limit ([`crate::rtl::TraceConfig::budget`]).
    #[error(
        "the VCD would be about {} MB (limit {} MB): use --fst, narrow it with --trace-glob or --trace-window, or raise --vcd-limit",
        estimate / 1_000_000,
        limit / 1_000_000
    )]
    TraceTooLarge {
        /// Estimated bytes.
        estimate: u64,
        /// The limit in bytes.
        limit: u64,
    },
    /// The trace was already closed after an earlier error.
    #[error("trace closed after an earlier error")]
    TraceClosed,
}

/// Shorthand for results of the cycle engine.
pub type Result<T> = std::result::Result<T, RtlError>;
