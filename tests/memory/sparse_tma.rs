//! 2:4 sparse GEMMs through the memory path (kept A values, metadata and B in global memory ->
//! TMA -> shared-memory stages -> the memory-fed port -> the core in sparse mode -> TMA store
//! of D) equal the ideal-path sparse run bit for bit (D read back from global memory, and the
//! flags) and `verify::sparse`'s independent reference, for every format pair, mode and
//! preset, every width the port takes, ragged shapes, FP16 output, and tight memory; a sparse
//! run loads half of A's bytes plus the metadata.

use crate::common::waves::var_widths;
use tensorcore_rtl::gemm::{run_memory, CoreConfig};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::MemPortConfig;
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::sparse::{run_clocked_sparse, run_memory_sparse, SparseGemm};
use tensorcore_rtl::verify::sparse::{sparse_reference, SparseRef};

const PAIRS: [(Format, Format); 6] = [
    (E4M3, E4M3),
    (E5M2, E5M2),
    (FP16, FP16),
    (BF16, BF16),
    (E4M3, E5M2),
    (E5M2, E4M3),
];

fn modes(fa: Format, fb: Format) -> Vec<AccMode> {
    let mut v = vec![AccMode::Ieee, AccMode::Fused];
    for p in Preset::ALL {
        if let Ok(params) = p.params(fa, fb) {
            v.push(AccMode::Nvidia(params));
        }
    }
    v
}

fn cfg(fa: Format, fb: Format, mode: AccMode, width: usize, acc: Format) -> CoreConfig {
    CoreConfig::new(fa, fb, mode, width).with_acc(acc)
}

fn pc(latency: u32, bw: u32, stages: usize, swizzle: bool) -> MemPortConfig {
    MemPortConfig {
        params: MemParams {
            latency,
            bytes_per_cycle: bw,
            ..MemParams::default()
        },
        stages,
        swizzle,
    }
}

/// Runs `g` on both paths, compares D and flags, and checks D against `verify::sparse` where
/// the reference models the mode (ieee, fused); returns the memory run's cycles.
fn same_as_ideal(g: &SparseGemm, pc: &MemPortConfig) -> u64 {
    let what = format!("{}x{}x{} {:?} {:?}", g.m, g.n, g.k, g.cfg, pc);
    if tensorcore_rtl::hw::pe::fp::flushes_inputs(&g.cfg) {
        // The cdna2 rule: CDNA2 has no structured sparsity, so both paths refuse the run.
        for e in [
            run_clocked_sparse(g, None).err().map(|e| e.to_string()),
            run_memory_sparse(g, pc, None).err().map(|e| e.to_string()),
        ] {
            let e = e.unwrap_or_else(|| panic!("{what}: a cdna2 sparse run was accepted"));
            assert!(e.contains("cdna2"), "{what}: {e}");
        }
        return 0;
    }
    let ideal = run_clocked_sparse(g, None).expect("ideal sparse run");
    let mem = run_memory_sparse(g, pc, None).unwrap_or_else(|e| panic!("{what}: {e}"));
    assert_eq!(mem.run.run.out, ideal.out, "{what}");
    assert!(mem.run.run.cycles >= ideal.cycles, "{what}");
    let how = match g.cfg.mode {
        AccMode::Ieee => Some(SparseRef::Ieee),
        AccMode::Fused => Some(SparseRef::Fused { width: g.cfg.width }),
        _ => None,
    };
    if let Some(how) = how {
        let want = sparse_reference(&g.reference_operands(), how);
        assert_eq!(mem.run.run.out.d, want, "{what} against verify::sparse");
    }
    let es = (g.cfg.acc.width() / 8) as u64;
    assert_eq!(mem.counters.bytes_stored, (g.m * g.n) as u64 * es, "{what}");
    mem.run.run.cycles
}

/// Every format pair, every mode and preset, every width (FP8 up to 32, 16-bit formats up
/// to 16), on a ragged shape spanning two K chunks and two tile rows and columns.
#[test]
fn every_format_mode_and_width_matches_the_ideal_sparse_run() {
    let mut ran = 0;
    for (p, &(fa, fb)) in PAIRS.iter().enumerate() {
        let widths: &[usize] = if fa.width() == 8 && fb.width() == 8 {
            &[1, 2, 4, 8, 16, 32]
        } else {
            &[1, 2, 4, 8, 16]
        };
        for (mi, mode) in modes(fa, fb).into_iter().enumerate() {
            for (wi, &w) in widths.iter().enumerate() {
                let seed = (p * 100 + mi * 10 + wi) as u64;
                let g = SparseGemm::random(6, 7, 140, cfg(fa, fb, mode, w, FP32), seed)
                    .expect("problem");
                same_as_ideal(&g, &MemPortConfig::default());
                ran += 1;
            }
        }
    }
    assert!(ran >= 6 * 2 * 5, "{ran} runs");
}

