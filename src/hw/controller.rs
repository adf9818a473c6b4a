//! The tensor core's controller: a small explicit FSM (`state` register) with counters.
//!
//! States: `Idle` (waits for `start`) -> `Preload` (C of the first tiles shifts into the
//! accumulators; `R - L` cycles) -> `Compute` (tiles fed back to back, one step a cycle, drain
//! windows of earlier tiles running underneath) -> `Drain` (the last tiles finish and drain
//! through the de-skew) -> `Done` (the last result row left the output register).
//!
//! Outputs are decoded from registers only: the feed address (`feed_tile`, `feed_step`) and
//! the column-0 shift command of this cycle (`win`, `win_pos`), see [`ShiftCmd`].

use super::schedule::Schedule;
use super::ROWS;
use crate::rtl::{Module, Reg, Result, Visitor};

/// The FSM states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtlState {
    /// Waiting for `start`.
    Idle = 0,
    /// Loading C before the first tile.
    Preload = 1,
    /// Feeding tiles.
    Compute = 2,
    /// Finishing and draining the last tiles.
    Drain = 3,
    /// Finished.
    Done = 4,
}

/// The state names shown in GTKWave for the `state` register (its value labels).
const STATE_LABELS: crate::rtl::Labels = &[
    (CtlState::Idle as u64, "Idle"),
    (CtlState::Preload as u64, "Preload"),
    (CtlState::Compute as u64, "Compute"),
    (CtlState::Drain as u64, "Drain"),
    (CtlState::Done as u64, "Done"),
];

impl CtlState {
    fn from_bits(b: u8) -> CtlState {
        match b {
            1 => CtlState::Preload,
            2 => CtlState::Compute,
            3 => CtlState::Drain,
            4 => CtlState::Done,
            _ => CtlState::Idle,
        }
    }
}

/// One cycle's column shift command (for column 0; the skew delays it by `j` for column `j`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct ShiftCmd {
    /// A shift happens this cycle.
    pub en: bool,
    /// The accumulator set that shifts.
    pub set: bool,
    /// C of `c_tile` enters at the top (else zeros).
    pub c_valid: bool,
    /// The word leaving the bottom is a result of `d_tile`.
    pub d_valid: bool,
    /// The shift's position in its window (0..R): C row `R - 1 - x` enters, D row
    /// `R - 1 - x` leaves.
    pub x: usize,
    /// The result leaving is the run's last row.
    pub last: bool,
    /// Tile whose C enters.
    pub c_tile: usize,
    /// Tile whose result leaves.
    pub d_tile: usize,
}

impl ShiftCmd {
    /// Packs the command into a 64-bit word (for the skew registers).
    pub fn pack(&self) -> u64 {
        u64::from(self.en)
            | (u64::from(self.set) << 1)
            | (u64::from(self.c_valid) << 2)
            | (u64::from(self.d_valid) << 3)
            | ((self.x as u64 & 3) << 4)
            | (u64::from(self.last) << 6)
            | ((self.c_tile as u64 & 0xFF_FFFF) << 8)
            | ((self.d_tile as u64 & 0xFF_FFFF) << 32)
    }

    /// Unpacks a word written by [`ShiftCmd::pack`].
    pub fn unpack(w: u64) -> ShiftCmd {
        ShiftCmd {
            en: w & 1 != 0,
            set: w & 2 != 0,
            c_valid: w & 4 != 0,
            d_valid: w & 8 != 0,
            x: ((w >> 4) & 3) as usize,
            last: w & 64 != 0,
            c_tile: ((w >> 8) & 0xFF_FFFF) as usize,
            d_tile: ((w >> 32) & 0xFF_FFFF) as usize,
        }
    }
}

/// The controller FSM.
pub struct Controller {
    sched: Schedule,
    state: Reg<u8>,
    timer: Reg<u32>,
    feed_tile: Reg<u32>,
    feed_step: Reg<u32>,
    win: Reg<u32>,
    win_pos: Reg<u8>,
}

