//! `tcrtl dot` and `tcrtl verify measurements` with TF32 inputs, FP16 output and the ada
//! preset, run as the built binary. Expected values are the hand-derived probes of
//! `tests/reference/fp16_tf32_probes.rs`.

use crate::common::cli::{tcrtl, text};
use std::process::Output;

fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

fn json(args: &[&str]) -> serde_json::Value {
    let o = tcrtl(args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    serde_json::from_str(stdout(&o).trim()).expect("one JSON value")
}

/// A failure: exit code 2 and exactly one line `error: ...` containing `needle`.
fn assert_error(args: &[&str], needle: &str) {
    crate::common::cli::assert_error(&tcrtl(args), needle);
}

/// 2 - 1 + 2^-11 + 2^-24 into FP16: Hopper rounds the exact aligned sum once (0x3c01), the
/// ieee chain ties 1 + 2^-11 to 1.0 (0x3c00).
#[test]
fn dot_fp16_output_json() {
    let base = [
        "dot",
        "--format",
        "fp16",
        "--out-format",
        "fp16",
        "--a",
        "0x4000,0xbc00,0x1000,0x0001",
        "--b",
        "1,1,1,1",
        "--json",
    ];
    let mut hopper = base.to_vec();
    hopper.extend(["--acc", "nvidia", "--preset", "hopper"]);
    let v = json(&hopper);
    assert_eq!(v["bits"], "0x3c01");
    assert_eq!(v["out_format"], "fp16");
    assert_eq!(v["value"], 1.0 + 2f64.powi(-10));
    let v = json(&base);
    assert_eq!(v["bits"], "0x3c00");
    assert_eq!(v["acc"], "ieee");
    // C is an FP16 operand: 1.5 + 2 * 1 = 3.5 (0x4300).
    let v = json(&[
        "dot",
        "--out-format",
        "fp16",
        "--c",
        "1.5",
        "--a",
        "2",
        "--b",
        "1",
        "--json",
    ]);
    assert_eq!(v["bits"], "0x4300");
}

#[test]
fn dot_fp16_output_text_names_the_format() {
    let o = tcrtl(&[
        "dot",
        "--out-format",
        "fp16",
        "--a",
        "1",
        "--b",
        "1",
        "--rounding",
        "rup",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert!(
        stdout(&o).contains("bits:  0x3c00 (fp16)"),
        "{}",
        stdout(&o)
    );
}

/// FTTN's two-extra-bits probe in TF32: a0 = 1, b0 = 1.25, c = -(2^-3 + 2^-25).
#[test]
fn dot_tf32_presets() {
    for (preset, want) in [("ada", "0x3f900000"), ("hopper", "0x3f8fffff")] {
        let v = json(&[
            "dot",
            "--format",
            "tf32",
            "--acc",
            "nvidia",
            "--preset",
            preset,
            "--a",
            "0x3f800000",
            "--b",
            "1.25",
            "--c",
            "0xbe000002",
            "--json",
        ]);
        assert_eq!(v["bits"], want, "{preset}");
        assert_eq!(v["format_a"], "tf32");
    }
}

#[test]
fn tf32_operands_must_have_zero_low_bits() {
    assert_error(
        &["dot", "--format", "tf32", "--a", "0x3f801000", "--b", "1"],
        "0x3f801000",
    );
    assert_error(
        &["dot", "--format", "tf32", "--a", "1.0001", "--b", "1"],
        "not exactly representable in tf32",
    );
    assert_error(
        &["dot", "--format", "tf32", "--a", "0x1ff800000", "--b", "1"],
        "32-bit",
    );
}

#[test]
fn out_format_errors() {
    assert_error(
        &["dot", "--out-format", "bf16", "--a", "1", "--b", "1"],
        "output format",
    );
    assert_error(
        &[
            "dot",
            "--format",
            "bf16",
            "--out-format",
            "fp16",
            "--acc",
            "nvidia",
            "--preset",
            "ampere",
            "--a",
            "1",
            "--b",
            "1",
        ],
        "does not accumulate",
    );
}

/// `--acc all` with FP16 output lists ada (and h200), and every row is FP16 (4 hex digits).
#[test]
fn acc_all_fp16_output_has_ada() {
    let v = json(&[
        "dot",
        "--acc",
        "all",
        "--format",
        "e4m3",
        "--out-format",
        "fp16",
        "--a",
        "1,0.015625",
        "--b",
        "1,0.03125",
        "--json",
    ]);
    let rows = v.as_array().expect("a list");
    let presets: Vec<&str> = rows.iter().filter_map(|r| r["preset"].as_str()).collect();
    assert_eq!(presets, ["ada", "hopper", "blackwell", "h200"]);
    for r in rows {
        assert_eq!(r["out_format"], "fp16");
        assert_eq!(r["bits"].as_str().map(str::len), Some(6), "{r}");
    }
}

fn verify(set: &str, format: &str, preset: &str, out: &str) -> serde_json::Value {
    let dir = format!(
        "{}/data/tensor-core-measurements/{set}",
        env!("CARGO_MANIFEST_DIR")
    );
    json(&[
        "verify",
        "measurements",
        &dir,
        "--format",
        format,
        "--preset",
        preset,
        "--out-format",
        out,
        "--json",
    ])
}

#[test]
fn verify_measurements_fp16_output_and_tf32() {
    let v = verify("H100/E4M3", "e4m3", "hopper", "fp16");
    assert_eq!(
        (v["matched"].as_u64(), v["total"].as_u64()),
        (Some(300), Some(300))
    );
    assert_eq!(v["out_format"], "fp16");
    assert!(v["files"][3]
        .as_str()
        .is_some_and(|f| f.ends_with("d_H100_fp16.txt")));
    let v = verify("Ada/tf32", "tf32", "ada", "fp32");
    assert_eq!(
        (v["matched"].as_u64(), v["total"].as_u64()),
        (Some(300), Some(300))
    );
    // The Ada FP8 FP16 rule is not the Hopper one: replaying Ada's file as hopper misses.
    let dir = format!(
        "{}/data/tensor-core-measurements/Ada/E4M3",
        env!("CARGO_MANIFEST_DIR")
    );
    let o = tcrtl(&[
        "verify",
        "measurements",
        &dir,
        "--format",
        "e4m3",
        "--preset",
        "hopper",
        "--out-format",
        "fp16",
    ]);
    assert_eq!(o.status.code(), Some(1), "{}", stdout(&o));
}
