//! Operand-store traffic (`ClockedRun::traffic`): the bytes of A, B and C the array reads
//! from the ideal store and of D it writes, counted during the run, equal the closed forms of
//! each dataflow over shapes with partial tiles, partial folds and several row chunks, for
//! 16-bit, 8-bit and 4-bit (integer) operands (odd element counts: half bytes) and an FP16
//! accumulator. Run alone with `cargo test --test hw traffic::`.
//!
//! The closed forms, in elements (`R x C` array):
//! - `os`: every output tile streams its rows of A and columns of B whole: A `M K ceil(N/C)`,
//!   B `K N ceil(M/R)`; C and D once each, `M N`.
//! - `ws`: every weight tile is loaded once per row chunk (`ceil(M / 1024)` chunks) and every
//!   row of A streams once per column tile: A `M K ceil(N/C)`, B `K N chunks`; C `M N` (read
//!   on the first fold only), D `M N`.

use tensorcore_rtl::gemm::clocked::run_clocked_measured;
use tensorcore_rtl::gemm::memory::run_memory;
use tensorcore_rtl::gemm::{CoreConfig, Gemm};
use tensorcore_rtl::hw::{Dataflow, MemPortConfig, Traffic};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::{Format, E4M3, FP16, FP32};
use tensorcore_rtl::numerics::int::{IntMode, IntOverflow, S4, U4};
use tensorcore_rtl::rtl::TraceConfig;

/// The closed-form traffic in bits of an `m x n x k` problem on `cfg`: element counts of the
/// module's formulas times the operand bits `(a, b)` and the accumulator bits `acc`
/// (written out here, not read from the configuration under test).
fn expected(cfg: &CoreConfig, (m, n, k): (usize, usize, usize), bits: (u64, u64, u64)) -> Traffic {
    let (r, c) = (cfg.rows(), cfg.cols());
    let (a_bits, b_bits, acc_bits) = bits;
    // How often A and B are read whole: A once per column tile of B (os, ws) or per chunk
    // of 1,024 columns of B streamed (is); B once per row tile of A (os), per chunk of 1,024
    // rows of A streamed (ws) or per block of C rows of A held (is).
    let (a_repeats, b_repeats) = match cfg.dataflow() {
        Dataflow::Os => (n.div_ceil(c) as u64, m.div_ceil(r) as u64),
        Dataflow::Ws => (n.div_ceil(c) as u64, m.div_ceil(1024) as u64),
        Dataflow::Is => (n.div_ceil(1024) as u64, m.div_ceil(c) as u64),
    };
    let (m, n, k) = (m as u64, n as u64, k as u64);
    Traffic {
        a_read_bits: m * k * a_repeats * a_bits,
        b_read_bits: k * n * b_repeats * b_bits,
        c_read_bits: m * n * acc_bits,
        d_write_bits: m * n * acc_bits,
    }
}

fn config(fa: Format, fb: Format, mode: AccMode, w: usize, array: (usize, usize)) -> CoreConfig {
    CoreConfig::new(fa, fb, mode, w)
        .with_array(array.0, array.1)
        .expect("a valid array")
}

/// Runs `m x n x k` on `cfg` in both dataflows and compares the measured traffic with the
/// closed form.
fn check(cfg: CoreConfig, (m, n, k): (usize, usize, usize), bits: (u64, u64, u64), seed: u64) {
    for df in Dataflow::ALL {
        let cfg = cfg.with_dataflow(df);
        let label = format!(
            "{df} {}x{} w {} {}x{}x{} {} x {}",
            cfg.rows(),
            cfg.cols(),
            cfg.width,
            m,
            n,
            k,
            cfg.fmt_a,
            cfg.fmt_b
        );
        let g = Gemm::random(m, n, k, cfg, seed).expect("problem");
        let run = run_clocked_measured(&g, None).unwrap_or_else(|e| panic!("{label}: {e}"));
        let got = run
            .run
            .traffic
            .unwrap_or_else(|| panic!("{label}: no traffic"));
        let want = expected(&cfg, (m, n, k), bits);
        assert_eq!(got, want, "{label}");
        // Bytes round half bytes up.
        assert_eq!(got.a_read_bytes(), want.a_read_bits.div_ceil(8), "{label}");
        assert_eq!(got.b_read_bytes(), want.b_read_bits.div_ceil(8), "{label}");
    }
}

/// The shapes: one tile; partial row and column tiles; K spanning several folds with a
/// partial last one (and a partial last PE step at `w > 1`); a square problem.
const SHAPES: [(usize, usize, usize); 5] =
    [(4, 4, 4), (5, 7, 3), (9, 6, 37), (16, 16, 16), (13, 3, 21)];

