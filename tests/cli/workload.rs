//! `tcrtl workload run`: SCALE-Sim's two topology formats from the command line (header
//! detection, trailing commas, blank lines, one-line refusals), the shipped topologies run
//! end to end with each layer's M, N, K worked by hand here and its cycles from the
//! output-stationary formula of docs/timing.md computed here, both dataflows checked with
//! zero mismatches, the sampled check, and the report files.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use serde_json::Value;
use std::path::{Path, PathBuf};

const CONV_HEADER: &str =
    "Layer name, IFMAP Height, IFMAP Width, Filter Height, Filter Width, Channels, Num Filter, Strides,";

fn shipped(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("docs/workloads")
        .join(name)
        .display()
        .to_string()
}

/// docs/timing.md's output-stationary total for an `r x c` array, w = 1, L = 1:
/// `(R - L) + (tiles - 1) P + (T + R + C - 2 + L) + R + 1`, `T = K`,
/// `P = max(T, ceil((T + 2R - 1) / 2))`, `tiles = ceil(M/R) ceil(N/C)`.
fn os_cycles(r: u64, c: u64, m: u64, n: u64, k: u64) -> u64 {
    let l = 1;
    let t = k;
    let p = t.max((t + 2 * r - 1).div_ceil(2));
    let tiles = m.div_ceil(r) * n.div_ceil(c);
    (r - l) + (tiles - 1) * p + (t + r + c - 2 + l) + r + 1
}

/// SCALE-Sim's mapping efficiency stated here as its compute module computes it, fold by fold
/// (SCALE-Sim v3, `scalesim/compute/systolic_compute_os.py`, `systolic_compute_ws.py`,
/// `systolic_compute_is.py`): the array holds an `S_r x S_c` operand (os: `M x N`, the
/// output; ws: `K x N`, the filters; is: `K x M`, the input windows) in
/// `R x C` folds; each fold's efficiency is the PEs it maps over `R * C`, and the layer's is
/// the mean of its folds'. Returns (sum of the folds' efficiencies, number of folds).
fn scalesim_folds(df: &str, r: u64, c: u64, m: u64, n: u64, k: u64) -> (f64, u64) {
    let (sr, sc) = match df {
        "os" => (m, n),
        "ws" => (k, n),
        "is" => (k, m),
        _ => panic!("dataflow {df}"),
    };
    let (mut sum, mut folds) = (0.0, 0);
    let mut col = 0;
    while col < sc {
        let mut row = 0;
        while row < sr {
            let rows_used = (sr - row).min(r);
            let cols_used = (sc - col).min(c);
            sum += (rows_used * cols_used) as f64 / (r * c) as f64;
            folds += 1;
            row += r;
        }
        col += c;
    }
    (sum, folds)
}

/// The fold mean of [`scalesim_folds`].
fn scalesim_mapping_efficiency(df: &str, r: u64, c: u64, m: u64, n: u64, k: u64) -> f64 {
    let (sum, folds) = scalesim_folds(df, r, c, m, n, k);
    sum / folds as f64
}

/// Whether `a` and `b` agree to a relative 1e-12 (a mean of fractions summed in another
/// order).
fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-12 * a.abs().max(b.abs())
}

/// A whole-number field of a layer object.
fn dim(l: &Value, key: &str) -> u64 {
    l[key].as_u64().expect(key)
}

/// layers.csv as (header, rows of fields).
fn read_csv(path: &Path) -> (Vec<String>, Vec<Vec<String>>) {
    let s = std::fs::read_to_string(path).expect("layers.csv");
    let mut lines = s.lines();
    let header = lines
        .next()
        .expect("header")
        .split(',')
        .map(String::from)
        .collect();
    let rows = lines
        .map(|l| l.split(',').map(String::from).collect())
        .collect();
    (header, rows)
}

fn run_ok(args: &[&str]) -> String {
    let o = tcrtl(args);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    text(&o.stdout)
}

/// The tiny CNN's layers lowered by hand: ofmap = ceil((ifmap - filter + stride) / stride).
/// Conv1 16x16, 3x3, 3 ch, 8 filters, stride 1: 14 x 14 -> M 196, N 8, K 27.
/// Conv2 14x14, 3x3, 8 ch, 16 filters, stride 2: ceil(13 / 2) = 7 -> M 49, N 16, K 72.
/// Conv3 6x6, 3x3, 16 ch, 16 filters, stride 1: 4 x 4 -> M 16, N 16, K 144.
/// FC 4x4, 4x4, 16 ch, 10 filters, stride 1: 1 x 1 -> M 1, N 10, K 256.
const TINY_CNN: [(&str, u64, u64, u64); 4] = [
    ("Conv1", 196, 8, 27),
    ("Conv2", 49, 16, 72),
    ("Conv3", 16, 16, 144),
    ("FC", 1, 10, 256),
];

/// The transformer block's GEMMs as listed in its file.
const TRANSFORMER: [(&str, u64, u64, u64); 6] = [
    ("QKV_proj", 16, 96, 32),
    ("Attn_scores", 16, 16, 32),
    ("Attn_context", 16, 32, 16),
    ("Out_proj", 16, 32, 32),
    ("MLP_up", 16, 128, 32),
    ("MLP_down", 16, 32, 128),
];

