//! Helpers of the 2:4 sparse testbenches (`sparse_2_4`, `sparse_nibble_<bits>`): run a
//! [`SparseGemm`](crate::sparse::SparseGemm) on the clocked core in sparse mode and check every element against the
//! independent reference `verify::sparse::sparse_reference`, and the timing the design states
//! (`docs/sparsity.md`): a tile takes `T = ceil((K / 2) / w)` steps, half the dense
//! `ceil(K / w)`, so the first tile's latency is `T + R + C - 2 + L`.

use super::Bench;
use crate::dispatch::Problem;
use crate::gemm::clocked::CoreRun;
use crate::gemm::CoreConfig;
use crate::hw::PIPELINE_LATENCY;
use crate::numerics::dot::AccMode;
use crate::sparse::{Compressed, SparseGemm};
use crate::verify::sparse::{sparse_reference, SparseRef};

/// The reference chaining of a sparse problem's mode (`None` for `nvidia`).
pub fn reference_of(g: &SparseGemm) -> Option<SparseRef> {
    match g.cfg.mode {
        AccMode::Ieee => Some(SparseRef::Ieee),
        AccMode::Fused => Some(SparseRef::Fused { width: g.cfg.width }),
        AccMode::Exact => Some(SparseRef::Exact),
        AccMode::Nvidia(_) | AccMode::Int(_) => None,
    }
}

/// Runs `g` on the clocked core in sparse mode (tracing to the bench's waveform if `trace`),
/// adds its cycles, checks every element of D against `sparse_reference` (ieee, fused; an
/// `Err` for other modes) and the first tile's latency `T + R + C - 2 + L` with the halved
/// `T`. Returns the run.
pub fn run_and_check_sparse(
    tb: &mut Bench,
    label: &str,
    g: &SparseGemm,
    trace: bool,
) -> Result<CoreRun, String> {
    let how = reference_of(g).ok_or_else(|| format!("{label}: no sparse reference"))?;
    let cfg = trace.then(|| tb.trace());
    let run = tb
        .run_gemm(Problem::Sparse(g), None, cfg.as_ref())
        .map_err(|e| format!("{label}: {e}"))?
        .measured
        .ok_or_else(|| format!("{label}: a sparse run without its measured phases"))?;
    tb.add_cycles(run.run.cycles);
    tb.check_waveform(label, cfg.as_ref());
    let t = (g.k / 2).div_ceil(g.cfg.width) as u64;
    tb.check_eq(
        format!("{label}: first tile latency T + R + C - 2 + L with T = ceil(K/2 / w) = {t}"),
        run.first_tile_cycles,
        t + (g.cfg.rows() + g.cfg.cols() - 2) as u64 + PIPELINE_LATENCY,
    );
    let ops = g.reference_operands();
    let want = sparse_reference(&ops, how);
    if run.run.out.d.len() != want.len() {
        return Err(format!(
            "{label}: D has {} elements, the reference {}",
            run.run.out.d.len(),
            want.len()
        ));
    }
    for (idx, (&got, &w)) in run.run.out.d.iter().zip(&want).enumerate() {
        tb.check_bits(format!("{label}: D[{}][{}]", idx / g.n, idx % g.n), got, w);
    }
    Ok(run)
}

/// The `sparse_nibble_<bits>` testbench body: every metadata nibble of A is `nibble`; the
/// kept values and B are random (seeded). Runs ieee at w = 1, 2, 8 and fused at w = 4 on
/// 8 x 8 x 32 FP16 and one BF16 and one E4M3 ieee problem, each element checked against
/// `sparse_reference`, and checks that a kept value multiplies exactly the B row the nibble
/// names (a directed 4 x 4 x 4 case: A's kept values 1 and 2, B row `p` holding `p + 1`, so
/// `D = 1 * (i0 + 1) + 2 * (i1 + 1)`).
pub fn nibble_bench(tb: &mut Bench, nibble: u8) -> Result<(), String> {
    use crate::numerics::format::{BF16, E4M3, FP16};
    let (i0, i1) = (nibble & 3, (nibble >> 2) & 3);
    // Directed: every row keeps (1.0, 2.0) at the nibble's indices.
    let one = 0x3C00u64;
    let two = 0x4000u64;
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    let a = Compressed::new(FP16, 4, 4, [one, two].repeat(4), vec![nibble; 4])
        .map_err(|e| e.to_string())?;
    let b: Vec<u64> = (0..16u64)
        .map(|i| [one, two, 0x4200, 0x4400][(i / 4) as usize])
        .collect();
    let g = SparseGemm::new(cfg, a, 4, b, vec![0; 16]).map_err(|e| e.to_string())?;
    let run = run_and_check_sparse(tb, &format!("directed {nibble:#06b}"), &g, true)?;
    let want = (f32::from(i0 + 1) + 2.0 * f32::from(i1 + 1)).to_bits();
    for (idx, &d) in run.run.out.d.iter().enumerate() {
        tb.check_bits(
            format!(
                "directed D[{}][{}] = (i0 + 1) + 2 (i1 + 1) for ({i0}, {i1})",
                idx / 4,
                idx % 4
            ),
            d,
            want,
        );
    }
    let cases = [
        (FP16, AccMode::Ieee, 1),
        (FP16, AccMode::Ieee, 2),
        (FP16, AccMode::Fused, 4),
        (FP16, AccMode::Ieee, 8),
        (BF16, AccMode::Ieee, 2),
        (E4M3, AccMode::Ieee, 4),
    ];
    for (n, (fmt, mode, width)) in cases.into_iter().enumerate() {
        let cfg = CoreConfig::new(fmt, fmt, mode, width);
        let r = SparseGemm::random(8, 8, 32, cfg, 0x5EED + n as u64 + u64::from(nibble))
            .map_err(|e| e.to_string())?;
        let a = Compressed::new(fmt, 8, 32, r.a.values().to_vec(), vec![nibble; 8 * 8])
            .map_err(|e| e.to_string())?;
        let g = SparseGemm::new(cfg, a, 8, r.b, r.c).map_err(|e| e.to_string())?;
        let label = format!("{fmt} {} w={width} random", mode.name());
        run_and_check_sparse(tb, &label, &g, false)?;
    }
    Ok(())
}
