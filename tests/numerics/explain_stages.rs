//! The stage-by-stage explanation of a dot product, worked by hand.

use tensorcore_rtl::numerics::dot::explain::{explain, StepStages};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::dot::Preset;
use tensorcore_rtl::numerics::format::FP16;
use tensorcore_rtl::numerics::RoundingMode;

/// A Volta alignment probe (docs/numerics.md, "Probe inputs that reveal each feature"),
/// `1 - 2^-24`: c = 1, one product -2^-12 x 2^-12. By hand:
/// c = 1 sets max_exp 0, the grid LSB is 2^(0 - 23 - neab 0) = 2^-23; the product's
/// significand 1024 x 1024 = 2^20 has its LSB at 2^(-24 - 20) = 2^-44, so it shifts right
/// by -23 - (-44) = 21: all 21 bits go, the product is dropped whole and c is returned.
#[test]
fn volta_drops_the_whole_small_product() {
    let volta = AccMode::Nvidia(Preset::Volta.params(FP16, FP16).expect("volta"));
    let e = explain(
        &volta,
        RoundingMode::NearestEven,
        FP16,
        FP16,
        &[0x8c00],
        &[0x0c00],
        0x3f80_0000,
        1,
    )
    .expect("explain");
    assert_eq!(e.steps.len(), 1);
    let StepStages::Nvidia {
        align,
        dropped,
        c_dropped,
        sum,
        ..
    } = &e.steps[0].stages
    else {
        panic!("not a truncating block: {:?}", e.steps[0].stages);
    };
    assert_eq!(align.max_exp, 0);
    assert_eq!(align.lsb_exp, -23);
    assert_eq!(align.align_shift[0], 21);
    assert_eq!(align.aligned[0], 0);
    assert_eq!(dropped[0], 1 << 20);
    assert_eq!(*c_dropped, 0);
    assert_eq!(sum.sum, 1 << 23);
    assert_eq!(e.steps[0].bits, 0x3f80_0000);
    assert_eq!(e.result.bits, 0x3f80_0000);
}
