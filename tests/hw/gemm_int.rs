//! Integer GEMMs (INT8/INT4, `AccMode::Int`) on the clocked tensor core: D equals the
//! functional model bit for bit, and both equal an i64 reference computed here (exact
//! products by the host's own casts, each PE step's sum wrapped modulo 2^32 or clamped), and
//! the verify layer's `int_ref_dot`; 8-bit operands also through the TMA memory path.

use crate::common::Rng;
use tensorcore_rtl::gemm::{run_clocked, run_functional, run_memory, CoreConfig, Gemm};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::MemPortConfig;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::int::{IntFormat, IntMode, IntOverflow, S4, S8, U4, U8};
use tensorcore_rtl::verify::gemm_ref::Reference;

/// A lane's value by host casts.
fn host(fmt: IntFormat, w: u64) -> i64 {
    let byte = w as u8;
    i64::from(match (fmt.bits, fmt.signed) {
        (8, true) => i32::from(byte as i8),
        (8, false) => i32::from(byte),
        (4, true) => i32::from(((byte << 4) as i8) >> 4),
        _ => i32::from(byte & 0xF),
    })
}

/// D[i][j] by i64 arithmetic: chunks of `w` products along K, narrowed after each chunk.
pub(crate) fn reference(g: &Gemm, im: &IntMode) -> Vec<u32> {
    let mut d = Vec::with_capacity(g.m * g.n);
    for i in 0..g.m {
        for j in 0..g.n {
            let mut acc = i64::from(g.c[i * g.n + j] as i32);
            let prods: Vec<i64> = (0..g.k)
                .map(|p| host(im.a, g.a[i * g.k + p]) * host(im.b, g.b[p * g.n + j]))
                .collect();
            for chunk in prods.chunks(g.cfg.width) {
                acc += chunk.iter().sum::<i64>();
                acc = match im.overflow {
                    IntOverflow::Wrap => i64::from((acc & 0xFFFF_FFFF) as u32 as i32),
                    IntOverflow::SatFinite => acc.clamp(i64::from(i32::MIN), i64::from(i32::MAX)),
                };
            }
            d.push(acc as i32 as u32);
        }
    }
    d
}

/// A random problem whose operands lean to the extremes and whose C sits near the int32
/// limits, so that steps overflow.
pub(crate) fn problem(rng: &mut Rng, im: IntMode, w: usize, m: usize, n: usize, k: usize) -> Gemm {
    let lanes = |rng: &mut Rng, f: IntFormat, len: usize| -> Vec<u64> {
        (0..len)
            .map(|_| match rng.below(3) {
                0 => f.encode(f.max()).expect("max"),
                1 => f.encode(f.min()).expect("min"),
                _ => rng.next_u64() & f.mask(),
            })
            .collect()
    };
    let a = lanes(rng, im.a, m * k);
    let b = lanes(rng, im.b, k * n);
    let c = (0..m * n)
        .map(|_| match rng.below(3) {
            0 => (i32::MAX - rng.below(1 << 18) as i32) as u32,
            1 => (i32::MIN + rng.below(1 << 18) as i32) as u32,
            _ => rng.next_u64() as u32,
        })
        .collect();
    let cfg = CoreConfig::new(im.a.container(), im.b.container(), AccMode::Int(im), w);
    Gemm::new(m, n, k, cfg, a, b, c).expect("a valid integer problem")
}

