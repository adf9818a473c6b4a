//! The binary64 FMA of the FP64 tensor cores (`numerics::fma64`) and the DMMA dot product
//! (`numerics::dot::dmma`) against the host's IEEE fused multiply-add (`f64::mul_add`, round to
//! nearest even) and Berkeley SoftFloat's `f64_mulAdd` in every IEEE direction, with its flags;
//! plus the binary64 directed tests of Fasi, Higham, Mikaitis and Pranesh (A100).

use crate::common::{p2, samples, softfloat_op, softfloat_round, Rng};
use softfloat_wrapper::{Float as _, F64};
use tensorcore_rtl::numerics::dot::dmma::{dmma_dot, dmma_dot_preset};
use tensorcore_rtl::numerics::dot::{DotError, Preset};
use tensorcore_rtl::numerics::fma64::{fma64, fma64_rm};
use tensorcore_rtl::numerics::RoundingMode;

/// A binary64 operand reaching the corners: extreme and clustered exponents (so that the
/// product and the addend overlap, cancel, or lie far apart), subnormals, zeros, infinities,
/// NaNs, all-ones and sparse significands.
fn corner(rng: &mut Rng, near: u64) -> u64 {
    let sign = (rng.coin() as u64) << 63;
    let exp = match rng.below(6) {
        0 => rng.below(2048),
        1 => rng.pick(&[0, 0, 1, 2, 1022, 1023, 1024, 2045, 2046, 2047]),
        2..=4 => (near as i64 + rng.below(120) as i64 - 60).clamp(0, 2046) as u64,
        _ => (rng.below(200) as i64 + 1023 - 100) as u64,
    };
    let frac = match rng.below(4) {
        0 => rng.next_u64() & ((1 << 52) - 1),
        1 => (1 << 52) - 1 - (rng.below(4)),
        2 => 1 << rng.below(52),
        _ => rng.below(8),
    };
    sign | (exp << 52) | frac
}

fn same(ours: u64, want: u64) -> bool {
    let nan = |x: u64| (x >> 52) & 0x7FF == 0x7FF && x & ((1 << 52) - 1) != 0;
    if nan(want) {
        nan(ours)
    } else {
        ours == want
    }
}

#[test]
fn fma64_matches_the_host_fma() {
    let mut rng = Rng(0xD3A1_0064);
    for i in 0..samples(200_000) {
        let near = rng.below(2047);
        let (a, b) = (corner(&mut rng, near), corner(&mut rng, near / 2 + 511));
        let c = corner(&mut rng, near);
        let want = f64::from_bits(a)
            .mul_add(f64::from_bits(b), f64::from_bits(c))
            .to_bits();
        let (ours, _) = fma64(a, b, c);
        assert!(
            same(ours, want),
            "#{i}: fma({a:#018x}, {b:#018x}, {c:#018x}) = {ours:#018x}, host {want:#018x}"
        );
    }
}

#[test]
fn fma64_matches_softfloat_in_every_direction_with_flags() {
    let mut rng = Rng(0x50F7_F10A);
    let modes = [
        RoundingMode::NearestEven,
        RoundingMode::TowardZero,
        RoundingMode::Down,
        RoundingMode::Up,
        RoundingMode::NearestAway,
    ];
    for i in 0..samples(100_000) {
        let near = rng.below(2047);
        let (a, b) = (corner(&mut rng, near), corner(&mut rng, near / 2 + 511));
        let c = corner(&mut rng, near);
        let rm = modes[i as usize % modes.len()];
        let (want, want_flags) = softfloat_op(rm, || {
            F64::from_bits(a)
                .fused_mul_add(F64::from_bits(b), F64::from_bits(c), softfloat_round(rm))
                .to_bits()
        });
        let (ours, flags) = fma64_rm(a, b, c, rm);
        assert!(
            same(ours, want),
            "#{i} {rm:?}: fma({a:#018x}, {b:#018x}, {c:#018x}) = {ours:#018x}, softfloat {want:#018x}"
        );
        assert_eq!(
            flags, want_flags,
            "#{i} {rm:?}: fma({a:#018x}, {b:#018x}, {c:#018x}) flags"
        );
    }
}

#[test]
fn dmma_is_the_fma_chain_in_k_order() {
    let mut rng = Rng(0xD44A);
    for _ in 0..samples(5_000) {
        let k = 1 + rng.below(16) as usize;
        let near = 1023 + rng.below(40) - 20;
        let a: Vec<u64> = (0..k).map(|_| corner(&mut rng, near)).collect();
        let b: Vec<u64> = (0..k).map(|_| corner(&mut rng, near)).collect();
        let c = corner(&mut rng, near + 10);
        let mut want = f64::from_bits(c);
        for (x, y) in a.iter().zip(&b) {
            want = f64::from_bits(*x).mul_add(f64::from_bits(*y), want);
        }
        let (ours, _) = dmma_dot(&a, &b, c).unwrap();
        assert!(same(ours, want.to_bits()), "{a:x?} {b:x?} {c:#x}");
    }
    assert_eq!(
        dmma_dot(&[0], &[0, 0], 0),
        Err(DotError::LengthMismatch { a: 1, b: 2 })
    );
    for p in [Preset::Volta, Preset::Turing, Preset::Ada] {
        assert!(dmma_dot_preset(p, &[0], &[0], 0).is_err(), "{p}");
    }
    for p in [
        Preset::Ampere,
        Preset::Hopper,
        Preset::H200,
        Preset::Blackwell,
    ] {
        assert!(dmma_dot_preset(p, &[0], &[0], 0).is_ok(), "{p}");
    }
}

