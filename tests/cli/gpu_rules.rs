//! `--gpu` and `--instr`: a GPU and its matrix instruction name the nvidia rule instead of
//! `--preset`. On the first E4M3 row of our H200 capture (C = 0), where the two Hopper rules
//! differ, `--gpu h100 --instr mma.sync` gives the bits the H200 returned through `mma.sync`
//! built with CUDA 13.0 (and `--preset h200`'s), and `--gpu h100` alone (its default, `wgmma`)
//! the bits cuBLAS returned on the same H200 (and `--preset hopper`'s); the JSON reports name
//! the GPU and instruction; bad pairs are one-line errors.

use crate::common::cli::{assert_error as assert_failed, tcrtl, text};
use std::path::PathBuf;
use std::process::Output;
use tensorcore_rtl::numerics::format::E4M3;
use tensorcore_rtl::verify::measurements::{encode_word, load_acc};

fn stdout(o: &Output) -> String {
    text(&o.stdout)
}

fn stderr(o: &Output) -> String {
    text(&o.stderr)
}

/// A failure: exit code 2 and exactly one line `error: ...` containing `needle`.
fn assert_error(args: &[&str], needle: &str) {
    assert_failed(&tcrtl(args), needle);
}

fn data(path: &str) -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("data/tensor-core-measurements/H200/")
        .join(path)
}

/// The first E4M3 row of the H200 capture as `--a` and `--b` operands (E4M3 patterns), its
/// C, and the D the H200 returned through `mma.sync`.
fn row1() -> (String, String, u32, u32) {
    let set = load_acc(
        &data("E4M3"),
        Some(1),
        tensorcore_rtl::numerics::format::FP32,
    )
    .expect("the H200 E4M3 rows");
    let ops = |r: &[u32]| {
        r.iter()
            .map(|&w| format!("{:#04x}", encode_word(E4M3, w).expect("an E4M3 value")))
            .collect::<Vec<_>>()
            .join(",")
    };
    (ops(&set.a[0]), ops(&set.b[0]), set.c[0], set.d[0])
}

/// The first FP32 D of cuBLAS's E4M3 GEMM on the same H200 (no C): the native FP8 path.
fn cublas_row1() -> u32 {
    let text = std::fs::read_to_string(data("cublas/scaled_mm_fp8.txt")).expect("cuBLAS rows");
    let mut lines = text.lines();
    while let Some(head) = lines.next() {
        if head == "E4M3 fast=False out=float32" {
            let w = lines
                .next()
                .and_then(|l| l.split_whitespace().next())
                .expect("a row");
            return u32::from_str_radix(w, 16).expect("hex");
        }
    }
    panic!("no E4M3 FP32 rows");
}

fn dot_json(rule: &[&str], a: &str, b: &str) -> serde_json::Value {
    let mut args = vec!["dot", "--format", "e4m3", "--acc", "nvidia", "--c", "0"];
    args.extend_from_slice(rule);
    args.extend_from_slice(&["--a", a, "--b", b, "--json"]);
    let o = tcrtl(&args);
    assert!(o.status.success(), "{rule:?}: {}", stderr(&o));
    serde_json::from_str(stdout(&o).trim()).expect("JSON")
}

