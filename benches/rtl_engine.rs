//! Cycle-engine throughput: simulated cycles per second for the demo designs with tracing off
//! and on, and VCD/FST bytes per cycle (printed). Run with `cargo bench --bench rtl_engine`.
//!
//! - `demo`: the LFSR -> shift register -> FIFO design with a 512-bit history bus (23 signals).
//! - `mac_mesh_4x4`: a 4x4 systolic array of 16-bit multiply-accumulate cells (16 multiply-adds
//!   per cycle, 65 signals), the shape of the tensor core's mesh.

use std::hint::black_box;
use std::path::PathBuf;
use std::time::Instant;

use criterion::{criterion_group, criterion_main, Criterion, Throughput};
use tensorcore_rtl::rtl::demo::Demo;
use tensorcore_rtl::rtl::{Design, Simulator, TraceConfig, TraceFormat};
use tensorcore_rtl::tb::mac_mesh::MacMesh;

const CYCLES: u64 = 10_000;

fn out_dir() -> PathBuf {
    let d = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("waves");
    let _ = std::fs::create_dir_all(&d);
    d
}

fn run_off<D: Design>(top: D) -> Simulator<D> {
    let mut sim = Simulator::new(top).unwrap_or_else(|e| panic!("{e}"));
    sim.run(CYCLES).unwrap_or_else(|e| panic!("{e}"));
    sim
}

fn run_on<D: Design>(top: D, cfg: &TraceConfig) -> u64 {
    let mut sim = Simulator::with_trace(top, cfg).unwrap_or_else(|e| panic!("{e}"));
    sim.run(CYCLES).unwrap_or_else(|e| panic!("{e}"));
    let (_, s) = sim.finish().unwrap_or_else(|e| panic!("{e}"));
    s.map_or(0, |s| s.bytes)
}

/// Prints bytes per cycle and a one-shot cycles/s figure for a longer traced run.
fn report<D: Design>(name: &str, make: impl Fn() -> D) {
    for (fmt, ext) in [(TraceFormat::Vcd, "vcd"), (TraceFormat::Fst, "fst")] {
        let mut cfg = TraceConfig::vcd(out_dir().join(format!("bench_{name}.{ext}")));
        cfg.format = fmt;
        let n = 200_000u64;
        let mut sim = Simulator::with_trace(make(), &cfg).unwrap_or_else(|e| panic!("{e}"));
        let t = Instant::now();
        sim.run(n).unwrap_or_else(|e| panic!("{e}"));
        let (_, s) = sim.finish().unwrap_or_else(|e| panic!("{e}"));
        let secs = t.elapsed().as_secs_f64();
        let bytes = s.map_or(0, |s| s.bytes);
        println!(
            "{name} {ext}: {:.1} bytes/cycle, {:.0} cycles/s traced ({n} cycles, {bytes} bytes)",
            bytes as f64 / n as f64,
            n as f64 / secs
        );
    }
}

fn bench(c: &mut Criterion) {
    report("demo", || {
        Demo::new("demo", 4).unwrap_or_else(|e| panic!("{e}"))
    });
    report("mac_mesh_4x4", || {
        MacMesh::<4>::new().unwrap_or_else(|e| panic!("{e}"))
    });
    let mut g = c.benchmark_group("rtl_engine");
    g.throughput(Throughput::Elements(CYCLES));
    g.sample_size(20);
    g.bench_function("demo/trace_off", |b| {
        b.iter(|| {
            black_box(run_off(
                Demo::new("demo", 4).unwrap_or_else(|e| panic!("{e}")),
            ))
        })
    });
    g.bench_function("mac_mesh_4x4/trace_off", |b| {
        b.iter(|| {
            black_box(run_off(
                MacMesh::<4>::new().unwrap_or_else(|e| panic!("{e}")),
            ))
        })
    });
    let vcd = TraceConfig::vcd(out_dir().join("bench_iter.vcd"));
    g.bench_function("demo/trace_vcd", |b| {
        b.iter(|| run_on(Demo::new("demo", 4).unwrap_or_else(|e| panic!("{e}")), &vcd))
    });
    g.bench_function("mac_mesh_4x4/trace_vcd", |b| {
        b.iter(|| run_on(MacMesh::<4>::new().unwrap_or_else(|e| panic!("{e}")), &vcd))
    });
    let fst = TraceConfig::fst(out_dir().join("bench_iter.fst"));
    g.bench_function("mac_mesh_4x4/trace_fst", |b| {
        b.iter(|| run_on(MacMesh::<4>::new().unwrap_or_else(|e| panic!("{e}")), &fst))
    });
    // Tracing configured but outside the window: the per-cycle cost of "tracing off".
    let idle = TraceConfig::vcd(out_dir().join("bench_idle.vcd")).window(u64::MAX - 1, u64::MAX);
    g.bench_function("mac_mesh_4x4/trace_windowed_out", |b| {
        b.iter(|| run_on(MacMesh::<4>::new().unwrap_or_else(|e| panic!("{e}")), &idle))
    });
    g.finish();
}

criterion_group!(benches, bench);
criterion_main!(benches);
