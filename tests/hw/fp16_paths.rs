//! FP16 accumulation off the ideal dense path: through the memory path (TMA loads of FP16 C,
//! TMA stores of FP16 D) and on the core in 2:4 sparse mode. D (and the IEEE flags) equal the
//! functional model bit for bit in the `ieee`, `fused` and `nvidia` modes on ragged random
//! problems; global memory moves 2 bytes per FP16 element of C and D; the waves show 16-bit
//! accumulators and C/D rows of four 16-bit words.

use crate::common::waves::var_widths;
use tensorcore_rtl::gemm::{run_clocked, run_functional, run_memory, CoreConfig, Gemm};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::MemPortConfig;
use tensorcore_rtl::numerics::dot::{dot_acc, AccMode, Preset};
use tensorcore_rtl::numerics::flags::RoundingMode;
use tensorcore_rtl::numerics::format::{Format, BF16, E4M3, FP16, FP32};
use tensorcore_rtl::rtl::TraceConfig;
use tensorcore_rtl::sparse::{run_clocked_sparse, run_functional_sparse, SparseGemm};

/// `ieee`, `fused` and every preset with an FP16-output path for the pair.
fn modes(fa: Format, fb: Format) -> Vec<AccMode> {
    let mut v = vec![AccMode::Ieee, AccMode::Fused];
    for p in Preset::ALL {
        if let Ok(params) = p.params_for(fa, fb, FP16) {
            v.push(AccMode::Nvidia(params));
        }
    }
    v
}

fn cfg(fa: Format, fb: Format, mode: AccMode, width: usize, acc: Format) -> CoreConfig {
    CoreConfig::new(fa, fb, mode, width).with_acc(acc)
}

fn tma(latency: u32, bw: u32) -> MemPortConfig {
    MemPortConfig {
        params: MemParams {
            latency,
            bytes_per_cycle: bw,
            ..MemParams::default()
        },
        ..MemPortConfig::default()
    }
}

/// Each element of D by `numerics::dot::dot_acc` into FP16, straight from A's row and B's
/// column (no GEMM runner involved).
pub(crate) fn dot_acc_gemm(g: &Gemm) -> Vec<u32> {
    let mut d = Vec::with_capacity(g.m * g.n);
    for i in 0..g.m {
        for j in 0..g.n {
            let r = dot_acc(
                &g.cfg.mode,
                RoundingMode::NearestEven,
                FP16,
                g.cfg.fmt_a,
                g.cfg.fmt_b,
                g.a_row(i),
                &g.b_col(j),
                g.c[i * g.n + j],
                g.cfg.width,
            )
            .expect("dot_acc");
            d.push(r.bits);
        }
    }
    d
}

#[test]
fn fp16_through_the_memory_path_matches_the_functional_model() {
    // Shapes with an odd number of tiles along N (a C/D box whose right tile is past N),
    // ragged edges, several tile rows, and a K over several chunks.
    let shapes = [(6, 9, 37), (5, 13, 20), (8, 4, 64), (3, 6, 9), (9, 17, 33)];
    let mut runs = 0;
    let mut seed = 0x16_7A;
    for (fa, fb) in [(FP16, FP16), (E4M3, E4M3), (BF16, BF16)] {
        for mode in modes(fa, fb) {
            for (si, &(m, n, k)) in shapes.iter().enumerate() {
                let w = [1usize, 4, 16, 8, 2][si];
                let pc = if si % 2 == 0 {
                    tma(40, 16)
                } else {
                    tma(200, 4)
                };
                seed += 1;
                let g = Gemm::random(m, n, k, cfg(fa, fb, mode, w, FP16), seed).expect("problem");
                assert!(g.c.iter().all(|&c| c <= 0xFFFF));
                let f = run_functional(&g).expect("functional");
                assert_eq!(f.d, dot_acc_gemm(&g), "functional vs dot_acc {m}x{n}x{k}");
                let ideal = run_clocked(&g, None).expect("ideal");
                let mem = run_memory(&g, &pc, None)
                    .unwrap_or_else(|e| panic!("memory run {m}x{n}x{k} {:?}: {e}", g.cfg));
                assert_eq!(mem.run.run.out.d, f.d, "{m}x{n}x{k} {:?}", g.cfg);
                assert_eq!(mem.run.run.out.flags, f.flags, "{m}x{n}x{k} {:?}", g.cfg);
                assert_eq!(ideal.out, mem.run.run.out);
                assert!(mem.run.run.cycles >= ideal.cycles);
                // D leaves as m * n FP16 words: 2 bytes each.
                assert_eq!(mem.counters.bytes_stored, (m * n * 2) as u64);
                runs += 1;
            }
        }
    }
    assert!(runs >= 40, "{runs} runs");
}

