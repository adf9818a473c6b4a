//! The tensor core's controller: a small explicit FSM (`state` register) with counters.
//!
//! States: `Idle` (waits for `start`) -> `Preload` (C of the first tiles shifts into the
//! accumulators) -> `Compute` (steps taken from the operand port, drain windows of earlier
//! tiles running underneath; `Wait` while the port has no step to give) -> `Drain` (the last
//! tiles finish and drain through the de-skew) -> `Done` (the last result row left the output
//! register and the port has put every result away).
//!
//! The controller never assumes when data arrives:
//! - `ready` (a function of its registers only) says it can take the next step this cycle:
//!   inside a tile always; for a tile's first step only when the tile's accumulator set holds
//!   its C (the window loading it issues its last shift this cycle or did earlier) and at
//!   least `P` cycles passed since the previous tile started (the schedule's period, which
//!   keeps the ideal port's timing of `docs/timing.md`). The port's `valid` and `ready` make
//!   `take`; without it the array sees a bubble and the step address holds.
//! - Each tile's last step, when taken, sends a token down `last_pipe` (`R + L` registers,
//!   Gemmini's `in_last`): when it emerges, every PE of column 0 has finished that tile and
//!   its drain window may start. Tokens wait in `drains` while the shift path is busy or the
//!   port cannot take the results (`d_ready`) or give the C the window loads (`c_ready`).
//!
//! Outputs are decoded from registers only: the step address (`feed_tile`, `feed_step`),
//! `ready`, and the column-0 shift command of this cycle (`win`, `win_pos`, `drains`,
//! `last_pipe`), see [`ShiftCmd`].

use super::schedule::Schedule;
use super::PIPELINE_LATENCY;
use crate::rtl::{Module, Reg, Result, Visitor, Wire};

/// The FSM states.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum CtlState {
    /// Waiting for `start`.
    Idle = 0,
    /// Loading C before the first tile.
    Preload = 1,
    /// Taking steps from the operand port.
    Compute = 2,
    /// Finishing and draining the last tiles.
    Drain = 3,
    /// Finished.
    Done = 4,
    /// Ready for a step the operand port did not have last cycle (a stall).
    Wait = 5,
}

/// The state names shown in GTKWave for the `state` register (its value labels).
const STATE_LABELS: crate::rtl::Labels = &[
    (CtlState::Idle as u64, "Idle"),
    (CtlState::Preload as u64, "Preload"),
    (CtlState::Compute as u64, "Compute"),
    (CtlState::Drain as u64, "Drain"),
    (CtlState::Done as u64, "Done"),
    (CtlState::Wait as u64, "Wait"),
];

impl CtlState {
    fn from_bits(b: u8) -> CtlState {
        match b {
            1 => CtlState::Preload,
            2 => CtlState::Compute,
            3 => CtlState::Drain,
            4 => CtlState::Done,
            5 => CtlState::Wait,
            _ => CtlState::Idle,
        }
    }
}

/// Depth of the last-step token pipe of an array of `rows` rows: `R + L` cycles from feeding
/// a tile's last step at the corner to the first cycle its drain may start in column 0.
fn token_depth(rows: usize) -> u32 {
    rows as u32 + PIPELINE_LATENCY as u32
}

/// Bits of an index below `n` (at least 1): `clog2(n)`. A row index of the 4 x 4 array
/// takes 2 bits.
pub const fn index_bits(n: usize) -> u32 {
    if n <= 2 {
        1
    } else {
        usize::BITS - (n - 1).leading_zeros()
    }
}

/// The port's handshake signals as the controller sees them in one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortStatus {
    /// The port offers the next step.
    pub valid: bool,
    /// The port holds C of the tile the next shift window loads.
    pub c_ready: bool,
    /// The port has room for the results of the next drain window.
    pub d_ready: bool,
    /// The port has put away every result it received.
    pub finished: bool,
}

