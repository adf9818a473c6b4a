//! The memory-path options shared by `tcrtl gemm --memory tma` and `tcrtl tma load`: the
//! global-memory timing and the shared-memory size, with the documented defaults of
//! [`MemParams`] (`docs/memory.md`).

use clap::{Args, ValueEnum};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::MemPortConfig;

/// Where the tensor core's operands come from.
#[derive(Clone, Copy, Debug, PartialEq, Eq, ValueEnum)]
pub enum MemoryPath {
    /// The zero-latency operand store (the cycle counts of docs/timing.md).
    Ideal,
    /// Global memory, TMA loads into shared-memory stages, TMA store of D.
    Tma,
}

/// Global- and shared-memory parameters.
#[derive(Args, Debug, Clone)]
pub struct MemArgs {
    /// Global-memory latency in cycles (default: H100 L2 + DRAM, 237 + 194).
    #[arg(long, value_name = "CYCLES")]
    mem_latency: Option<u32>,
    /// Global-memory bandwidth in bytes per cycle (default: H100 HBM3 per SM, 13).
    #[arg(long, value_name = "BYTES_PER_CYCLE")]
    mem_bandwidth: Option<u32>,
    /// Largest global-memory request in bytes, a power of two in 16..=256 (default 128).
    #[arg(long, value_name = "BYTES")]
    mem_request: Option<u32>,
    /// Global-memory requests in flight at most (default 64).
    #[arg(long, value_name = "N")]
    mem_in_flight: Option<u32>,
    /// Shared-memory size in bytes, a multiple of 128 (default 233472, H100's 228 KiB).
    #[arg(long, value_name = "BYTES")]
    smem_bytes: Option<u32>,
}

impl MemArgs {
    /// The parameters: the defaults with the given options applied, validated.
    pub fn params(&self) -> Result<MemParams, String> {
        let d = MemParams::default();
        let p = MemParams {
            latency: self.mem_latency.unwrap_or(d.latency),
            bytes_per_cycle: self.mem_bandwidth.unwrap_or(d.bytes_per_cycle),
            request_bytes: self.mem_request.unwrap_or(d.request_bytes),
            requests_in_flight: self.mem_in_flight.unwrap_or(d.requests_in_flight),
            smem_bytes: self.smem_bytes.unwrap_or(d.smem_bytes),
            ..d
        };
        p.validate().map_err(|e| e.to_string())?;
        Ok(p)
    }

    /// For `tcrtl memsweep`, whose grid sets latency, bandwidth and requests in flight per
    /// point: the first of those options given here, with the grid option that replaces it.
    pub fn swept_option(&self) -> Option<(&'static str, &'static str)> {
        [
            (self.mem_latency.is_some(), "--mem-latency", "--latencies"),
            (
                self.mem_bandwidth.is_some(),
                "--mem-bandwidth",
                "--bandwidths",
            ),
            (
                self.mem_in_flight.is_some(),
                "--mem-in-flight",
                "--inflight",
            ),
        ]
        .into_iter()
        .find(|(given, _, _)| *given)
        .map(|(_, option, grid)| (option, grid))
    }

    /// True if any memory option was given (they need `--memory tma`).
    pub fn any(&self) -> bool {
        self.mem_latency.is_some()
            || self.mem_bandwidth.is_some()
            || self.mem_request.is_some()
            || self.mem_in_flight.is_some()
            || self.smem_bytes.is_some()
    }
}

/// The memory port's configuration from the `gemm` options: `Some` for `--memory tma`, `None`
/// for the ideal path (where the memory options are an error).
pub fn port_config(
    path: MemoryPath,
    mem: &MemArgs,
    stages: Option<usize>,
    no_swizzle: bool,
) -> Result<Option<MemPortConfig>, String> {
    let config = match path {
        MemoryPath::Tma => Some(MemPortConfig {
            params: mem.params()?,
            stages: stages.unwrap_or(0),
            swizzle: !no_swizzle,
        }),
        MemoryPath::Ideal => {
            if mem.any() || stages.is_some() || no_swizzle {
                return Err(
                    "memory options (--mem-*, --smem-bytes, --stages, --no-swizzle) need --memory tma"
                        .into(),
                );
            }
            None
        }
    };
    if stages == Some(0) {
        return Err("--stages 0: at least 1 stage is needed".into());
    }
    Ok(config)
}
