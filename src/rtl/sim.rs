//! The simulation kernel: combinational phase, tracing, clock edge, watchdog.

use super::error::{Result, RtlError};
use super::module::{Clock, ClockChecked, Cold, Design};
use super::observe::Observe;
use std::collections::HashMap;

use super::table::{Collect, CombHash, Grab, GrabOne, SignalInfo, SignalValue};
use super::trace::{TraceConfig, TraceSummary, Tracer};
use super::watchdog::Watchdog;

/// Runs a [`Design`] cycle by cycle.
///
/// One [`Simulator::step`] is one clock cycle:
/// 1. the combinational phase: [`Design::comb`] computes every register's `d` and every wire
///    from register outputs (`q`) and inputs, which are all stable during the phase;
/// 2. if tracing is on and the cycle is in the window, the trace pass records every selected
///    signal that changed (time `10 * cycle` ns, `clk` rising);
/// 3. the rising edge: every register takes `d` (or its reset value while `rst` is high) at once;
/// 4. the watchdog checks for progress.
///
/// # Observed wires
/// When the simulator is built it decides which wires anything reads
/// ([`crate::rtl::Wire::set_with`] skips the rest): with [`Simulator::new`] none, with
/// [`Simulator::with_trace`] the ones the trace selects. [`Simulator::settle`],
/// [`Simulator::peek`], [`Simulator::values`] and [`Simulator::set_check_comb`] turn every
/// wire on for the rest of the run; `peek` and `values`, when they turn wires on, first run the
/// combinational phase so that every wire shows this cycle's value (as after `settle`).
pub struct Simulator<D: Design> {
    top: D,
    cycle: u64,
    rst: bool,
    tracer: Option<Tracer>,
    trace_failed: bool,
    watchdog: Option<Watchdog>,
    check_comb: bool,
    all_observed: bool,
    /// Each signal's index in the signal table by dotted name, built at the first
    /// [`Simulator::peek`] (a design's signals are fixed once it is elaborated).
    paths: Option<HashMap<String, usize>>,
}

impl<D: Design> Simulator<D> {
    /// A simulator without tracing. Registers start at their reset values.
    ///
    /// Fails if two signals or scopes share a hierarchical name.
    pub fn new(mut top: D) -> Result<Self> {
        let (table, _) = Collect::run(&mut top)?;
        Observe::selected(&mut top, &vec![false; table.len()]);
        Ok(Self::elaborated(top))
    }

    /// The simulator of `top`, whose signal table was built and wires observed.
    fn elaborated(top: D) -> Self {
        Self {
            top,
            cycle: 0,
            rst: false,
            tracer: None,
            trace_failed: false,
            watchdog: None,
            check_comb: false,
            all_observed: false,
            paths: None,
        }
    }

    /// A simulator that traces to the waveform `config` describes (opened and its header
    /// written now).
    pub fn with_trace(mut top: D, config: &TraceConfig) -> Result<Self> {
        let (table, words) = Collect::run(&mut top)?;
        let tracer = Tracer::open(config, top.name(), &table, &words)?;
        Observe::selected(&mut top, &tracer.selected());
        Ok(Self {
            tracer: Some(tracer),
            ..Self::elaborated(top)
        })
    }

    /// Arms the watchdog: the run fails with [`RtlError::Watchdog`] after `limit` cycles without
    /// progress.
    pub fn set_watchdog(&mut self, limit: u64) {
        self.watchdog = Some(Watchdog::new(limit));
    }

    /// When on, every step runs the combinational phase twice and fails if the second pass
    /// computes different `d`s or wires (i.e. `comb` mutates state it should not). For tests.
    /// Turns every wire on (the check compares wires too).
    pub fn set_check_comb(&mut self, on: bool) {
        self.check_comb = on;
        if on {
            self.observe_all();
        }
    }

    /// Turns every wire on for the rest of the run; returns whether some were off.
    fn observe_all(&mut self) -> bool {
        let was = self.all_observed;
        if !was {
            Observe::all(&mut self.top);
            self.all_observed = true;
            if let Some(t) = self.tracer.as_mut() {
                t.observing_all();
            }
        }
        !was
    }

    /// The design.
    pub fn top(&self) -> &D {
        &self.top
    }

    /// The design, mutably: drive [`crate::rtl::Input`]s between steps.
    pub fn top_mut(&mut self) -> &mut D {
        &mut self.top
    }

    /// The current cycle (the number of clock edges so far).
    pub fn cycle(&self) -> u64 {
        self.cycle
    }

    /// Drives the synchronous reset for the following steps.
    pub fn set_reset(&mut self, rst: bool) {
        self.rst = rst;
    }

    /// Holds reset for `cycles` cycles, then releases it.
    pub fn reset(&mut self, cycles: u64) -> Result<()> {
        self.rst = true;
        let r = self.run(cycles);
        self.rst = false;
        r
    }

    /// Runs the combinational phase without clocking, so that wires show this cycle's values
    /// (e.g. before [`Simulator::values`]). Harmless: `step` recomputes the same values. Turns
    /// every wire on for the rest of the run.
    pub fn settle(&mut self) {
        self.observe_all();
        self.top.comb();
    }