impl Controller {
    /// A controller running `sched`.
    pub fn new(sched: Schedule) -> Result<Self> {
        Ok(Self {
            sched,
            state: Reg::new("state", 3, CtlState::Idle as u8)?.with_labels(STATE_LABELS),
            timer: Reg::new("timer", 32, 0)?,
            feed_tile: Reg::new("feed_tile", 32, 0)?,
            feed_step: Reg::new("feed_step", 32, 0)?,
            win: Reg::new("win", 32, 0)?,
            win_pos: Reg::new("win_pos", 3, ROWS as u8)?,
        })
    }

    /// The current state.
    pub fn state(&self) -> CtlState {
        CtlState::from_bits(self.state.q())
    }

    /// Cycles since leaving `Idle`.
    pub fn timer(&self) -> u64 {
        u64::from(self.timer.q())
    }

    /// This cycle's feed: `(tile, step)` presented at the array's edge, if any.
    #[inline]
    pub fn feed(&self) -> Option<(usize, usize)> {
        let step = self.feed_step.q() as usize;
        (self.state() == CtlState::Compute && step < self.sched.steps)
            .then_some((self.feed_tile.q() as usize, step))
    }

    /// This cycle's column-0 shift command.
    #[inline]
    pub fn shift_cmd(&self) -> ShiftCmd {
        let pos = usize::from(self.win_pos.q());
        let idx = self.win.q() as usize;
        let active = matches!(
            self.state(),
            CtlState::Preload | CtlState::Compute | CtlState::Drain
        );
        let (en, x) = if !active || idx >= self.sched.windows() {
            (false, 0)
        } else if pos < ROWS {
            (true, pos)
        } else if self.timer() == self.sched.window_start(idx) {
            (true, 0)
        } else {
            (false, 0)
        };
        if !en {
            return ShiftCmd::default();
        }
        let tiles = self.sched.tiles();
        ShiftCmd {
            en,
            set: idx & 1 == 1,
            c_valid: idx < tiles,
            d_valid: idx >= 2,
            x,
            last: idx + 1 == self.sched.windows() && x + 1 == ROWS,
            c_tile: idx,
            d_tile: idx.saturating_sub(2),
        }
    }

    /// The combinational phase: next state and counters. `start` is the top's start input,
    /// `out_last` the output register's "last row" bit.
    pub fn comb(&mut self, start: bool, out_last: bool) {
        let st = self.state();
        if st == CtlState::Idle {
            if start {
                self.state.set_d(CtlState::Preload as u8);
            }
            return;
        }
        if st == CtlState::Done {
            return;
        }
        let t = self.timer.q();
        self.timer.set_d(t.wrapping_add(1));
        // Shift windows.
        let cmd = self.shift_cmd();
        if cmd.en {
            if cmd.x + 1 == ROWS {
                self.win_pos.set_d(ROWS as u8);
                self.win.set_d(self.win.q() + 1);
            } else {
                self.win_pos.set_d(cmd.x as u8 + 1);
            }
        }
        match st {
            CtlState::Preload => {
                if u64::from(t) + 1 == self.sched.feed_start() {
                    self.state.set_d(CtlState::Compute as u8);
                }
            }
            CtlState::Compute => {
                let (tile, step) = (self.feed_tile.q() as usize, self.feed_step.q() as usize);
                if tile + 1 == self.sched.tiles() && step + 1 == self.sched.steps {
                    self.state.set_d(CtlState::Drain as u8);
                } else if step + 1 == self.sched.period {
                    self.feed_step.set_d(0);
                    self.feed_tile.set_d(tile as u32 + 1);
                } else {
                    self.feed_step.set_d(step as u32 + 1);
                }
            }
            CtlState::Drain => {
                if out_last {
                    self.state.set_d(CtlState::Done as u8);
                }
            }
            CtlState::Idle | CtlState::Done => {}
        }
    }
}

impl Module for Controller {
    fn name(&self) -> &str {
        "controller"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.state);
        v.reg(&mut self.timer);
        v.reg(&mut self.feed_tile);
        v.reg(&mut self.feed_step);
        v.reg(&mut self.win);
        v.reg(&mut self.win_pos);
    }
}