/// FP16 output: C and D move two bytes an element, D equals the ideal sparse run's.
#[test]
fn fp16_output_matches_the_ideal_sparse_run() {
    for (fa, fb) in [(FP16, FP16), (E4M3, E4M3), (BF16, BF16)] {
        for mode in [AccMode::Ieee, AccMode::Fused] {
            for (w, (m, n, k)) in [(1, (5, 9, 12)), (4, (9, 6, 136)), (8, (4, 12, 260))] {
                let g = SparseGemm::random(m, n, k, cfg(fa, fb, mode, w, FP16), w as u64)
                    .expect("problem");
                same_as_ideal(&g, &MemPortConfig::default());
            }
        }
    }
    // nvidia with FP16 output: compared with the ideal sparse run only.
    for p in Preset::ALL {
        if let Ok(params) = p.params_for(FP16, FP16, FP16) {
            let g = SparseGemm::random(
                7,
                5,
                72,
                cfg(FP16, FP16, AccMode::Nvidia(params), 8, FP16),
                3,
            )
            .expect("problem");
            same_as_ideal(&g, &MemPortConfig::default());
        }
    }
}

/// Ragged shapes (M, N not multiples of 4; K not a multiple of a chunk or of 8), tight and
/// loose memory, two stages, no swizzle: the same D; stalls only add cycles.
#[test]
fn ragged_shapes_and_memory_settings_match() {
    let shapes = [
        (1, 1, 4),
        (3, 5, 20),
        (5, 3, 132),
        (9, 9, 256),
        (4, 13, 516),
    ];
    let settings = [
        pc(1, 64, 0, true),
        pc(200, 16, 0, true),
        pc(60, 8, 2, true),
        pc(30, 32, 0, false),
    ];
    for (x, &(m, n, k)) in shapes.iter().enumerate() {
        for (y, s) in settings.iter().enumerate() {
            for (fa, w) in [(FP16, 2), (E4M3, 8), (BF16, 16)] {
                let c = cfg(fa, fa, AccMode::Fused, w, FP32);
                let g = SparseGemm::random(m, n, k, c, (x * 10 + y) as u64).expect("problem");
                same_as_ideal(&g, s);
            }
        }
    }
}

/// Bytes moved: with N = 4 (one tile column, A loaded once) the sparse run loads the dense
/// run's bytes less half of A plus the metadata (2 bits per kept value, `M x K/8` bytes);
/// B, C and D move the same.
#[test]
fn sparse_loads_half_of_a_plus_the_metadata() {
    for (fa, w) in [(FP16, 4), (E4M3, 8), (BF16, 1)] {
        let (m, n, k) = (8, 4, 256);
        let c = cfg(fa, fa, AccMode::Ieee, w, FP32);
        let s = SparseGemm::random(m, n, k, c, 7).expect("problem");
        let dense = s.dense();
        let pcfg = MemPortConfig::default();
        let d = run_memory(&dense, &pcfg, None).expect("dense memory run");
        let sp = run_memory_sparse(&s, &pcfg, None).expect("sparse memory run");
        let es = u64::from(fa.width() / 8);
        let a_dense = (m * k) as u64 * es;
        let meta = (m * k / 8) as u64;
        assert!(!d.layout.panel() && !sp.layout.panel());
        assert_eq!(
            sp.counters.bytes_loaded,
            d.counters.bytes_loaded - a_dense + a_dense / 2 + meta,
            "{fa:?} w = {w}"
        );
        assert_eq!(sp.counters.bytes_stored, d.counters.bytes_stored);
        assert_eq!(
            sp.run.run.out.d,
            run_clocked_sparse(&s, None).expect("ideal").out.d
        );
    }
}

