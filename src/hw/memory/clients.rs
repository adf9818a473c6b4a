//! Several clients on one memory system: the arbiter that shares the TMA command port and the
//! two shared-memory ports among `N` requesters (the tensor cores of an SM, a producer and a
//! consumer...), each talking to the memory system through a typed request ([`MemIn`]) and
//! grant ([`MemOut`]) pair of its own.
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
//!   (`read_client`): only its [`MemOut::smem_read_valid`] is high in the next cycle.
//!
//! Granted, a client's request goes through exactly the single-requester path
//! ([`MemorySystem::comb`]), so one client sees the timing of `docs/memory.md`, and a memory
//! system built without clients ([`MemorySystem::new`]) has no arbiter and no extra signal.

use super::level::MemLevel;
use super::mbarrier::MbarOp;
use super::system::{MemIn, MemOut, MemorySystem};
use crate::rtl::{Module, Reg, Result, Visitor};

/// Most clients of one memory system.
pub const MAX_CLIENTS: usize = 16;

/// The arbiter's registers (scope `clients`).
pub struct ClientArbiter {
    clients: usize,
    rr_cmd: Reg<u8>,
    rr_read: Reg<u8>,
    rr_write: Reg<u8>,
    hold_read: Reg<u8>,
    hold_write: Reg<u8>,
    read_client: Reg<u8>,
    /// Every client's mbarrier operations of the cycle, in client order (a buffer, not state).
    ops: Vec<MbarOp>,
}

impl ClientArbiter {
    /// The arbiter of `clients` clients (2..=[`MAX_CLIENTS`]).
    fn new(clients: usize) -> Result<Self> {
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
    fn pick(&self, last: u8, hold: u8, wants: impl Fn(usize) -> bool) -> Option<usize> {
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

impl<G: MemLevel> MemorySystem<G> {
    /// The memory system serving `clients` clients through [`MemorySystem::comb_clients`]
    /// (1 to [`MAX_CLIENTS`]; one client needs no arbiter and gets none).
    pub fn with_clients(
        mut self,
        clients: usize,
    ) -> std::result::Result<Self, super::MemBuildError> {
        if clients == 0 || clients > MAX_CLIENTS {
            return Err(super::MemBuildError::Clients(ClientCountError(clients)));
        }
        self.arbiter = if clients > 1 {
            Some(ClientArbiter::new(clients)?)
        } else {
            None
        };
        Ok(self)
    }

    /// Clients served.
    pub fn clients(&self) -> usize {
        self.arbiter.as_ref().map_or(1, |a| a.clients)
    }

    /// One cycle with every client's requests: `reqs[i]` is client `i`'s request port and
    /// `grants[i]` receives its grants (entries past [`MemorySystem::clients`] are ignored; a
    /// missing client requests nothing). See the module documentation for the arbitration.
    pub fn comb_clients(&mut self, reqs: &[MemIn<'_>], grants: &mut [MemOut]) {
        let Some(mut arb) = self.arbiter.take() else {
            let one = self.comb(reqs.first().unwrap_or(&MemIn::default()));
            if let Some(g) = grants.first_mut() {
                *g = one;
            }
            return;
        };
        let n = arb.clients;
        let req = |i: usize| reqs.get(i).copied().unwrap_or_default();
        let cmd = arb.pick(arb.rr_cmd.q(), 0, |i| req(i).tma_cmd.is_some());
        let read = arb.pick(arb.rr_read.q(), arb.hold_read.q(), |i| {
            req(i).smem_read.is_some()
        });
        let write = arb.pick(arb.rr_write.q(), arb.hold_write.q(), |i| {
            req(i).smem_write.is_some()
        });
        let mut ops = std::mem::take(&mut arb.ops);
        ops.clear();
        for i in 0..n {
            ops.extend_from_slice(req(i).mbar_ops);
        }
        let granted = MemIn {
            tma_cmd: cmd.and_then(|i| req(i).tma_cmd),
            smem_read: read.and_then(|i| req(i).smem_read),
            smem_write: write.and_then(|i| req(i).smem_write),
            mbar_ops: &ops,
        };
        let read_valid_for = self.consumer_read_pending().then(|| arb.read_client.q());
        let out = self.comb(&granted);
        // The round-robin pointers move past a client whose request was accepted; a
        // shared-memory request not yet accepted holds its port.
        if let Some(i) = cmd.filter(|_| out.tma_ready) {
            arb.rr_cmd.set_d(i as u8);
        }
        match read {
            Some(i) if out.smem_read_ready => {
                arb.rr_read.set_d(i as u8);
                arb.hold_read.set_d(0);
                arb.read_client.set_d(i as u8);
            }
            Some(i) => arb.hold_read.set_d(i as u8 + 1),
            None => arb.hold_read.set_d(0),
        }
        match write {
            Some(i) if out.smem_write_ready => {
                arb.rr_write.set_d(i as u8);
                arb.hold_write.set_d(0);
            }
            Some(i) => arb.hold_write.set_d(i as u8 + 1),
            None => arb.hold_write.set_d(0),
        }
        for (i, g) in grants.iter_mut().enumerate().take(n) {
            *g = MemOut {
                tma_ready: out.tma_ready && cmd == Some(i),
                smem_read_ready: out.smem_read_ready && read == Some(i),
                smem_read_valid: out.smem_read_valid && read_valid_for == Some(i as u8),
                smem_write_ready: out.smem_write_ready && write == Some(i),
                ..out
            };
        }
        arb.ops = ops;
        self.arbiter = Some(arb);
    }
}
