//! `sparse_2_4`: the tensor core in 2:4 sparse mode. A 4 x 4 x 16 FP16 problem (w = 2, ieee)
//! with random valid nibbles is traced: the metadata enters each row through `meta_skew`
//! beside A and moves right one PE per cycle (`meta_in` -> `meta_out`), and in every PE the
//! selects `sel_0`, `sel_1` (the 2-bit indices of the two kept values) drive the multiplexers
//! whose outputs `b_sel` feed stage 1. Then random problems over every format pair, ieee and
//! fused, widths 1 to 32, with odd M and N, a dense A pruned to 2:4 and a long K. Every
//! element is checked against `verify::sparse::sparse_reference`, and each first tile's
//! latency against `T + R + C - 2 + L` with the halved `T = ceil(K/2 / w)`.

use crate::gemm::{Gemm, CoreConfig};
use crate::numerics::dot::AccMode;
use crate::numerics::format::{Format, BF16, E4M3, E5M2, FP16};
use crate::sparse::{Prune, SparseGemm};
use crate::tb::sparse::run_and_check_sparse;
use crate::tb::Bench;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str =
    "2:4 sparse core: metadata beside A drives per-PE B muxes; vs verify::sparse, halved T";

fn cfg(fa: Format, fb: Format, mode: AccMode, width: usize) -> CoreConfig {
    CoreConfig::new(fa, fb, mode, width)
}

/// `tcrtl tb run NAME --rows R --cols C` runs it on an R x C array (`Bench::array`).
pub const TAKES_ARRAY: bool = true;

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    tb.trace_only("meta_skew");
    tb.trace_only("controller.state");
    tb.trace_only("mesh.pe_0_*");
    tb.trace_only("mesh.pe_1_0.*");
    let g = SparseGemm::random(4, 4, 16, tb.array(cfg(FP16, FP16, AccMode::Ieee, 2))?, 24)
        .map_err(|e| e.to_string())?;
    run_and_check_sparse(tb, "traced fp16 w=2", &g, true)?;

    let pairs = [
        (E4M3, E4M3),
        (E5M2, E5M2),
        (FP16, FP16),
        (BF16, BF16),
        (E4M3, E5M2),
        (E5M2, E4M3),
    ];
    for (p, (fa, fb)) in pairs.into_iter().enumerate() {
        for (mode, width) in [
            (AccMode::Ieee, 1),
            (AccMode::Fused, 4),
            (AccMode::Fused, 32),
        ] {
            let seed = 100 + p as u64 * 8 + width as u64;
            let g = SparseGemm::random(5, 7, 24, tb.array(cfg(fa, fb, mode, width))?, seed)
                .map_err(|e| e.to_string())?;
            let label = format!("{fa} x {fb} {} w={width} 5x7x24", mode.name());
            run_and_check_sparse(tb, &label, &g, false)?;
        }
    }
    // A dense A with overfull groups, pruned to 2:4 (the two largest magnitudes kept).
    let dense =
        Gemm::random(6, 5, 32, tb.array(cfg(FP16, FP16, AccMode::Ieee, 2))?, 77).map_err(|e| e.to_string())?;
    let g = SparseGemm::from_dense(&dense, Prune::KeepLargest).map_err(|e| e.to_string())?;
    run_and_check_sparse(tb, "pruned dense fp16 w=2 6x5x32", &g, false)?;
    // Long K, several tiles.
    let g = SparseGemm::random(8, 8, 256, tb.array(cfg(BF16, BF16, AccMode::Fused, 8))?, 5)
        .map_err(|e| e.to_string())?;
    run_and_check_sparse(tb, "bf16 fused w=8 8x8x256", &g, false)?;
    Ok(())
}
