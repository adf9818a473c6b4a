//! NVFP4 and MXINT8 through the clocked tensor core in MX mode.
//!
//! - NVFP4: E2M1 elements, one unsigned E4M3 scale per 16 along K (the scale multiplier's
//!   4 x 4-bit significand product), FP32 tensor scales of A and B (their product formed once
//!   per core). D equals fused `mx_dot` bit for bit for random problems with zero, subnormal
//!   and NaN scales and zero, negative, subnormal, huge, infinite and NaN tensor scales; and
//!   where every factor is a power-of-two multiple of small integers, an independent host
//!   reference (exact f64 block sums, one f32 rounding per block) agrees.
//! - MXINT8: int8 elements worth `q * 2^-6`, products in the block-sum register, E8M0 scales
//!   per 32. D equals fused `mx_dot` and an i64 block-sum reference rounded by the host.
//! - The waves show the tensor-scale registers and the scale multiplier's `scale_sig`.

use crate::common::mx::check_mesh;
use crate::common::waves::Waves;
use crate::common::Rng;
use tensorcore_rtl::gemm::{run_clocked_mx, MxGemm};
use tensorcore_rtl::hw::{CoreConfig, MxSpec};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::mx::BlockFormat;
use tensorcore_rtl::numerics::mx_dot::MxDotMode;
use tensorcore_rtl::rtl::TraceConfig;

/// A block-scaled problem: element codes, scale codes, tensor scales, C.
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
    ta: Option<u32>,
    tb: Option<u32>,
}

impl Problem {
    fn gemm(&self, width: usize) -> MxGemm {
        let lane = MxSpec::lane_format(self.fmt);
        MxGemm {
            cfg: CoreConfig::new(lane, lane, AccMode::Fused, width),
            spec: MxSpec::new(self.fmt, self.fmt).with_tensor_scales(self.ta, self.tb),
            m: self.m,
            n: self.n,
            k: self.k,
            a: self.a.clone(),
            b: self.b.clone(),
            c: self.c.clone(),
            a_scales: self.sa.clone(),
            b_scales: self.sb.clone(),
        }
    }
}

fn random_c(rng: &mut Rng, count: usize) -> Vec<u32> {
    (0..count)
        .map(|_| match rng.below(8) {
            0 => 0x8000_0000,
            1 => 0,
            _ => {
                let e = 127 - 12 + rng.below(24) as u32;
                (rng.below(2) as u32) << 31 | e << 23 | rng.below(1 << 23) as u32
            }
        })
        .collect()
}

/// A random UE4M3 scale code: mostly normal, some zero and subnormal, rarely NaN (0x7F).
fn ue4m3(rng: &mut Rng, specials: bool) -> u8 {
    match rng.below(30) {
        0 => 0x00,
        1 => 1 + rng.below(7) as u8,
        2 if specials => 0x7F,
        3 => 0x7E,
        _ => (0x30 + rng.below(0x18)) as u8,
    }
}

/// A random FP32 tensor scale (bits), `None` meaning none.
fn tensor(rng: &mut Rng, specials: bool) -> Option<u32> {
    let normal = |rng: &mut Rng| (127 - 8 + rng.below(16) as u32) << 23 | rng.below(1 << 23) as u32;
    Some(match rng.below(12) {
        0 => return None,
        1 if specials => 0x0000_0000,
        2 if specials => 0x7F80_0000,
        3 if specials => 0x7FC0_0000,
        4 => 0x8000_0000 | normal(rng),
        5 => rng.below(1 << 23) as u32 | 1,           // subnormal
        6 => (250 << 23) | rng.below(1 << 23) as u32, // huge: products overflow
        _ => normal(rng),
    })
}

