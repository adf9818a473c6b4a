//! GEMMs through the memory path (global memory -> TMA -> shared memory -> feeder -> mesh ->
//! shared memory -> TMA store -> global memory) equal the ideal path bit for bit: D read back
//! from global memory and the IEEE flags, for every format pair, every mode and preset, every
//! width, on ragged shapes, in stream and panel mode, swizzled or not, under tight and loose
//! memory parameters. Stalls are legal: the cycle count may only grow.

use tensorcore_rtl::gemm::{run_clocked, run_memory, CoreConfig, Gemm};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::MemPortConfig;
use tensorcore_rtl::numerics::dot::{AccMode, Preset};
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, E5M2, FP16, FP32, TF32};

fn modes(fa: Format, fb: Format) -> Vec<AccMode> {
    let mut v = vec![AccMode::Ieee, AccMode::Fused];
    for p in Preset::ALL {
        if let Ok(params) = p.params(fa, fb) {
            v.push(AccMode::Nvidia(params));
        }
    }
    v
}

fn params(latency: u32, bw: u32) -> MemParams {
    MemParams {
        latency,
        bytes_per_cycle: bw,
        ..MemParams::default()
    }
}

/// Runs `g` on both paths and compares.
fn same_as_ideal(g: &Gemm, pc: &MemPortConfig) -> u64 {
    let ideal = run_clocked(g, None).expect("ideal run");
    let mem = run_memory(g, pc, None)
        .unwrap_or_else(|e| panic!("memory run {}x{}x{} {:?}: {e}", g.m, g.n, g.k, g.cfg));
    assert_eq!(
        mem.run.run.out, ideal.out,
        "{}x{}x{} {:?} {:?}",
        g.m, g.n, g.k, g.cfg, pc
    );
    assert!(mem.run.run.cycles >= ideal.cycles);
    assert_eq!(mem.counters.bytes_stored, (g.m * g.n * 4) as u64);
    mem.run.run.cycles
}

#[test]
fn every_format_pair_and_mode_matches_the_ideal_path() {
    let fmts = [E4M3, E5M2, FP16, BF16];
    let mut ran = 0;
    let pc = MemPortConfig {
        params: params(40, 16),
        ..MemPortConfig::default()
    };
    let mut seed = 1;
    for &fa in &fmts {
        for &fb in &fmts {
            for mode in modes(fa, fb) {
                let cfg = CoreConfig::new(fa, fb, mode, 4);
                seed += 1;
                let Ok(g) = Gemm::random(6, 9, 37, cfg, seed) else {
                    // A pair the core does not take (e.g. mixed widths under some modes) is
                    // refused by the problem itself, on both paths alike.
                    continue;
                };
                same_as_ideal(&g, &pc);
                ran += 1;
            }
        }
    }
    assert!(ran >= 40, "only {ran} configurations ran");
}

#[test]
fn every_width_matches_on_ragged_shapes() {
    for (i, w) in [1usize, 2, 4, 8, 16, 32].into_iter().enumerate() {
        for (fa, mode) in [
            (FP16, AccMode::Ieee),
            (
                E4M3,
                AccMode::Nvidia(Preset::Hopper.params(E4M3, E4M3).expect("preset")),
            ),
            (
                BF16,
                AccMode::Nvidia(Preset::Blackwell.params(BF16, BF16).expect("preset")),
            ),
        ] {
            let cfg = CoreConfig::new(fa, fa, mode, w);
            let g = Gemm::random(5 + i, 13 - i, 70 + 13 * i, cfg, 100 + i as u64).expect("problem");
            same_as_ideal(
                &g,
                &MemPortConfig {
                    params: params(25, 32),
                    ..MemPortConfig::default()
                },
            );
        }
    }
}

#[test]
fn tight_memory_stalls_but_gives_the_same_bits() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let g = Gemm::random(8, 12, 150, cfg, 7).expect("problem");
    let ideal = run_clocked(&g, None).expect("ideal").cycles;
    // One byte a cycle, long latency, two stages: many stalls.
    let slow = MemPortConfig {
        params: params(300, 1),
        stages: 2,
        swizzle: true,
    };
    let cycles = same_as_ideal(&g, &slow);
    assert!(cycles > 2 * ideal, "{cycles} vs {ideal}");
    // Unswizzled: same bits, bank conflicts counted.
    let flat = MemPortConfig {
        params: params(10, 64),
        stages: 4,
        swizzle: false,
    };
    same_as_ideal(&g, &flat);
    let run = run_memory(&g, &flat, None).expect("unswizzled");
    assert!(run.counters.bank_conflicts > 0);
    let swz = run_memory(
        &g,
        &MemPortConfig {
            swizzle: true,
            ..flat
        },
        None,
    )
    .expect("swizzled");
    // Swizzled, every read is one pass: the eight operand lanes of a step sit in eight
    // chunks, and C words only fill banks the operands leave free.
    assert_eq!(
        swz.counters.bank_conflicts, 0,
        "swizzled reads are conflict-free"
    );
    assert!(
        run.counters.bank_conflicts >= 10 * swz.counters.bank_conflicts.max(1),
        "unswizzled {} vs swizzled {}",
        run.counters.bank_conflicts,
        swz.counters.bank_conflicts
    );
    assert!(run.run.run.cycles > swz.run.run.cycles);
}

