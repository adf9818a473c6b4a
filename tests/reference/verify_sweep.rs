//! `tcrtl verify sweep` and `tcrtl verify merge`, run as the built binary: shards merged equal
//! the single run (summary.json apart from `shard` and `seconds`, errors.svg byte for byte);
//! the same with 1 and 2 threads; `exact` in round-to-nearest never errs by more than half an
//! ulp (and toward zero by less than one); `--dataflow ws` and its checks; bad arguments are
//! one-line errors.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn tcrtl(args: &[String], threads: Option<&str>) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tcrtl"));
    cmd.args(args);
    if let Some(t) = threads {
        cmd.env("RAYON_NUM_THREADS", t);
    }
    cmd.output().expect("run tcrtl")
}

fn tmp(tag: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcrtl-sweep-{}-{tag}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    d
}

fn sweep(extra: &[&str], out: &Path, threads: Option<&str>) {
    let mut args: Vec<String> = ["verify", "sweep", "--k", "4,40", "--samples", "50"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(extra.iter().map(|s| s.to_string()));
    args.extend(["--out".to_string(), out.display().to_string()]);
    let o = tcrtl(&args, threads);
    assert!(
        o.status.success(),
        "{args:?}: {}",
        String::from_utf8_lossy(&o.stderr)
    );
}

fn summary(dir: &Path) -> serde_json::Value {
    let text = std::fs::read_to_string(dir.join("summary.json")).expect("summary.json");
    serde_json::from_str(&text).expect("json")
}

fn without_run_fields(mut v: serde_json::Value) -> serde_json::Value {
    let o = v.as_object_mut().unwrap();
    o.remove("shard");
    o.remove("seconds");
    v
}

#[test]
fn shards_merge_into_the_single_run() {
    let base = tmp("merge");
    let mode = [
        "--format", "e4m3", "--acc", "nvidia", "--preset", "hopper", "--dist", "wide",
    ];
    sweep(&mode, &base.join("all"), None);
    let mut dirs = Vec::new();
    for i in 0..3 {
        let d = base.join(format!("s{i}"));
        let shard = format!("{i}/3");
        let mut args = mode.to_vec();
        args.extend(["--shard", &shard]);
        sweep(&args, &d, None);
        dirs.push(d);
    }
    // Merge in a scrambled order: the result may not depend on it.
    let mut args: Vec<String> = vec!["verify".into(), "merge".into()];
    for i in [2, 0, 1] {
        args.push(dirs[i].display().to_string());
    }
    args.extend(["--out".into(), base.join("merged").display().to_string()]);
    let o = tcrtl(&args, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let single = summary(&base.join("all"));
    let merged = summary(&base.join("merged"));
    assert_eq!(single["shard"], "0/1");
    assert_eq!(merged["shard"], "merged 3");
    assert_eq!(
        without_run_fields(single.clone()),
        without_run_fields(merged)
    );
    let svg = |d: &Path| std::fs::read(d.join("errors.svg")).expect("svg");
    assert_eq!(svg(&base.join("all")), svg(&base.join("merged")));
    // Each shard holds its share of the samples.
    let counts: u64 = dirs
        .iter()
        .map(|d| summary(d)["per_k"][0]["samples"].as_u64().unwrap())
        .sum();
    assert_eq!(counts, 50);
    assert_eq!(single["per_k"][0]["samples"], 50);
    // A missing shard is refused.
    let mut args: Vec<String> = vec!["verify".into(), "merge".into()];
    args.push(dirs[0].display().to_string());
    args.extend(["--out".into(), base.join("bad").display().to_string()]);
    let o = tcrtl(&args, None);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing"));
    std::fs::remove_dir_all(&base).ok();
}

#[test]
fn thread_count_changes_nothing() {
    let base = tmp("threads");
    let mode = ["--format", "fp16", "--acc", "ieee", "--dist", "cancel"];
    sweep(&mode, &base.join("t1"), Some("1"));
    sweep(&mode, &base.join("t2"), Some("2"));
    assert_eq!(
        without_run_fields(summary(&base.join("t1"))),
        without_run_fields(summary(&base.join("t2")))
    );
    let svg = |d: &str| std::fs::read(base.join(d).join("errors.svg")).expect("svg");
    assert_eq!(svg("t1"), svg("t2"));
    std::fs::remove_dir_all(&base).ok();
}

/// FP16 output: `exact` rounds once to FP16, so its error is at most half an ulp of FP16, and
/// some sample shows a rounding error larger than FP32 would have made; the summary says which
/// output it measured, and an FP32 summary keeps its old fields.
#[test]
fn fp16_output_errors_are_in_fp16_ulps() {
    let base = tmp("out16");
    let d = base.join("fp16");
    sweep(
        &["--format", "fp16", "--acc", "exact", "--out-format", "fp16"],
        &d,
        None,
    );
    let s = summary(&d);
    assert_eq!(s["out_format"], "fp16");
    let mut some_inexact = false;
    for k in s["per_k"].as_array().unwrap() {
        let max = k["max_ulp"].as_f64().unwrap();
        assert!(max <= 0.5, "{k}");
        assert_eq!(k["nonfinite"], 0);
        some_inexact |= max > 2f64.powi(-13);
    }
    assert!(some_inexact, "FP16 rounding never showed: {s}");
    let d32 = base.join("fp32");
    sweep(&["--format", "fp16", "--acc", "exact"], &d32, None);
    let s32 = summary(&d32);
    assert!(
        s32.get("out_format").is_none(),
        "FP32 summaries keep their old fields"
    );
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn exact_mode_error_bounds() {
    let base = tmp("exact");
    for (rounding, bound, strict) in [("rne", 0.5, false), ("rtz", 1.0, true)] {
        let d = base.join(rounding);
        sweep(
            &[
                "--format",
                "bf16",
                "--acc",
                "exact",
                "--rounding",
                rounding,
                "--dist",
                "uniform",
            ],
            &d,
            None,
        );
        let s = summary(&d);
        for k in s["per_k"].as_array().unwrap() {
            let max = k["max_ulp"].as_f64().unwrap();
            assert!(max < bound || (!strict && max == bound), "{rounding}: {k}");
            assert_eq!(k["nonfinite"], 0);
            let hist: u64 = k["hist"]
                .as_array()
                .unwrap()
                .iter()
                .map(|h| h.as_u64().unwrap())
                .sum();
            assert_eq!(hist, 50);
        }
    }
    std::fs::remove_dir_all(&base).ok();
}

#[test]
fn bad_arguments_are_one_line_errors() {
    let out = tmp("bad").display().to_string();
    for (extra, needle) in [
        (vec!["--shard", "3/3"], "--shard"),
        (vec!["--dist", "cauchy"], "unknown --dist"),
        (vec!["--samples", "0"], "--samples"),
        (
            vec!["--acc", "nvidia", "--preset", "hopper", "--rounding", "rtz"],
            "rounding rtz",
        ),
    ] {
        let mut args: Vec<String> = ["verify", "sweep", "--k", "4", "--out", &out]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        let o = tcrtl(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
    }
}

/// `--dataflow ws --rows R`: the summary says so (and an os summary keeps its old fields);
/// with K within one fold (R * w) every statistic equals the os sweep's (same operands, and the
/// orders differ only by C = 0 added last), while over several folds the error sums differ;
/// ws shards merge into the single run; bad values are one-line errors (exit 2).
#[test]
fn ws_dataflow_sweeps() {
    let base = tmp("ws");
    let mode = ["--format", "fp16", "--acc", "ieee", "--width", "1"];
    let ws = |rows: &'static str| {
        let mut v = mode.to_vec();
        v.extend(["--dataflow", "ws", "--rows", rows]);
        v
    };
    sweep(&mode, &base.join("os"), None);
    // K = 4 and 40 on 32 rows with w = 2 (ieee chains the two products of a PE): one fold
    // each.
    sweep(
        &[
            "--format",
            "fp16",
            "--acc",
            "ieee",
            "--width",
            "2",
            "--dataflow",
            "ws",
            "--rows",
            "32",
        ],
        &base.join("ws32"),
        None,
    );
    // On 2 rows: 2 and 20 folds.
    sweep(&ws("2"), &base.join("ws2"), None);
    let os = summary(&base.join("os"));
    let ws32 = summary(&base.join("ws32"));
    let ws2 = summary(&base.join("ws2"));
    assert!(
        os.get("dataflow").is_none() && os.get("rows").is_none(),
        "{os}"
    );
    assert_eq!(ws2["dataflow"], "ws");
    assert_eq!(ws2["rows"], 2);
    assert_eq!(os["per_k"], ws32["per_k"]);
    assert_ne!(os["per_k"][1]["sum_ulp_q"], ws2["per_k"][1]["sum_ulp_q"]);
    // Shards of a ws sweep merge into its single run.
    let mut dirs = Vec::new();
    for i in 0..2 {
        let d = base.join(format!("s{i}"));
        let shard = format!("{i}/2");
        let mut args = ws("2");
        args.extend(["--shard", &shard]);
        sweep(&args, &d, None);
        dirs.push(d.display().to_string());
    }
    let mut args: Vec<String> = vec!["verify".into(), "merge".into()];
    args.extend(dirs);
    args.extend(["--out".into(), base.join("merged").display().to_string()]);
    let o = tcrtl(&args, None);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(
        without_run_fields(summary(&base.join("merged"))),
        without_run_fields(ws2)
    );
    let out = base.join("bad").display().to_string();
    for (extra, needle) in [
        (vec!["--dataflow", "xs"], "unknown --dataflow"),
        (vec!["--rows", "4"], "--rows only applies to --dataflow ws"),
        (
            vec!["--dataflow", "ws", "--rows", "0"],
            "--rows 0 is outside 1..=32",
        ),
        (
            vec!["--dataflow", "ws", "--rows", "33"],
            "--rows 33 is outside 1..=32",
        ),
        (
            vec!["--dataflow", "ws", "--rounding", "rtz"],
            "rounds to nearest even only",
        ),
        (
            vec![
                "--dataflow",
                "ws",
                "--acc",
                "nvidia",
                "--preset",
                "hopper",
                "--width",
                "8",
            ],
            "whole blocks",
        ),
    ] {
        let mut args: Vec<String> = ["verify", "sweep", "--k", "4", "--out", &out]
            .iter()
            .map(|s| s.to_string())
            .collect();
        args.extend(extra.iter().map(|s| s.to_string()));
        let o = tcrtl(&args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(err.starts_with("error: ") && err.contains(needle), "{err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            !base.join("bad").exists(),
            "a refused sweep leaves no folder"
        );
    }
    std::fs::remove_dir_all(&base).ok();
}