#[test]
fn mesh_equals_functional_and_i64_reference() {
    let mut rng = Rng(0x0001_6e77);
    let pairs = [
        (S8, S8),
        (U8, U8),
        (S8, U8),
        (U8, S8),
        (S4, S4),
        (U4, S4),
        (S4, U4),
    ];
    let mut overflowed = 0usize;
    let mut runs = 0;
    for (fa, fb) in pairs {
        for overflow in [IntOverflow::Wrap, IntOverflow::SatFinite] {
            for w in [1usize, 4, 32] {
                let im = IntMode {
                    a: fa,
                    b: fb,
                    overflow,
                };
                let (m, n) = (1 + rng.below(9) as usize, 1 + rng.below(9) as usize);
                let k = 1 + rng.below(80) as usize;
                let g = problem(&mut rng, im, w, m, n, k);
                let label = format!("{fa} x {fb} {} w {w}, {m}x{n}x{k}", overflow.name());
                let clocked = run_clocked(&g, None).expect("clocked run");
                let functional = run_functional(&g).expect("functional run");
                let want = reference(&g, &im);
                assert_eq!(clocked.out.d, functional.d, "{label}: mesh vs functional");
                assert_eq!(clocked.out.d, want, "{label}: mesh vs i64 reference");
                let r = Reference::for_problem(&g, None).expect("int reference");
                assert_eq!(r.gemm(&g), want, "{label}: verify::gemm_ref vs this test");
                assert!(clocked.out.flags.names().is_empty(), "{label}: flags");
                overflowed += want
                    .iter()
                    .zip(&g.c)
                    .filter(|(d, c)| {
                        let (d, c) = (i64::from(**d as i32), i64::from(**c as i32));
                        (c > i64::from(i32::MAX) - 70_000 && d < 0)
                            || (c < i64::from(i32::MIN) + 70_000 && d > 0)
                            || d == i64::from(i32::MAX)
                            || d == i64::from(i32::MIN)
                    })
                    .count();
                runs += 1;
            }
        }
    }
    assert_eq!(runs, 7 * 2 * 3);
    assert!(overflowed > 0, "no element reached the int32 limits");
}

/// The seeded random integer problem (`Gemm::random`) runs on the mesh as well.
#[test]
fn random_problem_through_the_mesh() {
    let im = IntMode {
        a: S8,
        b: U8,
        overflow: IntOverflow::SatFinite,
    };
    let cfg = CoreConfig::new(S8.container(), U8.container(), AccMode::Int(im), 8);
    let g = Gemm::random(6, 5, 70, cfg, 7).expect("random problem");
    let clocked = run_clocked(&g, None).expect("clocked run");
    assert_eq!(clocked.out.d, reference(&g, &im));
}

/// 8-bit integer GEMMs through the TMA memory path (global memory, TMA loads into swizzled
/// shared-memory stages, TMA store of D): D equals the ideal-path run and the i64 reference;
/// D goes out as 4 bytes an element and the operands come in as 1 byte an element.
#[test]
fn int8_through_the_memory_path() {
    let mut rng = Rng(0x0007_3a11);
    let pc = MemPortConfig {
        params: MemParams::default(),
        stages: 0,
        swizzle: true,
    };
    for (fa, fb) in [(S8, S8), (U8, S8), (S8, U8), (U8, U8)] {
        for (overflow, w) in [(IntOverflow::Wrap, 4usize), (IntOverflow::SatFinite, 16)] {
            let im = IntMode {
                a: fa,
                b: fb,
                overflow,
            };
            let (m, n) = (1 + rng.below(10) as usize, 1 + rng.below(10) as usize);
            let k = 1 + rng.below(150) as usize;
            let g = problem(&mut rng, im, w, m, n, k);
            let label = format!("{fa} x {fb} {} w {w}, {m}x{n}x{k}", overflow.name());
            let mem = run_memory(&g, &pc, None).expect("memory-path run");
            let ideal = run_clocked(&g, None).expect("ideal run");
            assert_eq!(mem.run.run.out.d, ideal.out.d, "{label}: tma vs ideal");
            assert_eq!(mem.run.run.out.d, reference(&g, &im), "{label}: tma vs i64");
            assert_eq!(
                mem.counters.bytes_stored,
                4 * (m * n) as u64,
                "{label}: D bytes"
            );
            // At least A and B once (one byte an element) and C (4 bytes an element).
            assert!(
                mem.counters.bytes_loaded >= (m * k + k * n + 4 * m * n) as u64,
                "{label}: {} B loaded",
                mem.counters.bytes_loaded
            );
        }
    }
}
