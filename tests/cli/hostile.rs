//! The second hardening round (docs/reliability.md, "Second round"): each test runs the
//! command a hostile user ran, and asserts the exit code, the one stderr line and the files
//! left afterwards. Test names carry the defect's number in that list.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use std::path::Path;

/// The names in `dir`, sorted.
fn listing(dir: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// Defect 1: a sweep length or sample count past the limits is refused before any work or
/// allocation (no panic, no abort, no growth), and no `--out` folder is made.
#[test]
fn r01_sweep_sizes_are_checked_before_work() {
    let d = scratch("hostile", "sweepk");
    for (k, samples, needle) in [
        (
            "18446744073709551615",
            "1",
            "--k 18446744073709551615 is longer",
        ),
        (
            "2305843009213693952",
            "1",
            "--k 2305843009213693952 is longer",
        ),
        (
            "16,18446744073709551615",
            "1",
            "--k 18446744073709551615 is longer",
        ),
        ("100000000000", "1", "limit of 1048576"),
        ("1000000000", "1", "--k 1000000000 is longer"),
        ("1048577", "1", "--k 1048577 is longer"),
        (
            "16",
            "18446744073709551615",
            "--samples 18446744073709551615 is more",
        ),
        ("16", "1099511627777", "limit of 1099511627776"),
    ] {
        let out = d.join("s");
        let o = tcrtl(&[
            "verify",
            "sweep",
            "--k",
            k,
            "--samples",
            samples,
            "--out",
            &out.display().to_string(),
        ]);
        assert_error(&o, needle);
        assert!(!out.exists(), "--k {k}: an --out folder was left");
    }
    // A sweep that fails after its checks (a mode the format lacks) leaves no folder either.
    let out = d.join("s");
    let o = tcrtl(&[
        "verify",
        "sweep",
        "--format",
        "tf32",
        "--acc",
        "nvidia",
        "--preset",
        "volta",
        "--k",
        "4",
        "--samples",
        "2",
        "--out",
        &out.display().to_string(),
    ]);
    assert_eq!(o.status.code(), Some(2), "{}", text(&o.stderr));
    assert!(!out.exists());
    // An --out that is a file is refused before the run.
    std::fs::write(&out, b"keep").expect("file");
    let o = tcrtl(&[
        "verify",
        "sweep",
        "--k",
        "4",
        "--samples",
        "2",
        "--out",
        &out.display().to_string(),
    ]);
    assert_error(&o, "not a directory");
    assert_eq!(std::fs::read(&out).expect("kept"), b"keep");
    // The largest K is accepted (one sample).
    let o = tcrtl(&[
        "verify",
        "sweep",
        "--format",
        "e4m3",
        "--acc",
        "fused",
        "--k",
        "1048576",
        "--samples",
        "1",
        "--out",
        &p(&d, "max"),
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(listing(&d.join("max")), ["errors.svg", "summary.json"]);
    let _ = std::fs::remove_dir_all(&d);
}

/// Defect 6: a 2:4 sparse TF32 B at w = 1 (`--width 1` or an nvidia preset) is refused with
/// a user-facing line before the core is built, not the engine's storage-type message;
/// widths 2 and up still run.
#[test]
fn r06_sparse_tf32_at_width_1_is_a_clear_error() {
    let d = scratch("hostile", "sparse");
    let out = p(&d, "d.npy");
    for extra in [
        vec!["--format", "tf32"],
        vec!["--format", "tf32", "--width", "1"],
        vec!["--format", "tf32", "--acc", "nvidia", "--preset", "hopper"],
        vec!["--format", "fp16", "--format-b", "tf32", "--width", "1"],
    ] {
        let mut args: Vec<&str> = vec![
            "gemm", "--sparse", "--m", "8", "--n", "8", "--k", "64", "--out", &out,
        ];
        args.extend(&extra);
        let o = tcrtl(&args);
        assert_error(&o, "--sparse at w = 1 carries 4 tf32 B values (76 bits)");
        assert!(!text(&o.stderr).contains("storage type"));
        assert!(listing(&d).is_empty(), "{extra:?}: {:?}", listing(&d));
    }
    // A TF32 A at w = 1 (B in FP16) and TF32 at w = 2 run.
    for extra in [
        vec!["--format", "tf32", "--format-b", "fp16", "--width", "1"],
        vec!["--format", "tf32", "--width", "2"],
    ] {
        let mut args = vec!["gemm", "--sparse", "--m", "8", "--n", "8", "--k", "64"];
        args.extend(&extra);
        let o = tcrtl(&args);
        assert_eq!(o.status.code(), Some(0), "{extra:?}: {}", text(&o.stderr));
    }
    let _ = std::fs::remove_dir_all(&d);
}
