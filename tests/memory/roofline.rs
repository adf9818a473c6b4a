//! The roofline of the memory path, worked by hand.

use tensorcore_rtl::gemm::roofline::{
    arithmetic_intensity, bound, link_bytes_per_cycle, peak_macs_per_cycle,
};
use tensorcore_rtl::hw::memory::MemParams;
use tensorcore_rtl::hw::CoreConfig;
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;

#[test]
fn a_roofline_worked_by_hand() {
    // 4 x 4 mesh, w = 1: 16 MACs a cycle at the peak.
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    assert_eq!(peak_macs_per_cycle(&cfg), 16.0);
    assert_eq!(peak_macs_per_cycle(&cfg.with_width(4)), 64.0);
    // 64 x 64 x 64 = 262,144 MACs over 32 KiB moved: 8 MACs a byte.
    let ai = arithmetic_intensity(262_144, 32_768);
    assert_eq!(ai, 8.0);
    // 1 byte a cycle feeds 8 MACs a cycle: half of 16.
    assert_eq!(bound(ai, 1.0, 16.0), 0.5);
    // 2 bytes a cycle feed all 16; more is capped at 1.
    assert_eq!(bound(ai, 2.0, 16.0), 1.0);
    assert_eq!(bound(ai, 64.0, 16.0), 1.0);
    // 0.25 bytes would feed 2 of 64 at w = 4.
    assert_eq!(bound(ai, 0.25, 64.0), 2.0 / 64.0);
}

#[test]
fn the_link_is_capped_by_one_request() {
    let p = MemParams {
        bytes_per_cycle: 64,
        request_bytes: 32,
        ..MemParams::default()
    };
    assert_eq!(link_bytes_per_cycle(&p), 32.0);
    let p = MemParams {
        bytes_per_cycle: 8,
        request_bytes: 32,
        ..MemParams::default()
    };
    assert_eq!(link_bytes_per_cycle(&p), 8.0);
}
