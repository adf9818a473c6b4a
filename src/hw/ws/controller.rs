//! The weight-stationary controller: an explicit FSM (`state`: Idle, Run, Done) with the
//! counters of the two streams it drives, in the rules of [`super::schedule`]:
//! - the weight load (`load_pass`, `load_row`): pass `p`'s weights go down the columns in
//!   `R` cycles, bottom row first, into weight set `p mod 2`; a load starts only when that
//!   set is free (`free_at_<set>`, the cycle the last row of pass `p - 2` has passed the
//!   bottom row's multipliers; noted when that row is fed);
//! - the A feed (`feed_pass`, `feed_row`): one row of A a cycle, pass by pass, each pass once
//!   its load has finished.
//!
//! Every output is decoded from registers only. `Done` follows the run's last row of D in
//! the output register.

use super::schedule::WsSchedule;
use crate::rtl::{Module, Reg, Result, Visitor, Wire};

/// The FSM states of the weight-stationary controller.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum WsState {
    /// Waiting for `start`.
    Idle = 0,
    /// Loading weights and feeding rows.
    Run = 1,
    /// The last row of D has left.
    Done = 2,
}

const STATE_LABELS: crate::rtl::Labels = &[
    (WsState::Idle as u64, "Idle"),
    (WsState::Run as u64, "Run"),
    (WsState::Done as u64, "Done"),
];

/// The controller of a weight-stationary core.
pub struct WsController {
    sched: WsSchedule,
    passes: u32,
    state: Reg<u8>,
    timer: Reg<u32>,
    load_pass: Reg<u32>,
    load_row: Reg<u8>,
    feed_pass: Reg<u32>,
    feed_row: Reg<u32>,
    free_at: [Reg<u32>; 2],
    feed_cycles: Reg<u64>,
    load: Wire<bool>,
    feed: Wire<bool>,
}

impl WsController {
    /// The controller of `sched`.
    pub fn new(sched: WsSchedule) -> Result<Self> {
        Ok(Self {
            sched,
            passes: sched.passes() as u32,
            state: Reg::new("state", 2, WsState::Idle as u8)?.with_labels(STATE_LABELS),
            timer: Reg::new("timer", 32, 0)?,
            load_pass: Reg::new("load_pass", 32, 0)?,
            load_row: Reg::new("load_row", 6, 0)?,
            feed_pass: Reg::new("feed_pass", 32, 0)?,
            feed_row: Reg::new("feed_row", 32, 0)?,
            free_at: [Reg::new("free_at_0", 32, 0)?, Reg::new("free_at_1", 32, 0)?],
            feed_cycles: Reg::new("feed_cycles", 64, 0)?,
            load: Wire::new("load", 1, false)?,
            feed: Wire::new("feed", 1, false)?,
        })
    }

    /// The current state.
    pub fn state(&self) -> WsState {
        match self.state.q() {
            0 => WsState::Idle,
            1 => WsState::Run,
            _ => WsState::Done,
        }
    }

    /// Cycles since leaving `Idle`.
    pub fn timer(&self) -> u64 {
        u64::from(self.timer.q())
    }

    /// Cycles a row of A was fed (a counter register).
    pub fn feed_cycles(&self) -> u64 {
        self.feed_cycles.q()
    }

    /// The weight row loaded this cycle, if any: `(pass, k)`, the `k`-th of its `R` load
    /// cycles (array row `R - 1 - k`), on an ideal supply (always ready).
    #[inline]
    pub fn load(&self) -> Option<(usize, usize)> {
        self.load_when(true)
    }

    /// The weight row the schedule would load this cycle, if the supply has it
    /// (`w_ready`: the supply's registers hold the row, see [`super::supply::WsSupply`]).
    /// A load held back by the supply leaves the rows already on their way where they are
    /// (each column's PEs take a weight only while `en` is high).
    #[inline]
    pub fn load_when(&self, w_ready: bool) -> Option<(usize, usize)> {
        let p = self.load_pass.q();
        if !w_ready || self.state() != WsState::Run || p >= self.passes {
            return None;
        }
        let k = self.load_row.q();
        let set_free = p < 2
            || (self.feed_pass.q() + 1 >= p
                && self.timer.q() >= self.free_at[(p & 1) as usize].q());
        (k > 0 || set_free).then_some((p as usize, usize::from(k)))
    }

    /// The row of A fed this cycle, if any: `(pass, row)`, on an ideal supply.
    #[inline]
    pub fn feed(&self) -> Option<(usize, usize)> {
        self.feed_when(|_, _| true)
    }

    /// The row of A the schedule would feed this cycle, if the supply is ready for it:
    /// `a_ready(first, last)` says whether the supply holds the row (and its C, on the pass's
    /// first fold, and room for its D, on the last), from its registers only.
    #[inline]
    pub fn feed_when(&self, a_ready: impl FnOnce(bool, bool) -> bool) -> Option<(usize, usize)> {
        let p = self.feed_pass.q();
        let loaded = self.load_pass.q() > p;
        if !(self.state() == WsState::Run && p < self.passes && loaded) {
            return None;
        }
        let fold = p as usize % self.sched.folds;
        a_ready(fold == 0, fold + 1 == self.sched.folds)
            .then_some((p as usize, self.feed_row.q() as usize))
    }

    /// The combinational update with this cycle's `load` and `feed` as the core settled them
    /// ([`WsController::load_when`], [`WsController::feed_when`]): `start` leaves `Idle`;
    /// `done` (the run's last row of D is in the output register, and on a memory-fed supply
    /// every row has been stored) enters `Done`.
    pub fn comb(
        &mut self,
        start: bool,
        done: bool,
        load: Option<(usize, usize)>,
        feed: Option<(usize, usize)>,
    ) {
        match self.state() {
            WsState::Idle => {
                if start {
                    self.state.set_d(WsState::Run as u8);
                }
                self.load.set(false);
                self.feed.set(false);
                return;
            }
            WsState::Done => {
                self.load.set(false);
                self.feed.set(false);
                return;
            }
            WsState::Run => {}
        }
        let t = self.timer.q();
        self.timer.set_d(t.wrapping_add(1));
        if done {
            self.state.set_d(WsState::Done as u8);
        }
        let rows = self.sched.rows;
        self.load.set(load.is_some());
        if let Some((p, k)) = load {
            if k + 1 == rows {
                self.load_row.set_d(0);
                self.load_pass.set_d(p as u32 + 1);
            } else {
                self.load_row.set_d(k as u8 + 1);
            }
        }
        self.feed.set(feed.is_some());
        if let Some((p, s)) = feed {
            self.feed_cycles.set_d(self.feed_cycles.q() + 1);
            if s + 1 == self.sched.pass(p).rows {
                self.feed_row.set_d(0);
                self.feed_pass.set_d(p as u32 + 1);
                // The row's last multiply is in the bottom row `R - 1` cycles on: the set is
                // free for a load from the cycle after.
                self.free_at[p & 1].set_d(t + rows as u32);
            } else {
                self.feed_row.set_d(s as u32 + 1);
            }
        }
    }
}

impl Module for WsController {
    fn name(&self) -> &str {
        "controller"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.state);
        v.reg(&mut self.timer);
        v.reg(&mut self.load_pass);
        v.reg(&mut self.load_row);
        v.reg(&mut self.feed_pass);
        v.reg(&mut self.feed_row);
        let [f0, f1] = &mut self.free_at;
        v.reg(f0);
        v.reg(f1);
        v.reg(&mut self.feed_cycles);
        v.wire(&mut self.load);
        v.wire(&mut self.feed);
    }
}
