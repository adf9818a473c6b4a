//! Block-scaled MX through the clocked tensor core: D from the mesh (E8M0 scales travelling
//! with the operands, applied per K-block of 32) against the functional `mx_dot` in `fused`
//! mode (one rounding per block), and for single-block problems against `exact` mode (one
//! rounding of everything, equal to fused when there is one block); for w = 1 and wider PEs.
//! Random blocks with outlier elements, zeros, extreme scales (0x00, 0xFE), the E8M0 NaN 0xFF
//! and element NaN/Inf codes. The waves show the scale and block-sum registers.

use crate::common::mx::check_mesh;
use crate::common::waves::Waves;
use crate::common::Rng;
use tensorcore_rtl::gemm::clocked::{run_core, run_feeder};
use tensorcore_rtl::gemm::{run_clocked_mx, MxGemm};
use tensorcore_rtl::hw::{
    CoreConfig, HwError, IdealPort, MxSpec, MxTileBuffer, TensorCore, BLOCKS,
};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::{Format, E2M1, E2M3, E3M2, E4M3, E5M2, FP16};
use tensorcore_rtl::numerics::mx::BlockFormat;
use tensorcore_rtl::numerics::mx_dot::{mx_dot, MxDotMode};
use tensorcore_rtl::rtl::TraceConfig;

/// A random MX problem: element codes, scales, C.
struct Problem {
    fmt: BlockFormat,
    m: usize,
    n: usize,
    k: usize,
    a: Vec<u64>,
    b: Vec<u64>,
    c: Vec<u32>,
    sa: Vec<u8>,
    sb: Vec<u8>,
}

fn elem_format(fmt: BlockFormat) -> Format {
    match fmt {
        BlockFormat::MxFp8E4M3 => E4M3,
        BlockFormat::MxFp8E5M2 => E5M2,
        BlockFormat::MxFp6E2M3 => E2M3,
        BlockFormat::MxFp6E3M2 => E3M2,
        _ => E2M1,
    }
}

/// An element code: mostly random finite codes, some zeros (both signs), some largest-magnitude
/// outliers, and (if `specials`) rarely a NaN or infinity code of the format.
fn element(rng: &mut Rng, f: Format, specials: bool) -> u64 {
    let w = f.width();
    let sign = rng.below(2) << (w - 1);
    let r = rng.below(100);
    let code = match r {
        0..=7 => 0,
        8..=11 => (1 << (w - 1)) - 1, // largest magnitude (NaN for E4M3: filtered below)
        _ => rng.below(1 << w),
    } | sign;
    let is_special = |c: u64| {
        let mag = c & ((1 << (w - 1)) - 1);
        (f == E4M3 && mag == 0x7F) || (f == E5M2 && mag >= 0x7C)
    };
    if is_special(code) {
        if specials && rng.below(30) == 0 {
            return code;
        }
        return if f == E4M3 { sign | 0x7E } else { sign | 0x7B };
    }
    code
}

/// A scale code: mostly near 2^0, some extremes, rarely NaN (if `specials`).
fn scale(rng: &mut Rng, specials: bool) -> u8 {
    match rng.below(40) {
        0 => 0x00,
        1 => 0xFE,
        2 if specials => 0xFF,
        3 => rng.below(256).min(0xFE) as u8,
        _ => (127 - 12 + rng.below(24)) as u8,
    }
}

fn problem(fmt: BlockFormat, (m, n, k): (usize, usize, usize), seed: u64, sp: bool) -> Problem {
    let mut rng = Rng(seed);
    let f = elem_format(fmt);
    let kb = k / 32;
    let c = (0..m * n)
        .map(|_| match rng.below(8) {
            0 => 0x8000_0000,
            1 => 0,
            _ => {
                let e = 127 - 20 + rng.below(40) as u32;
                (rng.below(2) as u32) << 31 | e << 23 | rng.below(1 << 23) as u32
            }
        })
        .collect();
    Problem {
        fmt,
        m,
        n,
        k,
        a: (0..m * k).map(|_| element(&mut rng, f, sp)).collect(),
        b: (0..k * n).map(|_| element(&mut rng, f, sp)).collect(),
        c,
        sa: (0..m * kb).map(|_| scale(&mut rng, sp)).collect(),
        sb: (0..kb * n).map(|_| scale(&mut rng, sp)).collect(),
    }
}

