//! [`MemLevel`]: the global-memory side of the memory system as a trait, so that another level
//! (an L2 in front of HBM, a fixed-latency model, a bank of channels) slots in behind the TMA
//! engine without touching it. The channel is the one [`GlobalMemory`] defines: a valid/ready
//! request ([`GmemReq`]) and an in-order response ([`GmemOut::resp`], its read data in
//! [`MemLevel::resp_data`]).

use super::gmem::{GlobalMemory, GmemFault, GmemOut, GmemReq};
use crate::rtl::Module;

/// A memory level behind the TMA engine, driven through the global-memory channel.
///
/// The contract every level keeps (the TMA engine relies on it):
/// - [`MemLevel::out`] is a function of registers only (call it before [`MemLevel::comb`]);
/// - responses come back in request order, one at the head of the channel until popped;
/// - a write takes effect at its accepting edge, so accesses take effect in acceptance order;
/// - a malformed request is refused with a [`GmemFault`] and dropped.
pub trait MemLevel: Module {
    /// The channel outputs of this cycle (register functions only).
    fn out(&self) -> GmemOut;
    /// The read data of the response at the head of the channel (valid while
    /// [`GmemOut::resp`] is a read).
    fn resp_data(&self) -> &[u8];
    /// One cycle: `req` is the request channel (`valid` = `Some`), `resp_ready` pops the head
    /// response. Returns a fault for a malformed request.
    fn comb(&mut self, req: Option<GmemReq<'_>>, resp_ready: bool) -> Option<GmemFault>;
    /// Bytes the level holds (the address space the requests may name).
    fn bytes(&self) -> u64;
    /// Bytes read through the channel so far.
    fn bytes_read(&self) -> u64;
    /// Requests accepted so far.
    fn requests(&self) -> u64;
    /// Host backdoor: writes bytes at `addr` now (clamped to the store).
    fn host_write(&mut self, addr: u64, data: &[u8]);
    /// Host backdoor: the committed bytes `addr..addr + len` (clamped to the store).
    fn host_read(&self, addr: u64, len: usize) -> &[u8];
}

impl MemLevel for GlobalMemory {
    #[inline]
    fn out(&self) -> GmemOut {
        GlobalMemory::out(self)
    }
    #[inline]
    fn resp_data(&self) -> &[u8] {
        GlobalMemory::resp_data(self)
    }
    #[inline]
    fn comb(&mut self, req: Option<GmemReq<'_>>, resp_ready: bool) -> Option<GmemFault> {
        GlobalMemory::comb(self, req, resp_ready)
    }
    fn bytes(&self) -> u64 {
        GlobalMemory::bytes(self)
    }
    fn bytes_read(&self) -> u64 {
        GlobalMemory::bytes_read(self)
    }
    fn requests(&self) -> u64 {
        GlobalMemory::requests(self)
    }
    fn host_write(&mut self, addr: u64, data: &[u8]) {
        GlobalMemory::host_write(self, addr, data)
    }
    fn host_read(&self, addr: u64, len: usize) -> &[u8] {
        GlobalMemory::host_read(self, addr, len)
    }
}
