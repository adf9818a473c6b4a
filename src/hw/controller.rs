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
use crate::rtl::{Module, RegBank, Result, Visitor, Wire};

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
    /// The registers, as one record (a [`RegBank`]: committed with one copy at the edge).
    regs: RegBank<CtlRegs>,
    ready: Wire<bool>,
    take: Wire<bool>,
    stall: Wire<bool>,
    token: Wire<bool>,
}

/// The controller's registers, each a field register of the waves named as its field.
#[derive(Clone, Copy, Debug)]
struct CtlRegs {
    /// The FSM state ([`CtlState`]).
    state: u8,
    /// Cycles since leaving `Idle`.
    timer: u32,
    /// The address of the next step to take: tile and step.
    feed_tile: u32,
    feed_step: u32,
    /// Cycles since the last tile's first step (up to the schedule's period).
    since_start: u32,
    /// The last-step pipe: a token per tile's last step, leaving as its drain may start.
    last_pipe: u64,
    /// Drain tokens received and not yet used.
    drains: u8,
    /// The next shift window, and the row its shifts have reached.
    win: u32,
    win_pos: u8,
    /// The output register has shown its last row.
    results_out: bool,
    /// Performance counters: cycles ready for a step the port did not have, and cycles a
    /// due shift window waited for the port.
    stall_count: u64,
    window_wait_count: u64,
}

/// The positions of the bank's fields, in declaration order.
mod field {
    pub const STATE: usize = 0;
    pub const TIMER: usize = 1;
    pub const FEED_TILE: usize = 2;
    pub const FEED_STEP: usize = 3;
    pub const SINCE_START: usize = 4;
    pub const LAST_PIPE: usize = 5;
    pub const DRAINS: usize = 6;
    pub const WIN: usize = 7;
    pub const WIN_POS: usize = 8;
    pub const RESULTS_OUT: usize = 9;
    pub const STALL_COUNT: usize = 10;
    pub const WINDOW_WAIT_COUNT: usize = 11;
}

impl Controller {
    /// A controller running `sched`.
    pub fn new(sched: Schedule) -> Result<Self> {
        let reset = CtlRegs {
            state: CtlState::Idle as u8,
            timer: 0,
            feed_tile: 0,
            feed_step: 0,
            since_start: 0,
            last_pipe: 0,
            drains: 0,
            win: 0,
            win_pos: sched.rows as u8,
            results_out: false,
            stall_count: 0,
            window_wait_count: 0,
        };
        let regs = RegBank::new(reset)
            .field::<u8>("state", 3, |r| &r.state)?
            .with_labels(STATE_LABELS)
            .in_overview()
            .field::<u32>("timer", 32, |r| &r.timer)?
            .field::<u32>("feed_tile", 32, |r| &r.feed_tile)?
            .field::<u32>("feed_step", 32, |r| &r.feed_step)?
            .field::<u32>("since_start", 32, |r| &r.since_start)?
            .field::<u64>("last_pipe", token_depth(sched.rows), |r| &r.last_pipe)?
            .field::<u8>("drains", 8, |r| &r.drains)?
            .field::<u32>("win", 32, |r| &r.win)?
            .field::<u8>("win_pos", index_bits(sched.rows + 1), |r| &r.win_pos)?
            .field::<bool>("results_out", 1, |r| &r.results_out)?
            .field::<u64>("stall_count", 64, |r| &r.stall_count)?
            .field::<u64>("window_wait_count", 64, |r| &r.window_wait_count)?;
        Ok(Self {
            sched,
            regs,
            ready: Wire::new("ready", 1, false)?,
            take: Wire::new("take", 1, false)?,
            stall: Wire::new("stall", 1, false)?,
            token: Wire::new("token", 1, false)?,
        })
    }

    /// The current state.
    pub fn state(&self) -> CtlState {
        CtlState::from_bits(self.regs.q().state)
    }

    /// Cycles since leaving `Idle`.
    pub fn timer(&self) -> u64 {
        u64::from(self.regs.q().timer)
    }

    /// The address of the next step to take: `(tile, step)`.
    #[inline]
    pub fn feed_addr(&self) -> (usize, usize) {
        (
            self.regs.q().feed_tile as usize,
            self.regs.q().feed_step as usize,
        )
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
        let spaced = tile == 0 || self.regs.q().since_start as usize >= self.sched.period;
        // Tile `t` accumulates into the set that window `t` loads with its C.
        let win = self.regs.q().win as usize;
        let loaded = win > tile || (win == tile && cmd.en && cmd.x + 1 == self.sched.rows);
        spaced && loaded
    }

    /// A drain token leaves the last-step pipe this cycle.
    #[inline]
    fn token_out(&self) -> bool {
        self.regs.q().last_pipe >> (token_depth(self.sched.rows) - 1) & 1 == 1
    }

    /// The tile whose C the next shift window loads (and whose drain it would be, less two).
    #[inline]
    pub fn next_window(&self) -> usize {
        self.regs.q().win as usize
    }

    /// A shift window is due this cycle: the shift path is idle and the next window is a
    /// preload window or has its drain token.
    fn window_due(&self) -> bool {
        let idx = self.regs.q().win as usize;
        let active = matches!(
            self.state(),
            CtlState::Preload | CtlState::Compute | CtlState::Wait | CtlState::Drain
        );
        active
            && idx < self.sched.windows()
            && usize::from(self.regs.q().win_pos) >= self.sched.rows
            && (idx < 2 || self.regs.q().drains > 0 || self.token_out())
    }