fn cfg(fmt: BlockFormat, width: usize) -> CoreConfig {
    let f = elem_format(fmt);
    CoreConfig::new(f, f, AccMode::Fused, width)
}

fn gemm(p: &Problem, width: usize) -> MxGemm {
    MxGemm {
        cfg: cfg(p.fmt, width),
        spec: MxSpec::new(p.fmt, p.fmt),
        m: p.m,
        n: p.n,
        k: p.k,
        a: p.a.clone(),
        b: p.b.clone(),
        c: p.c.clone(),
        a_scales: p.sa.clone(),
        b_scales: p.sb.clone(),
    }
}

fn run_mesh(p: &Problem, width: usize, trace: Option<&TraceConfig>) -> Result<Vec<u32>, HwError> {
    Ok(run_clocked_mx(&gemm(p, width), trace)?.out.d)
}

/// The mesh's D against `mx_dot` in `mode`, element by element; returns how many results
/// were NaN, infinite, zero and finite nonzero.
fn check(p: &Problem, width: usize, mode: MxDotMode) -> [usize; 4] {
    check_mesh(&gemm(p, width), mode, p.fmt.name())
}

const FORMATS: [BlockFormat; 5] = [
    BlockFormat::MxFp8E4M3,
    BlockFormat::MxFp8E5M2,
    BlockFormat::MxFp6E2M3,
    BlockFormat::MxFp6E3M2,
    BlockFormat::MxFp4,
];

/// Several K-blocks, partial tiles: the mesh equals fused `mx_dot` bit for bit, w = 1 and 8.
#[test]
fn mesh_equals_fused_mx_dot() {
    for (s, fmt) in FORMATS.into_iter().enumerate() {
        for width in [1usize, 8] {
            let p = problem(fmt, (5, 6, 96), 100 + s as u64 * 7 + width as u64, false);
            let kinds = check(&p, width, MxDotMode::Fused);
            assert!(
                kinds[3] >= 20,
                "{fmt} w={width}: too few finite results {kinds:?}"
            );
        }
    }
}

/// One K-block: fused is one rounding of everything, so the mesh equals exact `mx_dot` too.
#[test]
fn mesh_equals_exact_mx_dot_for_one_block() {
    for (s, fmt) in FORMATS.into_iter().enumerate() {
        for width in [4usize, 32] {
            let p = problem(fmt, (4, 8, 32), 200 + s as u64 * 5 + width as u64, false);
            check(&p, width, MxDotMode::Exact);
            check(&p, width, MxDotMode::Fused);
        }
    }
}

/// NaN scales (0xFF), NaN/Inf element codes, extreme scales: the specials reach D as fused
/// `mx_dot` gives them, and some really are NaN and infinite.
#[test]
fn specials_and_extreme_scales() {
    let mut seen = [0usize; 4];
    for (s, fmt) in FORMATS.into_iter().enumerate() {
        for width in [1usize, 16] {
            let p = problem(fmt, (8, 8, 64), 300 + s as u64 * 3 + width as u64, true);
            let k = check(&p, width, MxDotMode::Fused);
            for (a, b) in seen.iter_mut().zip(k) {
                *a += b;
            }
        }
    }
    assert!(seen[0] > 10 && seen[1] > 0, "NaN/Inf results: {seen:?}");
}

/// A NaN scale on one A block makes exactly that row NaN (every column), nothing else.
#[test]
fn nan_scale_poisons_its_row() {
    let mut p = problem(BlockFormat::MxFp8E4M3, (4, 4, 64), 7, false);
    p.sa.iter_mut().for_each(|s| *s = 127);
    p.sb.iter_mut().for_each(|s| *s = 127);
    p.sa[2 * 2 + 1] = 0xFF; // row 2, second block
    let d = run_mesh(&p, 2, None).expect("mesh");
    for i in 0..4 {
        for j in 0..4 {
            let v = f32::from_bits(d[i * 4 + j]);
            assert_eq!(v.is_nan(), i == 2, "D[{i}][{j}] = {v}");
        }
    }
}

