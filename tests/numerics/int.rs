//! INT8/INT4 arithmetic (`numerics::int`) against host integer arithmetic: every 8-bit and
//! 4-bit product exhaustively, and long dot products against exact i64 sums, wrapped or
//! clamped.

use crate::common::{samples, Rng};
use tensorcore_rtl::numerics::int::{
    dot_int, product, IntFormat, IntOverflow, INT_INPUT_FORMATS, S4, S8, U4, U8,
};

/// The host's value of an 8- or 4-bit lane: Rust's own `i8`/`u8` casts and an arithmetic
/// shift for the 4-bit sign extension (independent of `IntFormat::decode`).
fn host_value(fmt: IntFormat, bits: u64) -> i32 {
    let byte = bits as u8;
    match (fmt.bits, fmt.signed) {
        (8, true) => i32::from(byte as i8),
        (8, false) => i32::from(byte),
        (4, true) => i32::from(((byte << 4) as i8) >> 4),
        (4, false) => i32::from(byte & 0xF),
        _ => panic!("not an input format: {fmt}"),
    }
}

/// Every product of every 8-bit pair (s8 x s8, u8 x u8, s8 x u8, u8 x s8: 4 x 65,536) equals
/// host i32 multiplication, and fits 17 bits.
#[test]
fn all_int8_products() {
    let mut checked = 0u32;
    for (fa, fb) in [(S8, S8), (U8, U8), (S8, U8), (U8, S8)] {
        for a in 0..256u64 {
            for b in 0..256u64 {
                let want = host_value(fa, a) * host_value(fb, b);
                let got = product(fa, a, fb, b);
                assert_eq!(got, i64::from(want), "{fa} {a:#04x} x {fb} {b:#04x}");
                assert!((-(1 << 16)..(1 << 16)).contains(&got));
                checked += 1;
            }
        }
    }
    assert_eq!(checked, 4 * 65_536);
}

/// Every 4-bit product (all four signedness pairs), and the lane's high bits are ignored:
/// a 4-bit lane is the low nibble of whatever word carries it.
#[test]
fn all_int4_products() {
    for (fa, fb) in [(S4, S4), (U4, U4), (S4, U4), (U4, S4)] {
        for a in 0..256u64 {
            for b in 0..16u64 {
                let want = host_value(fa, a) * host_value(fb, b);
                assert_eq!(
                    product(fa, a, fb, b),
                    i64::from(want),
                    "{fa} {a:#x} x {fb} {b:#x}"
                );
            }
        }
    }
    // The extremes: -8 x -8 = 64, 15 x 15 = 225, -8 x 15 = -120.
    assert_eq!(product(S4, 0x8, S4, 0x8), 64);
    assert_eq!(product(U4, 0xF, U4, 0xF), 225);
    assert_eq!(product(S4, 0x8, U4, 0xF), -120);
}

/// A one-product dot over all 65,536 s8 pairs (and u8, mixed) with a random C equals host
/// `i32::wrapping_add` (wrap) and `i32::saturating_add` (satfinite).
#[test]
fn single_products_accumulate_like_host_i32() {
    let mut rng = Rng(0x1a7e_8000);
    for (fa, fb) in [(S8, S8), (U8, U8), (S8, U8)] {
        for a in 0..256u64 {
            for b in 0..256u64 {
                let c = match rng.below(4) {
                    0 => i32::MAX - rng.below(70_000) as i32,
                    1 => i32::MIN + rng.below(70_000) as i32,
                    _ => rng.next_u64() as i32,
                };
                let p = host_value(fa, a) * host_value(fb, b);
                let w = dot_int(fa, fb, &[a], &[b], c, 1, IntOverflow::Wrap);
                let s = dot_int(fa, fb, &[a], &[b], c, 1, IntOverflow::SatFinite);
                assert_eq!(w.d, c.wrapping_add(p), "{fa} {a:#x} {fb} {b:#x} c {c}");
                assert_eq!(s.d, c.saturating_add(p), "{fa} {a:#x} {fb} {b:#x} c {c}");
                assert_eq!(w.out_of_range, c.checked_add(p).is_none());
            }
        }
    }
}

/// The int32 value of an integer taken modulo 2^32 (two's-complement wrap), by arithmetic.
fn wrap32(v: i64) -> i64 {
    let m = v.rem_euclid(1 << 32);
    if m >= 1 << 31 {
        m - (1 << 32)
    } else {
        m
    }
}

/// Clamp to the int32 range, limits written out.
fn clamp32(v: i64) -> i64 {
    v.clamp(-2_147_483_648, 2_147_483_647)
}

