//! How the memory-fed port is built ([`MemPortConfig`]) and the limits of its shared-memory
//! layout, which the port (`mem_port/mod.rs`), its layout (`layout.rs`) and its C fetch
//! (`c_fetch.rs`) share.

use crate::hw::memory::MemParams;

/// Most lanes in one shared-memory request.
pub(super) const MAX_REQUEST_LANES: usize = 32;
/// Most C slots (and D slots) in shared memory.
pub const MAX_TILE_SLOTS: usize = 16;
/// Most operand stages (mbarriers left beside the C slots).
pub const MAX_STAGES: usize = 48;

/// How the memory-fed port is built.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemPortConfig {
    /// The memory system's timing and sizes.
    pub params: MemParams,
    /// Operand stages in flight `S` (0: chosen to cover the latency, see
    /// [`MemPortConfig::auto_stages`]).
    pub stages: usize,
    /// Swizzle the operand tiles in shared memory (128B for 128-byte rows); off shows the bank
    /// conflicts an unswizzled layout costs.
    pub swizzle: bool,
}

impl Default for MemPortConfig {
    fn default() -> Self {
        Self {
            params: MemParams::default(),
            stages: 0,
            swizzle: true,
        }
    }
}

impl MemPortConfig {
    /// The stage count that covers the latency: one chunk's loads take `latency` plus their
    /// bytes over the bandwidth, the consumer eats a chunk in `chunk_cycles`; two more stages
    /// absorb the jitter of issue. Clamped to 2..=[`MAX_STAGES`].
    pub fn auto_stages(&self, chunk_bytes: u32, chunk_cycles: u32) -> usize {
        let p = &self.params;
        let bw = p.bytes_per_cycle.min(p.request_bytes).max(1);
        let fill = u64::from(p.latency) + u64::from(chunk_bytes.div_ceil(bw));
        let s = fill.div_ceil(u64::from(chunk_cycles.max(1))) as usize + 2;
        s.clamp(2, MAX_STAGES)
    }
}