/// Checks layers.csv of a run against `want` (names, M, N, K in order), the os cycle formula
/// on an `r x c` array (when `os`), zero mismatches and every element checked.
fn check_layers(dir: &Path, want: &[(&str, u64, u64, u64)], r: u64, c: u64, os: bool) {
    let (header, rows) = read_csv(&dir.join("layers.csv"));
    assert_eq!(
        header,
        [
            "layer",
            "m",
            "n",
            "k",
            "cycles",
            "tiles",
            "utilization",
            "macs",
            "checked",
            "mismatches",
            "sim_seconds",
            "analytic_cycles",
            "a_read_bytes",
            "b_read_bytes",
            "c_read_bytes",
            "d_write_bytes",
            "model_cycles",
            "scalesim_cycles",
            "mapping_efficiency",
            "simulated_seconds"
        ]
    );
    assert_eq!(rows.len(), want.len());
    let df = if os { "os" } else { "ws" };
    for (row, &(name, m, n, k)) in rows.iter().zip(want) {
        let num = |i: usize| row[i].parse::<u64>().expect("number");
        let real = |i: usize| row[i].parse::<f64>().expect("number");
        assert_eq!(row[0], name);
        let e = scalesim_mapping_efficiency(df, r, c, m, n, k);
        assert!(
            close(real(18), e),
            "{name}: mapping efficiency {} not {e}",
            row[18]
        );
        // At the default clock, 1 GHz.
        assert_eq!(real(19), num(4) as f64 / 1e9, "{name}: simulated seconds");
        assert_eq!((num(1), num(2), num(3)), (m, n, k), "{name}");
        if os {
            assert_eq!(num(4), os_cycles(r, c, m, n, k), "{name} cycles");
            assert_eq!(num(5), m.div_ceil(r) * n.div_ceil(c), "{name} tiles");
        }
        assert_eq!(num(7), m * n * k, "{name} macs");
        assert_eq!(num(8), m * n, "{name} checked");
        assert_eq!(num(9), 0, "{name} mismatches");
        // The formulas' cycles equal the measured ones; the traffic is the run's count, FP16
        // operands and FP32 C and D (docs/cli.md, "Operand-store traffic").
        assert_eq!(num(11), num(4), "{name} analytic cycles");
        assert_eq!(num(12), 2 * m * k * n.div_ceil(c), "{name} A bytes");
        let b_repeats = if os { m.div_ceil(r) } else { m.div_ceil(1024) };
        assert_eq!(num(13), 2 * k * n * b_repeats, "{name} B bytes");
        assert_eq!(
            (num(14), num(15)),
            (4 * m * n, 4 * m * n),
            "{name} C, D bytes"
        );
    }
}