    /// Cycles the controller was ready for a step the port did not offer (a counter register).
    pub fn stall_cycles(&self) -> u64 {
        self.regs.q().stall_count
    }

    /// Cycles a due shift window waited for the port's C or result room (a counter register).
    pub fn window_wait_cycles(&self) -> u64 {
        self.regs.q().window_wait_count
    }

    /// This cycle's column-0 shift command, given the port's `c_ready` (for the tile of
    /// [`Controller::next_window`]) and `d_ready`.
    #[inline]
    pub fn shift_cmd(&self, c_ready: bool, d_ready: bool) -> ShiftCmd {
        let pos = usize::from(self.regs.q().win_pos);
        let idx = self.regs.q().win as usize;
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
            let drain_ok = idx < 2 || ((self.regs.q().drains > 0 || self.token_out()) && d_ready);
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
                self.regs.set(|r| &mut r.state, next as u8);
            }
            return false;
        }
        if st == CtlState::Done {
            return false;
        }
        let t = self.regs.q().timer;
        self.regs.set(|r| &mut r.timer, t.wrapping_add(1));
        // Performance counters: cycles ready for a step the port did not have, and cycles a
        // due shift window waited for the port.
        if ready && !port.valid {
            self.regs
                .set(|r| &mut r.stall_count, self.regs.q().stall_count + 1);
        }
        if self.window_due() && !cmd.en {
            self.regs.set(
                |r| &mut r.window_wait_count,
                self.regs.q().window_wait_count + 1,
            );
        }
        let starts_drain = cmd.en && cmd.x == 0 && cmd.d_valid;
        let drains = u32::from(self.regs.q().drains) + u32::from(self.token_out());
        self.regs.set(
            |r| &mut r.drains,
            (drains - u32::from(starts_drain && drains > 0)) as u8,
        );
        if cmd.en {
            if cmd.x + 1 == self.sched.rows {
                self.regs.set(|r| &mut r.win_pos, self.sched.rows as u8);
                self.regs.set(|r| &mut r.win, self.regs.q().win + 1);
            } else {
                self.regs.set(|r| &mut r.win_pos, cmd.x as u8 + 1);
            }
        }
        let (tile, step) = self.feed_addr();
        let last_step = take && step + 1 == self.sched.steps;
        // The pipe's `R + L` bits: the oldest token leaves at the top.
        let pipe_bits = u64::MAX >> (64 - token_depth(self.sched.rows));
        let pipe = (self.regs.q().last_pipe << 1 | u64::from(last_step)) & pipe_bits;
        self.regs.set(|r| &mut r.last_pipe, pipe);
        let since = self.regs.q().since_start;
        if take && step == 0 {
            self.regs.set(|r| &mut r.since_start, 1);
        } else if (since as usize) < self.sched.period {
            self.regs.set(|r| &mut r.since_start, since + 1);
        }
        if out_last {
            self.regs.set(|r| &mut r.results_out, true);
        }
        match st {
            CtlState::Preload => {
                // Compute begins in the cycle window 0 issues its last shift.
                if cmd.en && self.regs.q().win == 0 && cmd.x + 2 == self.sched.rows {
                    self.regs.set(|r| &mut r.state, CtlState::Compute as u8);
                }
            }
            CtlState::Compute | CtlState::Wait => {
                if take {
                    if last_step && tile + 1 == self.sched.tiles() {
                        self.regs.set(|r| &mut r.state, CtlState::Drain as u8);
                    } else {
                        self.regs.set(|r| &mut r.state, CtlState::Compute as u8);
                        if last_step {
                            self.regs.set(|r| &mut r.feed_step, 0);
                            self.regs.set(|r| &mut r.feed_tile, tile as u32 + 1);
                        } else {
                            self.regs.set(|r| &mut r.feed_step, step as u32 + 1);
                        }
                    }
                } else if ready {
                    self.regs.set(|r| &mut r.state, CtlState::Wait as u8);
                }
            }
            CtlState::Drain => {
                if (out_last || self.regs.q().results_out) && port.finished {
                    self.regs.set(|r| &mut r.state, CtlState::Done as u8);
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
        use field::*;
        let regs = &mut self.regs;
        v.bank_reg(regs, STATE, |r| &r.state);
        v.bank_reg(regs, TIMER, |r| &r.timer);
        v.bank_reg(regs, FEED_TILE, |r| &r.feed_tile);
        v.bank_reg(regs, FEED_STEP, |r| &r.feed_step);
        v.bank_reg(regs, SINCE_START, |r| &r.since_start);
        v.bank_reg(regs, LAST_PIPE, |r| &r.last_pipe);
        v.bank_reg(regs, DRAINS, |r| &r.drains);
        v.bank_reg(regs, WIN, |r| &r.win);
        v.bank_reg(regs, WIN_POS, |r| &r.win_pos);
        v.bank_reg(regs, RESULTS_OUT, |r| &r.results_out);
        v.bank_reg(regs, STALL_COUNT, |r| &r.stall_count);
        v.bank_reg(regs, WINDOW_WAIT_COUNT, |r| &r.window_wait_count);
        v.bank(regs);
        v.wire(&mut self.ready);
        v.wire(&mut self.take);
        v.wire(&mut self.stall);
        v.wire(&mut self.token);
    }
}
