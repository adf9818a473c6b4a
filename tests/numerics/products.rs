//! The exact multiplier, checked against independent references:
//! - every FP8 pair (E4M3 x E4M3, E5M2 x E5M2, E4M3 x E5M2, E5M2 x E4M3; 4 x 65,536 pairs)
//!   against host `f32` multiplication of values decoded by the OCP tables in `verify`;
//! - FP16 x FP16 on sampled pairs (random and corner classes) against host `f32` via `half`,
//!   and all 2^32 pairs in an `#[ignore]`d sweep;
//! - BF16 x BF16 on sampled pairs: the exact product against rustc_apfloat's `Double` and host
//!   `f64` (both exact for BF16 products), and its rounding to FP32 in every mode against
//!   rustc_apfloat's `Double -> Single` conversion, flags included.

use crate::common::{apfloat_round, half_corner, samples, secs, ApfloatDiffs, Rng};
use rustc_apfloat::ieee::{BFloat, Double, Single};
use rustc_apfloat::{Float, FloatConvert, Status};
use tensorcore_rtl::numerics::{
    format::FP64, multiply, round_product, Flags, Overflow, ProductClass, RoundingMode, BF16, E4M3,
    E5M2, FP16, FP32,
};
use tensorcore_rtl::verify::fp8_table::Fp8Kind;

const RNE: RoundingMode = RoundingMode::NearestEven;
const FP32_QNAN: u64 = 0x7FC0_0000;

/// Is this E5M2 code an IEEE-style signaling NaN (exponent all ones, fraction MSB clear)?
fn e5m2_snan(kind: Fp8Kind, code: u8) -> bool {
    kind == Fp8Kind::E5M2 && code & 0x7F == 0x7D
}

#[test]
fn fp8_products_all_pairs() {
    let combos = [
        (E4M3, Fp8Kind::E4M3, E4M3, Fp8Kind::E4M3),
        (E5M2, Fp8Kind::E5M2, E5M2, Fp8Kind::E5M2),
        (E4M3, Fp8Kind::E4M3, E5M2, Fp8Kind::E5M2),
        (E5M2, Fp8Kind::E5M2, E4M3, Fp8Kind::E4M3),
    ];
    for (fa, ka, fb, kb) in combos {
        let mut classes = [0u32; 4];
        for a in 0..=255u8 {
            for b in 0..=255u8 {
                let va = ka.decode(a) as f32;
                let vb = kb.decode(b) as f32;
                let want = va * vb;
                let p = multiply(fa, a as u64, fb, b as u64);
                let r = round_product(&p, FP32, RNE, Overflow::Ieee);
                let ctx = format!("{fa} {a:#04x} x {fb} {b:#04x}");
                if want.is_nan() {
                    classes[3] += 1;
                    assert_eq!(p.class, ProductClass::Nan, "{ctx}");
                    assert_eq!(r.bits, FP32_QNAN, "{ctx}");
                    let zero_inf =
                        (va == 0.0 && vb.is_infinite()) || (va.is_infinite() && vb == 0.0);
                    let invalid = zero_inf || e5m2_snan(ka, a) || e5m2_snan(kb, b);
                    assert_eq!(r.flags.invalid, invalid, "{ctx}");
                } else {
                    let class = if want == 0.0 {
                        ProductClass::Zero
                    } else if want.is_infinite() {
                        ProductClass::Infinite
                    } else {
                        ProductClass::Finite
                    };
                    classes[match class {
                        ProductClass::Zero => 0,
                        ProductClass::Finite => 1,
                        _ => 2,
                    }] += 1;
                    assert_eq!(p.class, class, "{ctx}");
                    assert_eq!(r.bits, want.to_bits() as u64, "{ctx}: want {want:e}");
                    assert!(r.flags.is_empty(), "{ctx}: FP8 products are exact in FP32");
                }
            }
        }
        println!(
            "{fa} x {fb}: zero {} finite {} inf {} nan {}",
            classes[0], classes[1], classes[2], classes[3]
        );
    }
}

/// One FP16 x FP16 pair against host f32 (exact product, so RNE is the identity).
fn check_fp16_pair(a: u16, b: u16) -> Result<(), String> {
    let va = half::f16::from_bits(a).to_f32();
    let vb = half::f16::from_bits(b).to_f32();
    let want = va * vb;
    let p = multiply(FP16, a as u64, FP16, b as u64);
    let r = round_product(&p, FP32, RNE, Overflow::Ieee);
    let ok = if want.is_nan() {
        r.bits == FP32_QNAN
    } else {
        r.bits == want.to_bits() as u64
            && !r.flags.inexact
            && !r.flags.overflow
            && !r.flags.underflow
    };
    if ok {
        Ok(())
    } else {
        Err(format!(
            "fp16 {a:#06x} x {b:#06x}: got {:#010x} {}, want {:#010x}",
            r.bits,
            r.flags,
            want.to_bits()
        ))
    }
}

fn fp16_operand(rng: &mut Rng) -> u16 {
    if rng.coin() {
        rng.next_u64() as u16
    } else {
        half_corner(rng, 5, 10)
    }
}

#[test]
fn fp16_products_sampled() {
    let n = samples(4_000_000);
    let start = std::time::Instant::now();
    let mut rng = Rng(0xF16);
    for _ in 0..n {
        let (a, b) = (fp16_operand(&mut rng), fp16_operand(&mut rng));
        check_fp16_pair(a, b).unwrap();
    }
    println!("fp16 x fp16: {n} pairs in {:.2} s", secs(start));
}

