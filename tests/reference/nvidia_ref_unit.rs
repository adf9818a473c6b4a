//! The truncating-block reference: its parameter table and one probe.

use tensorcore_rtl::numerics::dot::Preset;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::numerics::format::{BF16, E4M3, E5M2};
use tensorcore_rtl::verify::nvidia_ref::{nvidia_ref_dot, ref_params, RefParams, RefRule};

fn h(v: f64) -> u64 {
    half::f16::from_f64(v).to_bits() as u64
}

#[test]
fn table() {
    let v = ref_params(Preset::Volta, FP16, FP16).map(|p| (p.n, p.neab));
    assert_eq!(v, Some((4, 0)));
    assert_eq!(ref_params(Preset::Volta, BF16, BF16), None);
    assert_eq!(ref_params(Preset::Ampere, E4M3, E4M3), None);
    assert_eq!(
        ref_params(Preset::Hopper, E4M3, E5M2).map(|p| p.out_frac_bits),
        Some(13)
    );
    assert_eq!(ref_params(Preset::Hopper, FP16, BF16), None);
}

#[test]
fn one_extra_bit_probe() {
    // a0 = b0 = 1, c = -(1 - 2^-24): volta -> 2^-23, ampere -> 2^-24.
    let c = (-(1.0f32 - 2f32.powi(-24))).to_bits();
    let a = [h(1.0), 0, 0, 0];
    let b = [h(1.0), 0, 0, 0];
    let volta = ref_params(Preset::Volta, FP16, FP16).unwrap_or(RefParams {
        n: 0,
        neab: 0,
        floor: 0,
        out_frac_bits: 0,
        rule: RefRule::BlockFma,
        fp16_out: false,
    });
    assert_eq!(
        nvidia_ref_dot(&volta, FP16, FP16, &a, &b, c),
        2f32.powi(-23).to_bits()
    );
}