/// A run over a wider N reuses A's kept values and metadata across the tile row from the
/// two A panels (loaded once, as the dense run loads A once), so the loads are again the dense
/// run's less half of A plus the metadata; at FP16, w = 4, the run takes fewer cycles than the
/// dense run of the same problem through the same memory.
#[test]
fn panel_mode_reuses_a_and_runs_faster_than_dense() {
    let (m, n, k) = (8, 16, 512);
    let c = cfg(FP16, FP16, AccMode::Fused, 4, FP32);
    let s = SparseGemm::random(m, n, k, c, 11).expect("problem");
    let pcfg = MemPortConfig::default();
    let sp = run_memory_sparse(&s, &pcfg, None).expect("sparse memory run");
    let d = run_memory(&s.dense(), &pcfg, None).expect("dense memory run");
    assert!(sp.layout.panel() && d.layout.panel());
    let a_dense = (m * k * 2) as u64;
    assert_eq!(
        sp.counters.bytes_loaded,
        d.counters.bytes_loaded - a_dense / 2 + (m * k / 8) as u64
    );
    assert!(
        sp.run.run.cycles < d.run.run.cycles,
        "sparse {} cycles, dense {}",
        sp.run.run.cycles,
        d.run.run.cycles
    );
    same_as_ideal(&s, &pcfg);
}

/// FP16 at w = 32 (a step reads 52 lanes, more than the 32 of a shared-memory request) runs
/// in two requests (beats); TF32 operands (no 1- or 2-byte element) are refused with a clean
/// error.
#[test]
fn wide_steps_read_in_beats_and_tf32_is_refused() {
    let g =
        SparseGemm::random(4, 4, 64, cfg(FP16, FP16, AccMode::Ieee, 32, FP32), 1).expect("problem");
    same_as_ideal(&g, &pc(40, 16, 0, true));
    let mem = run_memory_sparse(&g, &MemPortConfig::default(), None).expect("beats");
    assert_eq!(mem.layout.os().expect("os layout").max_beats, 2);
    let g =
        SparseGemm::random(4, 4, 64, cfg(TF32, TF32, AccMode::Ieee, 4, FP32), 1).expect("problem");
    let e = run_memory_sparse(&g, &MemPortConfig::default(), None).expect_err("refused");
    assert!(e.to_string().contains("1 or 2 bytes"), "{e}");
}

/// Determinism: the same problem gives the same cycles and counters twice.
#[test]
fn runs_are_deterministic() {
    let c = cfg(E5M2, E4M3, AccMode::Ieee, 2, FP32);
    let g = SparseGemm::random(5, 6, 72, c, 5).expect("problem");
    let a = run_memory_sparse(&g, &pc(40, 16, 3, true), None).expect("run");
    let b = run_memory_sparse(&g, &pc(40, 16, 3, true), None).expect("run");
    assert_eq!(a.run.run.out, b.run.run.out);
    assert_eq!(a.run.run.cycles, b.run.run.cycles);
    assert_eq!(a.counters, b.counters);
}

/// The waves of a sparse run through memory: the metadata hold registers (2 bits a kept lane),
/// the B hold registers as wide as the sparse B bus (`2w` lanes), the producer's load counter,
/// the PEs' metadata inputs; and tracing changes no bit of D and the same run gives the same
/// waveform bytes.
#[test]
fn sparse_memory_waves_show_the_metadata_path() {
    let dir = std::env::temp_dir().join(format!("tcrtl_sparse_tma_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let w = 4;
    let g = SparseGemm::random(4, 8, 144, cfg(FP16, FP16, AccMode::Fused, w, FP32), 9)
        .expect("problem");
    let pcfg = pc(20, 16, 2, true);
    let mut bytes = Vec::new();
    for x in 0..2 {
        let path = dir.join(format!("sparse_{x}.vcd"));
        let r = run_memory_sparse(&g, &pcfg, Some(&TraceConfig::vcd(&path))).expect("run");
        assert_eq!(
            r.run.run.out,
            run_clocked_sparse(&g, None).expect("ideal").out
        );
        bytes.push(std::fs::read(&path).expect("vcd"));
    }
    assert_eq!(bytes[0], bytes[1], "same run, same waveform bytes");
    let vcd = String::from_utf8(bytes.remove(0)).expect("utf-8");
    for i in 0..4 {
        assert_eq!(var_widths(&vcd, &format!("hold_e_{i}")), vec![2 * w as u32]);
        assert_eq!(
            var_widths(&vcd, &format!("hold_b_{i}")),
            vec![16 * 2 * w as u32]
        );
        assert_eq!(
            var_widths(&vcd, &format!("hold_a_{i}")),
            vec![16 * w as u32]
        );
    }
    assert_eq!(var_widths(&vcd, "producer_part"), vec![3]);
    assert_eq!(var_widths(&vcd, "meta_in").len(), 16, "one meta_in per PE");
    let _ = std::fs::remove_dir_all(&dir);
}