#[test]
fn panel_mode_reuses_a_and_stream_mode_does_not() {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 2);
    let g = Gemm::random(8, 16, 64, cfg, 11).expect("problem");
    let pc = MemPortConfig {
        params: params(50, 16),
        ..MemPortConfig::default()
    };
    same_as_ideal(&g, &pc);
    let run = run_memory(&g, &pc, None).expect("run");
    assert!(run.layout.panel());
    // A panel once per tile row (2 rows of 4), B once per tile (8 tiles), C once per tile.
    let a = 2 * 4 * 64 * 2;
    let b = 8 * 4 * 64 * 2;
    let c = 8 * 16 * 4;
    assert_eq!(run.counters.tx_bytes, (a + b + c) as u64);
}

/// TF32 through the memory path: each element is a 4-byte FP32 word in global and shared
/// memory (its 19-bit pattern at the top, the low 13 bits zero), so D equals the ideal path in
/// every mode at w = 1, 4 and 16; at w = 32 a step would read 64 16-byte lanes, more than a
/// shared-memory request's 32, and is read in two requests (beats).
#[test]
fn tf32_travels_in_fp32_containers() {
    let pc = MemPortConfig {
        params: params(40, 16),
        ..MemPortConfig::default()
    };
    let (m, n, k) = (5usize, 4usize, 70usize);
    let mut ran = 0;
    for mode in modes(TF32, TF32) {
        for (s, w) in [1usize, 4, 16].into_iter().enumerate() {
            let cfg = CoreConfig::new(TF32, TF32, mode, w);
            let g = Gemm::random(m, n, k, cfg, 70 + s as u64).expect("problem");
            same_as_ideal(&g, &pc);
            let mem = run_memory(&g, &pc, None).expect("memory run");
            // A and B at least once at 4 bytes an element, and C.
            assert!(mem.counters.bytes_loaded >= (4 * (m * k + k * n + m * n)) as u64);
            ran += 1;
        }
    }
    assert!(ran >= 12, "{ran} runs");
    // At w = 32 a step reads 8 lanes per row and column, 64 in all: two requests (beats).
    let cfg = CoreConfig::new(TF32, TF32, AccMode::Ieee, 32);
    let g = Gemm::random(4, 4, 64, cfg, 1).expect("problem");
    same_as_ideal(&g, &pc);
    let mem = run_memory(&g, &pc, None).expect("memory run");
    assert_eq!(mem.layout.os().expect("os layout").max_beats, 2);
}

/// Arrays whose A and B rows take more than one 8-row swizzle atom (`R + C > 8`): a stage
/// spans as many atoms as its rows need, an A panel block `ceil(R / 8)` atoms, a C/D slot a
/// box of `R` rows; D equals the ideal path. A tile row of C that does not divide 16 bytes
/// (6 x 3, 16 x 16 FP32) is stored in boxes of several whole tiles (the least common multiple
/// with 16 bytes), and a step whose read exceeds one request's 32 lanes (32 x 1) is read in
/// beats: they run too (`tests/memory/os_tma_sizes.rs` covers every size).
#[test]
fn arrays_beyond_one_swizzle_atom_match_the_ideal_path() {
    let pc = MemPortConfig {
        params: params(60, 16),
        ..MemPortConfig::default()
    };
    let mut sizes: Vec<(usize, usize, Format)> = Vec::new();
    for rows in 1..=8 {
        for cols in [1, 2, 4] {
            sizes.push((rows, cols, FP32));
        }
        sizes.push((rows, 8, FP16));
    }
    sizes.extend([
        (16, 2, FP32),
        (16, 4, FP32),
        (12, 8, FP16),
        (28, 4, FP32),
        (31, 1, FP32),
    ]);
    for (s, &(rows, cols, acc)) in sizes.iter().enumerate() {
        let w = [1, 2, 4][s % 3];
        let cfg = CoreConfig::new(FP16, E4M3, AccMode::Ieee, w)
            .with_acc(acc)
            .with_array(rows, cols)
            .expect("array");
        let g =
            Gemm::random(rows * 2 + 1, cols * 3 + 1, 70 + s, cfg, 300 + s as u64).expect("problem");
        let ideal = run_clocked(&g, None).expect("ideal run");
        let mem = run_memory(&g, &pc, None)
            .unwrap_or_else(|e| panic!("{rows} x {cols} w {w} acc {}: {e}", acc.name));
        assert_eq!(mem.run.run.out, ideal.out, "{rows} x {cols} w {w}");
        assert!(mem.run.run.cycles >= ideal.cycles);
        let lay = mem.layout.os().expect("an output-stationary layout");
        assert_eq!(lay.stage_bytes, (rows + cols).div_ceil(8) as u32 * 1024);
    }
    for (rows, cols, beats) in [(6, 3, 1), (16, 16, 1), (32, 1, 2)] {
        let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1)
            .with_array(rows, cols)
            .expect("array");
        let g = Gemm::random(rows + 3, cols + 5, 40, cfg, 1).expect("problem");
        let ideal = run_clocked(&g, None).expect("ideal run");
        let mem = run_memory(&g, &pc, None).unwrap_or_else(|e| panic!("{rows} x {cols}: {e}"));
        assert_eq!(mem.run.run.out, ideal.out, "{rows} x {cols}");
        assert!(mem.run.run.cycles >= ideal.cycles);
        let lay = mem.layout.os().expect("an output-stationary layout");
        assert_eq!(lay.max_beats, beats, "{rows} x {cols}");
    }
}
