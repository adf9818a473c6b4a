//! [`MemParams`]: the memory system's timing and size parameters, with defaults taken from
//! the timing anchors of docs/memory.md ("Facts and sources").

/// Timing and sizes of the memory system.
///
/// Defaults (and where they come from):
/// - `latency = 431` cycles: Accel-Sim's tuned H100 configuration puts an L2 hit at 237 cycles
///   and DRAM at 194 more (237 + 194).
/// - `bytes_per_cycle = 13`: an H100 SXM's 3.35 TB/s of HBM3 shared by 132 SMs at 1980 MHz is
///   12.8 bytes per cycle per SM, rounded up.
/// - `request_bytes = 128`: one L2 line (128 B with 32-B sectors on H100). Gemmini's DMA uses
///   64-B requests; both are powers of two and either can be set.
/// - `requests_in_flight = 64`: by Little's law a stream needs latency x bandwidth bytes in
///   flight, 431 x 13 = 5603 B = 44 requests of 128 B; 64 leaves headroom (Gemmini's DMA keeps
///   only 16, which at this latency would cap a stream at 16 x 128 / 431 = 4.8 B/cycle).
/// - `smem_bytes = 233472` (228 KiB): H100's shared-memory capacity per SM.
/// - `banks = 32`, `bank_bytes = 4`: shared memory on compute capability >= 5.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct MemParams {
    /// Global-memory latency in cycles: a request accepted at cycle `t` answers at
    /// `t + max(latency, 1)` at the earliest.
    pub latency: u32,
    /// Global-memory bandwidth in bytes per cycle, enforced at request acceptance (a token
    /// bucket); at most one request is accepted per cycle, so the effective bandwidth is
    /// `min(bytes_per_cycle, request_bytes)`.
    pub bytes_per_cycle: u32,
    /// The largest global-memory request in bytes (a power of two, 16..=256).
    pub request_bytes: u32,
    /// Global-memory requests outstanding at most (1..=4096).
    pub requests_in_flight: u32,
    /// Shared-memory size in bytes (a multiple of 128, at most 16 MiB).
    pub smem_bytes: u32,
    /// Shared-memory banks (32).
    pub banks: u32,
    /// Bytes per bank word (4).
    pub bank_bytes: u32,
}

impl Default for MemParams {
    fn default() -> Self {
        Self {
            latency: 431,
            bytes_per_cycle: 13,
            request_bytes: 128,
            requests_in_flight: 64,
            smem_bytes: 228 * 1024,
            banks: 32,
            bank_bytes: 4,
        }
    }
}

/// A parameter set that cannot be built.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ParamError {
    /// Zero bandwidth would never accept a request.
    #[error("memory parameter bytes_per_cycle: 0 (must be at least 1)")]
    ZeroBandwidth,
    /// The request size is not a power of two in 16..=256.
    #[error("memory parameter request_bytes: {0} (must be a power of two in 16..=256)")]
    RequestBytes(u32),
    /// Requests in flight outside 1..=4096.
    #[error("memory parameter requests_in_flight: {0} (must be in 1..=4096)")]
    RequestsInFlight(u32),
    /// Shared-memory size not a positive multiple of 128 or above 16 MiB.
    #[error(
        "memory parameter smem_bytes: {0} (must be a positive multiple of 128, at most 16 MiB)"
    )]
    SmemBytes(u32),
    /// Banks other than 32 or bank width other than 4 (the bank rule of the design).
    #[error(
        "memory parameter banks x bank_bytes: {banks} x {bank_bytes} (only 32 x 4 is modelled)"
    )]
    Banks {
        /// Banks asked for.
        banks: u32,
        /// Bank width asked for.
        bank_bytes: u32,
    },
    /// Latency above 2^20 cycles.
    #[error("memory parameter latency: {0} (must be at most 1048576 cycles)")]
    Latency(u32),
}

impl MemParams {
    /// Checks every parameter; the first broken rule is the error.
    pub fn validate(&self) -> Result<(), ParamError> {
        if self.bytes_per_cycle == 0 {
            return Err(ParamError::ZeroBandwidth);
        }
        if !self.request_bytes.is_power_of_two() || !(16..=256).contains(&self.request_bytes) {
            return Err(ParamError::RequestBytes(self.request_bytes));
        }
        if !(1..=4096).contains(&self.requests_in_flight) {
            return Err(ParamError::RequestsInFlight(self.requests_in_flight));
        }
        if self.smem_bytes == 0 || !self.smem_bytes.is_multiple_of(128) || self.smem_bytes > 1 << 24
        {
            return Err(ParamError::SmemBytes(self.smem_bytes));
        }
        if self.banks != 32 || self.bank_bytes != 4 {
            return Err(ParamError::Banks {
                banks: self.banks,
                bank_bytes: self.bank_bytes,
            });
        }
        if self.latency > 1 << 20 {
            return Err(ParamError::Latency(self.latency));
        }
        Ok(())
    }
}
