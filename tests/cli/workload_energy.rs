//! `tcrtl workload run --energy`: each layer's estimate is the one `tcrtl gemm --energy` gives
//! for the same problem (the layer's seed from summary.json, run through `tcrtl gemm --m --n
//! --k --seed`), and its D the one `tcrtl gemm --out` writes, on both dataflows (`--dataflow
//! ws` against `tcrtl gemm --dataflow ws --energy`); the estimates survive a stop and
//! `--resume` to the same bytes.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use serde_json::Value;
use std::path::Path;

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// FNV-1a (64 bits) as the report writes it, computed here.
fn fnv1a64(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

#[test]
fn layer_energy_and_d_equal_tcrtl_gemm_on_the_layer_seed() {
    let d = scratch("workload", "energy");
    let t = p(&d, "topo.csv");
    std::fs::write(
        &t,
        "Layer, M, N, K,\nA1, 8, 8, 16,\nA2, 5, 6, 7,\nA3, 4, 9, 5,\n",
    )
    .unwrap();
    for dataflow in ["os", "ws"] {
        let out = d.join(dataflow);
        let o = tcrtl(&[
            "workload",
            "run",
            &t,
            "--out",
            &out.display().to_string(),
            "--energy",
            "--tech",
            "7nm",
            "--seed",
            "5",
            "--dataflow",
            dataflow,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let s = summary(&out);
        assert_eq!(s["energy"]["tech"], "7nm");
        let csv = std::fs::read_to_string(out.join("layers.csv")).unwrap();
        let mut rows = csv.lines();
        // energy_pj after the columns every run has, then the columns added since.
        let header: Vec<&str> = rows.next().unwrap().split(',').collect();
        assert_eq!(
            header[17..],
            [
                "scalesim_cycles",
                "energy_pj",
                "mapping_efficiency",
                "simulated_seconds"
            ]
        );
        for (l, row) in s["layers"].as_array().unwrap().iter().zip(rows) {
            let dims: Vec<String> = ["m", "n", "k", "seed"]
                .iter()
                .map(|k| l[*k].to_string())
                .collect();
            let dpath = p(&d, "d.npy");
            let g = tcrtl(&[
                "gemm",
                "--m",
                &dims[0],
                "--n",
                &dims[1],
                "--k",
                &dims[2],
                "--seed",
                &dims[3],
                "--energy",
                "--tech",
                "7nm",
                "--json",
                "--out",
                &dpath,
                "--dataflow",
                dataflow,
            ]);
            assert_eq!(g.status.code(), Some(0), "{}", text(&g.stderr));
            let gj: Value = serde_json::from_str(&text(&g.stdout)).unwrap();
            assert_eq!(l["energy"], gj["energy"], "{dataflow} {}", l["layer"]);
            assert!(l["energy"]["total_pj"].as_f64().unwrap() > 0.0);
            let blocks = l["energy"]["by_block"].as_object().unwrap();
            assert_eq!(blocks.contains_key("accumulator"), dataflow == "ws");
            assert_eq!(
                row.split(',').nth(18).unwrap(),
                gj["energy"]["total_pj"].to_string()
            );
            // D, from the npy payload after its header.
            let b = std::fs::read(&dpath).unwrap();
            let len = u16::from_le_bytes([b[8], b[9]]) as usize;
            assert_eq!(l["d_digest"], fnv1a64(&b[10 + len..]), "{}", l["layer"]);
        }
    }
    let out = d.join("os");
    // A stopped run resumes to the same estimates, byte for byte.
    let cut = d.join("cut");
    let c = cut.display().to_string();
    let args = [
        "workload", "run", &t, "--out", &c, "--energy", "--tech", "7nm", "--seed", "5",
    ];
    let mut stop = args.to_vec();
    stop.extend(["--stop-after", "1"]);
    assert_eq!(tcrtl(&stop).status.code(), Some(130));
    let mut resume = args.to_vec();
    resume.push("--resume");
    assert_eq!(tcrtl(&resume).status.code(), Some(0));
    let energies = |dir: &Path| -> Vec<Value> {
        summary(dir)["layers"]
            .as_array()
            .unwrap()
            .iter()
            .map(|l| l["energy"].clone())
            .collect()
    };
    assert_eq!(energies(&cut), energies(&out));
    // Not with --analytic.
    assert_error(
        &tcrtl(&[
            "workload",
            "run",
            &t,
            "--out",
            &p(&d, "a"),
            "--energy",
            "--analytic",
        ]),
        "--energy needs a simulated run",
    );
    let _ = std::fs::remove_dir_all(&d);
}
