//! The tensor core's operand port: the clocked seam between the operand supply and the array.
//!
//! An [`OperandPort`] is a block in the design tree (visited, traced, in the waves) that
//! serves the steps of every tile in order through a valid/ready handshake, as Gemmini's
//! `Decoupled` mesh inputs:
//! - [`OperandPort::valid`]: the port holds the operands of the *next* step in order, from
//!   its registers only; [`OperandPort::operands`] reads them (one A lane group per mesh row,
//!   one B lane group per column, and the port's [`OperandPort::Extras`]: nothing for a dense
//!   port, the 2:4 selects beside A, or the block scales beside A and B);
//! - the controller's `ready` depends only on the controller's registers, so
//!   `take = valid && ready` is settled without a combinational loop; on `take` the step
//!   enters the skew and both the port and the controller advance at the edge; otherwise the
//!   array sees a bubble and nothing advances (any stall is legal);
//! - C enters through the column shift windows: a window that loads C of tile `t` starts only
//!   when [`OperandPort::c_ready`] says that tile's C is available, and reads its rows with
//!   [`OperandPort::c_row`] during the window;
//! - D leaves through the output register: every row is handed to [`OperandPort::comb`] in
//!   the cycle it sits there, and a window that drains a tile starts only when
//!   [`OperandPort::d_ready`] has room for it;
//! - [`OperandPort::finished`] tells the controller that every result has left the port
//!   (for a memory-backed port: stored to global memory), the last condition of `Done`.
//!
//! [`IdealPort`] is the zero-latency implementation over any [`OperandFeeder`] (an ideal
//! shared memory with one read port per edge lane): always valid, C always ready, D always
//! accepted, so a run on it takes exactly the cycles of `docs/timing.md`.

use super::core::DRow;
use super::extras::EdgeExtras;
use super::feeder::{LaneGroup, OperandFeeder, Traffic};
use crate::rtl::{Module, Reg, Result, Visitor, Wire};

/// One step of operands offered at the array's edge: a buffer sized for the array when the
/// core is built, which the port fills for every step taken.
#[derive(Clone, Debug, PartialEq)]
pub struct StepOperands<const W: usize, X> {
    /// A: one lane group per mesh row (0 lanes: a row past M).
    pub a: Vec<LaneGroup<W>>,
    /// B: one lane group per mesh column (0 lanes: a column past N).
    pub b: Vec<LaneGroup<W>>,
    /// What travels beside them ([`EdgeExtras`]: `()` for a dense supply).
    pub extras: X,
}

impl<const W: usize, X: EdgeExtras<W>> StepOperands<W, X> {
    /// An empty step for an array of `rows x cols` PEs.
    pub fn new(rows: usize, cols: usize) -> Self {
        Self {
            a: vec![LaneGroup::default(); rows],
            b: vec![LaneGroup::default(); cols],
            extras: X::sized(rows, cols),
        }
    }
}

/// What the core tells the port in one cycle.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct PortIo<'a> {
    /// The core took this cycle's step (`valid && ready`).
    pub take: bool,
    /// The core is ready for a step this cycle (traced by the port beside `valid`).
    pub ready: bool,
    /// A column shift window reads C row `.1` of tile `.0` this cycle.
    pub c_read: Option<(usize, usize)>,
    /// The row of D in the output register this cycle.
    pub d_row: Option<DRow<'a>>,
    /// A drain window of tile `.0` started this cycle (its `R` rows will follow).
    pub d_claim: Option<usize>,
    /// The tile whose C the next shift window will load (none once every C is loaded), so a
    /// port can tell when C is urgent.
    pub c_next: Option<usize>,
}

