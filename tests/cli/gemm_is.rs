//! `tcrtl gemm --dataflow is`: a dense GEMM on the input-stationary core reports its dataflow,
//! checks with no mismatch, gives the weight-stationary D of the same problem and the
//! weight-stationary cycles of the transposed one; what the core does not take yet (2:4 sparse,
//! block-scaled, the TMA memory path) is one line and exit 2, with nothing written.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};

/// The words of `line`, as arguments.
fn words(line: &str) -> Vec<&str> {
    line.split_whitespace().collect()
}

/// Runs `tcrtl gemm ARGS --json`, expecting success; returns the report.
fn gemm_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["gemm"];
    all.extend_from_slice(args);
    all.push("--json");
    let o = tcrtl(&all);
    assert_eq!(o.status.code(), Some(0), "{args:?}: {}", text(&o.stderr));
    serde_json::from_slice(&o.stdout).expect("json")
}

#[test]
fn gemm_is_runs_a_dense_problem() {
    let d = scratch("gemm-is", "dense");
    let (is_out, ws_out) = (p(&d, "is.npy"), p(&d, "ws.npy"));
    let j = gemm_json(&words("--dataflow is --m 7 --n 9 --k 13"));
    assert_eq!(j["dataflow"], "is", "{j}");
    assert_eq!((j["m"].as_u64(), j["n"].as_u64()), (Some(7), Some(9)));
    assert_eq!(j["check"]["mismatches"], 0, "{j}");
    assert_eq!(j["check"]["reference"], "ws_ref(ieee_dot)", "{j}");

    // On a 3 x 5 array with --out: the same D, bit for bit, as the weight-stationary core
    // on the same problem (the same order).
    let common = words("--m 7 --n 9 --k 13 --rows 3 --cols 5");
    let is = gemm_json(&[&common[..], &["--dataflow", "is", "--out", &is_out]].concat());
    let ws = gemm_json(&[&common[..], &["--dataflow", "ws", "--out", &ws_out]].concat());
    assert_eq!(is["dataflow"], "is");
    assert_eq!(is["check"]["mismatches"], 0, "{is}");
    let (a, b) = (
        read_npy(&d.join("is.npy")).expect("D"),
        read_npy(&d.join("ws.npy")).expect("D"),
    );
    assert_eq!(a.shape, vec![7, 9]);
    assert_eq!(a.shape, b.shape);
    for i in 0..7 * 9 {
        assert_eq!(a.word(i), b.word(i), "D[{}][{}]", i / 9, i % 9);
    }
    // Its cycles are the weight-stationary schedule's of the transposed problem (9 x 7 x 13:
    // the 9 columns of B streamed, the 7 rows of A held).
    let t = gemm_json(&words("--dataflow ws --m 9 --n 7 --k 13 --rows 3 --cols 5"));
    assert_eq!(is["cycles"], t["cycles"], "is {is} vs transposed ws {t}");
    assert_ne!(
        is["cycles"], ws["cycles"],
        "M != N tells the two schedules apart"
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn gemm_is_refuses_sparse_and_tma_and_runs_mx_as_ws_does() {
    let d = scratch("gemm-is", "refusals");
    let out = p(&d, "d.npy");
    let not_yet =
        "in the input-stationary dataflow (is runs dense and block-scaled GEMMs on the ideal store";
    let dense = words("gemm --dataflow is --m 8 --n 8 --k 16");
    let sparse = [&dense[..], &["--sparse", "--out", &out]].concat();
    assert_error(&tcrtl(&sparse), &format!("a 2:4 sparse GEMM {not_yet}"));
    let tma = [&dense[..], &["--memory", "tma", "--out", &out]].concat();
    assert_error(&tcrtl(&tma), &format!("the TMA memory path {not_yet}"));

    // An MXFP8 problem from fixed codes (6 x 5 x 64, two blocks of 32 along K).
    let (m, n, k) = (6usize, 5usize, 64usize);
    let code = |i: usize| ((i * 37 + 11) % 256) as u64 & !0x01;
    let files = [
        ("a", vec![m, k], (0..m * k).map(code).collect::<Vec<u64>>()),
        ("b", vec![k, n], (0..k * n).map(|i| code(i + 5)).collect()),
        ("sa", vec![m, k / 32], vec![127; m * k / 32]),
        ("sb", vec![k / 32, n], vec![126; k / 32 * n]),
    ];
    let mut paths = Vec::new();
    for (name, shape, codes) in &files {
        write_npy(&d.join(format!("{name}.npy")), shape, Dtype::U8, codes).expect("npy");
        paths.push(p(&d, &format!("{name}.npy")));
    }
    let mx = |dataflow: &str, out: &str| {
        tcrtl(&[
            "gemm",
            "--format",
            "mxfp8e4m3",
            "--a",
            &paths[0],
            "--b",
            &paths[1],
            "--a-scales",
            &paths[2],
            "--b-scales",
            &paths[3],
            "--width",
            "32",
            "--dataflow",
            dataflow,
            "--out",
            out,
        ])
    };
    assert!(!d.join("d.npy").exists(), "a refused run wrote D");
    // A block-scaled problem runs in is, with the D of ws (the same order), bit for bit.
    let (d_is, d_ws) = (p(&d, "d_is.npy"), p(&d, "d_ws.npy"));
    for (df, out) in [("is", &d_is), ("ws", &d_ws)] {
        let o = mx(df, out);
        assert_eq!(o.status.code(), Some(0), "{df}: {}", text(&o.stderr));
    }
    assert_eq!(
        std::fs::read(&d_is).expect("is D"),
        std::fs::read(&d_ws).expect("ws D")
    );
    let _ = std::fs::remove_dir_all(&d);
}