#[test]
fn gpu_and_instr_give_the_measured_bits() {
    let (a, b, c, mma_sync) = row1();
    assert_eq!(c, 0, "row 1 has C = 0");
    let native = cublas_row1();
    assert_ne!(mma_sync, native, "the two Hopper rules differ on this row");
    let hex = |w: u32| format!("{w:#010x}");
    for (rule, want, preset, gpu, instr) in [
        (
            &["--gpu", "h100", "--instr", "mma.sync"][..],
            mma_sync,
            "h200",
            "h100",
            "mma.sync",
        ),
        (
            &["--gpu", "h200", "--instr", "mma.sync"][..],
            mma_sync,
            "h200",
            "h200",
            "mma.sync",
        ),
        (
            &["--preset", "h200"][..],
            mma_sync,
            "h200",
            "h200",
            "mma.sync",
        ),
        (&["--gpu", "h100"][..], native, "hopper", "h100", "wgmma"),
        (
            &["--gpu", "H200", "--instr", "wgmma"][..],
            native,
            "hopper",
            "h200",
            "wgmma",
        ),
        (
            &["--preset", "hopper"][..],
            native,
            "hopper",
            "h100",
            "wgmma",
        ),
    ] {
        let v = dot_json(rule, &a, &b);
        assert_eq!(v["bits"], hex(want), "{rule:?}");
        assert_eq!(v["preset"], preset, "{rule:?}");
        assert_eq!(v["gpu"], gpu, "{rule:?}");
        assert_eq!(v["instr"], instr, "{rule:?}");
    }
    // The text output names the rule too.
    let o = tcrtl(&[
        "dot", "--format", "e4m3", "--acc", "nvidia", "--gpu", "h100", "--instr", "mma.sync",
        "--c", "0", "--a", &a, "--b", &b,
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains(&hex(mma_sync)), "{out}");
    assert!(
        out.contains("rule:  preset h200 (h100 through mma.sync)"),
        "{out}"
    );
}

/// Every report of an nvidia run carries `gpu` and `instr`; the other modes carry nulls.
#[test]
fn reports_name_the_gpu_and_instruction() {
    let v = dot_json(&["--gpu", "b200"], "1", "1");
    assert_eq!(
        (&v["preset"], &v["gpu"], &v["instr"]),
        (&"blackwell".into(), &"b200".into(), &"mma.sync".into())
    );
    let o = tcrtl(&[
        "dot",
        "--format",
        "fp16",
        "--acc",
        "nvidia",
        "--gpu",
        "h200",
        "--instr",
        "mma.sync",
        "--a",
        "1",
        "--b",
        "1",
        "--explain",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (&v["preset"], &v["gpu"], &v["instr"]),
        (&"h200".into(), &"h200".into(), &"mma.sync".into())
    );
    assert!(v["explain"].is_array(), "{v}");
    let o = tcrtl(&["dot", "--format", "fp16", "--a", "1", "--b", "1", "--json"]);
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert!(v["gpu"].is_null() && v["instr"].is_null(), "{v}");
    let o = tcrtl(&[
        "gemm", "--m", "4", "--n", "4", "--k", "16", "--format", "fp16", "--acc", "nvidia",
        "--gpu", "a100", "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!(
        (&v["preset"], &v["gpu"], &v["instr"]),
        (&"ampere".into(), &"a100".into(), &"mma.sync".into())
    );
    let o = tcrtl(&[
        "gemm", "--m", "4", "--n", "4", "--k", "16", "--format", "fp16", "--acc", "nvidia",
        "--preset", "hopper",
    ]);
    assert!(
        stdout(&o).contains("nvidia hopper (h100 through wgmma)"),
        "{}",
        stdout(&o)
    );
    // verify measurements with a GPU instead of a preset.
    let o = tcrtl(&[
        "verify",
        "measurements",
        data("E4M3").to_str().unwrap(),
        "--format",
        "e4m3",
        "--gpu",
        "h200",
        "--instr",
        "mma.sync",
        "--limit",
        "64",
        "--json",
    ]);
    assert!(o.status.success(), "{}", stderr(&o));
    let v: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    assert_eq!((&v["matched"], &v["total"]), (&64.into(), &64.into()));
    assert_eq!(
        (&v["preset"], &v["gpu"], &v["instr"]),
        (&"h200".into(), &"h200".into(), &"mma.sync".into())
    );
    // The table itself.
    let o = tcrtl(&["verify", "gpus", "--json"]);
    let rows: serde_json::Value = serde_json::from_str(stdout(&o).trim()).unwrap();
    let h100: Vec<_> = rows
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["gpu"] == "h100")
        .collect();
    assert_eq!(h100.len(), 2);
    assert_eq!(
        (&h100[0]["instr"], &h100[0]["default"]),
        (&"wgmma".into(), &true.into())
    );
}

#[test]
fn bad_pairs_are_one_line_errors() {
    let base = [
        "dot", "--format", "e4m3", "--acc", "nvidia", "--a", "1", "--b", "1",
    ];
    let with = |extra: &[&'static str]| -> Vec<&'static str> {
        let mut v = base.to_vec();
        v.extend_from_slice(extra);
        v
    };
    assert_error(
        &with(&["--preset", "h200", "--gpu", "h100"]),
        "give a preset or a GPU, not both",
    );
    assert_error(&with(&["--instr", "wgmma"]), "needs a GPU");
    assert_error(
        &with(&["--gpu", "b200", "--instr", "tcgen05"]),
        "b200 through tcgen05 is not modelled: no measurement",
    );
    assert_error(
        &with(&["--gpu", "a100", "--instr", "wgmma"]),
        "a100 through wgmma is not modelled; the modelled pairs are",
    );
    assert_error(
        &with(&["--gpu", "h100", "--instr", "wmma"]),
        "wmma has no FP8",
    );
    assert_error(
        &with(&["--gpu", "a100"]),
        "a100 through mma.sync: preset ampere does not support e4m3",
    );
    assert_error(&with(&["--gpu", "gtx1080"]), "unknown GPU \"gtx1080\"");
    assert_error(
        &[
            "dot", "--format", "fp16", "--gpu", "h100", "--a", "1", "--b", "1",
        ],
        "nvidia mode only",
    );
}