/// One DMMA dot product of `f64` values (exactly the inputs given).
fn d(a: &[f64], b: &[f64], c: f64) -> f64 {
    let a: Vec<u64> = a.iter().map(|x| x.to_bits()).collect();
    let b: Vec<u64> = b.iter().map(|x| x.to_bits()).collect();
    f64::from_bits(
        dmma_dot_preset(Preset::Ampere, &a, &b, c.to_bits())
            .unwrap()
            .0,
    )
}

/// The binary64 tests of Fasi et al. (`tc_test_numerics-A100-binary64.cu`, repository
/// north-numerical-computing/tensor-cores-numerical-behavior), each with the condition their
/// program checks for PASS; the paper reports every one passing on the A100. K = 4 (m8n8k4).
#[test]
fn fasi_binary64_directed_tests() {
    let z = [0.0; 4];
    let with = |v: &[(usize, f64)]| {
        let mut x = z;
        for &(i, y) in v {
            x[i] = y;
        }
        x
    };
    // A. Subnormals in input: 2^-1074 * 2^52 = 2^-1022.
    assert_eq!(
        d(&with(&[(0, p2(-1074))]), &with(&[(0, p2(52))]), 0.0),
        p2(-1022)
    );
    // A. Subnormals in output: 2^-1022 * 2^-1 = 2^-1023; 2^-1022 * 1 - 2^-1023 = 2^-1023.
    assert_eq!(
        d(&with(&[(0, p2(-1022))]), &with(&[(0, 0.5)]), 0.0),
        p2(-1023)
    );
    assert_eq!(
        d(&with(&[(0, p2(-1022))]), &with(&[(0, 1.0)]), -p2(-1023)),
        p2(-1023)
    );
    // B. Products accumulated in binary64: c = 1 plus two products 0.5 * 2^-53 gives 1.
    let half = with(&[(0, 0.5), (1, 0.5)]);
    assert_eq!(d(&half, &with(&[(0, p2(-53)), (1, p2(-53))]), 1.0), 1.0);
    // C. Round to nearest, positive and negative; ties to even.
    let ones2 = with(&[(0, 1.0), (1, 1.0)]);
    assert_eq!(
        d(&ones2, &with(&[(0, 2.0), (1, p2(-52) + p2(-53))]), 0.0),
        2.0 + p2(-51)
    );
    assert_eq!(d(&ones2, &with(&[(0, 2.0), (1, p2(-53))]), 0.0), 2.0);
    assert_eq!(
        d(&ones2, &with(&[(0, -2.0), (1, -p2(-52) - p2(-53))]), 0.0),
        -2.0 - p2(-51)
    );
    assert_eq!(d(&ones2, &with(&[(0, -2.0), (1, -p2(-53))]), 0.0), -2.0);
    let ones4 = [1.0; 4];
    assert_eq!(d(&ones4, &with(&[(0, 2.0), (1, p2(-52))]), 0.0), 2.0);
    assert_eq!(
        d(&ones4, &with(&[(0, 2.0 + p2(-51)), (1, p2(-52))]), 0.0),
        2.0 + p2(-50)
    );
    // D1. Extra alignment bits: 1 * 1 - (1 - 2^-53) = 2^-53.
    let below_one = 1.0 - p2(-53);
    assert_eq!(
        d(&with(&[(0, 1.0)]), &with(&[(0, 1.0)]), -below_one),
        p2(-53)
    );
    // D2. Normalisation after each addition: (1 - 2^-53) + 2^-53 + 2^-53 = 1.
    assert_eq!(
        d(&ones2, &with(&[(0, p2(-53)), (1, p2(-53))]), below_one),
        1.0
    );
    // D3. Normalisation in subtraction: 1 - 2^-53 + (-1 + 2^-53) = 0.
    assert_eq!(
        d(&ones2, &with(&[(0, 1.0), (1, -p2(-53))]), -1.0 + p2(-53)),
        0.0
    );
    // D4. No extra carry bits: c = 1 + 2^-51 + 2^-52 with products 1 and 2^-52 (both orders)
    // gives 2 or 2 + 2^-50.
    let c4 = 1.0 + p2(-51) + p2(-52);
    for b in [
        with(&[(0, p2(-52)), (1, 1.0)]),
        with(&[(0, 1.0), (1, p2(-52))]),
    ] {
        let r = d(&ones2, &b, c4);
        assert!(r == 2.0 || r == 2.0 + p2(-50), "{r}");
    }
    // D5. Monotonicity: c = 1 gives at least what c = 1 - 2^-53 gives.
    let b5 = with(&[(0, p2(-54)), (1, p2(-53) + p2(-54))]);
    assert!(d(&ones2, &b5, 1.0) >= d(&ones2, &b5, below_one));
}
