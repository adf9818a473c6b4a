//! The TMA arbiter (scope `mem.arbiter`): the TMA engine takes one command a cycle, and three
//! roles want it: the D store (a finished box), the producer's C load (a tile's C ahead of
//! its window) and the producer's operand loads (the next box of a chunk's load plan). Stores
//! go first (they free D slots the drain waits on), then C (a window waiting for C stalls the
//! array), then operands (the stages ahead absorb a cycle's delay). The command presented is
//! traced as `tma_cmd`.

use crate::hw::memory::{MbarOp, MbarOpKind, TmaCmd, TmaOp};
use crate::rtl::{Labels, Module, Result as RtlResult, Visitor, Wire};

/// What a TMA command does, as traced on `tma_cmd` (0 is no command).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum TmaKind {
    /// A box of A (dense values, or a sparse A's kept values) into a stage or panel.
    LoadA = 1,
    /// A box of Bᵀ into a stage.
    LoadB = 2,
    /// A box of C into a C slot.
    LoadC = 3,
    /// A box of D from a D slot to global memory.
    StoreD = 4,
    /// A box of a sparse A's metadata E.
    LoadE = 5,
    /// A box of block scales (MX problems: A's scales beside A, B's beside B, or beside the
    /// weights in the weight-stationary path).
    LoadS = 6,
}

impl TmaKind {
    /// The traced code of the command (1..=6).
    pub const fn code(self) -> u8 {
        self as u8
    }
}

/// Labels of the `tma_cmd` wire: which command the port presents this cycle.
const CMD_LABELS: Labels = &[
    (0, "-"),
    (TmaKind::LoadA as u64, "load_a"),
    (TmaKind::LoadB as u64, "load_b"),
    (TmaKind::LoadC as u64, "load_c"),
    (TmaKind::StoreD as u64, "store_d"),
    (TmaKind::LoadE as u64, "load_e"),
    (TmaKind::LoadS as u64, "load_s"),
];

/// One role's bid for the TMA engine: the command, what it is, and the barrier operation that
/// goes with it (the `arrive.expect_tx` of a load's bytes) when it is granted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TmaRequest {
    /// The command.
    pub cmd: TmaCmd,
    /// Its kind.
    pub kind: TmaKind,
    /// The barrier operation posted with it, if any.
    pub expect: Option<MbarOp>,
}

impl TmaRequest {
    /// A TMA store of descriptor `desc`'s box at `coords` from shared memory at `smem_addr`.
    pub fn store(desc: usize, coords: [i32; 5], smem_addr: u32) -> Self {
        Self {
            cmd: TmaCmd {
                op: TmaOp::Store,
                desc,
                coords,
                smem_addr,
                mbar: 0,
            },
            kind: TmaKind::StoreD,
            expect: None,
        }
    }

    /// A TMA load of kind `kind` of descriptor `desc`'s box at `coords` into shared memory at
    /// `smem_addr`, completing on mbarrier `bar`, which expects its `bytes` with the command.
    pub fn load(
        kind: TmaKind,
        desc: usize,
        coords: [i32; 5],
        smem_addr: u32,
        (bar, bytes): (usize, u32),
    ) -> Self {
        Self {
            cmd: TmaCmd {
                op: TmaOp::Load,
                desc,
                coords,
                smem_addr,
                mbar: bar,
            },
            kind,
            expect: Some(MbarOp {
                bar,
                op: MbarOpKind::ArriveExpectTx(bytes),
            }),
        }
    }
}

/// The arbiter (see the module documentation).
pub struct TmaArbiter {
    tma_cmd: Wire<u8>,
}

impl TmaArbiter {
    pub(crate) fn new() -> RtlResult<Self> {
        Ok(Self {
            tma_cmd: Wire::new("tma_cmd", 3, 0u8)?
                .with_labels(CMD_LABELS)
                .in_overview(),
        })
    }

    /// The command granted this cycle: none unless the port is set up and the engine is
    /// ready; else the store, else the C load, else the operand load (the lower bids are
    /// only formed when the higher ones are absent).
    pub(crate) fn comb(
        &mut self,
        ready: bool,
        store: impl FnOnce() -> Option<TmaRequest>,
        c_load: impl FnOnce() -> Option<TmaRequest>,
        operand: impl FnOnce() -> Option<TmaRequest>,
    ) -> Option<TmaRequest> {
        let grant = if ready {
            store().or_else(c_load).or_else(operand)
        } else {
            None
        };
        self.tma_cmd.set(grant.map_or(0, |g| g.kind.code()));
        grant
    }
}

impl Module for TmaArbiter {
    fn name(&self) -> &str {
        "arbiter"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.wire(&mut self.tma_cmd);
    }
}
