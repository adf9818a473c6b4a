//! The `tcrtl dot` and `tcrtl verify measurements` commands, run as the built binary.

use std::process::{Command, Output};

fn tcrtl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(args)
        .output()
        .expect("run tcrtl")
}

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

/// A failure: exit code 2 and exactly one line `error: ...` containing `needle`.
fn assert_error(args: &[&str], needle: &str) {
    let o = tcrtl(args);
    assert_eq!(o.status.code(), Some(2), "{args:?}: {}", stderr(&o));
    let err = stderr(&o);
    assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
    assert!(
        err.starts_with("error: ") && err.contains(needle),
        "{args:?}: {err}"
    );
}

#[test]
fn dot_nvidia_hopper_text() {
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "nvidia",
        "--preset",
        "hopper",
        "--c",
        "0x3f800000",
        "--a",
        "0x3c00,0x3c00",
        "--b",
        "0x4000,0x0001",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("0x40400000"), "{out}");
    assert!(out.contains("inexact"), "{out}");
}

#[test]
fn dot_json_keys() {
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "nvidia",
        "--preset",
        "hopper",
        "--c",
        "0x3f800000",
        "--a",
        "0x3c00,0x3c00",
        "--b",
        "0x4000,0x0001",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["bits"], "0x40400000");
    assert_eq!(v["value"], 3.0);
    assert_eq!(v["flags"], serde_json::json!(["inexact"]));
}

#[test]
fn dot_decimal_operands_and_default_ieee() {
    // (-1.5) * 2 + 448 * 0.5 + 0.25 = 221.25, exact: no flags.
    let o = tcrtl(&[
        "dot",
        "--format",
        "e4m3",
        "--format-b",
        "e5m2",
        "--a=-1.5,448",
        "--b",
        "2,0.5",
        "--c",
        "0.25",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["value"], 221.25);
    assert_eq!(v["acc"], "ieee");
    assert_eq!(v["flags"], serde_json::json!([]));
}

#[test]
fn dot_fused_and_width() {
    // Final-rounding probe: c = 1 + 2^-23 + 2^-22 plus three 1 x 1 -> 4 + 2^-21 (0x40800001).
    for acc in ["ieee", "fused", "exact"] {
        let o = tcrtl(&[
            "dot",
            "--format",
            "fp16",
            "--acc",
            acc,
            "--width",
            "2",
            "--c",
            "0x3f800003",
            "--a",
            "1,1,1",
            "--b",
            "1,1,1",
        ]);
        assert!(o.status.success(), "{}", stderr(&o));
        assert!(stdout(&o).contains("0x40800001"), "{acc}: {}", stdout(&o));
    }
}

#[test]
fn dot_nan_json_value_is_a_string() {
    let o = tcrtl(&[
        "dot", "--format", "fp16", "--a", "inf", "--b", "0", "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["bits"], "0x7fc00000");
    assert_eq!(v["value"], "nan");
    assert_eq!(v["flags"], serde_json::json!(["invalid"]));
}

#[test]
fn dot_bad_input() {
    assert_error(
        &["dot", "--format", "fp17", "--a", "1", "--b", "1"],
        "unknown input format \"fp17\"",
    );
    assert_error(
        &["dot", "--format", "fp16", "--a", "1,2", "--b", "1"],
        "2 values",
    );
    assert_error(
        &["dot", "--format", "fp16", "--a", "0xzz", "--b", "1"],
        "bad hex",
    );
    assert_error(
        &["dot", "--format", "fp16", "--a", "0x10000", "--b", "1"],
        "does not fit",
    );
    assert_error(
        &["dot", "--format", "fp16", "--a", "0.1", "--b", "1"],
        "0.1 is not exactly",
    );
    assert_error(
        &[
            "dot", "--format", "fp16", "--a", "1", "--b", "1", "--c", "0.1",
        ],
        "0.1",
    );
    assert_error(
        &["dot", "--format", "fp16", "--a", "abc", "--b", "1"],
        "abc",
    );
    assert_error(
        &["dot", "--format", "e4m3", "--a", "inf", "--b", "1"],
        "inf",
    );
    assert_error(
        &[
            "dot", "--format", "bf16", "--acc", "nvidia", "--preset", "volta", "--a", "1", "--b",
            "1",
        ],
        "does not support",
    );
    assert_error(
        &[
            "dot", "--format", "fp16", "--acc", "nvidia", "--a", "1", "--b", "1",
        ],
        "needs a preset",
    );
    assert_error(
        &[
            "dot", "--format", "fp16", "--acc", "kahan", "--a", "1", "--b", "1",
        ],
        "kahan",
    );
    assert_error(
        &[
            "dot", "--format", "fp16", "--width", "33", "--a", "1", "--b", "1",
        ],
        "width",
    );
    assert_error(
        &["dot", "--format", "fp32", "--a", "1", "--b", "1"],
        "input format",
    );
}

#[test]
fn verify_measurements_vendored_set() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/tensor-core-measurements/A100/bf16"
    );
    let o = tcrtl(&[
        "verify",
        "measurements",
        dir,
        "--format",
        "bf16",
        "--preset",
        "ampere",
        "--json",
    ]);
    assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(v["matched"], 300);
    assert_eq!(v["total"], 300);
}

/// A mixed FP8 set needs `--b-format`: with it every committed row of the H200 E4M3 x E5M2
/// set matches `h200` (FP32 and FP16 output); without it B's E5M2 values are not E4M3 words.
#[test]
fn verify_measurements_mixed_formats() {
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/tensor-core-measurements/H200/E4M3xE5M2"
    );
    for out in ["fp32", "fp16"] {
        let o = tcrtl(&[
            "verify",
            "measurements",
            dir,
            "--format",
            "e4m3",
            "--b-format",
            "e5m2",
            "--preset",
            "h200",
            "--out-format",
            out,
            "--json",
        ]);
        assert!(o.status.success(), "{}{}", stdout(&o), stderr(&o));
        let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(v["matched"], 1024, "{out}");
        assert_eq!(v["total"], 1024, "{out}");
        assert_eq!(v["b_format"], "e5m2", "{out}");
    }
    assert_error(
        &[
            "verify",
            "measurements",
            dir,
            "--format",
            "e4m3",
            "--preset",
            "h200",
        ],
        "not exactly representable in e4m3",
    );
}

