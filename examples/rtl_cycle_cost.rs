//! One clocked GEMM run for counting the engine's instructions per simulated cycle: an
//! 8 x 8 x K FP16 `ieee` w = 1 problem through `gemm::run_clocked`, untraced or traced to a VCD
//! of every signal. Run it under `valgrind --tool=callgrind` for two K values and divide the
//! instruction difference by the cycle difference (start-up cancels); see
//! `docs/performance.md`.
//!
//! `cargo run --release --example rtl_cycle_cost -- K [VCD_PATH]`

use tensorcore_rtl::gemm::{run_clocked, CoreConfig, Gemm};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::rtl::TraceConfig;

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let mut args = std::env::args().skip(1);
    let k: usize = args
        .next()
        .ok_or("usage: rtl_cycle_cost K [VCD_PATH]")?
        .parse()?;
    let trace = args.next().map(TraceConfig::vcd);
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let g = Gemm::random(8, 8, k, cfg, 42)?;
    let run = run_clocked(&g, trace.as_ref())?;
    println!("k {k} cycles {}", run.cycles);
    Ok(())
}
