//! `mx_blocks`: block-scaled GEMMs on the 4x4 mesh in MX mode. For each block format
//! (MXFP8 E4M3/E5M2, MXFP6 E2M3/E3M2, MXFP4, MXINT8 with E8M0 scales per 32; NVFP4 with
//! unsigned E4M3 scales per 16 and FP32 tensor scales) an 8 x 8 x 64 problem quantised from
//! seeded values, at a width dividing the block, checked element by element against the
//! independent `verify::mx_ref` (its own OCP tables, big-integer block sums, its own
//! rounding); plus one NVFP4 result worked by hand from the definitions. The NVFP4 run is
//! traced: the waves show the scales moving with the operands, the block sums, the scale
//! multiplier (`scale_sig`, `scale_exp`) and the tensor-scale registers.

use crate::gemm::{CoreConfig, MxGemm, Problem};
use crate::hw::MxSpec;
use crate::numerics::dot::AccMode;
use crate::numerics::format::FP32;
use crate::numerics::mx::{quantise, BlockFormat};
use crate::tb::Bench;
use crate::verify::mx_ref;

/// One line for `tcrtl tb list`.
pub const ABOUT: &str =
    "MX, MXINT8 and NVFP4 GEMMs on the mesh (scales beside the operands) vs verify::mx_ref";

/// Seeded FP32 values with zeros and outliers (a xorshift generator).
fn values(seed: u64, count: usize) -> Vec<u64> {
    let mut x = seed.wrapping_mul(0x9E37_79B9_7F4A_7C15) | 1;
    (0..count)
        .map(|_| {
            x ^= x << 13;
            x ^= x >> 7;
            x ^= x << 17;
            let v = match x % 16 {
                0 => 0.0,
                1 => ((x >> 8) % 2000) as f32 - 1000.0,
                _ => ((x >> 8) % 20001) as f32 / 1000.0 - 10.0,
            };
            u64::from(v.to_bits())
        })
        .collect()
}

/// The problem `A (m x k) x B (k x n) + C` with A and B^T quantised to `fmt` row by row.
fn problem(
    fmt: BlockFormat,
    (m, n, k): (usize, usize, usize),
    width: usize,
    seed: u64,
) -> Result<MxGemm, String> {
    let qa = quantise(fmt, FP32, &values(seed, m * k), k).map_err(|e| e.to_string())?;
    let qb = quantise(fmt, FP32, &values(seed + 1, n * k), k).map_err(|e| e.to_string())?;
    let c = values(seed + 2, m * n).iter().map(|&w| w as u32).collect();
    MxGemm::from_quantised(&qa, &qb, c, width).map_err(|e| e.to_string())
}

/// `tcrtl tb run NAME --rows R --cols C` runs it on an R x C array (`Bench::array`).
pub const TAKES_ARRAY: bool = true;

/// Runs the testbench.
pub fn run(tb: &mut Bench) -> Result<(), String> {
    let cases = [
        (BlockFormat::MxFp8E4M3, 8),
        (BlockFormat::MxFp8E5M2, 1),
        (BlockFormat::MxFp6E2M3, 4),
        (BlockFormat::MxFp6E3M2, 32),
        (BlockFormat::MxFp4, 2),
        (BlockFormat::MxInt8, 16),
        (BlockFormat::NvFp4, 4),
    ];
    for (s, (fmt, width)) in cases.into_iter().enumerate() {
        let mut g = problem(fmt, (8, 8, 64), width, 40 + s as u64)?;
        g.cfg = tb.array(g.cfg)?;
        let trace = (fmt == BlockFormat::NvFp4).then(|| tb.trace());
        let run = tb
            .run_gemm(Problem::Mx(&g), None, trace.as_ref())
            .map_err(|e| format!("{fmt}: {e}"))?
            .run;
        tb.add_cycles(run.cycles);
        tb.check_waveform(fmt.name(), trace.as_ref());
        let tiles = 8usize.div_ceil(g.cfg.rows()) * 8usize.div_ceil(g.cfg.cols());
        tb.check_eq(format!("{fmt}: tiles"), run.tiles, tiles);
        let want = mx_ref::gemm(&g);
        for (i, (&got, &w)) in run.out.d.iter().zip(&want).enumerate() {
            tb.check_bits(format!("{fmt} w={width} D[{}][{}]", i / 8, i % 8), got, w);
        }
    }
    // By hand: NVFP4, A all 1.0 (0x2), B all 0.5 (0x1), block scales 1.0 (E4M3 0x38), tensor
    // scales 2 and 0.25: each block of 16 sums to 8, scaled by 0.5 gives 4; K = 32 is two
    // blocks, so D = 8 everywhere.
    let lane = MxSpec::lane_format(BlockFormat::NvFp4);
    let g = MxGemm {
        cfg: tb.array(CoreConfig::new(lane, lane, AccMode::Fused, 8))?,
        spec: MxSpec::new(BlockFormat::NvFp4, BlockFormat::NvFp4)
            .with_tensor_scales(Some(2.0f32.to_bits()), Some(0.25f32.to_bits())),
        m: 4,
        n: 4,
        k: 32,
        a: vec![0x2; 4 * 32],
        b: vec![0x1; 32 * 4],
        c: vec![0; 16],
        a_scales: vec![0x38; 8],
        b_scales: vec![0x38; 8],
    };
    let run = tb
        .run_gemm(Problem::Mx(&g), None, None)
        .map_err(|e| format!("nvfp4 by hand: {e}"))?
        .run;
    tb.add_cycles(run.cycles);
    for (i, &got) in run.out.d.iter().enumerate() {
        tb.check_bits(format!("nvfp4 by hand D[{}][{}]", i / 4, i % 4), got, 8.0f32.to_bits());
    }
    Ok(())
}
