//! Runs every registered testbench (`testbenches/*.rs`), waves going to a temporary
//! directory; each must PASS with at least one check.

use tensorcore_rtl::tb::{registry, run_one};

#[test]
fn every_testbench_passes() {
    let dir = std::env::temp_dir().join(format!("tcrtl-tb-{}", std::process::id()));
    let names: Vec<&str> = registry().iter().map(|t| t.name).collect();
    for required in [
        "pe_fp16_mac",
        "mesh_fp16",
        "mesh_e4m3",
        "gemm_odd_shapes",
        "specials",
        "nvidia_probes",
        "tma_box_2d",
        "tma_oob_negative",
        "tma_swizzle",
        "tma_bank_conflicts",
        "tma_mbarrier_phases",
    ] {
        assert!(names.contains(&required), "{required} is not registered");
    }
    let mut failed = Vec::new();
    for t in registry() {
        let r = run_one(t, &dir);
        eprintln!("{}", r.line());
        if r.waves.is_none() {
            failed.push(format!("{}: no waveform written", r.name));
        }
        if !r.passed {
            failed.push(format!("{}: {:?} {:?}", r.line(), r.error, r.failures));
        }
    }
    let _ = std::fs::remove_dir_all(&dir);
    assert!(failed.is_empty(), "{failed:#?}");
}