/// One cycle's column shift command (for column 0; the skew delays it by `j` for column `j`),
/// as typed fields; [`ShiftCmd::pack`] gives the 64-bit word the C skew registers hold. The
/// `x` field is `X = clog2(R)` bits wide ([`index_bits`] of the array's rows: 2 for the 4 x 4
/// array, whose layout this is):
///
/// | bits (4 x 4) | bits (any `R`)        | field     |
/// |--------------|-----------------------|-----------|
/// | 0            | 0                     | `en`      |
/// | 1            | 1                     | `set`     |
/// | 2            | 2                     | `c_valid` |
/// | 3            | 3                     | `d_valid` |
/// | 5:4          | `4 .. 4 + X`          | `x` (0..R) |
/// | 6            | `4 + X`               | `last`    |
/// | 31:8         | 24 bits from `T = max(8, 5 + X)` | `c_tile` |
/// | 55:32        | 24 bits from `T + 24` | `d_tile`  |
///
/// Other bits are zero.
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

/// A tile field of a [`ShiftCmd`] word: 24 bits.
const SHIFT_TILE_MASK: u64 = 0xFF_FFFF;

impl ShiftCmd {
    /// The first bit of the `c_tile` field for an `x_bits`-bit `x` field.
    const fn c_tile_at(x_bits: u32) -> u32 {
        if 5 + x_bits > 8 {
            5 + x_bits
        } else {
            8
        }
    }

    /// Packs the command into a 64-bit word (for the skew registers), its `x` field
    /// `x_bits` wide (see the type's documentation).
    #[inline]
    pub fn pack(&self, x_bits: u32) -> u64 {
        let x_mask = (1u64 << x_bits) - 1;
        let t = Self::c_tile_at(x_bits);
        u64::from(self.en)
            | (u64::from(self.set) << 1)
            | (u64::from(self.c_valid) << 2)
            | (u64::from(self.d_valid) << 3)
            | ((self.x as u64 & x_mask) << 4)
            | (u64::from(self.last) << (4 + x_bits))
            | ((self.c_tile as u64 & SHIFT_TILE_MASK) << t)
            | ((self.d_tile as u64 & SHIFT_TILE_MASK) << (t + 24))
    }