/// `--analytic` simulates nothing and reports the formulas' cycles and traffic: the same
/// layers.csv columns as a simulated run (checked 0), equal cycles and traffic to the
/// simulated run's in both dataflows; `summary.json` says it was not simulated.
#[test]
fn analytic_mode_gives_what_the_simulation_measures() {
    let d = scratch("workload", "analytic");
    for df in ["os", "ws"] {
        for (what, extra) in [("sim", &[][..]), ("formula", &["--analytic"][..])] {
            let mut args = vec![
                "workload",
                "run",
                "--dataflow",
                df,
                "--rows",
                "8",
                "--cols",
                "4",
                "--out",
            ];
            let out = p(&d, &format!("{df}_{what}"));
            let topo = shipped("transformer_block.csv");
            args.push(&out);
            args.push(&topo);
            args.extend_from_slice(extra);
            run_ok(&args);
        }
        let (_, sim) = read_csv(&d.join(format!("{df}_sim/layers.csv")));
        let (_, formula) = read_csv(&d.join(format!("{df}_formula/layers.csv")));
        assert_eq!(sim.len(), TRANSFORMER.len());
        for (s, f) in sim.iter().zip(&formula) {
            assert_eq!(s[..6], f[..6], "{df}: layer, shape, cycles, tiles");
            assert_eq!(s[11..], f[11..], "{df}: the formulas' columns");
            assert_eq!(f[8], "0", "{df}: nothing checked");
        }
        let j: Value = serde_json::from_str(
            &std::fs::read_to_string(d.join(format!("{df}_formula/summary.json"))).unwrap(),
        )
        .unwrap();
        assert_eq!(j["simulated"], false);
        let j: Value = serde_json::from_str(
            &std::fs::read_to_string(d.join(format!("{df}_sim/summary.json"))).unwrap(),
        )
        .unwrap();
        for l in j["layers"].as_array().unwrap() {
            assert_eq!(l["analytic"]["agrees"], true, "{df}: {}", l["layer"]);
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn tiny_cnn_runs_with_the_os_cycle_formula_and_no_mismatches() {
    let d = scratch("workload", "cnn");
    let out = run_ok(&[
        "workload",
        "run",
        &shipped("tiny_cnn.csv"),
        "--out",
        &p(&d, "os"),
    ]);
    check_layers(&d.join("os"), &TINY_CNN, 4, 4, true);
    // layers.svg: the two per-layer charts, every layer named on them.
    let svg = std::fs::read_to_string(d.join("os/layers.svg")).expect("layers.svg");
    assert!(svg.starts_with("<svg") && svg.trim_end().ends_with("</svg>"));
    assert!(svg.contains("cycles per layer") && svg.contains("utilization per layer"));
    for (name, ..) in TINY_CNN {
        // Each label is a text element's content, on a line of its own.
        let label = format!("\n{name}\n");
        assert_eq!(svg.matches(&label).count(), 2, "{name} on both charts");
    }
    // One stdout line per layer, in order, then the total.
    let lines: Vec<&str> = out.lines().collect();
    for (i, (name, ..)) in TINY_CNN.iter().enumerate() {
        assert!(lines[i + 1].starts_with(&format!("{name}: ")), "{out}");
    }
    let total: u64 = TINY_CNN
        .iter()
        .map(|&(_, m, n, k)| os_cycles(4, 4, m, n, k))
        .sum();
    assert!(
        out.contains(&format!("total: 4 layers, {total} cycles")),
        "{out}"
    );
    // summary.json: the core, each layer, totals with utilization = macs / (cycles R C w).
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("os/summary.json")).unwrap()).unwrap();
    assert_eq!(j["core"]["rows"], 4);
    assert_eq!(j["core"]["dataflow"], "os");
    assert_eq!(j["topology_format"], "conv");
    assert_eq!(j["layers"][1]["conv"]["ofmap_h"], 7);
    let macs: u64 = TINY_CNN.iter().map(|&(_, m, n, k)| m * n * k).sum();
    assert_eq!(j["totals"]["cycles"], total);
    assert_eq!(j["totals"]["macs"], macs);
    assert_eq!(j["totals"]["mismatches"], 0);
    let u = j["totals"]["utilization"].as_f64().unwrap();
    assert!((u - macs as f64 / (total * 16) as f64).abs() < 1e-12, "{u}");
    assert_eq!(j["clock_ghz"], 1.0);
    assert_eq!(j["totals"]["simulated_seconds"], total as f64 / 1e9);
    // The network's mapping efficiency: the mean over every fold of every layer.
    let (sum, folds) = TINY_CNN
        .iter()
        .map(|&(_, m, n, k)| scalesim_folds("os", 4, 4, m, n, k))
        .fold((0.0, 0), |(s, f), (a, b)| (s + a, f + b));
    let e = j["totals"]["mapping_efficiency"].as_f64().unwrap();
    assert!(close(e, sum / folds as f64), "{e}");
    for l in j["layers"].as_array().unwrap() {
        let (m, n, k) = (dim(l, "m"), dim(l, "n"), dim(l, "k"));
        let want = scalesim_mapping_efficiency("os", 4, 4, m, n, k);
        assert!(
            close(l["mapping_efficiency"].as_f64().unwrap(), want),
            "{l}"
        );
        assert_eq!(
            l["simulated_seconds"].as_f64().unwrap(),
            dim(l, "cycles") as f64 / 1e9
        );
    }

    // Weight-stationary: the same layers, zero mismatches against the ws reference.
    let out = run_ok(&[
        "workload",
        "run",
        &shipped("tiny_cnn.csv"),
        "--out",
        &p(&d, "ws"),
        "--dataflow",
        "ws",
    ]);
    check_layers(&d.join("ws"), &TINY_CNN, 4, 4, false);
    assert!(out.contains("ws_ref("), "{out}");
}

#[test]
fn transformer_block_on_a_non_square_array_both_dataflows() {
    let d = scratch("workload", "tf");
    for df in ["os", "ws"] {
        let o = tcrtl(&[
            "workload",
            "run",
            &shipped("transformer_block.csv"),
            "--out",
            &p(&d, df),
            "--rows",
            "8",
            "--cols",
            "4",
            "--dataflow",
            df,
            "--json",
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        // Progress on stderr, one line per layer.
        assert_eq!(text(&o.stderr).lines().count(), TRANSFORMER.len());
        let j: Value = serde_json::from_slice(&o.stdout).expect("json");
        assert_eq!(j["topology_format"], "gemm");
        assert_eq!(j["totals"]["mismatches"], 0);
        check_layers(&d.join(df), &TRANSFORMER, 8, 4, df == "os");
    }
}

#[test]
fn large_layers_are_checked_on_a_sample() {
    let d = scratch("workload", "sample");
    let topo = d.join("t.csv");
    std::fs::write(&topo, "Layer, M, N, K\nbig, 24, 20, 8\nsmall, 2, 3, 4\n").unwrap();
    let out = run_ok(&[
        "workload",
        "run",
        &topo.display().to_string(),
        "--out",
        &p(&d, "o"),
        "--max-check",
        "100",
        "--samples",
        "16",
    ]);
    // big: 24 * 20 * 8 = 3840 MACs > 100: 16 of 480 elements; small: 24 MACs, all 6.
    assert!(
        out.contains("sampled 16 of 480 against ieee_dot: 0 mismatches"),
        "{out}"
    );
    assert!(out.contains("checked 6 of 6 against ieee_dot"), "{out}");
    let (_, rows) = read_csv(&d.join("o/layers.csv"));
    assert_eq!(rows[0][8], "16");
    assert_eq!(rows[1][8], "6");
}

/// Writes `body` to a fresh topology file and runs it into a fresh --out that must stay
/// absent.
fn refused(name: &str, body: &str, extra: &[&str], needle: &str) {
    let d = scratch("workload", name);
    let topo: PathBuf = d.join("t.csv");
    std::fs::write(&topo, body).unwrap();
    let out = d.join("out");
    let mut args = vec![
        "workload".to_string(),
        "run".into(),
        topo.display().to_string(),
        "--out".into(),
        out.display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let o = tcrtl(&args);
    assert_error(&o, needle);
    assert!(!out.exists(), "{name}: --out was created");
}

#[test]
fn bad_topologies_are_refused_in_one_line() {
    let conv = format!("{CONV_HEADER}\n");
    refused("empty", "\n\n", &[], "empty topology");
    refused(
        "header",
        "Name, Rows, Cols, Depth\nx, 1, 2, 3\n",
        &[],
        "line 1: unknown header",
    );
    refused(
        "cols",
        &format!("{conv}c1, 8, 8, 3, 3, 1, 4,\n"),
        &[],
        "line 2: 7 columns",
    );
    refused(
        "gemmcols",
        "Layer, M, N, K,\n\nx, 1, 2, 3, 4,\n",
        &[],
        "line 3: 5 columns",
    );
    refused(
        "zero",
        &format!("{conv}c1, 8, 8, 3, 3, 0, 4, 1,\n"),
        &[],
        "layer c1: Channels is 0",
    );
    refused(
        "text",
        "Layer, M, N, K\nx, 4, four, 4\n",
        &[],
        "layer x: N \"four\" is not a whole number",
    );
    refused(
        "filter",
        &format!("{conv}c1, 8, 8, 9, 3, 1, 4, 1,\n"),
        &[],
        "the 9 x 3 filter is larger than the 8 x 8 IFMAP",
    );
    refused(
        "memory",
        "Layer, M, N, K\nx, 4, 4, 4\n",
        &["--memory", "dram"],
        "--memory dram: ideal or tma",
    );
    refused(
        "memory_options",
        "Layer, M, N, K\nx, 4, 4, 4\n",
        &["--stages", "2"],
        "need --memory tma",
    );
    refused(
        "exact",
        "Layer, M, N, K\nx, 4, 4, 4\n",
        &["--acc", "exact"],
        "not a datapath",
    );
}

#[test]
fn an_unwritable_out_is_refused_before_any_layer_runs() {
    let d = scratch("workload", "outfile");
    let file = d.join("plain");
    std::fs::write(&file, "x").unwrap();
    for out in [file.clone(), file.join("sub")] {
        let o = tcrtl(&[
            "workload",
            "run",
            &shipped("tiny_cnn.csv"),
            "--out",
            &out.display().to_string(),
        ]);
        assert_error(&o, "--out");
        // No layer ran: no progress line.
        assert!(!text(&o.stderr).contains("layer 1/"), "{}", text(&o.stderr));
    }
    assert_eq!(std::fs::read_to_string(&file).unwrap(), "x");
}

#[test]
fn trailing_commas_and_blank_lines_are_tolerated() {
    let d = scratch("workload", "tolerant");
    let topo = d.join("t.csv");
    // A conv row with and one without the trailing comma, blank lines between.
    std::fs::write(
        &topo,
        format!("{CONV_HEADER}\n\nc1, 6, 5, 3, 2, 2, 3, 1,\n\n  \nc2,9,9,3,3,1,2,3\n\n"),
    )
    .unwrap();
    run_ok(&[
        "workload",
        "run",
        &topo.display().to_string(),
        "--out",
        &p(&d, "o"),
    ]);
    // c1: (6 - 3) + 1 = 4 by (5 - 2) + 1 = 4 -> M 16, N 3, K 3 * 2 * 2 = 12.
    // c2: (9 - 3) / 3 + 1 = 3 by 3 -> M 9, N 2, K 9.
    check_layers(
        &d.join("o"),
        &[("c1", 16, 3, 12), ("c2", 9, 2, 9)],
        4,
        4,
        true,
    );
}

#[test]
fn integer_layers_sampled_in_the_ws_order() {
    let d = scratch("workload", "int");
    let topo = d.join("t.csv");
    std::fs::write(&topo, "Layer, M, N, K\nfc, 12, 8, 40\n").unwrap();
    let out = run_ok(&[
        "workload",
        "run",
        &topo.display().to_string(),
        "--out",
        &p(&d, "o"),
        "--format",
        "s8",
        "--dataflow",
        "ws",
        "--max-check",
        "0",
        "--samples",
        "20",
    ]);
    // 12 * 8 = 96 elements, 20 of them compared.
    assert!(
        out.contains("sampled 20 of 96 against ws_ref(int_ref_dot): 0 mismatches"),
        "{out}"
    );
    let j: Value =
        serde_json::from_str(&std::fs::read_to_string(d.join("o/summary.json")).unwrap()).unwrap();
    assert_eq!(j["layers"][0]["sampled"], true);
    assert_eq!(j["layers"][0]["elements"], 96);
    assert_eq!(j["core"]["format"], "s8");
    assert_eq!(j["core"]["format_b"], "s8");
    assert!(out.starts_with("workload "), "{out}");
    assert!(
        out.lines().next().unwrap().contains(" on s8 x s8, "),
        "{out}"
    );
}

/// `--timing scalesim`: the `cycles` column is SCALE-Sim's compute cycles, written here from
/// its fold rules (`docs/timing.md`): os `ceil(M/R) ceil(N/C)` folds of `K + R + C - 2`, ws
/// `ceil(K/R) ceil(N/C)` folds of `2R + C + M - 2`, less one (the last cycle's index); the
/// model's own cycles stay in `model_cycles`, and D is still checked. A width other than 1
/// and an unknown timing are refused.
#[test]
fn scalesim_timing_reports_scalesims_fold_cycles() {
    let d = scratch("workload", "scalesim");
    let (r, c) = (4u64, 8u64);
    for df in ["os", "ws"] {
        let rows = tiny_cnn_scalesim_4x8(&d, df);
        for (row, &(name, m, n, k)) in rows.iter().zip(&TINY_CNN) {
            let num = |i: usize| row[i].parse::<u64>().expect("number");
            let want = if df == "os" {
                m.div_ceil(r) * n.div_ceil(c) * (k + r + c - 2) - 1
            } else {
                k.div_ceil(r) * n.div_ceil(c) * (2 * r + c + m - 2) - 1
            };
            assert_eq!(num(4), want, "{df} {name}: cycles");
            assert_eq!(num(17), want, "{df} {name}: scalesim_cycles");
            assert_eq!(
                num(16),
                num(11),
                "{df} {name}: model cycles = the model's formulas"
            );
            if df == "os" {
                assert_eq!(num(16), os_cycles(r, c, m, n, k), "{name}: model cycles");
            }
            assert_eq!(num(9), 0, "{df} {name}: mismatches");
        }
    }
    let topo = shipped("tiny_cnn.csv");
    assert_error(
        &tcrtl(&[
            "workload",
            "run",
            &topo,
            "--out",
            &p(&d, "w2"),
            "--timing",
            "scalesim",
            "--width",
            "2",
        ]),
        "one MAC a cycle",
    );
    assert_error(
        &tcrtl(&[
            "workload",
            "run",
            &topo,
            "--out",
            &p(&d, "x"),
            "--timing",
            "fast",
        ]),
        "--timing fast",
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// `--threads 3` runs layers at once and gives the report of `--threads 1`: every field of
/// every layers.csv row but the wall-clock `sim_seconds`, in the topology's order.
#[test]
fn threads_change_nothing_but_the_wall_clock() {
    let d = scratch("workload", "threads");
    let topo = shipped("transformer_block.csv");
    for t in ["1", "3"] {
        let out = p(&d, t);
        run_ok(&[
            "workload",
            "run",
            &topo,
            "--out",
            &out,
            "--threads",
            t,
            "--dataflow",
            "ws",
        ]);
    }
    let (h1, r1) = read_csv(&d.join("1").join("layers.csv"));
    let (h3, r3) = read_csv(&d.join("3").join("layers.csv"));
    assert_eq!(h1, h3);
    let wall = h1
        .iter()
        .position(|c| c == "sim_seconds")
        .expect("sim_seconds");
    let strip = |rows: &[Vec<String>]| -> Vec<Vec<String>> {
        rows.iter()
            .map(|r| {
                let mut r = r.clone();
                r.remove(wall);
                r
            })
            .collect()
    };
    assert_eq!(strip(&r1), strip(&r3));
    assert_eq!(r1.len(), TRANSFORMER.len());
    assert_error(
        &tcrtl(&[
            "workload",
            "run",
            &topo,
            "--out",
            &p(&d, "z"),
            "--threads",
            "0",
        ]),
        "--threads",
    );
    let _ = std::fs::remove_dir_all(&d);
}

/// One SCALE-Sim run: the array `(R, C)`, the dataflow, and per layer (cycles, IFMAP reads,
/// filter reads).
type ScaleSimRun = ((u64, u64), &'static str, [(u64, u64, u64); 4]);

/// What SCALE-Sim 3.0.0 itself reported for `tiny_cnn.csv` (run here on 2026-12-03, and for
/// `is` on 2026-12-08, with `pip install "numpy<2" scalesim`, SCALE-Sim's `google.cfg` with
/// ArrayHeight R, ArrayWidth C and each dataflow): per layer, COMPUTE_REPORT's "Total Cycles" and DETAILED_ACCESS_REPORT's "SRAM
/// IFMAP Reads" and "SRAM Filter Reads" (words of one element).
#[rustfmt::skip]
const SCALESIM_V3: [ScaleSimRun; 9] = [
    ((4, 8), "os", [(1812, 5292, 10584), (2131, 7056, 14976), (1231, 4608, 9216), (531, 512, 2560)]),
    ((4, 8), "ws", [(1469, 5292, 216), (2267, 7056, 1152), (2159, 4608, 2304), (1919, 512, 2560)]),
    ((3, 5), "os", [(4355, 10584, 14256), (5303, 14112, 19584), (3599, 9216, 13824), (523, 512, 2560)]),
    ((3, 5), "ws", [(3689, 10584, 216), (5567, 14112, 1152), (4799, 9216, 2304), (1719, 512, 2560)]),
    ((8, 8), "os", [(1024, 5292, 5400), (1203, 7056, 8064), (631, 4608, 4608), (539, 512, 2560)]),
    ((8, 8), "ws", [(871, 5292, 216), (1277, 7056, 1152), (1367, 4608, 2304), (1471, 512, 2560)]),
    ((4, 8), "is", [(3849, 5292, 5400), (3779, 3528, 8064), (2159, 2304, 4608), (1535, 256, 2560)]),
    ((3, 5), "is", [(6119, 5292, 8640), (5999, 3528, 11520), (4799, 2304, 9216), (1633, 256, 2560)]),
    ((8, 8), "is", [(2999, 5292, 5400), (2393, 3528, 8064), (1367, 2304, 4608), (1023, 256, 2560)]),
];

/// SCALE-Sim 3.0.0's COMPUTE_REPORT "Mapping Efficiency %" for every layer of `tiny_cnn.csv`
/// in the input-stationary dataflow (run here on 2026-12-08 as [`SCALESIM_V3`]).
#[rustfmt::skip]
const SCALESIM_V3_IS_MAPPING: [((u64, u64), [f64; 4]); 3] = [
    ((4, 8), [94.5, 87.5, 100.0, 12.5]),
    ((3, 5), [98.0, 98.0, 80.0, 19.844961240310045]),
    ((8, 8), [82.6875, 87.5, 100.0, 12.5]),
];

/// `--timing scalesim` gives SCALE-Sim 3.0.0's own compute cycles for every layer of
/// `tiny_cnn.csv` on 4 x 8, 3 x 5 and 8 x 8 arrays in all three dataflows, and the
/// operand-store traffic reads the elements SCALE-Sim's SRAM reads count: A its IFMAP reads,
/// B its filter reads (bytes = words x 2 for FP16); for `is`, the layers' mapping efficiency
/// is SCALE-Sim's too.
#[test]
fn scalesim_timing_and_sram_reads_equal_scalesim_v3_on_tiny_cnn() {
    let d = scratch("workload", "scalesim_v3");
    let topo = shipped("tiny_cnn.csv");
    for ((r, c), df, layers) in SCALESIM_V3 {
        let name = format!("{r}x{c}_{df}");
        let (rows, cols) = (r.to_string(), c.to_string());
        run_ok(&[
            "workload",
            "run",
            &topo,
            "--out",
            &p(&d, &name),
            "--timing",
            "scalesim",
            "--dataflow",
            df,
            "--rows",
            &rows,
            "--cols",
            &cols,
        ]);
        let (_, csv) = read_csv(&d.join(&name).join("layers.csv"));
        assert_eq!(csv.len(), layers.len());
        for (row, (cycles, ifmap, filter)) in csv.iter().zip(layers) {
            let num = |i: usize| row[i].parse::<u64>().expect("number");
            assert_eq!(num(4), cycles, "{name} {}: cycles", row[0]);
            assert_eq!(num(17), cycles, "{name} {}: scalesim_cycles", row[0]);
            assert_eq!(num(12), 2 * ifmap, "{name} {}: A bytes", row[0]);
            assert_eq!(num(13), 2 * filter, "{name} {}: B bytes", row[0]);
            assert_eq!(num(9), 0, "{name} {}: mismatches", row[0]);
        }
        if df == "is" {
            let (_, pct) = SCALESIM_V3_IS_MAPPING
                .iter()
                .find(|(a, _)| *a == (r, c))
                .expect("is mapping figures");
            for (row, want) in csv.iter().zip(pct) {
                let got: f64 = row[18].parse().expect("number");
                assert!(
                    close(100.0 * got, *want),
                    "{name} {}: mapping {got}",
                    row[0]
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// SCALE-Sim's example topologies, as vendored in `tests/data/scalesim` (its README says
/// from where).
fn scalesim_example(name: &str) -> String {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("tests/data/scalesim")
        .join(name)
        .display()
        .to_string()
}

/// One layer as SCALE-Sim reports it: COMPUTE_REPORT's "Total Cycles", "Stall Cycles" and
/// "Mapping Efficiency %", DETAILED_ACCESS_REPORT's "SRAM IFMAP Reads" and "SRAM Filter
/// Reads" (words of one element).
type ScaleSimLayer = (u64, u64, f64, u64, u64);

/// One SCALE-Sim run of one of its example topologies: the file, the array `(R, C)`, the
/// dataflow and its layers in order.
type ScaleSimExampleRun = (
    &'static str,
    (u64, u64),
    &'static str,
    &'static [ScaleSimLayer],
);

/// What SCALE-Sim 3.0.0 itself reported for two of its own example topologies,
/// `topologies/conv_nets/test.csv` (GoogLeNet's `Inc5b_3x3`: 25 x 384 x 1728) and
/// `topologies/conv_nets/alexnet.csv` (`Conv1` 3025 x 96 x 363, its 11 x 11 stride-4 windows
/// over 224 rounding up to 55 x 55; then 529 x 256 x 2400 and 121 x {384, 384, 256} x {2304,
/// 3456, 3456}), as vendored in `tests/data/scalesim` (run here on 2026-12-08 with `pip
/// install "numpy<2" scalesim`, SCALE-Sim's `google.cfg` with ArrayHeight R, ArrayWidth C and
/// each dataflow, and an empty layout file), per layer: see [`ScaleSimLayer`]. Seven layers
/// of AlexNet on 32 x 32 stall (`ws` `Conv1`, `Conv2`, `Conv4`; `is` `Conv2` to `Conv5`):
/// SCALE-Sim's memory model (its SRAM buffers filled from DRAM at the config's Bandwidth of
/// 10 words a cycle) adds its "Stall Cycles" to their Total Cycles; every other layer has none.
#[rustfmt::skip]
const SCALESIM_V3_EXAMPLES: [ScaleSimExampleRun; 9] = [
    ("test.csv", (8, 8), "os", &[(334463, 0, 78.125, 2073600, 2654208)]),
    ("test.csv", (8, 8), "ws", &[(487295, 0, 100.0, 2073600, 663552)]),
    ("test.csv", (8, 8), "is", &[(350783, 0, 78.125, 43200, 2654208)]),
    ("test.csv", (32, 32), "os", &[(21479, 0, 78.125, 518400, 663552)]),
    ("test.csv", (32, 32), "ws", &[(77111, 0, 100.0, 518400, 663552)]),
    ("test.csv", (32, 32), "is", &[(25811, 0, 78.125, 43200, 663552)]),
    ("alexnet.csv", (32, 32), "os", &[
        (121124, 0, 99.50657894736842, 3294225, 3310560),
        (334831, 0, 97.24264705882352, 10156800, 10444800),
        (113567, 0, 94.53125, 3345408, 3538944),
        (168863, 0, 94.53125, 5018112, 5308416),
        (112575, 0, 94.53125, 3345408, 3538944),
    ]),
    ("alexnet.csv", (32, 32), "ws", &[
        (149536, 37253, 94.53125, 3294225, 34848),
        (799030, 425231, 100.0, 10156800, 614400),
        (185759, 0, 100.0, 3345408, 884736),
        (313627, 34988, 100.0, 5018112, 1327104),
        (185759, 0, 100.0, 3345408, 884736),
    ]),
    ("alexnet.csv", (32, 32), "is", &[
        (216599, 0, 94.06481291118422, 1098075, 3310560),
        (821849, 375600, 97.24264705882352, 1269600, 10444800),
        (155579, 17916, 94.53125, 278784, 3538944),
        (291512, 85017, 94.53125, 418176, 5308416),
        (160640, 9441, 94.53125, 418176, 3538944),
    ]),
];

/// `--timing scalesim --analytic` gives SCALE-Sim 3.0.0's own figures for every layer of two
/// of the example topologies SCALE-Sim ships ([`SCALESIM_V3_EXAMPLES`]) in all three
/// dataflows: `cycles` and `scalesim_cycles` its compute cycles ("Total Cycles" less "Stall
/// Cycles", the Total Cycles itself wherever it stalls none), `mapping_efficiency` (x 100)
/// its "Mapping Efficiency %", and `a_read_bytes`, `b_read_bytes` its SRAM IFMAP and filter
/// reads (x 2 bytes an FP16 element). One difference is stated rather than hidden: where
/// this model's stationary core streams more than 1,024 rows (its accumulator block's depth),
/// it re-reads the held operand once a chunk of 1,024 (`ws`: B once per 1,024 rows of A;
/// `is`: A once per 1,024 columns of B) where SCALE-Sim reads it once; AlexNet's `Conv1` in
/// `ws` (M = 3025, three chunks) reads B three times SCALE-Sim's filter reads.
#[test]
fn scalesim_timing_and_sram_reads_equal_scalesim_v3_on_its_own_topologies() {
    let d = scratch("workload", "scalesim_examples");
    for (file, (r, c), df, layers) in SCALESIM_V3_EXAMPLES {
        let name = format!("{}_{r}x{c}_{df}", file.trim_end_matches(".csv"));
        let (rows, cols) = (r.to_string(), c.to_string());
        run_ok(&[
            "workload",
            "run",
            &scalesim_example(file),
            "--out",
            &p(&d, &name),
            "--analytic",
            "--timing",
            "scalesim",
            "--dataflow",
            df,
            "--rows",
            &rows,
            "--cols",
            &cols,
        ]);
        let (header, csv) = read_csv(&d.join(&name).join("layers.csv"));
        let col = |key: &str| header.iter().position(|h| h == key).expect(key);
        assert_eq!(csv.len(), layers.len(), "{name}: layers");
        for (row, &(total, stall, mapping, ifmap, filter)) in csv.iter().zip(layers) {
            let what = format!("{name} {}", row[0]);
            let num = |key: &str| row[col(key)].parse::<u64>().expect(key);
            assert_eq!(num("cycles"), total - stall, "{what}: cycles");
            assert_eq!(
                num("scalesim_cycles"),
                total - stall,
                "{what}: scalesim_cycles"
            );
            // The held operand's re-reads per 1,024-row chunk of the streamed one (above).
            let (a_chunks, b_chunks) = match df {
                "ws" => (1, num("m").div_ceil(1024)),
                "is" => (num("n").div_ceil(1024), 1),
                _ => (1, 1),
            };
            assert_eq!(num("a_read_bytes"), 2 * ifmap * a_chunks, "{what}: A bytes");
            assert_eq!(
                num("b_read_bytes"),
                2 * filter * b_chunks,
                "{what}: B bytes"
            );
            let got: f64 = row[col("mapping_efficiency")].parse().expect("number");
            assert!(close(100.0 * got, mapping), "{what}: mapping {got}");
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// Runs `tiny_cnn.csv` with `--timing scalesim` on a 4 x 8 array in dataflow `df` into
/// `d/df` and returns the rows of its layers.csv.
fn tiny_cnn_scalesim_4x8(d: &Path, df: &str) -> Vec<Vec<String>> {
    let (out, topo) = (p(d, df), shipped("tiny_cnn.csv"));
    run_ok(&[
        "workload",
        "run",
        &topo,
        "--out",
        &out,
        "--timing",
        "scalesim",
        "--dataflow",
        df,
        "--rows",
        "4",
        "--cols",
        "8",
    ]);
    read_csv(&d.join(df).join("layers.csv")).1
}

/// GEMMs of awkward shapes (a dimension of 1, primes, more and less than an array's side).
const ODD_SHAPES: [(&str, u64, u64, u64); 9] = [
    ("G1", 5, 6, 7),
    ("G2", 9, 4, 12),
    ("G3", 1, 10, 256),
    ("G4", 17, 3, 9),
    ("G5", 16, 96, 32),
    ("G6", 1, 1, 1),
    ("G7", 33, 65, 3),
    ("G8", 100, 7, 1),
    ("G9", 7, 100, 70),
];

/// A GEMM topology of `shapes`, written into `d`.
fn gemm_topology(d: &Path, shapes: &[(&str, u64, u64, u64)]) -> String {
    let mut body = String::from("Layer, M, N, K,\n");
    for (name, m, n, k) in shapes {
        body += &format!("{name}, {m}, {n}, {k},\n");
    }
    let t = p(d, "odd.csv");
    std::fs::write(&t, body).unwrap();
    t
}

/// `mapping_efficiency` (each layer object, the layers.csv column, the total) is SCALE-Sim's,
/// stated fold by fold here ([`scalesim_folds`]), for shapes of every kind on square,
/// non-square and one-row arrays, in every dataflow; the total is the mean over every fold of
/// the network. Worked by hand: 5 x 6 x 7 on 4 x 4 is os 2 x 2 folds of the 5 x 6 output,
/// `(16 + 8 + 4 + 2) / 64 = 0.46875`, ws 2 x 2 folds of the 7 x 6 filters,
/// `(16 + 8 + 12 + 6) / 64 = 0.65625`, and is 2 x 2 folds of the 7 x 5 input windows,
/// `(16 + 4 + 12 + 3) / 64 = 0.546875`.
#[test]
fn mapping_efficiency_is_scalesims_fold_mean_for_any_shape_and_array() {
    let d = scratch("workload", "mapping");
    let topo = gemm_topology(&d, &ODD_SHAPES);
    assert_eq!(scalesim_mapping_efficiency("os", 4, 4, 5, 6, 7), 0.46875);
    assert_eq!(scalesim_mapping_efficiency("ws", 4, 4, 5, 6, 7), 0.65625);
    assert_eq!(scalesim_mapping_efficiency("is", 4, 4, 5, 6, 7), 0.546875);
    for (r, c) in [(4u64, 4u64), (3, 5), (8, 8), (1, 7), (16, 2)] {
        for df in ["os", "ws", "is"] {
            let name = format!("{r}x{c}_{df}");
            let (rows, cols) = (r.to_string(), c.to_string());
            let out = run_ok(&[
                "workload",
                "run",
                &topo,
                "--out",
                &p(&d, &name),
                "--analytic",
                "--rows",
                &rows,
                "--cols",
                &cols,
                "--dataflow",
                df,
                "--json",
            ]);
            let j: Value = serde_json::from_str(&out).expect("json");
            let (header, csv) = read_csv(&d.join(&name).join("layers.csv"));
            let col = header
                .iter()
                .position(|h| h == "mapping_efficiency")
                .expect("mapping_efficiency column");
            let (mut sum, mut folds) = (0.0, 0);
            for (i, &(layer, m, n, k)) in ODD_SHAPES.iter().enumerate() {
                let want = scalesim_mapping_efficiency(df, r, c, m, n, k);
                let got = j["layers"][i]["mapping_efficiency"].as_f64().unwrap();
                assert!(close(got, want), "{name} {layer}: {got}, not {want}");
                assert!((0.0..=1.0).contains(&got) && got > 0.0, "{name} {layer}");
                let cell: f64 = csv[i][col].parse().expect("number");
                assert_eq!(cell, got, "{name} {layer}: the column is the JSON's value");
                let (s, f) = scalesim_folds(df, r, c, m, n, k);
                sum += s;
                folds += f;
            }
            let total = j["totals"]["mapping_efficiency"].as_f64().unwrap();
            assert!(
                close(total, sum / folds as f64),
                "{name}: total {total}, not {}",
                sum / folds as f64
            );
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// An array, a dataflow, and SCALE-Sim's percentages for `tiny_cnn.csv` and the GEMMs.
type MappingFigures = ((u64, u64), &'static str, [f64; 4], [f64; 5]);

/// SCALE-Sim 3.0.0's own COMPUTE_REPORT.csv "Mapping Efficiency %" (percent) for every layer
/// of `tiny_cnn.csv` and of [`ODD_SHAPES`]' first five GEMMs, on 4 x 4 and 8 x 8 arrays, in
/// both dataflows (its `scalesim.scale` run with the configuration of
/// scripts/workload_speed.sh, `-i conv` and `-i gemm`).
const SCALESIM_V3_MAPPING: [MappingFigures; 4] = [
    (
        (4, 4),
        "os",
        [100.0, 94.23076923076923, 100.0, 20.833333333333336],
        [46.875, 75.0, 20.833333333333336, 63.74999999999999, 100.0],
    ),
    (
        (4, 4),
        "ws",
        [96.42857142857143, 100.0, 100.0, 83.33333333333334],
        [65.625, 100.0, 83.33333333333334, 56.25, 100.0],
    ),
    (
        (8, 8),
        "os",
        [98.0, 87.5, 100.0, 7.8125],
        [46.875, 28.125, 7.8125, 26.5625, 100.0],
    ),
    (
        (8, 8),
        "ws",
        [84.375, 100.0, 100.0, 62.5],
        [65.625, 37.5, 62.5, 21.09375, 100.0],
    ),
];

/// `mapping_efficiency` equals SCALE-Sim 3.0.0's own figures ([`SCALESIM_V3_MAPPING`]; a
/// fraction here, a percentage there).
#[test]
fn mapping_efficiency_equals_scalesim_v3() {
    let d = scratch("workload", "mapping_v3");
    let gemms = gemm_topology(&d, &ODD_SHAPES[..5]);
    let cnn = shipped("tiny_cnn.csv");
    for ((r, c), df, cnn_want, gemm_want) in SCALESIM_V3_MAPPING {
        let (rows, cols) = (r.to_string(), c.to_string());
        for (topo, want) in [(&cnn, &cnn_want[..]), (&gemms, &gemm_want[..])] {
            let out = run_ok(&[
                "workload",
                "run",
                topo,
                "--out",
                &p(&d, "o"),
                "--analytic",
                "--rows",
                &rows,
                "--cols",
                &cols,
                "--dataflow",
                df,
                "--json",
            ]);
            let j: Value = serde_json::from_str(&out).expect("json");
            let layers = j["layers"].as_array().unwrap();
            assert_eq!(layers.len(), want.len());
            for (l, &percent) in layers.iter().zip(want) {
                let got = l["mapping_efficiency"].as_f64().unwrap();
                assert!(
                    (100.0 * got - percent).abs() < 1e-9,
                    "{r}x{c} {df} {}: {got}, SCALE-Sim {percent}%",
                    l["layer"]
                );
            }
        }
    }
    let _ = std::fs::remove_dir_all(&d);
}

/// `simulated_seconds` is each layer's cycles at `--clock-ghz` (default 1 GHz; without
/// `--energy` too), in every layer object, the layers.csv column and the totals; the clock
/// is part of the run's identity (a resume at another clock is refused); a clock that is not
/// a positive number is one line, exit 2, nothing written.
#[test]
fn simulated_seconds_are_the_cycles_at_the_clock() {
    let d = scratch("workload", "clock");
    let topo = shipped("transformer_block.csv");
    let out = p(&d, "o");
    let j: Value = serde_json::from_str(&run_ok(&[
        "workload",
        "run",
        &topo,
        "--out",
        &out,
        "--clock-ghz",
        "1.5",
        "--json",
    ]))
    .expect("json");
    assert_eq!(j["clock_ghz"], 1.5);
    assert!(j.get("energy").is_none(), "no --energy");
    let (header, csv) = read_csv(&d.join("o/layers.csv"));
    let col = header
        .iter()
        .position(|h| h == "simulated_seconds")
        .expect("simulated_seconds column");
    assert_eq!(col, header.len() - 1, "appended at the end");
    let mut cycles = 0;
    for (i, l) in j["layers"].as_array().unwrap().iter().enumerate() {
        let want = dim(l, "cycles") as f64 / 1.5e9;
        let got = l["simulated_seconds"].as_f64().unwrap();
        assert!(close(got, want), "{l}");
        assert_eq!(csv[i][col].parse::<f64>().unwrap(), got);
        cycles += dim(l, "cycles");
    }
    assert_eq!(j["totals"]["cycles"], cycles);
    let total = j["totals"]["simulated_seconds"].as_f64().unwrap();
    assert!(close(total, cycles as f64 / 1.5e9), "{total}");
    // With --energy the power's clock is the same one.
    let e: Value = serde_json::from_str(&run_ok(&[
        "workload",
        "run",
        &topo,
        "--out",
        &p(&d, "e"),
        "--energy",
        "--clock-ghz",
        "2",
        "--json",
    ]))
    .expect("json");
    assert_eq!(e["clock_ghz"], 2.0);
    assert_eq!(e["energy"]["clock_ghz"], 2.0);
    let l = &e["layers"][0];
    assert!(close(
        l["simulated_seconds"].as_f64().unwrap(),
        dim(l, "cycles") as f64 / 2e9
    ));
    // Another clock is another run: --resume of the report at 1.5 GHz refuses it.
    assert_error(
        &tcrtl(&[
            "workload",
            "run",
            &topo,
            "--out",
            &out,
            "--clock-ghz",
            "3",
            "--resume",
        ]),
        "its clock_ghz is 1.5, this run's is 3.0",
    );
    for bad in ["0", "-2", "inf", "NaN"] {
        let none = d.join(format!("none_{bad}"));
        assert_error(
            &tcrtl(&[
                "workload",
                "run",
                &topo,
                "--out",
                &none.display().to_string(),
                "--clock-ghz",
                bad,
            ]),
            "--clock-ghz must be a positive number of GHz",
        );
        assert!(!none.exists(), "--clock-ghz {bad}: nothing written");
    }
    let _ = std::fs::remove_dir_all(&d);
}