#[test]
fn verify_measurements_reports_mismatches() {
    // H100 FP8 was measured with C = 0: using the c file must mismatch and exit 1.
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/tensor-core-measurements/H100/E4M3"
    );
    let o = tcrtl(&[
        "verify",
        "measurements",
        dir,
        "--format",
        "e4m3",
        "--preset",
        "hopper",
        "--limit",
        "20",
    ]);
    assert_eq!(o.status.code(), Some(1));
    assert!(stdout(&o).contains("mismatch at row 1"), "{}", stdout(&o));
    let o = tcrtl(&[
        "verify",
        "measurements",
        dir,
        "--format",
        "e4m3",
        "--preset",
        "hopper",
        "--zero-c",
    ]);
    assert!(o.status.success(), "{}", stdout(&o));
    assert!(stdout(&o).contains("300/300"), "{}", stdout(&o));
}

#[test]
fn verify_measurements_bad_input() {
    assert_error(
        &[
            "verify",
            "measurements",
            "/nonexistent",
            "--format",
            "fp16",
            "--preset",
            "volta",
        ],
        "/nonexistent",
    );
    let dir = concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/data/tensor-core-measurements/V100/fp16"
    );
    assert_error(
        &[
            "verify",
            "measurements",
            dir,
            "--format",
            "fp16",
            "--preset",
            "kepler",
        ],
        "kepler",
    );
    assert_error(
        &[
            "verify",
            "measurements",
            dir,
            "--format",
            "bf16",
            "--preset",
            "volta",
        ],
        "support",
    );
}

/// `--explain` says what a step is: in `ieee` mode one step of w lanes lists w chained FMAs,
/// and the header says so, with the lane count, instead of a bare "1 step(s)".
#[test]
fn explain_header_counts_steps_lanes_and_ieee_fmas() {
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "ieee",
        "--a",
        "1,2,3,4",
        "--b",
        "1,1,1,1",
        "--explain",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let header = out.lines().next().unwrap_or_default();
    assert!(
        header.contains("1 step(s) of up to 4 lane(s), one FMA per lane, chained in lane order"),
        "{header}"
    );
    assert_eq!(out.matches("  fma lane ").count(), 4, "{out}");
    // Another mode: steps of the configured width, no FMA wording.
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "fused",
        "--width",
        "2",
        "--a",
        "1,2,3,4,5",
        "--b",
        "1,1,1,1,1",
        "--explain",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    let header = out.lines().next().unwrap_or_default();
    assert!(header.ends_with("3 step(s) of up to 2 lane(s)"), "{header}");
}

/// `dot --format fp64`: the FP64 tensor core's FMA chain, checked against host `f64::mul_add`
/// chains (IEEE, round to nearest even), and its refusals.
#[test]
fn dot_fp64_is_the_fma_chain() {
    let a = [1.0f64, 1.0, 0.0, 0.0];
    let b = [2.0f64, 2f64.powi(-53), 0.0, 0.0];
    let hex = |v: &[f64]| {
        v.iter()
            .map(|x| format!("0x{:016x}", x.to_bits()))
            .collect::<Vec<_>>()
            .join(",")
    };
    let want = a.iter().zip(&b).fold(0.0f64, |c, (x, y)| x.mul_add(*y, c));
    let (ha, hb) = (hex(&a), hex(&b));
    let modes: [&[&str]; 3] = [
        &["--acc", "ieee"],
        &["--acc", "nvidia", "--preset", "ampere"],
        &["--acc", "nvidia", "--gpu", "h100"],
    ];
    for extra in modes {
        let mut args = vec!["dot", "--format", "fp64", "--a", &ha, "--b", &hb, "--json"];
        args.extend_from_slice(extra);
        let o = tcrtl(&args);
        assert_eq!(o.status.code(), Some(0), "{args:?}: {}", stderr(&o));
        let j: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
        assert_eq!(j["bits"], format!("0x{:016x}", want.to_bits()), "{args:?}");
        assert_eq!(j["format"], "fp64");
    }
    assert_error(
        &[
            "dot", "--format", "fp64", "--acc", "nvidia", "--preset", "ada", "--a", "1", "--b", "1",
        ],
        "FP64 tensor cores are on ampere",
    );
    assert_error(
        &[
            "dot",
            "--format",
            "fp64",
            "--format-b",
            "fp16",
            "--a",
            "1",
            "--b",
            "1",
        ],
        "fp64 pairs only with fp64",
    );
    assert_error(
        &["dot", "--format", "fp64", "--a", "0.1", "--b", "1"],
        "not exactly representable",
    );
    assert_error(
        &[
            "dot",
            "--format",
            "fp64",
            "--explain",
            "--a",
            "1",
            "--b",
            "1",
        ],
        "--explain does not apply",
    );
    assert_error(
        &[
            "dot",
            "--format",
            "fp64",
            "--acc",
            "nvidia",
            "--preset",
            "hopper",
            "--rounding",
            "rup",
            "--a",
            "1",
            "--b",
            "1",
        ],
        "does not apply to nvidia",
    );
}