    /// Unpacks a word written by [`ShiftCmd::pack`] with the same `x_bits`.
    #[inline]
    pub fn unpack(w: u64, x_bits: u32) -> ShiftCmd {
        let x_mask = (1u64 << x_bits) - 1;
        let t = Self::c_tile_at(x_bits);
        ShiftCmd {
            en: w & 1 != 0,
            set: w & 2 != 0,
            c_valid: w & 4 != 0,
            d_valid: w & 8 != 0,
            x: ((w >> 4) & x_mask) as usize,
            last: (w >> (4 + x_bits)) & 1 != 0,
            c_tile: ((w >> t) & SHIFT_TILE_MASK) as usize,
            d_tile: ((w >> (t + 24)) & SHIFT_TILE_MASK) as usize,
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
    since_start: Reg<u32>,
    last_pipe: Reg<u64>,
    drains: Reg<u8>,
    win: Reg<u32>,
    win_pos: Reg<u8>,
    results_out: Reg<bool>,
    stall_count: Reg<u64>,
    window_wait_count: Reg<u64>,
    ready: Wire<bool>,
    take: Wire<bool>,
    stall: Wire<bool>,
    token: Wire<bool>,
}

impl Controller {
    /// A controller running `sched`.
    pub fn new(sched: Schedule) -> Result<Self> {
        Ok(Self {
            sched,
            state: Reg::new("state", 3, CtlState::Idle as u8)?
                .with_labels(STATE_LABELS)
                .in_overview(),
            timer: Reg::new("timer", 32, 0)?,
            feed_tile: Reg::new("feed_tile", 32, 0)?,
            feed_step: Reg::new("feed_step", 32, 0)?,
            since_start: Reg::new("since_start", 32, 0)?,
            last_pipe: Reg::new("last_pipe", token_depth(sched.rows), 0)?,
            drains: Reg::new("drains", 8, 0)?,
            win: Reg::new("win", 32, 0)?,
            win_pos: Reg::new("win_pos", index_bits(sched.rows + 1), sched.rows as u8)?,
            results_out: Reg::new("results_out", 1, false)?,
            stall_count: Reg::new("stall_count", 64, 0)?,
            window_wait_count: Reg::new("window_wait_count", 64, 0)?,
            ready: Wire::new("ready", 1, false)?,
            take: Wire::new("take", 1, false)?,
            stall: Wire::new("stall", 1, false)?,
            token: Wire::new("token", 1, false)?,
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

    /// The address of the next step to take: `(tile, step)`.
    #[inline]
    pub fn feed_addr(&self) -> (usize, usize) {
        (self.feed_tile.q() as usize, self.feed_step.q() as usize)
    }

    /// The controller can take a step this cycle (see the module documentation), `cmd` being
    /// this cycle's [`Controller::shift_cmd`]: a tile's first step waits for the cycle its
    /// window issues its last shift (its C is then in place for the step's first
    /// accumulation, a cycle or more later).
    #[inline]
    pub fn ready(&self, cmd: ShiftCmd) -> bool {
        if !matches!(self.state(), CtlState::Compute | CtlState::Wait) {
            return false;
        }
        let (tile, step) = self.feed_addr();
        if step > 0 {
            return true;
        }
        let spaced = tile == 0 || self.since_start.q() as usize >= self.sched.period;
        // Tile `t` accumulates into the set that window `t` loads with its C.
        let win = self.win.q() as usize;
        let loaded = win > tile || (win == tile && cmd.en && cmd.x + 1 == self.sched.rows);
        spaced && loaded
    }

    /// A drain token leaves the last-step pipe this cycle.
    #[inline]
    fn token_out(&self) -> bool {
        self.last_pipe.q() >> (token_depth(self.sched.rows) - 1) & 1 == 1
    }

    /// The tile whose C the next shift window loads (and whose drain it would be, less two).
    #[inline]
    pub fn next_window(&self) -> usize {
        self.win.q() as usize
    }

    /// A shift window is due this cycle: the shift path is idle and the next window is a
    /// preload window or has its drain token.
    fn window_due(&self) -> bool {
        let idx = self.win.q() as usize;
        let active = matches!(
            self.state(),
            CtlState::Preload | CtlState::Compute | CtlState::Wait | CtlState::Drain
        );
        active
            && idx < self.sched.windows()
            && usize::from(self.win_pos.q()) >= self.sched.rows
            && (idx < 2 || self.drains.q() > 0 || self.token_out())
    }

    /// Cycles the controller was ready for a step the port did not offer (a counter register).
    pub fn stall_cycles(&self) -> u64 {
        self.stall_count.q()
    }

    /// Cycles a due shift window waited for the port's C or result room (a counter register).
    pub fn window_wait_cycles(&self) -> u64 {
        self.window_wait_count.q()
    }

    /// This cycle's column-0 shift command, given the port's `c_ready` (for the tile of
    /// [`Controller::next_window`]) and `d_ready`.
    #[inline]
    pub fn shift_cmd(&self, c_ready: bool, d_ready: bool) -> ShiftCmd {
        let pos = usize::from(self.win_pos.q());
        let idx = self.win.q() as usize;
        let active = matches!(
            self.state(),
            CtlState::Preload | CtlState::Compute | CtlState::Wait | CtlState::Drain
        );
        let tiles = self.sched.tiles();
        let (en, x) = if !active || idx >= self.sched.windows() {
            (false, 0)
        } else if pos < self.sched.rows {
            (true, pos)
        } else {
            // A new window: C must be there (if it loads any); a drain needs its token and
            // room for the results.
            let c_ok = idx >= tiles || c_ready;
            let drain_ok = idx < 2 || ((self.drains.q() > 0 || self.token_out()) && d_ready);
            (c_ok && drain_ok, 0)
        };
        if !en {
            return ShiftCmd::default();
        }
        ShiftCmd {
            en,
            set: idx & 1 == 1,
            c_valid: idx < tiles,
            d_valid: idx >= 2,
            x,
            last: idx + 1 == self.sched.windows() && x + 1 == self.sched.rows,
            c_tile: idx,
            d_tile: idx.saturating_sub(2),
        }
    }

    /// The combinational phase: next state and counters. `start` is the top's start input,
    /// `out_last` the output register's "last row" bit, `port` the operand port's handshake
    /// signals; `ready` and `cmd` are this cycle's [`Controller::ready`] and
    /// [`Controller::shift_cmd`] (for `port`'s `c_ready` and `d_ready`), which the top has
    /// settled already for the array's edge: one signal each, read by both. Returns whether a
    /// step is taken this cycle.
    pub fn comb(
        &mut self,
        start: bool,
        out_last: bool,
        port: PortStatus,
        ready: bool,
        cmd: ShiftCmd,
    ) -> bool {
        debug_assert_eq!(ready, self.ready(cmd));
        debug_assert_eq!(cmd, self.shift_cmd(port.c_ready, port.d_ready));
        let st = self.state();
        let take = ready && port.valid;
        self.ready.set(ready);
        self.take.set(take);
        self.stall.set(ready && !port.valid);
        self.token.set(self.token_out());
        if st == CtlState::Idle {
            if start {
                // Compute begins in the cycle window 0 issues its last shift: with one row
                // that is its first, and the preload takes no cycle of its own.
                let next = if self.sched.rows == 1 {
                    CtlState::Compute
                } else {
                    CtlState::Preload
                };
                self.state.set_d(next as u8);
            }
            return false;
        }
        if st == CtlState::Done {
            return false;
        }
        let t = self.timer.q();
        self.timer.set_d(t.wrapping_add(1));
        // Performance counters: cycles ready for a step the port did not have, and cycles a
        // due shift window waited for the port.
        if ready && !port.valid {
            self.stall_count.set_d(self.stall_count.q() + 1);
        }
        if self.window_due() && !cmd.en {
            self.window_wait_count.set_d(self.window_wait_count.q() + 1);
        }
        let starts_drain = cmd.en && cmd.x == 0 && cmd.d_valid;
        let drains = u32::from(self.drains.q()) + u32::from(self.token_out());
        self.drains
            .set_d((drains - u32::from(starts_drain && drains > 0)) as u8);
        if cmd.en {
            if cmd.x + 1 == self.sched.rows {
                self.win_pos.set_d(self.sched.rows as u8);
                self.win.set_d(self.win.q() + 1);
            } else {
                self.win_pos.set_d(cmd.x as u8 + 1);
            }
        }
        let (tile, step) = self.feed_addr();
        let last_step = take && step + 1 == self.sched.steps;
        self.last_pipe
            .set_d((self.last_pipe.q() << 1) | u64::from(last_step));
        let since = self.since_start.q();
        if take && step == 0 {
            self.since_start.set_d(1);
        } else if (since as usize) < self.sched.period {
            self.since_start.set_d(since + 1);
        }
        if out_last {
            self.results_out.set_d(true);
        }
        match st {
            CtlState::Preload => {
                // Compute begins in the cycle window 0 issues its last shift.
                if cmd.en && self.win.q() == 0 && cmd.x + 2 == self.sched.rows {
                    self.state.set_d(CtlState::Compute as u8);
                }
            }
            CtlState::Compute | CtlState::Wait => {
                if take {
                    if last_step && tile + 1 == self.sched.tiles() {
                        self.state.set_d(CtlState::Drain as u8);
                    } else {
                        self.state.set_d(CtlState::Compute as u8);
                        if last_step {
                            self.feed_step.set_d(0);
                            self.feed_tile.set_d(tile as u32 + 1);
                        } else {
                            self.feed_step.set_d(step as u32 + 1);
                        }
                    }
                } else if ready {
                    self.state.set_d(CtlState::Wait as u8);
                }
            }
            CtlState::Drain => {
                if (out_last || self.results_out.q()) && port.finished {
                    self.state.set_d(CtlState::Done as u8);
                }
            }
            CtlState::Idle | CtlState::Done => {}
        }
        take
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
        v.reg(&mut self.since_start);
        v.reg(&mut self.last_pipe);
        v.reg(&mut self.drains);
        v.reg(&mut self.win);
        v.reg(&mut self.win_pos);
        v.reg(&mut self.results_out);
        v.reg(&mut self.stall_count);
        v.reg(&mut self.window_wait_count);
        v.wire(&mut self.ready);
        v.wire(&mut self.take);
        v.wire(&mut self.stall);
        v.wire(&mut self.token);
    }
}