/// All 2^32 FP16 pairs (run with `cargo test --release --test numerics products:: -- --ignored`).
#[test]
#[ignore = "exhaustive 2^32 FP16 pairs: minutes in --release"]
fn fp16_products_exhaustive() {
    let start = std::time::Instant::now();
    let threads = std::thread::available_parallelism().map_or(2, |n| n.get()) as u32;
    let handles: Vec<_> = (0..threads)
        .map(|t| {
            std::thread::spawn(move || {
                let mut bad = 0u64;
                let mut a = t;
                while a < 1 << 16 {
                    for b in 0..=u16::MAX {
                        if let Err(e) = check_fp16_pair(a as u16, b) {
                            if bad < 10 {
                                eprintln!("{e}");
                            }
                            bad += 1;
                        }
                    }
                    a += threads;
                }
                bad
            })
        })
        .collect();
    let bad: u64 = handles.into_iter().map(|h| h.join().unwrap()).sum();
    println!(
        "fp16 x fp16 exhaustive: 2^32 pairs, {bad} mismatches, {:.1} s on {threads} threads",
        secs(start)
    );
    assert_eq!(bad, 0);
}

fn bf16_operand(rng: &mut Rng) -> u16 {
    if rng.coin() {
        rng.next_u64() as u16
    } else {
        half_corner(rng, 8, 7)
    }
}

/// A BF16 operand whose product with `a` lands near an FP32 boundary: the smallest normal
/// (tininess), the subnormal floor, or the overflow threshold.
fn bf16_near_boundary(rng: &mut Rng, a: u16) -> u16 {
    let ea = ((a >> 7) & 0xFF) as i32;
    let target = rng.pick(&[-127, -126, -125, -150, -149, -148, 127, 128]) + rng.below(2) as i32;
    // exp(a) + exp(b) = target  =>  eb = target - (ea - 127) + 127
    let eb = (target - ea + 254).clamp(1, 254) as u16;
    let frac = match rng.below(3) {
        0 => 0x7F,
        1 => 0,
        _ => rng.next_u64() as u16 & 0x7F,
    };
    ((rng.coin() as u16) << 15) | (eb << 7) | frac
}

#[test]
fn bf16_products_sampled() {
    let n = samples(250_000);
    let start = std::time::Instant::now();
    let mut rng = Rng(0xBF16);
    let mut diffs = ApfloatDiffs::default();
    for _ in 0..n {
        let a = bf16_operand(&mut rng);
        let b = if rng.below(4) == 0 {
            bf16_near_boundary(&mut rng, a)
        } else {
            bf16_operand(&mut rng)
        };
        let ctx = format!("bf16 {a:#06x} x {b:#06x}");
        let mut lost = false;
        let da: Double = BFloat::from_bits(a as u128).convert(&mut lost).value;
        let db: Double = BFloat::from_bits(b as u128).convert(&mut lost).value;
        let exact = (da * db).value;
        let host = half::bf16::from_bits(a).to_f64() * half::bf16::from_bits(b).to_f64();
        let p = multiply(BF16, a as u64, BF16, b as u64);
        // The exact product, as a binary64 encoding through the shared round_pack.
        let r64 = round_product(&p, FP64, RNE, Overflow::Ieee);
        if host.is_nan() {
            assert!(exact.is_nan(), "{ctx}");
            assert_eq!(r64.bits, FP64.canonical_nan(), "{ctx}");
            let snan = |x: u16| x & 0x7FC0 == 0x7F80 && x & 0x3F != 0;
            let zero_inf = |x: u16, y: u16| x & 0x7FFF == 0 && y & 0x7FFF == 0x7F80;
            let invalid = snan(a) || snan(b) || zero_inf(a, b) || zero_inf(b, a);
            assert_eq!(
                r64.flags,
                Flags {
                    invalid,
                    ..Flags::NONE
                },
                "{ctx}"
            );
            continue;
        }
        assert_eq!(r64.bits, host.to_bits(), "{ctx}: exact product vs host f64");
        assert_eq!(
            r64.bits as u128,
            exact.to_bits(),
            "{ctx}: exact product vs apfloat"
        );
        assert!(r64.flags.is_empty(), "{ctx}");
        // Rounded to FP32 in every mode against apfloat's Double -> Single.
        for mode in RoundingMode::ALL {
            let ours = round_product(&p, FP32, mode, Overflow::Ieee);
            let (want_bits, status) = match apfloat_round(mode) {
                Some(round) => {
                    let s: rustc_apfloat::StatusAnd<Single> = exact.convert_r(round, &mut lost);
                    (s.value.to_bits() as u64, s.status)
                }
                None => {
                    // Round to odd = truncate, then set the LSB if anything was lost.
                    let s: rustc_apfloat::StatusAnd<Single> =
                        exact.convert_r(rustc_apfloat::Round::TowardZero, &mut lost);
                    let inexact = s.status.contains(Status::INEXACT);
                    (s.value.to_bits() as u64 | inexact as u64, s.status)
                }
            };
            assert_eq!(ours.bits, want_bits, "{ctx} {}", mode.name());
            diffs
                .check(ours.flags, status, FP32, ours.bits)
                .unwrap_or_else(|e| panic!("{ctx} {}: {e}", mode.name()));
        }
    }
    println!(
        "bf16 x bf16: {n} pairs x 5 modes in {:.2} s; accepted apfloat convention differences: {diffs:?}",
        secs(start)
    );
}
