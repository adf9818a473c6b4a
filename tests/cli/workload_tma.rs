//! `tcrtl workload run --memory tma`: every layer through global memory, TMA loads into
//! shared memory and the TMA store of D. Each layer's `memory` object (bytes loaded from and
//! stored to global memory, bytes landed in shared memory, stall cycles, ...), cycles, energy
//! and D equal what `tcrtl gemm --memory tma` gives for the same problem (the layer's seed
//! from summary.json); `layers.csv` carries the byte and stall columns (global memory, the
//! TMA's writes into shared memory and the array's reads from it); a stopped run resumes to
//! the same report.

use crate::common::cli::{p, scratch, tcrtl, text};
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

/// `layers.csv` rows without the wall-clock `sim_seconds` column (index 10).
fn rows_without_timing(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("layers.csv"))
        .unwrap()
        .lines()
        .map(|l| {
            let mut f: Vec<&str> = l.split(',').collect();
            f.remove(10);
            f.join(",")
        })
        .collect()
}

#[test]
fn tma_layers_equal_tcrtl_gemm_through_the_memory_path() {
    tma_layers_equal_gemm("os");
}

#[test]
fn ws_tma_layers_equal_tcrtl_gemm_through_the_memory_path() {
    tma_layers_equal_gemm("ws");
}

/// Every layer of a small topology through `--memory tma` in dataflow `df` equals `tcrtl
/// gemm` on the same problem: memory object, cycles, energy, D.
fn tma_layers_equal_gemm(df: &str) {
    let d = scratch("workload", &format!("tma_{df}"));
    let t = p(&d, "topo.csv");
    std::fs::write(
        &t,
        "Layer, M, N, K,\nA1, 8, 8, 16,\nA2, 5, 6, 7,\nA3, 9, 4, 12,\n",
    )
    .unwrap();
    let mem = [
        "--memory",
        "tma",
        "--mem-latency",
        "40",
        "--mem-bandwidth",
        "32",
        "--stages",
        "2",
        "--dataflow",
        df,
    ];
    let out = d.join("tma");
    let o_s = out.display().to_string();
    let mut args = vec![
        "workload", "run", &t, "--out", &o_s, "--energy", "--seed", "9",
    ];
    args.extend(mem);
    let o = tcrtl(&args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = summary(&out);
    assert_eq!(s["core"]["memory"], "tma");
    assert_eq!(s["memory_path"]["params"]["latency"], 40);
    let csv = std::fs::read_to_string(out.join("layers.csv")).unwrap();
    let mut lines = csv.lines();
    let header: Vec<&str> = lines.next().unwrap().split(',').collect();
    let col = |name: &str| header.iter().position(|c| *c == name).expect(name);
    // The columns added since the first ones come last, so that no earlier index moved: the
    // memory columns, energy_pj, then mapping_efficiency and simulated_seconds, then the
    // shared-memory reads and writes.
    assert_eq!(
        header[17..],
        [
            "scalesim_cycles",
            "gmem_bytes_loaded",
            "gmem_bytes_stored",
            "smem_tx_bytes",
            "stall_cycles",
            "energy_pj",
            "mapping_efficiency",
            "simulated_seconds",
            "smem_read_bytes",
            "smem_write_bytes"
        ]
    );
    for (l, row) in s["layers"].as_array().unwrap().iter().zip(lines) {
        let f: Vec<&str> = row.split(',').collect();
        let dims: Vec<String> = ["m", "n", "k", "seed"]
            .iter()
            .map(|k| l[*k].to_string())
            .collect();
        let dpath = p(&d, "d.npy");
        let mut g_args = vec![
            "gemm", "--m", &dims[0], "--n", &dims[1], "--k", &dims[2], "--seed", &dims[3],
            "--energy", "--json", "--out", &dpath,
        ];
        g_args.extend(mem);
        let g = tcrtl(&g_args);
        assert_eq!(g.status.code(), Some(0), "{}", text(&g.stderr));
        let gj: Value = serde_json::from_str(&text(&g.stdout)).unwrap();
        let name = &l["layer"];
        assert_eq!(l["memory"], gj["memory"], "{name}");
        assert_eq!(l["cycles"], gj["cycles"], "{name}");
        assert_eq!(l["energy"], gj["energy"], "{name}");
        assert_eq!(
            l["traffic"],
            Value::Null,
            "{name}: no operand store on the TMA path"
        );
        assert_eq!(l["mismatches"], 0);
        let b = std::fs::read(&dpath).unwrap();
        let len = u16::from_le_bytes([b[8], b[9]]) as usize;
        assert_eq!(l["d_digest"], fnv1a64(&b[10 + len..]), "{name}");
        // The columns read the memory object; the operand-store columns are empty.
        for (column, key) in [
            ("gmem_bytes_loaded", "bytes_loaded"),
            ("gmem_bytes_stored", "bytes_stored"),
            ("smem_tx_bytes", "tx_bytes"),
            ("stall_cycles", "stall_cycles"),
            ("smem_read_bytes", "smem_read_bytes"),
            ("smem_write_bytes", "smem_write_bytes"),
        ] {
            assert_eq!(
                f[col(column)],
                gj["memory"][key].to_string(),
                "{name} {column}"
            );
        }
        assert_eq!(f[col("a_read_bytes")], "");
        for key in ["bytes_loaded", "smem_read_bytes", "smem_write_bytes"] {
            assert!(gj["memory"][key].as_u64().unwrap() > 0, "{name} {key}");
        }
        assert_eq!(f[col("energy_pj")], gj["energy"]["total_pj"].to_string());
    }
    // Stopped after one layer and resumed: the same report.
    let cut = d.join("cut");
    let c = cut.display().to_string();
    let mut args = vec![
        "workload", "run", &t, "--out", &c, "--energy", "--seed", "9",
    ];
    args.extend(mem);
    let mut stop = args.clone();
    stop.extend(["--stop-after", "1"]);
    assert_eq!(tcrtl(&stop).status.code(), Some(130));
    args.push("--resume");
    assert_eq!(tcrtl(&args).status.code(), Some(0));
    assert_eq!(rows_without_timing(&cut), rows_without_timing(&out));
    let _ = std::fs::remove_dir_all(&d);
}
