//! Several clients on one memory system (`MemorySystem::with_clients`,
//! `MemorySystem::comb_clients`): the arbiter that shares the TMA command port and the
//! two shared-memory ports among `N` requesters (the tensor cores of an SM, a producer and a
//! consumer...), each talking to the memory system through a typed request (`MemIn`) and
//! grant (`MemOut`) pair of its own.
//!
//! # Arbitration (one [`ClientArbiter`], scope `clients`)
//! - Each resource (the TMA command port, the shared-memory read port, the write port) is
//!   granted to one requesting client a cycle, round robin: the search starts at the client
//!   after the one last granted (`rr_cmd`, `rr_read`, `rr_write`).
//! - A shared-memory request that needs several passes (bank conflicts) keeps its port until
//!   its last pass: the client that was granted and not yet accepted is granted again first
//!   (`hold_read`, `hold_write`: that client's number plus one, 0 for none), so the shared
//!   memory never sees a request change under a pass.
//! - mbarrier operations are not arbitrated: every client's operations of the cycle apply, in
//!   client order, then the TMA's `complete_tx`, as one requester's would.
//! - The read data of a granted read come back to the client that was granted
//!   (`read_client`): only its `MemOut::smem_read_valid` is high in the next cycle.
//!
//! Granted, a client's request goes through exactly the single-requester path
//! (`MemorySystem::comb`), so one client sees the timing of `docs/memory.md`, and a memory
//! system built without clients (`MemorySystem::new`) has no arbiter and no extra signal.

use super::mbarrier::MbarOp;
use crate::rtl::{Module, Reg, Result, Visitor};

/// Most clients of one memory system.
pub const MAX_CLIENTS: usize = 16;

/// The arbiter's registers (scope `clients`).
pub struct ClientArbiter {
    pub(super) clients: usize,
    pub(super) rr_cmd: Reg<u8>,
    pub(super) rr_read: Reg<u8>,
    pub(super) rr_write: Reg<u8>,
    pub(super) hold_read: Reg<u8>,
    pub(super) hold_write: Reg<u8>,
    pub(super) read_client: Reg<u8>,
    /// Every client's mbarrier operations of the cycle, in client order (a buffer, not state).
    pub(super) ops: Vec<MbarOp>,
}

impl ClientArbiter {
    /// The arbiter of `clients` clients (2..=[`MAX_CLIENTS`]).
    pub(super) fn new(clients: usize) -> Result<Self> {
        let reg = |name: &'static str| Reg::new(name, 8, 0u8);
        Ok(Self {
            clients,
            rr_cmd: reg("rr_cmd")?,
            rr_read: reg("rr_read")?,
            rr_write: reg("rr_write")?,
            hold_read: reg("hold_read")?,
            hold_write: reg("hold_write")?,
            read_client: reg("read_client")?,
            ops: Vec::new(),
        })
    }

    /// The client granted among those `wants` names: the held one if it still asks, else the
    /// first asking at or after the one after `last` (round robin).
    pub(super) fn pick(&self, last: u8, hold: u8, wants: impl Fn(usize) -> bool) -> Option<usize> {
        let n = self.clients;
        if hold > 0 && wants(usize::from(hold - 1)) {
            return Some(usize::from(hold - 1));
        }
        (1..=n)
            .map(|k| (usize::from(last) + k) % n)
            .find(|&i| wants(i))
    }
}

impl Module for ClientArbiter {
    fn name(&self) -> &str {
        "clients"
    }
    fn visit<V: Visitor>(&mut self, v: &mut V) {
        v.reg(&mut self.rr_cmd);
        v.reg(&mut self.rr_read);
        v.reg(&mut self.rr_write);
        v.reg(&mut self.hold_read);
        v.reg(&mut self.hold_write);
        v.reg(&mut self.read_client);
    }
}

/// Why a memory system cannot serve the clients asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
#[error("a memory system serves 1 to {MAX_CLIENTS} clients, not {0}")]
pub struct ClientCountError(pub usize);