/// The operand supply of the tensor core as a clocked block (see the module documentation).
pub trait OperandPort<const W: usize>: Module {
    /// What the port sends beside the operands; its type chooses the core's datapath and
    /// side skews when the core is built.
    type Extras: EdgeExtras<W>;
    /// The problem's `(m, n, k)` (`k` counts kept positions for a sparse port).
    fn dims(&self) -> (usize, usize, usize);
    /// What the core is built for besides its configuration ([`EdgeExtras::Spec`]).
    fn spec(&self) -> <Self::Extras as EdgeExtras<W>>::Spec;
    /// The port offers the next step this cycle (from its registers only).
    fn valid(&self) -> bool;
    /// Writes the operands of the next step into `out`, every lane group and extra of it
    /// (called only when [`OperandPort::valid`] and the core is ready, i.e. when the step is
    /// taken).
    fn operands(&self, out: &mut StepOperands<W, Self::Extras>);
    /// C of tile `tile` can be read this cycle and the next `R - 1`.
    fn c_ready(&self, _tile: usize) -> bool {
        true
    }
    /// Row `row` of C of tile `tile` into `out`, one accumulator word per mesh column (0
    /// outside the problem).
    fn c_row(&self, tile: usize, row: usize, out: &mut [u32]);
    /// The port has room for the `R` rows of one more drained tile.
    fn d_ready(&self) -> bool {
        true
    }
    /// Every result that reached the port has left it (stored), and nothing is in flight.
    fn finished(&self) -> bool {
        true
    }
    /// The port's combinational phase for this cycle's handshake.
    fn comb(&mut self, io: &PortIo<'_>);
    /// Cycles in which a step was taken while loads were in flight behind the port (a
    /// counter register of the port; 0 for a port without memory behind it).
    fn overlap_cycles(&self) -> u64 {
        0
    }
    /// An error the port latched (a memory-system misuse), reported by the runner.
    fn error(&self) -> Option<String> {
        None
    }
    /// Bytes of the shared-memory read whose data is in shared memory's read-data register
    /// this cycle (a monitor the runner sums: no register or wire of its own; 0 for a port
    /// without shared memory behind it).
    fn smem_read_bytes(&self) -> u64 {
        0
    }
    /// What the operand store behind the port has served of A, B and C, if it counts it
    /// ([`Traffic`]; D is counted by the runner). `None`, the default, for a port that does
    /// not.
    fn traffic(&self) -> Option<Traffic> {
        None
    }
}

/// The zero-latency operand port over an [`OperandFeeder`] (scope `feeder`).
///
/// Registers `tile` and `step` hold the address of the next step; they advance on `take`.
/// The offer is read combinationally from the feeder at that address (an ideal memory with a
/// read port per edge lane), so `valid` is high until every step has been taken.
pub struct IdealPort<F> {
    feeder: F,
    steps: usize,
    tiles: usize,
    tile: Reg<u32>,
    step: Reg<u32>,
    valid: Wire<bool>,
    ready: Wire<bool>,
    take: Wire<bool>,
}

impl<F> IdealPort<F> {
    /// A port serving `feeder`'s problem as `tiles` tiles of `steps` steps.
    pub fn new(feeder: F, tiles: usize, steps: usize) -> Result<Self> {
        Ok(Self {
            feeder,
            steps,
            tiles,
            tile: Reg::new("tile", 32, 0)?,
            step: Reg::new("step", 32, 0)?,
            valid: Wire::new("valid", 1, false)?,
            ready: Wire::new("ready", 1, false)?,
            take: Wire::new("take", 1, false)?,
        })
    }

    /// The feeder behind the port.
    pub fn feeder(&self) -> &F {
        &self.feeder
    }

    fn next(&self) -> Option<(usize, usize)> {
        let (tile, step) = (self.tile.q() as usize, self.step.q() as usize);
        (tile < self.tiles).then_some((tile, step))
    }
}

impl<F> Module for IdealPort<F> {
    fn name(&self) -> &str {
        "feeder"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.tile);
        v.reg(&mut self.step);
        v.wire(&mut self.valid);
        v.wire(&mut self.ready);
        v.wire(&mut self.take);
    }
}

impl<const W: usize, F: OperandFeeder<W>> OperandPort<W> for IdealPort<F> {
    type Extras = F::Extras;

    fn dims(&self) -> (usize, usize, usize) {
        self.feeder.dims()
    }

    fn spec(&self) -> <F::Extras as EdgeExtras<W>>::Spec {
        self.feeder.spec()
    }

    #[inline]
    fn valid(&self) -> bool {
        self.next().is_some()
    }

    #[inline]
    fn operands(&self, out: &mut StepOperands<W, F::Extras>) {
        let Some((tile, step)) = self.next() else {
            return;
        };
        self.feeder.step_lanes(tile, step, &mut out.a, &mut out.b);
        self.feeder.extras(tile, step, &mut out.extras);
    }

    fn c_row(&self, tile: usize, row: usize, out: &mut [u32]) {
        self.feeder.c_row(tile, row, out);
    }

    fn traffic(&self) -> Option<Traffic> {
        self.feeder.traffic()
    }

    #[inline]
    fn comb(&mut self, io: &PortIo<'_>) {
        self.valid.set(self.next().is_some());
        self.ready.set(io.ready);
        self.take.set(io.take);
        if io.take {
            let step = self.step.q() as usize + 1;
            if step == self.steps {
                self.step.set_d(0);
                self.tile.set_d(self.tile.q() + 1);
            } else {
                self.step.set_d(step as u32);
            }
        }
    }
}