fn nvfp4_problem((m, n, k): (usize, usize, usize), seed: u64, specials: bool) -> Problem {
    let mut rng = Rng(seed);
    let kb = k / 16;
    Problem {
        fmt: BlockFormat::NvFp4,
        m,
        n,
        k,
        a: (0..m * k).map(|_| rng.below(16)).collect(),
        b: (0..k * n).map(|_| rng.below(16)).collect(),
        c: random_c(&mut rng, m * n),
        sa: (0..m * kb).map(|_| ue4m3(&mut rng, specials)).collect(),
        sb: (0..kb * n).map(|_| ue4m3(&mut rng, specials)).collect(),
        ta: tensor(&mut rng, specials),
        tb: tensor(&mut rng, specials),
    }
}

/// An int8 code: random, with the extremes -128, 127 and zero more often.
fn int8(rng: &mut Rng) -> u64 {
    match rng.below(16) {
        0 => 0x80,
        1 => 0x7F,
        2 => 0,
        _ => rng.below(256),
    }
}

fn e8m0(rng: &mut Rng, specials: bool) -> u8 {
    match rng.below(40) {
        0 => 0x00,
        1 => 0xFE,
        2 if specials => 0xFF,
        _ => (127 - 10 + rng.below(20)) as u8,
    }
}

fn mxint8_problem((m, n, k): (usize, usize, usize), seed: u64, specials: bool) -> Problem {
    let mut rng = Rng(seed);
    let kb = k / 32;
    Problem {
        fmt: BlockFormat::MxInt8,
        m,
        n,
        k,
        a: (0..m * k).map(|_| int8(&mut rng)).collect(),
        b: (0..k * n).map(|_| int8(&mut rng)).collect(),
        c: random_c(&mut rng, m * n),
        sa: (0..m * kb).map(|_| e8m0(&mut rng, specials)).collect(),
        sb: (0..kb * n).map(|_| e8m0(&mut rng, specials)).collect(),
        ta: None,
        tb: None,
    }
}

/// The mesh's D against fused `mx_dot`; returns how many results were NaN, infinite, zero
/// and finite nonzero.
fn check(p: &Problem, width: usize) -> [usize; 4] {
    let label = format!("{} ta={:?} tb={:?}", p.fmt, p.ta, p.tb);
    check_mesh(&p.gemm(width), MxDotMode::Fused, &label)
}

/// NVFP4, every width that divides 16, several blocks, with and without specials.
#[test]
fn nvfp4_mesh_equals_fused_mx_dot() {
    let mut seen = [0usize; 4];
    for (t, width) in [1usize, 2, 4, 8, 16].into_iter().enumerate() {
        for specials in [false, true] {
            for rep in 0..3u64 {
                let p = nvfp4_problem((5, 6, 64), 1000 + 10 * t as u64 + rep, specials);
                let k = check(&p, width);
                for (a, b) in seen.iter_mut().zip(k) {
                    *a += b;
                }
            }
        }
    }
    // Specials really happen, and most results are ordinary numbers.
    assert!(seen[0] > 0 && seen[1] > 0 && seen[2] > 0, "{seen:?}");
    assert!(seen[3] > seen[0] + seen[1], "{seen:?}");
}

/// MXINT8, every width, several blocks, with and without specials.
#[test]
fn mxint8_mesh_equals_fused_mx_dot() {
    let mut seen = [0usize; 4];
    for (t, width) in [1usize, 2, 4, 8, 16, 32].into_iter().enumerate() {
        for specials in [false, true] {
            let p = mxint8_problem((5, 4, 96), 2000 + 10 * t as u64, specials);
            let k = check(&p, width);
            for (a, b) in seen.iter_mut().zip(k) {
                *a += b;
            }
        }
    }
    assert!(seen[0] > 0 && seen[3] > 50, "{seen:?}");
}

/// The value of an E2M1 code (the OCP table: 0, 0.5, 1, 1.5, 2, 3, 4, 6; bit 3 the sign).
fn e2m1_value(code: u64) -> f64 {
    let mag = [0.0, 0.5, 1.0, 1.5, 2.0, 3.0, 4.0, 6.0][(code & 7) as usize];
    if code & 8 != 0 {
        -mag
    } else {
        mag
    }
}

