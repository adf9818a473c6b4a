//! `tcrtl gemm --memory tma` and `tcrtl memsweep` through the built binary: the JSON `memory`
//! object, D equal to the ideal path, the memory options' errors, and the sweep's files.

use crate::common::cli::{assert_error, tcrtl};
use std::process::Output;

fn json(out: &Output) -> serde_json::Value {
    assert!(
        out.status.success(),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("one JSON object")
}

#[test]
fn tma_gemm_reports_memory_and_matches_the_ideal_d() {
    let dir = std::env::temp_dir().join(format!("tcrtl-cli-memory-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    let (d_ideal, d_tma) = (dir.join("ideal.npy"), dir.join("tma.npy"));
    let base = [
        "gemm", "--m", "9", "--n", "10", "--k", "70", "--seed", "4", "--format", "bf16", "--width",
        "2", "--json",
    ];
    let ideal = json(&tcrtl(
        &[&base[..], &["--out", d_ideal.to_str().expect("utf-8")]].concat(),
    ));
    assert_eq!(ideal["memory"]["path"], "ideal");
    assert_eq!(ideal["memory"]["stall_cycles"], 0);
    let tma = json(&tcrtl(
        &[
            &base[..],
            &[
                "--memory",
                "tma",
                "--mem-latency",
                "120",
                "--mem-bandwidth",
                "8",
                "--out",
                d_tma.to_str().expect("utf-8"),
            ],
        ]
        .concat(),
    ));
    let m = &tma["memory"];
    assert_eq!(m["path"], "tma");
    assert_eq!(m["params"]["latency"], 120);
    assert_eq!(m["params"]["bytes_per_cycle"], 8);
    assert_eq!(m["bytes_stored"], 9 * 10 * 4);
    for key in [
        "bytes_loaded",
        "stall_cycles",
        "bank_conflicts",
        "tx_bytes",
        "stages",
    ] {
        assert!(m[key].is_u64(), "{key} in {m}");
    }
    assert!(m["bytes_loaded"].as_u64() > Some(0));
    assert!(tma["cycles"].as_u64() > ideal["cycles"].as_u64());
    assert_eq!(tma["check"]["mismatches"], 0);
    let (a, b) = (
        std::fs::read(&d_ideal).expect("ideal D"),
        std::fs::read(&d_tma).expect("tma D"),
    );
    assert_eq!(a, b, "D through memory equals the ideal D byte for byte");
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn memory_options_need_the_memory_path_and_valid_values() {
    let base = ["gemm", "--m", "4", "--n", "4", "--k", "4"];
    assert_error(
        &tcrtl(&[&base[..], &["--mem-latency", "10"]].concat()),
        "need --memory tma",
    );
    assert_error(
        &tcrtl(&[&base[..], &["--memory", "tma", "--mem-bandwidth", "0"]].concat()),
        "bytes_per_cycle",
    );
    assert_error(
        &tcrtl(&[&base[..], &["--memory", "tma", "--mem-request", "100"]].concat()),
        "request_bytes",
    );
    assert_error(
        &tcrtl(&[&base[..], &["--memory", "tma", "--stages", "0"]].concat()),
        "--stages 0",
    );
    assert_error(
        &tcrtl(&[&base[..], &["--memory", "tma", "--stages", "400"]].concat()),
        "stages",
    );
    assert_error(
        &tcrtl(
            &[
                &base[..],
                &[
                    "--memory", "tma", "--sparse", "--format", "tf32", "--width", "4",
                ],
            ]
            .concat(),
        ),
        "1 or 2 bytes",
    );
}

/// `gemm --sparse --memory tma`: the same D as the ideal sparse run (FP32 and FP16 output),
/// the sparse summary and the memory counters in the JSON, and half of A's bytes loaded.
#[test]
fn sparse_tma_gemm_matches_the_ideal_sparse_d() {
    let dir = std::env::temp_dir().join(format!("tcrtl-cli-sparse-tma-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("tmp");
    for out_format in ["fp32", "fp16"] {
        let (d_ideal, d_tma) = (
            dir.join(format!("ideal_{out_format}.npy")),
            dir.join(format!("tma_{out_format}.npy")),
        );
        let base = [
            "gemm",
            "--sparse",
            "--m",
            "9",
            "--n",
            "4",
            "--k",
            "136",
            "--seed",
            "5",
            "--format",
            "fp16",
            "--width",
            "4",
            "--out-format",
            out_format,
            "--json",
        ];
        let ideal = json(&tcrtl(
            &[&base[..], &["--out", d_ideal.to_str().expect("utf-8")]].concat(),
        ));
        let tma = json(&tcrtl(
            &[
                &base[..],
                &[
                    "--memory",
                    "tma",
                    "--mem-latency",
                    "90",
                    "--out",
                    d_tma.to_str().expect("utf-8"),
                ],
            ]
            .concat(),
        ));
        assert_eq!(tma["sparse"], true);
        assert_eq!(tma["check"]["mismatches"], 0, "{tma}");
        let m = &tma["memory"];
        assert_eq!(m["path"], "tma");
        assert_eq!(m["params"]["latency"], 90);
        let es = if out_format == "fp16" { 2 } else { 4 };
        assert_eq!(m["bytes_stored"], 9 * 4 * es);
        // One tile column: A's kept values (9 x 68 x 2 bytes) and metadata (9 x 17 bytes) once,
        // B (4 x 136 x 2 bytes) for each of the three tile rows, C (9 x 4 words).
        let want = 9 * 68 * 2 + 9 * 17 + 3 * 4 * 136 * 2 + 9 * 4 * es;
        assert_eq!(m["bytes_loaded"], want, "{m}");
        assert!(tma["cycles"].as_u64() > ideal["cycles"].as_u64());
        let (a, b) = (
            std::fs::read(&d_ideal).expect("ideal D"),
            std::fs::read(&d_tma).expect("tma D"),
        );
        assert_eq!(a, b, "sparse D through memory equals the ideal sparse D");
    }
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn memsweep_writes_csv_json_and_a_plot() {
    let dir = std::env::temp_dir().join(format!("tcrtl-memsweep-{}", std::process::id()));
    let out = tcrtl(&[
        "memsweep",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "128",
        "--bandwidths",
        "2,32",
        "--latencies",
        "0,300",
        "--stages",
        "auto,2",
        "--out",
        dir.to_str().expect("utf-8"),
    ]);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let csv = std::fs::read_to_string(dir.join("memsweep.csv")).expect("csv");
    assert_eq!(csv.lines().count(), 1 + 2 * 2 * 2);
    let j: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(dir.join("memsweep.json")).expect("json"))
            .expect("parses");
    let pts = j["points"].as_array().expect("points");
    assert_eq!(pts.len(), 8);
    for p in pts {
        let (u, r) = (p["utilization"].as_f64(), p["roofline"].as_f64());
        let (u, r) = (u.expect("utilization"), r.expect("roofline"));
        assert!(
            u > 0.0 && u <= r + 1e-9,
            "utilization {u} above the roofline {r}: {p}"
        );
    }
    let svg = std::fs::read_to_string(dir.join("memsweep.svg")).expect("svg");
    assert!(svg.starts_with("<svg") && svg.contains("roofline"));
    let _ = std::fs::remove_dir_all(&dir);
}