/// Shapes the core refuses: K not a multiple of 32, wrong scale counts, a non-MX element
/// format, a mode other than fused.
#[test]
fn refuses_bad_shapes() {
    let p = problem(BlockFormat::MxFp4, (4, 4, 64), 1, false);
    let c = cfg(p.fmt, 1);
    let mk = |k: usize, sa: usize, sb: usize| {
        MxTileBuffer::new(
            c,
            MxSpec::new(p.fmt, p.fmt),
            (4, 4, k),
            vec![0; 4 * k],
            vec![0; 4 * k],
            vec![0; 16],
            vec![127; sa],
            vec![127; sb],
        )
    };
    assert!(mk(48, 8, 8)
        .unwrap_err()
        .to_string()
        .contains("multiple of 32"));
    assert!(mk(64, 7, 8).unwrap_err().to_string().contains("A scales"));
    assert!(mk(64, 8, 9).unwrap_err().to_string().contains("B scales"));
    let mut bad = c;
    bad.mode = AccMode::Ieee;
    let spec = MxSpec::new(p.fmt, p.fmt);
    let buf = MxTileBuffer::new(bad, spec, (4, 4, 64), p.a, p.b, p.c, p.sa, p.sb).expect("buffer");
    let e = run_feeder::<1, _>(bad, buf.clone(), 1, None).unwrap_err();
    assert!(e.to_string().contains("fused"), "{e}");
    let half = c.with_acc(FP16);
    let e = run_feeder::<1, _>(half, buf, 1, None).unwrap_err();
    assert!(e.to_string().contains("accumulates in FP32"), "{e}");
}