/// The value of a positive normal E4M3 code: `2^(e - 7) * (1 + f/8)`.
fn e4m3_value(code: u8) -> f64 {
    let (e, f) = (i32::from(code >> 3), f64::from(code & 7));
    assert!((1..15).contains(&e), "normal E4M3 scale {code:#04x}");
    2f64.powi(e - 7) * (1.0 + f / 8.0)
}

/// An independent reference for NVFP4 with power-of-two tensor scales: per block of 16 the
/// exact sum in f64 (at most 4 + 4 + 4 + 4 significant bits per term, 16 terms, a narrow
/// exponent range; C between 2^-12 and 2^12, so every sum spans fewer than 53 bits), then `c <- f32(c + block)` computed exactly in f64 and rounded once by
/// the host's f64 -> f32 conversion (IEEE nearest even).
#[test]
fn nvfp4_against_host_reference() {
    let mut rng = Rng(77);
    let (m, n, k) = (4, 4, 64);
    let mut p = nvfp4_problem((m, n, k), 3, false);
    p.sa = (0..m * 4).map(|_| (0x30 + rng.below(0x18)) as u8).collect();
    p.sb = (0..4 * n).map(|_| (0x30 + rng.below(0x18)) as u8).collect();
    p.ta = Some(0.25f32.to_bits());
    p.tb = Some(8.0f32.to_bits());
    p.c = random_c(&mut rng, m * n);
    let d = run_clocked_mx(&p.gemm(4), None).expect("mesh").out.d;
    let mut inexact = 0;
    for i in 0..m {
        for j in 0..n {
            let mut acc = f32::from_bits(p.c[i * n + j]);
            for blk in 0..k / 16 {
                let scale = e4m3_value(p.sa[i * 4 + blk]) * e4m3_value(p.sb[blk * n + j]) * 2.0;
                let sum: f64 = (blk * 16..(blk + 1) * 16)
                    .map(|t| e2m1_value(p.a[i * k + t]) * e2m1_value(p.b[t * n + j]))
                    .sum();
                let exact = f64::from(acc) + sum * scale;
                acc = exact as f32;
                inexact += usize::from(f64::from(acc) != exact);
            }
            assert_eq!(d[i * n + j], acc.to_bits(), "D[{i}][{j}]");
        }
    }
    assert!(inexact > 10, "only {inexact} roundings happened");
}

/// MXINT8 against an i64 block sum: `c <- f32(c + 2^(xa + xb - 254 - 12) * sum q_a q_b)`, the
/// sum exact in i64 and the add exact in f64 (scales near 2^0), rounded once by the host.
#[test]
fn mxint8_against_integer_reference() {
    let (m, n, k) = (4, 5, 96);
    let mut rng = Rng(91);
    let mut p = mxint8_problem((m, n, k), 5, false);
    p.sa = (0..m * 3).map(|_| (120 + rng.below(14)) as u8).collect();
    p.sb = (0..3 * n).map(|_| (120 + rng.below(14)) as u8).collect();
    let d = run_clocked_mx(&p.gemm(8), None).expect("mesh").out.d;
    let mut inexact = 0;
    for i in 0..m {
        for j in 0..n {
            let mut acc = f32::from_bits(p.c[i * n + j]);
            for blk in 0..3 {
                let sum: i64 = (blk * 32..(blk + 1) * 32)
                    .map(|t| {
                        i64::from(p.a[i * k + t] as u8 as i8)
                            * i64::from(p.b[t * n + j] as u8 as i8)
                    })
                    .sum();
                let e = i32::from(p.sa[i * 3 + blk]) + i32::from(p.sb[blk * n + j]) - 254 - 12;
                let exact = f64::from(acc) + sum as f64 * 2f64.powi(e);
                acc = exact as f32;
                inexact += usize::from(f64::from(acc) != exact);
            }
            assert_eq!(d[i * n + j], acc.to_bits(), "D[{i}][{j}]");
        }
    }
    assert!(inexact > 10, "only {inexact} roundings happened");
}