/// The same A and B with an FP32 and an FP16 accumulator: the operand traffic is the same,
/// C costs 4 bytes an element against 2, so the FP16 run loads and stores `2 m n` bytes less
/// each way.
#[test]
fn fp16_c_and_d_move_two_bytes_an_element() {
    // (32, 36, 8): 40 FP16 boxes, more than the 16 slots at most, so slots are reused.
    for &(m, n, k) in &[(6, 9, 37), (4, 8, 16), (13, 5, 70), (32, 36, 8)] {
        let c32 = cfg(FP16, FP16, AccMode::Fused, 4, FP32);
        let g32 = Gemm::random(m, n, k, c32, 7).expect("problem");
        let c16 = c32.with_acc(FP16);
        let c: Vec<u32> = (0..m * n).map(|i| 0x3C00 + i as u32 % 64).collect();
        let g16 = Gemm::new(m, n, k, c16, g32.a.clone(), g32.b.clone(), c).expect("problem");
        let pc = tma(60, 16);
        let r32 = run_memory(&g32, &pc, None).expect("fp32 run");
        let r16 = run_memory(&g16, &pc, None).expect("fp16 run");
        let mn = (m * n) as u64;
        assert_eq!(r32.counters.bytes_stored, 4 * mn);
        assert_eq!(r16.counters.bytes_stored, 2 * mn);
        assert_eq!(
            r32.counters.bytes_loaded - r16.counters.bytes_loaded,
            2 * mn,
            "{m}x{n}x{k}"
        );
        let (l16, l32) = (r16.layout.os().unwrap(), r32.layout.os().unwrap());
        assert_eq!(l16.esc, 2);
        assert_eq!(l16.tiles_per_box, 2);
        assert_eq!(l16.cd_boxes(), m.div_ceil(4) * n.div_ceil(8));
        assert_eq!(l32.cd_boxes(), m.div_ceil(4) * n.div_ceil(4));
        assert_eq!(
            r16.run.run.out.d,
            run_functional(&g16).expect("functional").d
        );
        assert_eq!(
            r32.run.run.out.d,
            run_functional(&g32).expect("functional").d
        );
    }
}

#[test]
fn fp16_sparse_matches_the_functional_model() {
    let shapes = [(5, 6, 16), (4, 9, 40), (7, 3, 12), (8, 8, 64)];
    let mut runs = 0;
    let mut seed = 0x5_9A;
    for (fa, fb) in [(FP16, FP16), (E4M3, E4M3), (BF16, BF16)] {
        for mode in modes(fa, fb) {
            for (si, &(m, n, k)) in shapes.iter().enumerate() {
                let w = [1usize, 2, 4, 16][si];
                seed += 1;
                let g =
                    SparseGemm::random(m, n, k, cfg(fa, fb, mode, w, FP16), seed).expect("problem");
                assert!(g.c.iter().all(|&c| c <= 0xFFFF));
                let f = run_functional_sparse(&g).expect("functional");
                // Each element by dot_acc over the kept values and the B rows they select.
                for i in 0..m {
                    let kept = &g.a.values()[i * k / 2..(i + 1) * k / 2];
                    for j in 0..n {
                        let r = dot_acc(
                            &mode,
                            RoundingMode::NearestEven,
                            FP16,
                            fa,
                            fb,
                            kept,
                            &g.gathered_b(i, j),
                            g.c[i * n + j],
                            w,
                        )
                        .expect("dot_acc");
                        assert_eq!(f.d[i * n + j], r.bits, "D[{i}][{j}] {:?}", g.cfg);
                    }
                }
                let c = run_clocked_sparse(&g, None).expect("clocked sparse");
                assert_eq!(c.out.d, f.d, "{m}x{n}x{k} {:?}", g.cfg);
                assert_eq!(c.out.flags, f.flags, "{m}x{n}x{k} {:?}", g.cfg);
                runs += 1;
            }
        }
    }
    assert!(runs >= 30, "{runs} runs");
}

#[test]
fn fp16_waves_show_sixteen_bit_accumulators_and_c_d_rows() {
    let dir = std::env::temp_dir().join(format!("tcrtl_fp16_paths_{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp dir");
    for (acc, bits) in [(FP16, 16u32), (FP32, 32)] {
        let g = Gemm::random(4, 8, 16, cfg(FP16, FP16, AccMode::Ieee, 4, acc), 3).expect("g");
        let path = dir.join(format!("mem_{}.vcd", acc.name));
        run_memory(&g, &tma(20, 16), Some(&TraceConfig::vcd(&path))).expect("memory run");
        let vcd = std::fs::read_to_string(&path).expect("vcd");
        let acc0 = var_widths(&vcd, "acc_0");
        assert_eq!(acc0.len(), 16, "one acc_0 per PE");
        assert!(acc0.iter().all(|&w| w == bits), "{acc0:?}");
        for reg in ["c_b0_r0", "dq_0"] {
            assert_eq!(var_widths(&vcd, reg), vec![4 * bits], "{reg}");
        }
        let s = SparseGemm::random(4, 4, 16, cfg(FP16, FP16, AccMode::Fused, 2, acc), 3)
            .expect("sparse");
        let path = dir.join(format!("sparse_{}.vcd", acc.name));
        run_clocked_sparse(&s, Some(&TraceConfig::vcd(&path))).expect("sparse run");
        let vcd = std::fs::read_to_string(&path).expect("vcd");
        let acc0 = var_widths(&vcd, "acc_0");
        assert_eq!(acc0.len(), 16);
        assert!(acc0.iter().all(|&w| w == bits), "{acc0:?}");
    }
    let _ = std::fs::remove_dir_all(&dir);
}