/// The waves show each PE's scale registers, the block sum and the exponent add; A's scale
/// moves right one PE per cycle like A.
#[test]
fn waves_show_scales_and_block_sums() {
    let dir = std::env::temp_dir().join(format!("tcrtl_mx_core_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("mx.vcd");
    let p = problem(BlockFormat::MxFp8E5M2, (4, 4, 64), 9, false);
    run_mesh(&p, 8, Some(&TraceConfig::vcd(&path))).expect("traced run");
    let waves = Waves::read(&path);
    for r in 0..4 {
        for c in 0..4 {
            for sig in ["a_scale", "b_scale", "blk_sum", "blk_cls", "scale_exp"] {
                let n = format!("tensor_core.mesh.pe_{r}_{c}.{sig}");
                assert!(waves.has(&n), "{n} missing");
            }
        }
    }
    for n in ["tensor_core.xa_skew.d1_0", "tensor_core.xb_skew.d3_2"] {
        assert!(waves.has(n), "{n} missing");
    }
    // The save file shows the block sum through the `blksum` filter process.
    let gtkw = std::fs::read_to_string(dir.join("mx.gtkw")).expect("save file");
    assert!(
        gtkw.contains("@4022\n^>")
            && gtkw.contains(" tcrtl wave-filter blksum\ntensor_core.mesh.pe_0_0.blk_sum[71:0]\n"),
        "{gtkw}"
    );
    let cycles = waves.cycles();
    let value = |name: &str, cycle: usize| waves.value(name, cycle);
    let pe = |r: usize, c: usize, s: &str| format!("tensor_core.mesh.pe_{r}_{c}.{s}");
    let (mut moved, mut fired) = (0, 0);
    let scales_a: std::collections::HashSet<u64> = p.sa.iter().map(|&x| u64::from(x)).collect();
    for t in 1..cycles {
        for r in 0..4 {
            for c in 1..4 {
                let here = value(&pe(r, c, "a_scale"), t);
                assert_eq!(
                    here,
                    value(&pe(r, c - 1, "a_scale"), t - 1),
                    "a_scale pe_{r}_{c} @{t}"
                );
                moved += usize::from(here != 0);
            }
        }
        for r in 1..4 {
            for c in 0..4 {
                let here = value(&pe(r, c, "b_scale"), t);
                assert_eq!(
                    here,
                    value(&pe(r - 1, c, "b_scale"), t - 1),
                    "b_scale pe_{r}_{c} @{t}"
                );
            }
        }
        for r in 0..4 {
            for c in 0..4 {
                let e = value(&pe(r, c, "scale_exp"), t);
                if e != 0 {
                    // The exponent add of the step's registered scales.
                    let (xa, xb) = (
                        value(&pe(r, c, "a_scale"), t),
                        value(&pe(r, c, "b_scale"), t),
                    );
                    assert!(scales_a.contains(&xa));
                    assert_eq!(
                        e as i64,
                        ((xa + xb) as i64 - 254) & 0xFFFF,
                        "pe_{r}_{c} @{t}"
                    );
                    fired += 1;
                }
            }
        }
    }
    assert!(moved > 40, "{moved} nonzero scales moved");
    assert!(fired >= 16, "{fired} block firings seen");
    let _ = std::fs::remove_dir_all(&dir);
}

/// The engine's contract in MX mode: every evaluation order of the top's blocks (rotations
/// and the reverse) gives the same D, cycles and waveform bytes.
#[test]
fn same_waves_under_every_eval_order() {
    let dir = std::env::temp_dir().join(format!("tcrtl_mx_order_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let p = problem(BlockFormat::MxFp6E3M2, (6, 5, 64), 21, true);
    let mut orders = Vec::new();
    for r in 0..BLOCKS.len() {
        let mut o = BLOCKS;
        o.rotate_left(r);
        orders.push(o);
    }
    let mut rev = BLOCKS;
    rev.reverse();
    orders.push(rev);
    let mut first: Option<(Vec<u32>, u64, Vec<u8>)> = None;
    for (k, order) in orders.into_iter().enumerate() {
        let c = cfg(p.fmt, 4);
        let buf = MxTileBuffer::new(
            c,
            MxSpec::new(p.fmt, p.fmt),
            (p.m, p.n, p.k),
            p.a.clone(),
            p.b.clone(),
            p.c.clone(),
            p.sa.clone(),
            p.sb.clone(),
        )
        .expect("buffer");
        let mut core = TensorCore::<4, IdealPort<MxTileBuffer>>::with_feeder(c, buf).expect("core");
        assert!(core.set_eval_order(order));
        let path = dir.join(format!("run{k}.vcd"));
        let (run, _) =
            run_core(core, 1, 1 << 16, 5000, Some(&TraceConfig::vcd(&path))).expect("run");
        let got = (
            run.run.out.d,
            run.run.cycles,
            std::fs::read(&path).expect("vcd"),
        );
        match &first {
            None => first = Some(got),
            Some(f) => {
                assert_eq!(f.0, got.0, "D under {order:?}");
                assert_eq!(f.1, got.1, "cycles under {order:?}");
                assert!(f.2 == got.2, "waveform differs under {order:?}");
            }
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
}

/// Different element formats for A and B (FP8 x FP4, FP6 x FP8): the mesh equals fused
/// `mx_dot` over the mixed rows.
#[test]
fn mixed_element_formats() {
    for (s, (fa, fb)) in [
        (BlockFormat::MxFp8E4M3, BlockFormat::MxFp4),
        (BlockFormat::MxFp6E2M3, BlockFormat::MxFp8E5M2),
    ]
    .into_iter()
    .enumerate()
    {
        let mut p = problem(fa, (4, 5, 64), 500 + s as u64, false);
        let q = problem(fb, (4, 5, 64), 600 + s as u64, false);
        p.b = q.b;
        let mut g = gemm(&p, 2);
        g.cfg.fmt_b = elem_format(fb);
        g.spec = MxSpec::new(fa, fb);
        let d = run_clocked_mx(&g, None).expect("mesh").out.d;
        // The reference reads B's rows as `fb` (the spec), independently of the mesh.
        let (qa, qb) = g.rows();
        assert_eq!(qb.format, fb);
        for i in 0..p.m {
            for j in 0..p.n {
                let want = mx_dot(&qa, i, &qb, j, p.c[i * p.n + j], MxDotMode::Fused).expect("dot");
                assert_eq!(d[i * p.n + j], want.bits as u32, "{fa} x {fb} D[{i}][{j}]");
            }
        }
    }
}

/// Zero signs and cancellation (hand-worked, one block, A row `[1, 1, -0, -0, ...]`):
/// column 0: every product -0 and C = -0 gives -0; column 1: the same with one +0 product
/// (-0 x -0) gives +0; column 2: products 1 and -1 cancel exactly, C = -0 gives +0; column 3:
/// every product -0 with C = +0 gives +0.
#[test]
fn zero_signs_and_cancellation() {
    let (one, neg_zero) = (0x38u64, 0x80u64); // E4M3 1.0 and -0
    let (m, n, k) = (1, 4, 32);
    let mut a = vec![neg_zero; k];
    a[0] = one;
    a[1] = one;
    let mut b = vec![one; k * n];
    for col in [0, 1, 3] {
        b[col] = neg_zero; // 1 x -0 = -0
        b[n + col] = neg_zero;
    }
    b[7 * n + 1] = neg_zero; // -0 x -0 = +0
    b[n + 2] = 0x80 | one; // column 2: 1 x 1 + 1 x -1
    let g = MxGemm {
        cfg: cfg(BlockFormat::MxFp8E4M3, 1),
        spec: MxSpec::new(BlockFormat::MxFp8E4M3, BlockFormat::MxFp8E4M3),
        m,
        n,
        k,
        a,
        b,
        c: vec![0x8000_0000, 0x8000_0000, 0x8000_0000, 0],
        a_scales: vec![127],
        b_scales: vec![127, 127, 127, 0],
    };
    let d = run_clocked_mx(&g, None).expect("mesh").out.d;
    assert_eq!(d, [0x8000_0000, 0, 0, 0]);
}

/// A longer random sweep of the mesh against fused `mx_dot` (`TCRTL_SAMPLES` problems per
/// format, default 2), every width, specials included.
#[test]
fn random_sweep() {
    let count = crate::common::samples(2);
    for (s, fmt) in FORMATS.into_iter().enumerate() {
        for t in 0..count {
            let width = [1usize, 2, 4, 8, 16, 32][((t as usize) + s) % 6];
            let p = problem(
                fmt,
                (
                    4 + t as usize % 5,
                    3 + t as usize % 6,
                    32 * (1 + t as usize % 4),
                ),
                9000 + t * 11 + s as u64,
                t % 2 == 1,
            );
            check(&p, width, MxDotMode::Fused);
        }
    }
}

/// Arrays of other sizes (`CoreConfig::with_array`): every MX element format on a 1 x 1, a
/// 1 x 7, a 6 x 2, a 3 x 5 and an 8 x 8 array, partial tiles and several K-blocks, with
/// specials on some: the mesh equals fused `mx_dot` and `verify::mx_ref` bit for bit.
#[test]
fn mesh_equals_fused_mx_dot_on_arrays_of_other_sizes() {
    let sizes = [(1, 1), (1, 7), (6, 2), (3, 5), (8, 8)];
    for (s, fmt) in FORMATS.into_iter().enumerate() {
        for (z, &(rows, cols)) in sizes.iter().enumerate() {
            let width = [1usize, 4, 8, 32][(s + z) % 4];
            let p = problem(
                fmt,
                (rows + 2, cols + 3, 64),
                900 + (s * 10 + z) as u64,
                z % 2 == 1,
            );
            let mut g = gemm(&p, width);
            g.cfg = g.cfg.with_array(rows, cols).expect("a valid array");
            check_mesh(&g, MxDotMode::Fused, &format!("{fmt} on {rows} x {cols}"));
        }
    }
}