const ARRAYS: [(usize, usize); 3] = [(4, 4), (2, 3), (16, 16)];

#[test]
fn fp16_traffic_equals_the_closed_forms() {
    for (s, &shape) in SHAPES.iter().enumerate() {
        for (i, &array) in ARRAYS.iter().enumerate() {
            let w = [1, 2, 4][(s + i) % 3];
            let cfg = config(FP16, FP16, AccMode::Ieee, w, array);
            check(cfg, shape, (16, 16, 32), 10 + s as u64);
        }
    }
}

#[test]
fn e4m3_traffic_equals_the_closed_forms() {
    for (s, &shape) in SHAPES.iter().enumerate() {
        let array = ARRAYS[s % ARRAYS.len()];
        let cfg = config(E4M3, E4M3, AccMode::Fused, [1, 4, 8][s % 3], array);
        check(cfg, shape, (8, 8, 32), 20 + s as u64);
    }
}

#[test]
fn four_bit_formats_count_half_bytes() {
    // 3 x 3 x 5 on 4 x 4: A is 15 elements (7.5 bytes) in both dataflows.
    for (s, &shape) in [(3, 3, 5), (5, 7, 3), (9, 6, 37)].iter().enumerate() {
        let array = ARRAYS[s % ARRAYS.len()];
        for (i, (a, b)) in [(S4, S4), (U4, S4)].into_iter().enumerate() {
            let im = IntMode {
                a,
                b,
                overflow: IntOverflow::Wrap,
            };
            let w = [1, 2, 8][(s + i) % 3];
            let cfg = config(a.container(), b.container(), AccMode::Int(im), w, array);
            check(cfg, shape, (4, 4, 32), 30 + s as u64);
        }
    }
    let im = IntMode {
        a: U4,
        b: U4,
        overflow: IntOverflow::SatFinite,
    };
    let cfg = config(U4.container(), U4.container(), AccMode::Int(im), 1, (4, 4));
    let g = Gemm::random(3, 3, 5, cfg, 1).expect("problem");
    let t = run_clocked_measured(&g, None)
        .expect("run")
        .run
        .traffic
        .expect("traffic");
    assert_eq!((t.a_read_bits, t.a_read_bytes()), (60, 8));
}

#[test]
fn an_fp16_accumulator_reads_c_and_writes_d_in_two_bytes() {
    for (s, &shape) in SHAPES.iter().enumerate() {
        let cfg = config(FP16, FP16, AccMode::Ieee, 2, ARRAYS[s % ARRAYS.len()]).with_acc(FP16);
        check(cfg, shape, (16, 16, 16), 50 + s as u64);
    }
    // FP32 stays four bytes (the default the other tests use).
    assert_eq!(config(FP16, FP16, AccMode::Ieee, 1, (4, 4)).acc, FP32);
}

/// Past 1024 rows the weight-stationary core streams A in row chunks and loads every weight
/// tile once per chunk: B is read twice at 1025 rows and three times at 2049.
#[test]
fn ws_reads_b_once_per_row_chunk() {
    for (m, n, k, array) in [(1025, 3, 5, (2, 2)), (2049, 2, 3, (1, 2))] {
        let cfg = config(FP16, FP16, AccMode::Ieee, 1, array);
        check(cfg, (m, n, k), (16, 16, 32), m as u64);
    }
}

/// The TMA memory port does not count on the ideal store's side: no traffic.
#[test]
fn the_memory_port_reports_none() {
    let cfg = config(FP16, FP16, AccMode::Ieee, 1, (4, 4));
    let g = Gemm::random(8, 8, 8, cfg, 3).expect("problem");
    let r = run_memory(&g, &MemPortConfig::default(), None).expect("memory-path run");
    assert_eq!(r.run.run.traffic, None);
}

/// Tracing does not change the counts (the trace samples without re-evaluating reads).
#[test]
fn a_traced_run_counts_the_same() {
    let cfg = config(E4M3, E4M3, AccMode::Fused, 4, (4, 4)).with_dataflow(Dataflow::Ws);
    let g = Gemm::random(9, 6, 37, cfg, 5).expect("problem");
    let dir = std::env::temp_dir().join(format!("tcrtl_traffic_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let trace = TraceConfig::vcd(dir.join("ws.vcd"));
    let traced = run_clocked_measured(&g, Some(&trace)).expect("traced run");
    let plain = run_clocked_measured(&g, None).expect("run");
    std::fs::remove_dir_all(&dir).ok();
    assert_eq!(traced.run.traffic, plain.run.traffic);
    assert!(plain.run.traffic.is_some());
}