/// A random lane of `fmt`: often an extreme value, so that long sums overflow.
fn lane(rng: &mut Rng, fmt: IntFormat, bias_high: bool) -> u64 {
    let mask = (1u64 << fmt.bits) - 1;
    match rng.below(3) {
        // The most negative (signed) or the largest (unsigned) value, or the largest positive.
        0 if bias_high => {
            if fmt.signed {
                mask >> 1
            } else {
                mask
            }
        }
        0 => 1u64 << (fmt.bits - 1),
        _ => rng.next_u64() & mask,
    }
}

/// Long random dot products (K up to 4,096, every pair of same-width formats, random step
/// widths) against exact i64 sums: wrapped once at the end (wrapping does not depend on the
/// steps), or clamped after each step of `w` products (the int32 register between steps).
#[test]
fn long_dot_products_against_i64() {
    let mut rng = Rng(0x01a7_ed07);
    let n = samples(400);
    let mut overflowed = 0;
    let mut clamp_order_mattered = 0;
    for case in 0..n {
        let fa = rng.pick(&INT_INPUT_FORMATS);
        let fb = *INT_INPUT_FORMATS
            .iter()
            .filter(|f| f.bits == fa.bits)
            .nth(rng.below(2) as usize)
            .expect("two formats per width");
        let k = 1 + rng.below(4096) as usize;
        let w = 1 + rng.below(32) as usize;
        let high = rng.coin();
        let a: Vec<u64> = (0..k).map(|_| lane(&mut rng, fa, high)).collect();
        let b: Vec<u64> = (0..k).map(|_| lane(&mut rng, fb, true)).collect();
        let c = match rng.below(3) {
            0 => i32::MAX - rng.below(1 << 20) as i32,
            1 => i32::MIN + rng.below(1 << 20) as i32,
            _ => rng.next_u64() as i32,
        };
        let prods: Vec<i64> = a
            .iter()
            .zip(&b)
            .map(|(&x, &y)| i64::from(host_value(fa, x)) * i64::from(host_value(fb, y)))
            .collect();
        let exact = i64::from(c) + prods.iter().sum::<i64>();
        let wrapped = dot_int(fa, fb, &a, &b, c, w, IntOverflow::Wrap);
        assert_eq!(
            i64::from(wrapped.d),
            wrap32(exact),
            "case {case}: {fa} x {fb}, K {k}, w {w}"
        );
        let mut acc = i64::from(c);
        for chunk in prods.chunks(w) {
            acc = clamp32(acc + chunk.iter().sum::<i64>());
        }
        let sat = dot_int(fa, fb, &a, &b, c, w, IntOverflow::SatFinite);
        assert_eq!(
            i64::from(sat.d),
            acc,
            "case {case}: {fa} x {fb}, K {k}, w {w}"
        );
        assert_eq!(sat.steps, k.div_ceil(w));
        overflowed += usize::from(wrapped.out_of_range);
        clamp_order_mattered += usize::from(acc != clamp32(exact));
        // One step (K <= w): the clamp applies exactly once, to the whole exact sum.
        if k <= 32 {
            let once = dot_int(fa, fb, &a, &b, c, 32, IntOverflow::SatFinite);
            assert_eq!(i64::from(once.d), clamp32(exact), "case {case}: one step");
        }
    }
    // The sweep reached the cases it is for.
    assert!(
        overflowed > n as usize / 10,
        "only {overflowed} of {n} overflowed"
    );
    assert!(
        clamp_order_mattered > 0,
        "no case where per-step clamping differs"
    );
}

/// The documented consequence of clamping per step: with C = i32::MAX, a first step of
/// positive products clamps, and a second step of negative ones pulls the value back below
/// the maximum; one step over the same products clamps nothing.
#[test]
fn clamp_per_step() {
    let a = [0x7Fu64, 0x80]; // 127, -128
    let b = [0x7Fu64, 0x7F]; // 127, 127
    let c = i32::MAX;
    let two_steps = dot_int(S8, S8, &a, &b, c, 1, IntOverflow::SatFinite);
    assert_eq!(i64::from(two_steps.d), i64::from(i32::MAX) - 128 * 127);
    let one_step = dot_int(S8, S8, &a, &b, c, 2, IntOverflow::SatFinite);
    assert_eq!(
        i64::from(one_step.d),
        i64::from(i32::MAX) + 127 * 127 - 128 * 127
    );
    assert!(two_steps.out_of_range && !one_step.out_of_range);
}

/// Empty K returns C in one step.
#[test]
fn empty_dot_is_c() {
    let r = dot_int(S8, S8, &[], &[], -7, 32, IntOverflow::Wrap);
    assert_eq!((r.d, r.steps, r.out_of_range), (-7, 1, false));
}
