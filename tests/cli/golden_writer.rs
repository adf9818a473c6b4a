//! The golden `$readmemh` writer, worked by hand.

use std::path::Path;
use tensorcore_rtl::gemm::Gemm;
use tensorcore_rtl::hw::CoreConfig;
use tensorcore_rtl::io::golden::{write_golden, Origin};
use tensorcore_rtl::numerics::dot::AccMode;
use tensorcore_rtl::numerics::format::FP16;

/// A fresh scratch folder for one test.
fn scratch(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("golden-{name}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// The data lines of a `$readmemh` image (its `//` header left out).
fn words(dir: &Path, file: &str) -> Vec<String> {
    std::fs::read_to_string(dir.join(file))
        .expect("image written")
        .lines()
        .filter(|l| !l.starts_with("//"))
        .map(str::to_string)
        .collect()
}

/// D = A x B + C for a 1 x 1 problem with K = 2, worked by hand: A = [1, 2] (FP16 0x3c00,
/// 0x4000), B = [3, 0.5] (0x4200, 0x3800), C = 1 (FP32 0x3f800000): D = 1 + 3 + 1 = 5
/// (0x40a00000); after step 0 the accumulator is 4 (0x40800000).
fn problem() -> Gemm {
    let cfg = CoreConfig::new(FP16, FP16, AccMode::Ieee, 1);
    Gemm::new(
        1,
        1,
        2,
        cfg,
        vec![0x3C00, 0x4000],
        vec![0x4200, 0x3800],
        vec![0x3F80_0000],
    )
    .expect("a valid problem")
}

#[test]
fn images_and_step_vectors_worked_by_hand() {
    let dir = scratch("by-hand");
    let g = problem();
    write_golden(&dir, &g, &[0x40A0_0000], None, &Origin::Seed(7), None).expect("written");
    assert_eq!(words(&dir, "a.hex"), ["3c00", "4000"]);
    assert_eq!(words(&dir, "b.hex"), ["4200", "3800"]);
    assert_eq!(words(&dir, "c.hex"), ["3f800000"]);
    assert_eq!(words(&dir, "d.hex"), ["40a00000"]);
    // One record a step: A lane | B lane | acc before | acc after.
    assert_eq!(
        words(&dir, "steps.hex"),
        ["3c0042003f80000040800000", "400038004080000040a00000"]
    );
    let manifest: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("manifest.json")).expect("manifest"),
    )
    .expect("JSON");
    assert_eq!(manifest["seed"], 7);
    assert_eq!(manifest["acc_format"], "fp32");
    assert_eq!(manifest["files"].as_array().map(Vec::len), Some(5));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn a_d_that_disagrees_with_the_steps_is_refused() {
    let dir = scratch("refused");
    let g = problem();
    let e = write_golden(&dir, &g, &[0x40A0_0001], None, &Origin::Files, None)
        .expect_err("D off by one ulp");
    assert!(e.contains("step vectors end at 40a00000"), "{e}");
    let _ = std::fs::remove_dir_all(&dir);
}
