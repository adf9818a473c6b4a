//! `tcrtl verify features`: the probes on a preset from the command line (text and JSON),
//! checked against the published A100 model (north-numerical-computing/MATLAB-tensor-core,
//! models/A100TC.m: TF32 in blocks of 4, one extra alignment bit, truncation); bad input
//! exits 2 with a one-line error.

use std::process::{Command, Output};

fn tcrtl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(args)
        .output()
        .expect("run tcrtl")
}

#[test]
fn json_report_of_one_format() {
    let out = tcrtl(&[
        "verify", "features", "--preset", "ampere", "--format", "tf32", "--json",
    ]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON object");
    assert_eq!(v["preset"], "ampere");
    assert_eq!(v["format"], "tf32");
    assert_eq!(v["block_size"]["value"], 4);
    assert_eq!(v["extra_alignment_bits"]["value"], 1);
    assert_eq!(v["output_rounding"], "toward_zero");
    assert_eq!(v["normalisation"], "late");
    assert_eq!(v["fp16_output_rounding"], serde_json::Value::Null);
}

#[test]
fn every_supported_format_without_format() {
    let out = tcrtl(&["verify", "features", "--preset", "ampere", "--json"]);
    assert_eq!(out.status.code(), Some(0));
    let v: serde_json::Value = serde_json::from_slice(&out.stdout).expect("one JSON array");
    let formats: Vec<&str> = v
        .as_array()
        .expect("array")
        .iter()
        .map(|r| r["format"].as_str().unwrap())
        .collect();
    assert_eq!(formats, ["fp16", "bf16", "tf32"]);
    let text = tcrtl(&["verify", "features", "--preset", "volta"]);
    let text = String::from_utf8(text.stdout).unwrap();
    assert!(text.contains("block size             4"), "{text}");
    assert!(text.contains("extra alignment bits   0"), "{text}");
}

#[test]
fn bad_input_exits_2() {
    for args in [
        &[
            "verify", "features", "--preset", "volta", "--format", "bf16",
        ][..],
        &["verify", "features", "--preset", "nope"][..],
        &[
            "verify", "features", "--preset", "ampere", "--format", "fp64",
        ][..],
    ] {
        let out = tcrtl(args);
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8(out.stderr).unwrap();
        assert!(
            err.starts_with("error: ") && err.lines().count() == 1,
            "{err}"
        );
    }
}
