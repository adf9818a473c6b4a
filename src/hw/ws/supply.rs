//! What the weight-stationary core asks of its operand supply each cycle beyond the reads of
//! [`OperandFeeder`]: whether the next weight row and the next row of A are there, and, once
//! the cycle has settled, what was taken.
//!
//! An ideal store ([`crate::hw::TileBuffer`] and its sparse and MX kin) is always ready and
//! has no registers: every method keeps its default and the core is exactly the ideal-port
//! core. The memory-fed supply ([`super::mem::WsMemoryPort`]) holds the rows in FIFOs filled
//! from shared memory and answers from their registers.

use crate::hw::core::DRow;
use crate::hw::feeder::OperandFeeder;
use crate::hw::mx_feeder::MxTileBuffer;
use crate::hw::sparse_feeder::SparseTileBuffer;
use crate::hw::TileBuffer;
use crate::rtl::Visitor;

/// What the core took from, and handed to, the supply in one cycle.
#[derive(Clone, Copy, Debug, Default)]
pub struct WsIo<'a> {
    /// A weight row was loaded (the supply's next weight row is consumed).
    pub load: bool,
    /// A row of A was fed: `(first, last)`, whether it is on its pass's first fold (its C
    /// will be read at the bottom of the array) and on the last (its D will leave).
    pub feed: Option<(bool, bool)>,
    /// The accumulator block read a row of C at the bottom of column 0.
    pub c_read: bool,
    /// The row of D in the output register this cycle.
    pub d_row: Option<DRow<'a>>,
}

/// The supply's side of the weight-stationary handshake (see the module documentation).
/// Every answer comes from registers, so the controller's decisions settle without a loop.
pub trait WsSupply<const W: usize>: OperandFeeder<W> {
    /// The next weight row is held (the one [`OperandFeeder::b`] will serve).
    #[inline]
    fn w_ready(&self) -> bool {
        true
    }
    /// The next row of A is held, with its row of C if `first`, and room for its row of D if
    /// `last`.
    #[inline]
    fn a_ready(&self, _first: bool, _last: bool) -> bool {
        true
    }
    /// The run may end: `out_last` says the run's last row of D is in the output register.
    #[inline]
    fn done(&self, out_last: bool) -> bool {
        out_last
    }
    /// The supply's update from the settled cycle.
    #[inline]
    fn tick(&mut self, _io: &WsIo<'_>) {}
    /// Visits the supply's registers and wires (its scope, if it has one).
    #[inline]
    fn visit_supply<V: Visitor>(&mut self, _v: &mut V) {}
    /// Bytes of the shared-memory read whose data is in shared memory's read-data register
    /// this cycle (a monitor the runner sums; 0 for an ideal store).
    fn smem_read_bytes(&self) -> u64 {
        0
    }
    /// An error the supply latched (a memory-system misuse).
    fn error(&self) -> Option<String> {
        None
    }
}

impl<const W: usize> WsSupply<W> for TileBuffer {}
impl<const W: usize> WsSupply<W> for SparseTileBuffer {}
impl<const W: usize> WsSupply<W> for MxTileBuffer {}