    /// One clock cycle. Kept out of line: it is the unit a profile of the simulated core
    /// counts (`scripts/core_cycles.sh` counts the instructions inside it).
    #[inline(never)]
    pub fn step(&mut self) -> Result<()> {
        self.top.comb();
        if self.check_comb {
            self.check_comb_repeatable()?;
        }
        if let Some(t) = self.tracer.as_mut() {
            if t.active(self.cycle) {
                if let Err(e) = t.sample(self.cycle, self.rst, &mut self.top) {
                    self.tracer = None;
                    self.trace_failed = true;
                    return Err(e);
                }
            }
        } else if self.trace_failed {
            return Err(RtlError::TraceClosed);
        }
        // Whether any register changed matters only to a watchdog without a progress counter.
        let track = self.watchdog.is_some() && self.top.progress().is_none();
        let changed = self.clock_edge(track);
        self.cycle += 1;
        if let Some(w) = self.watchdog.as_mut() {
            if let Some(stalled) = w.tick(self.rst, self.top.progress(), changed) {
                return Err(RtlError::Watchdog {
                    cycle: self.cycle,
                    stalled_for: stalled,
                    state: self.top.state(),
                });
            }
        }
        Ok(())
    }

    /// The rising edge: every register takes `d` (or its reset value), every memory commits.
    /// Kept out of line, so a profile shows the engine's share. The common edge (no reset, no
    /// change tracking) is its own pass, a straight run of copies; reset and change tracking
    /// share a second one with run-time flags.
    #[inline(never)]
    fn clock_edge(&mut self, track: bool) -> bool {
        if !self.rst && !track {
            self.top.visit(&mut Clock);
            return false;
        }
        let mut clk = ClockChecked {
            rst: self.rst,
            track,
            changed: false,
        };
        self.top.visit(&mut clk);
        clk.changed
    }

    fn check_comb_repeatable(&mut self) -> Result<()> {
        let mut a = CombHash::new();
        Cold::run(&mut self.top, &mut a);
        self.top.comb();
        let mut b = CombHash::new();
        Cold::run(&mut self.top, &mut b);
        if a.hash != b.hash {
            return Err(RtlError::CombNotRepeatable { cycle: self.cycle });
        }
        Ok(())
    }

    /// `n` clock cycles.
    pub fn run(&mut self, n: u64) -> Result<()> {
        for _ in 0..n {
            self.step()?;
        }
        Ok(())
    }

    /// Steps until `done(design)` holds (checked before each step); returns the cycles run.
    /// Fails with [`RtlError::Timeout`] after `max_cycles`.
    pub fn run_until(&mut self, mut done: impl FnMut(&D) -> bool, max_cycles: u64) -> Result<u64> {
        let start = self.cycle;
        while !done(&self.top) {
            if self.cycle - start >= max_cycles {
                return Err(RtlError::Timeout {
                    max_cycles,
                    cycle: self.cycle,
                });
            }
            self.step()?;
        }
        Ok(self.cycle - start)
    }

    /// The signal table: every register, wire and input with its hierarchical name and width.
    pub fn signals(&mut self) -> Result<Vec<SignalInfo>> {
        Collect::run(&mut self.top).map(|(t, _)| t)
    }

    /// The current value of every signal, in [`Simulator::signals`] order (registers: `q`;
    /// wires: as last set, see [`Simulator::settle`]). The first call of a run in which some
    /// wires were off turns them on and settles first, so every wire shows this cycle's value.
    pub fn values(&mut self) -> Vec<SignalValue> {
        if self.observe_all() {
            self.top.comb();
        }
        let mut g = Grab { values: Vec::new() };
        Cold::run(&mut self.top, &mut g);
        g.values
    }

    /// The current value of the signal with dotted name `path` (e.g. `demo.fifo.count`); for a
    /// wire see [`Simulator::values`]. The name table is built at the first call; each call
    /// then reads the one signal.
    pub fn peek(&mut self, path: &str) -> Result<SignalValue> {
        if self.paths.is_none() {
            let table = self.signals()?;
            self.paths = Some(
                table
                    .iter()
                    .enumerate()
                    .map(|(i, s)| (s.path(), i))
                    .collect(),
            );
        }
        let target = self
            .paths
            .as_ref()
            .and_then(|p| p.get(path).copied())
            .ok_or_else(|| RtlError::NoSuchSignal(path.to_string()))?;
        if self.observe_all() {
            self.top.comb();
        }
        let mut g = GrabOne::new(target);
        Cold::run(&mut self.top, &mut g);
        g.value
            .ok_or_else(|| RtlError::NoSuchSignal(path.to_string()))
    }

    /// Ends the run: completes the waveform (if tracing) and returns the design and what was
    /// written. On a write error the incomplete file is removed.
    pub fn finish(mut self) -> Result<(D, Option<TraceSummary>)> {
        let summary = match self.tracer.take() {
            Some(mut t) => {
                t.drain(&mut self.top);
                Some(t.finish(self.cycle)?)
            }
            None if self.trace_failed => return Err(RtlError::TraceClosed),
            None => None,
        };
        Ok((self.top, summary))
    }
}
