//! The cost of counting toggles for `--energy` against the untraced run, at any problem
//! length and batch: runs the 8 x 8 x K FP16 `ieee` GEMM of the `tensor_core` bench
//! untraced and with `gemm::energy::counting_only`, alternately, `REPS` times each, and
//! prints the median wall-clock time of each and their ratio. Timing two K values separates
//! a traced run's fixed set-up from its cost a cycle (`docs/performance.md`).
//!
//! `cargo run --release --example counting_cost -- K [W [REPS [BATCH]]]` (W lanes a PE,
//! default 1; REPS default 20; BATCH the counter's batch in traced cycles, default the one
//! it chooses, `TraceConfig::counting_batch`).

use std::time::Instant;

use tensorcore_rtl::gemm::{run_clocked, CoreConfig, Gemm};
use tensorcore_rtl::hw::Dataflow;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::rtl::TraceConfig;

/// Argument `i` parsed, or `default` if absent; exits with a usage line if it does not parse.
fn arg<T: std::str::FromStr>(args: &[String], i: usize, default: Option<T>) -> T {
    match (args.get(i).map(|s| s.parse::<T>()), default) {
        (Some(Ok(v)), _) => v,
        (None, Some(d)) => d,
        _ => {
            eprintln!("usage: counting_cost K [W [REPS [BATCH]]]");
            std::process::exit(2);
        }
    }
}

/// The median of `times` (seconds).
fn median(mut times: Vec<f64>) -> f64 {
    times.sort_by(f64::total_cmp);
    times[times.len() / 2]
}

/// Seconds one run of `g` takes, traced as `trace` says.
fn timed(g: &Gemm, trace: Option<&TraceConfig>) -> f64 {
    let start = Instant::now();
    let run = run_clocked(g, trace).unwrap_or_else(|e| panic!("{e}"));
    std::hint::black_box(run.cycles);
    start.elapsed().as_secs_f64()
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let k: usize = arg(&args, 1, None);
    let width: usize = arg(&args, 2, Some(1));
    let reps: usize = arg::<usize>(&args, 3, Some(20)).max(1);
    let batch: Option<u32> = args.get(4).map(|_| arg(&args, 4, None));
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, width);
    let g = Gemm::random(8, 8, k, cfg, 42).unwrap_or_else(|e| panic!("{e}"));
    let counting = counting(batch);
    let (mut untraced, mut counted) = (Vec::new(), Vec::new());
    for _ in 0..reps {
        untraced.push(timed(&g, None));
        counted.push(timed(&g, Some(&counting)));
    }
    let (u, c) = (median(untraced), median(counted));
    println!(
        "K = {k}, w = {width}: untraced {:.3} ms, counting {:.3} ms, ratio {:.3} (medians of {reps})",
        u * 1e3,
        c * 1e3,
        c / u
    );
}

/// What `--energy` counts, with the batch `batch` if given.
fn counting(batch: Option<u32>) -> TraceConfig {
    let trace = tensorcore_rtl::gemm::energy::counting_only(Dataflow::Os);
    match batch {
        Some(n) => trace.counting_batch(n),
        None => trace,
    }
}