/// The waves of an NVFP4 run: `a_tscale`/`b_tscale` hold the tensor scales; in the cycle a
/// block fires, `scale_sig` is the product of the two E4M3 significands (hand-worked: 1.5
/// and 1.25 are 0x3C and 0x3A, significands 12 and 10, so 120) times the tensor scales'
/// (4.0 and 0.5: significand 2^23 each, so 2^46).
#[test]
fn nvfp4_waves_show_the_scale_multiplier() {
    let dir = std::env::temp_dir().join(format!("tcrtl_nvfp4_core_{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("tmp dir");
    let path = dir.join("nvfp4.vcd");
    let mut p = nvfp4_problem((4, 4, 32), 11, false);
    p.sa = vec![0x3C; 8];
    p.sb = vec![0x3A; 8];
    p.ta = Some(4.0f32.to_bits());
    p.tb = Some(0.5f32.to_bits());
    let d = run_clocked_mx(&p.gemm(4), Some(&TraceConfig::vcd(&path)))
        .expect("traced run")
        .out
        .d;
    assert_eq!(d.len(), 16);
    let waves = Waves::read(&path);
    let value = |name: &str, cycle: usize| waves.value(name, cycle);
    assert_eq!(
        value("tensor_core.a_tscale", 1),
        u64::from(4.0f32.to_bits())
    );
    assert_eq!(
        value("tensor_core.b_tscale", 1),
        u64::from(0.5f32.to_bits())
    );
    let mut fired = 0;
    for t in 1..waves.cycles() {
        for r in 0..4 {
            for c in 0..4 {
                let s = value(&format!("tensor_core.mesh.pe_{r}_{c}.scale_sig"), t);
                if s != 0 {
                    assert_eq!(s, 120 << 46, "pe_{r}_{c} @{t}");
                    fired += 1;
                }
            }
        }
    }
    // Two blocks of 16 per output, 16 PEs.
    assert_eq!(fired, 32);
    let _ = std::fs::remove_dir_all(&dir);
}

/// A longer random sweep against fused `mx_dot` (`TCRTL_SAMPLES` problems per format,
/// default 4): shapes, widths and specials vary.
#[test]
fn random_sweep() {
    let count = crate::common::samples(4);
    for t in 0..count {
        let (m, n) = (1 + t as usize % 7, 1 + (t as usize / 2) % 9);
        let p = nvfp4_problem((m, n, 16 * (1 + t as usize % 5)), 5000 + t, t % 3 != 0);
        check(&p, [1usize, 2, 4, 8, 16][t as usize % 5]);
        let p = mxint8_problem((m, n, 32 * (1 + t as usize % 3)), 7000 + t, t % 3 != 0);
        check(&p, [1usize, 2, 4, 8, 16, 32][t as usize % 6]);
    }
}

/// NVFP4 and MXINT8 on arrays of other sizes (`CoreConfig::with_array`): the mesh equals
/// fused `mx_dot` bit for bit on a 1 x 1, a 2 x 7, a 5 x 3 and an 8 x 8 array.
#[test]
fn nvfp4_and_mxint8_on_arrays_of_other_sizes() {
    for (z, (rows, cols)) in [(1, 1), (2, 7), (5, 3), (8, 8)].into_iter().enumerate() {
        let shape = (rows + 2, cols + 1, 64);
        for (p, width) in [
            (
                nvfp4_problem(shape, 40 + z as u64, z % 2 == 0),
                [1usize, 4, 16][z % 3],
            ),
            (
                mxint8_problem(shape, 50 + z as u64, z % 2 == 1),
                [1usize, 8, 32][z % 3],
            ),
        ] {
            let mut g = p.gemm(width);
            g.cfg = g.cfg.with_array(rows, cols).expect("a valid array");
            let label = format!("{} on {rows} x {cols}", p.fmt);
            check_mesh(&g, MxDotMode::Fused, &label);
        }
    }
}
