//! `tcrtl gemm` through the built binary: random and .npy inputs, JSON, output file, and
//! one-line errors (non-zero exit, no panic) for bad shapes, dtypes, files and paths.

use crate::common::cli::{assert_error, listing, p, scratch, tcrtl, text};
use std::path::{Path, PathBuf};
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};

fn tmp(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcrtl-gemm-{}-{name}", std::process::id()));
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

fn s(p: &Path) -> &str {
    p.to_str().expect("utf-8 path")
}

#[test]
fn random_json_checks_against_the_reference() {
    for args in [
        vec!["--format", "fp16"],
        vec!["--format", "bf16", "--acc", "fused", "--width", "4"],
        vec![
            "--format",
            "e4m3",
            "--format-b",
            "e5m2",
            "--acc",
            "nvidia",
            "--preset",
            "hopper",
        ],
        vec![
            "--format",
            "e5m2",
            "--acc",
            "nvidia",
            "--preset",
            "blackwell",
        ],
    ] {
        let mut all = vec![
            "gemm", "--m", "5", "--n", "7", "--k", "9", "--seed", "3", "--json",
        ];
        all.extend(args.iter());
        let out = tcrtl(&all);
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{args:?}: {text} {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let v: serde_json::Value = serde_json::from_str(text.trim()).expect("one JSON object");
        for key in [
            "m",
            "n",
            "k",
            "format",
            "format_b",
            "acc",
            "preset",
            "width",
            "cycles",
            "macs",
            "utilization",
            "sim_seconds",
            "cycles_per_second",
            "check",
        ] {
            assert!(v.get(key).is_some(), "{key} missing in {v}");
        }
        assert_eq!(v["macs"], 5 * 7 * 9);
        assert_eq!(v["check"]["mismatches"], 0, "{v}");
        assert!(v["check"]["reference"]
            .as_str()
            .is_some_and(|r| r.ends_with("_dot")));
    }
}

#[test]
fn npy_in_npy_out_matches_values() {
    let d = tmp("io");
    let (a, b, c, out) = (
        d.join("a.npy"),
        d.join("b.npy"),
        d.join("c.npy"),
        d.join("d.npy"),
    );
    // A = [[1, 2], [3, 4]] (float64 values), B = identity as FP16 bits, C = 0.5 (float32).
    let a_vals: Vec<u64> = [1.0f64, 2.0, 3.0, 4.0]
        .iter()
        .map(|v| v.to_bits())
        .collect();
    write_npy(&a, &[2, 2], Dtype::F64, &a_vals).expect("write");
    write_npy(&b, &[2, 2], Dtype::U16, &[0x3C00, 0, 0, 0x3C00]).expect("write");
    let half = 0.5f32.to_bits() as u64;
    write_npy(&c, &[2, 2], Dtype::F32, &[half; 4]).expect("write");
    let out_run = tcrtl(&[
        "gemm",
        "--a",
        s(&a),
        "--b",
        s(&b),
        "--c",
        s(&c),
        "--format",
        "fp16",
        "--out",
        s(&out),
        "--check",
    ]);
    assert!(
        out_run.status.success(),
        "{}",
        String::from_utf8_lossy(&out_run.stderr)
    );
    let text = String::from_utf8_lossy(&out_run.stdout);
    assert!(text.contains("0 mismatches"), "{text}");
    let dm = read_npy(&out).expect("D");
    assert_eq!(dm.shape, vec![2, 2]);
    assert_eq!(dm.dtype, Dtype::F32);
    let vals: Vec<f32> = dm
        .words()
        .iter()
        .map(|&w| f32::from_bits(w as u32))
        .collect();
    assert_eq!(vals, vec![1.5, 2.5, 3.5, 4.5]);
    assert!(!d.join("d.npy.partial").exists());
    // FP8 bit patterns as uint8, no C.
    write_npy(&a, &[1, 2], Dtype::U8, &[0x38, 0x40]).expect("write"); // 1, 2 in E4M3
    write_npy(&b, &[2, 1], Dtype::U8, &[0x38, 0x38]).expect("write");
    let r = tcrtl(&[
        "gemm",
        "--a",
        s(&a),
        "--b",
        s(&b),
        "--format",
        "e4m3",
        "--out",
        s(&out),
    ]);
    assert!(r.status.success(), "{}", String::from_utf8_lossy(&r.stderr));
    let dm = read_npy(&out).expect("D");
    assert_eq!(f32::from_bits(dm.word(0) as u32), 3.0);
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn bad_inputs_give_one_line_errors() {
    let d = tmp("bad");
    let (a, b, c) = (d.join("a.npy"), d.join("b.npy"), d.join("c.npy"));
    let ones16 = |n: usize| vec![0x3C00u64; n];
    write_npy(&a, &[2, 3], Dtype::U16, &ones16(6)).expect("write");
    write_npy(&b, &[4, 2], Dtype::U16, &ones16(8)).expect("write");
    let base = |extra: &[&str]| {
        let mut v = vec!["gemm", "--a", s(&a), "--b", s(&b)];
        v.extend_from_slice(extra);
        if !extra.contains(&"--format") {
            v.extend(["--format", "fp16"]);
        }
        tcrtl(&v)
    };
    // Mismatched inner dimensions.
    assert_error(
        &base(&[]),
        "inner dimensions differ: A is 2 x 3 but B is 4 x 2",
    );
    // Wrong C shape.
    write_npy(&b, &[3, 2], Dtype::U16, &ones16(6)).expect("write");
    write_npy(&c, &[3, 3], Dtype::F32, &[0; 9]).expect("write");
    assert_error(&base(&["--c", s(&c)]), "C is 3 x 3 but A x B is 2 x 2");
    // Bad C dtype.
    write_npy(&c, &[2, 2], Dtype::F64, &[0; 4]).expect("write");
    assert_error(&base(&["--c", s(&c)]), "expected float32 or uint32");
    // Not a matrix.
    write_npy(&a, &[6], Dtype::U16, &ones16(6)).expect("write");
    assert_error(&base(&[]), "must be a 2-D matrix");
    // uint8 bit patterns for FP16.
    write_npy(&a, &[2, 3], Dtype::U8, &[0; 6]).expect("write");
    assert_error(&base(&[]), "uint8 bit patterns but fp16 needs uint16");
    // uint32 for an operand.
    write_npy(&a, &[2, 3], Dtype::U32, &[0; 6]).expect("write");
    assert_error(&base(&[]), "dtype uint32");
    // A value that is not representable: names the element and its value.
    let vals: Vec<u64> = [1.0f32, 0.1, 2.0, 3.0, 4.0, 5.0]
        .iter()
        .map(|v| v.to_bits() as u64)
        .collect();
    write_npy(&a, &[2, 3], Dtype::F32, &vals).expect("write");
    assert_error(
        &base(&[]),
        "A[0][1] = 1.0000000149011612e-1 is not exactly representable in fp16",
    );
    // Unreadable / missing file and a non-npy file.
    assert_error(
        &tcrtl(&["gemm", "--a", "/nonexistent/a.npy", "--b", s(&b)]),
        "/nonexistent/a.npy",
    );
    std::fs::write(&a, b"not an npy file").expect("write");
    assert_error(&base(&[]), "not a valid .npy file");
    // Unwritable output path (before any work is done).
    write_npy(&a, &[2, 3], Dtype::U16, &ones16(6)).expect("write");
    assert_error(
        &base(&["--out", "/nonexistent/dir/d.npy"]),
        "does not exist",
    );
    assert_error(&base(&["--out", s(&d)]), "is a directory");
    // Options.
    assert_error(
        &base(&["--acc", "nvidia"]),
        "the nvidia mode needs a preset, or a GPU",
    );
    assert_error(
        &base(&["--acc", "nvidia", "--preset", "volta", "--format", "bf16"]),
        "volta",
    );
    assert_error(&base(&["--width", "3"]), "width 3");
    assert_error(&base(&["--format", "fp32"]), "unknown input format");
    assert_error(
        &base(&["--vcd", "x.vcd", "--trace-window", "5:2"]),
        "FROM < TO",
    );
    let r = tcrtl(&["gemm", "--m", "0", "--n", "1", "--k", "1"]);
    assert_error(&r, "dimension m must be at least 1");
    // Usage errors from clap: non-zero exit, no panic.
    let r = tcrtl(&["gemm", "--m", "2"]);
    assert_eq!(r.status.code(), Some(2));
    let r = tcrtl(&["gemm"]);
    assert_eq!(r.status.code(), Some(2));
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn tb_cli_lists_and_runs() {
    let out = tcrtl(&["tb", "list"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success());
    assert!(
        text.contains("nvidia_probes") && text.contains("specials"),
        "{text}"
    );
    let d = tmp("tb");
    let out = tcrtl(&["tb", "run", "pe_fp16_mac", "--waves", s(&d)]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert!(text.starts_with("PASS pe_fp16_mac"), "{text}");
    assert_error(
        &tcrtl(&["tb", "run", "nope"]),
        "no testbench named \"nope\"",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn oversized_dimensions_are_an_error_not_an_allocation_failure() {
    for sparse in [false, true] {
        let mut args = vec!["gemm", "--m", "1000000", "--n", "1000000", "--k", "100"];
        if sparse {
            args.push("--sparse");
        }
        let o = std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
            .args(&args)
            .output()
            .expect("run tcrtl");
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {err}");
        assert!(
            err.starts_with("error: C would be 1000000 x 1000000: more than"),
            "{err}"
        );
    }
}

#[test]
fn memh_images_hold_the_operands_and_the_result() {
    let dir = std::env::temp_dir().join(format!("tcrtl-memh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let out = dir.join("d.npy");
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args([
            "gemm", "--m", "3", "--n", "5", "--k", "7", "--format", "fp16",
        ])
        .arg("--out")
        .arg(&out)
        .arg("--memh")
        .arg(&dir)
        .output()
        .expect("run tcrtl");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let text = |name: &str| std::fs::read_to_string(dir.join(name)).expect("hex file");
    // Every image opens with a two-line `//` header naming the problem, then one word a line.
    let read = |name: &str| -> Vec<u64> {
        let t = text(name);
        let lines: Vec<&str> = t.lines().collect();
        assert!(
            lines[0].starts_with("// tcrtl golden image"),
            "{name}: {}",
            lines[0]
        );
        assert_eq!(
            lines[1],
            "// shape M N K = 3 5 7; formats fp16 x fp16; mode ieee; preset none; width 1; accumulator fp32; seed 1"
        );
        lines[2..]
            .iter()
            .map(|l| u64::from_str_radix(l, 16).expect("hex word"))
            .collect()
    };
    let (a, b, c, d) = (read("a.hex"), read("b.hex"), read("c.hex"), read("d.hex"));
    assert_eq!((a.len(), b.len(), c.len(), d.len()), (21, 35, 15, 15));
    assert!(a.iter().chain(&b).all(|&w| w <= 0xFFFF));
    // The same seed gives the same problem: A, B and C are the seeded random operands.
    let cfg = tensorcore_rtl::gemm::CoreConfig::new(
        tensorcore_rtl::numerics::FP16,
        tensorcore_rtl::numerics::FP16,
        tensorcore_rtl::numerics::dot::AccMode::Ieee,
        1,
    );
    let g = tensorcore_rtl::gemm::Gemm::random(3, 5, 7, cfg, 1).expect("problem");
    assert_eq!(a, g.a);
    assert_eq!(b, g.b);
    assert_eq!(c, g.c.iter().map(|&w| w as u64).collect::<Vec<_>>());
    // D in the hex image is D in the .npy file.
    let npy = tensorcore_rtl::io::npy::read_npy(&out).expect("d.npy");
    assert_eq!(d, npy.words());
    // The manifest lists the four images with their shapes and word widths.
    let manifest: serde_json::Value =
        serde_json::from_str(&text("manifest.json")).expect("manifest JSON");
    assert_eq!(
        (manifest["m"].as_u64(), manifest["seed"].as_u64()),
        (Some(3), Some(1))
    );
    let files: Vec<(String, u64, u64, u64)> = manifest["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| {
            (
                f["file"].as_str().unwrap_or("").to_string(),
                f["rows"].as_u64().unwrap_or(0),
                f["cols"].as_u64().unwrap_or(0),
                f["bits"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    // steps.hex: 3 x 5 elements x 7 steps, records of 16 + 16 + 32 + 32 bits (no rows/cols).
    let want = [
        ("a.hex", 3, 7, 16),
        ("b.hex", 7, 5, 16),
        ("c.hex", 3, 5, 32),
        ("d.hex", 3, 5, 32),
        ("steps.hex", 0, 0, 96),
    ];
    assert_eq!(
        files,
        want.map(|(f, r, c, b)| (f.to_string(), r, c, b)).to_vec()
    );
    let steps = &manifest["files"][4];
    assert_eq!(
        (
            steps["records"].as_u64(),
            steps["steps_per_element"].as_u64()
        ),
        (Some(105), Some(7))
    );
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn teaching_patterns_give_the_integers_worked_out_by_hand() {
    let dir = std::env::temp_dir().join(format!("tcrtl-pattern-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (m, n, k) = (5usize, 6usize, 7usize);
    for fmt in ["fp16", "bf16", "e4m3", "e5m2"] {
        for pattern in ["ones", "iota", "identity"] {
            let out = dir.join(format!("{pattern}-{fmt}.npy"));
            let o = std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
                .args(["gemm", "--m", "5", "--n", "6", "--k", "7", "--format", fmt])
                .args(["--pattern", pattern, "--out"])
                .arg(&out)
                .output()
                .expect("run tcrtl");
            assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
            let d = tensorcore_rtl::io::npy::read_npy(&out)
                .expect("d.npy")
                .words();
            // Integer arithmetic: every sum here is an integer below 2^24, exact in FP32.
            let a = |i: usize, p: usize| -> u64 {
                match pattern {
                    "ones" => 1,
                    "iota" => ((i * k + p) % 8 + 1) as u64,
                    _ => u64::from(i == p),
                }
            };
            let b = |p: usize, j: usize| -> u64 {
                match pattern {
                    "ones" => 1,
                    _ => ((p * n + j) % 8 + 1) as u64,
                }
            };
            for i in 0..m {
                for j in 0..n {
                    let want: u64 = (0..k).map(|p| a(i, p) * b(p, j)).sum();
                    let got = f32::from_bits(d[i * n + j] as u32);
                    assert_eq!(got, want as f32, "{pattern} {fmt} d[{i}][{j}]");
                }
            }
        }
    }
    // In FP16 the waves read 1, 2, 3: the first words of iota's A are 0x3c00, 0x4000, 0x4200.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args([
            "gemm",
            "--m",
            "2",
            "--n",
            "2",
            "--k",
            "3",
            "--pattern",
            "iota",
            "--memh",
        ])
        .arg(&dir)
        .output()
        .expect("run tcrtl");
    assert!(o.status.success());
    let a_hex = std::fs::read_to_string(dir.join("a.hex")).expect("a.hex");
    let words: Vec<&str> = a_hex.lines().filter(|l| !l.starts_with("//")).collect();
    assert_eq!(words[..3], ["3c00", "4000", "4200"]);
    assert!(a_hex.contains("seed none (pattern iota)"));
    // A pattern with .npy operands or a sparse problem is refused (exit 2).
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args([
            "gemm",
            "--m",
            "4",
            "--n",
            "4",
            "--k",
            "8",
            "--pattern",
            "ones",
            "--sparse",
        ])
        .output()
        .expect("run tcrtl");
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn sparse_memh_exports_the_kept_values_and_the_metadata() {
    let dir = std::env::temp_dir().join(format!("tcrtl-sparse-memh-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let (m, k) = (3usize, 16usize);
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args([
            "gemm", "--sparse", "--m", "3", "--n", "5", "--k", "16", "--memh",
        ])
        .arg(&dir)
        .output()
        .expect("run tcrtl");
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let read = |name: &str| -> Vec<u64> {
        std::fs::read_to_string(dir.join(name))
            .expect("hex file")
            .lines()
            .filter(|l| !l.starts_with("//"))
            .map(|l| u64::from_str_radix(l, 16).expect("hex word"))
            .collect()
    };
    let (a, values, meta) = (read("a.hex"), read("a_values.hex"), read("a_meta.hex"));
    assert_eq!(
        (a.len(), values.len(), meta.len()),
        (m * k, m * k / 2, m * k / 4)
    );
    // Decompress by the PTX rule: nibble bits 1..0 index the first kept value of the group,
    // bits 3..2 the second (strictly greater); the other two positions are zero.
    for r in 0..m {
        for g in 0..k / 4 {
            let nib = meta[r * k / 4 + g];
            let (i0, i1) = ((nib & 3) as usize, (nib >> 2) as usize);
            assert!(i0 < i1, "row {r} group {g}: nibble {nib:x}");
            for p in 0..4 {
                let want = match p {
                    _ if p == i0 => values[r * k / 2 + 2 * g],
                    _ if p == i1 => values[r * k / 2 + 2 * g + 1],
                    _ => 0,
                };
                assert_eq!(a[r * k + 4 * g + p], want, "A[{r}][{}]", 4 * g + p);
            }
        }
    }
    // The step vectors run over the kept values: record (r, c, s) carries kept value s of row
    // r, the B value its index selects (decoded here from the nibble bits), and the accumulator
    // after the step; the last one of each element is D.
    let (n, half) = (5usize, k / 2);
    let (b, d) = (read("b.hex"), read("d.hex"));
    // 96-bit records: A | B | acc before | acc after.
    let steps: Vec<u128> = std::fs::read_to_string(dir.join("steps.hex"))
        .expect("steps.hex")
        .lines()
        .filter(|l| !l.starts_with("//"))
        .map(|l| u128::from_str_radix(l, 16).expect("hex record"))
        .collect();
    assert_eq!(steps.len(), m * n * half);
    for r in 0..m {
        for c in 0..n {
            for s in 0..half {
                let rec = steps[(r * n + c) * half + s];
                let nib = meta[r * k / 4 + s / 2];
                let idx = ((nib >> (2 * (s % 2))) & 3) as usize;
                let b_sel = b[(4 * (s / 2) + idx) * n + c];
                assert_eq!(
                    rec >> 80,
                    u128::from(values[r * half + s]),
                    "A of ({r}, {c}) step {s}"
                );
                assert_eq!(
                    (rec >> 64) & 0xffff,
                    u128::from(b_sel),
                    "B of ({r}, {c}) step {s}"
                );
            }
            let last = steps[(r * n + c) * half + half - 1] & 0xffff_ffff;
            assert_eq!(last, u128::from(d[r * n + c]), "d[{r}][{c}]");
        }
    }
    // A dense run afterwards removes the sparse files.
    let o = std::process::Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(["gemm", "--m", "3", "--n", "5", "--k", "16", "--memh"])
        .arg(&dir)
        .output()
        .expect("run tcrtl");
    assert!(o.status.success());
    assert!(!dir.join("a_values.hex").exists() && !dir.join("a_meta.hex").exists());
    assert!(dir.join("steps.hex").exists());
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// `--dataflow ws` runs the weight-stationary core: the text line and the JSON say so, the
/// check compares with the ws reference and finds D right; bad input and the combinations
/// `ws` does not build (the TMA path, sparse or dense, with or without energy) are one line
/// and exit 2, with nothing written.
#[test]
fn dataflow_ws_runs_checks_and_refuses_what_it_does_not_build() {
    let d = scratch("gemm", "dataflow");
    let o = tcrtl(&[
        "gemm",
        "--m",
        "9",
        "--n",
        "6",
        "--k",
        "23",
        "--rows",
        "3",
        "--cols",
        "5",
        "--dataflow",
        "ws",
        "--check",
    ]);
    let out = text(&o.stdout);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert!(out.contains(", 3 x 5 array, ws):"), "{out}");
    assert!(
        out.contains("check against ws_ref(ieee_dot): 0 mismatches"),
        "{out}"
    );
    let j = tcrtl(&[
        "gemm",
        "--m",
        "9",
        "--n",
        "6",
        "--k",
        "23",
        "--dataflow",
        "ws",
        "--json",
    ]);
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).expect("json");
    assert_eq!(v["dataflow"], "ws");
    // docs/timing.md: one row chunk of S = 9 rows (>= 2R - 1 = 7), 6 folds x 2 column
    // tiles = 12 passes back to back: 2R + passes * S + L + C = 8 + 108 + 1 + 4.
    assert_eq!(v["cycles"], 121);
    let os = tcrtl(&["gemm", "--m", "9", "--n", "6", "--k", "23", "--json"]);
    let v: serde_json::Value = serde_json::from_slice(&os.stdout).expect("json");
    assert_eq!(v["dataflow"], "os");

    assert_error(
        &tcrtl(&[
            "gemm",
            "--m",
            "4",
            "--n",
            "4",
            "--k",
            "4",
            "--dataflow",
            "xs",
        ]),
        "unknown dataflow",
    );
    // 2:4 sparse in ws runs through the memory path too (E beside A in its stages), with
    // its waveform (in a directory of its own: `d` holds only what refusals left, nothing).
    let dv = scratch("gemm", "sparse-ws-vcd");
    let wv = p(&dv, "ws.vcd");
    let o = tcrtl(&[
        "gemm",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "32",
        "--width",
        "2",
        "--dataflow",
        "ws",
        "--vcd",
        &wv,
        "--sparse",
        "--memory",
        "tma",
        "--check",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let out = text(&o.stdout);
    assert!(
        out.contains("over the kept products: 0 mismatches"),
        "{out}"
    );
    assert!(out.contains("memory (tma"), "{out}");
    assert!(
        std::path::Path::new(&wv).exists(),
        "sparse ws --memory tma left no waveform"
    );
    let _ = std::fs::remove_dir_all(&dv);
    assert_error(
        &tcrtl(&[
            "gemm",
            "--m",
            "4",
            "--n",
            "4",
            "--k",
            "32",
            "--dataflow",
            "ws",
            "--acc",
            "nvidia",
            "--preset",
            "hopper",
        ]),
        "use a width of at least",
    );
    assert_error(
        &tcrtl(&["energy", "--dataflow", "ws", "--out", &p(&d, "e")]),
        "--dataflow ws",
    );
    assert!(listing(&d).is_empty(), "{:?}", listing(&d));
    let _ = std::fs::remove_dir_all(&d);
}

/// `ws` through the memory path: checked against the `ws` reference, with energy, and the
/// shared-memory reads the dataflow must make: each pass's weight tile once (16 passes of
/// 4 x 4 FP16 weights), each row of A once a pass (8 rows of 4 FP16), each row of C once an
/// output block (8 rows of 4 FP32 words, 2 column tiles).
#[test]
fn dataflow_ws_runs_through_the_memory_path() {
    let o = tcrtl(&[
        "gemm",
        "--m",
        "8",
        "--n",
        "8",
        "--k",
        "32",
        "--dataflow",
        "ws",
        "--memory",
        "tma",
        "--check",
        "--energy",
        "--json",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(&text(&o.stdout)).unwrap();
    assert_eq!(j["dataflow"], "ws");
    assert_eq!(j["memory"]["path"], "tma");
    assert_eq!(j["check"]["mismatches"], 0);
    let (passes, fold) = (2 * 8, 4u64);
    let want = passes * fold * 4 * 2 + passes * 8 * fold * 2 + 8 * 2 * 4 * 4;
    assert_eq!(j["memory"]["smem_read_bytes"], want);
    assert_eq!(j["memory"]["smem_write_bytes"], j["memory"]["tx_bytes"]);
    assert!(
        j["energy"]["by_block"]["global_memory"]["pj"]
            .as_f64()
            .unwrap()
            > 0.0
    );
}

/// `gemm --dataflow ws --memory tma --sparse`: the compressed A and its metadata through TMA
/// beside each other, 0 mismatches against the kept-products reference, the same D and flags
/// as the ideal port, and the shared-memory reads of the closed form: each pass (2 column
/// tiles x 2 folds of R w = 8 kept values) reads 4 weight rows of 2w = 4 dense K positions
/// by 4 FP16 columns; each of the 8 rows of A once a pass, 8 FP16 kept values and their 2
/// bytes of metadata; each row of C once a column tile.
#[test]
fn sparse_ws_runs_through_the_memory_path() {
    let d = scratch("gemm", "sparse-ws-tma");
    let run = |memory: &str| {
        let out = p(&d, &format!("{memory}.npy"));
        let o = tcrtl(&[
            "gemm",
            "--m",
            "8",
            "--n",
            "8",
            "--k",
            "32",
            "--width",
            "2",
            "--dataflow",
            "ws",
            "--sparse",
            "--memory",
            memory,
            "--check",
            "--json",
            "--out",
            &out,
        ]);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let j = serde_json::from_str::<serde_json::Value>(&text(&o.stdout)).unwrap();
        (j, std::fs::read(&out).expect("D"))
    };
    let ((j, d_tma), (ideal, d_ideal)) = (run("tma"), run("ideal"));
    assert_eq!(d_tma, d_ideal, "D through memory against the ideal port");
    assert_eq!(j["memory"]["path"], "tma");
    assert_eq!(j["check"]["mismatches"], 0);
    assert_eq!(j["flags"], ideal["flags"]);
    assert!(j["cycles"].as_u64() >= ideal["cycles"].as_u64());
    let passes = 2 * 2;
    let want = passes * 4 * 4 * 4 * 2 + passes * 8 * (8 * 2 + 2) + 8 * 2 * 4 * 4;
    assert_eq!(j["memory"]["smem_read_bytes"], want);
}

/// The operand-store traffic of a dense run on the ideal path: the text line right after the
/// MACs line and the JSON object, equal to the closed forms (FP16 operands 2 bytes, FP32 C and
/// D 4 bytes; s4 operands half a byte); none through the TMA memory port.
#[test]
fn traffic_line_and_json_on_the_ideal_path() {
    // 10 x 6 x 12 on 4 x 4: ceil(N / C) = 2, ceil(M / R) = 3, one row chunk.
    let (m, n, k) = (10u64, 6u64, 12u64);
    for (df, b_repeats) in [("os", 3u64), ("ws", 1)] {
        let dims = ["--m", "10", "--n", "6", "--k", "12", "--dataflow", df];
        let out = tcrtl(&[&["gemm"][..], &dims].concat());
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(out.status.success(), "{text}");
        let lines: Vec<&str> = text.lines().collect();
        let at = lines
            .iter()
            .position(|l| l.contains(" MACs in "))
            .expect("MACs line");
        let want = format!(
            "operand store: A {} B {} C {} bytes read, D {} written",
            m * k * 2 * 2,
            k * n * b_repeats * 2,
            m * n * 4,
            m * n * 4
        );
        assert_eq!(lines[at + 1], want, "{df}: {text}");
        let out = tcrtl(&[&["gemm"][..], &dims, &["--json"]].concat());
        let v: serde_json::Value =
            serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).expect("JSON");
        let t = &v["traffic"];
        assert_eq!(t["a_read_bytes"], m * k * 2 * 2, "{df}: {v}");
        assert_eq!(t["b_read_bytes"], k * n * b_repeats * 2, "{df}: {v}");
        assert_eq!(t["c_read_bytes"], m * n * 4, "{df}: {v}");
        assert_eq!(t["d_write_bytes"], m * n * 4, "{df}: {v}");
    }
    // Integers: s4 operands, 3 x 3 x 5 on 4 x 4: A and B 15 elements, 7.5 bytes, rounded up.
    let out = tcrtl(&["gemm", "--format", "s4", "--m", "3", "--n", "3", "--k", "5"]);
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(out.status.success(), "{text}");
    assert_eq!(
        text.lines().nth(1),
        Some("operand store: A 8 B 8 C 36 bytes read, D 36 written"),
        "{text}"
    );
    // Through the TMA memory port: no traffic key, no line.
    let out = tcrtl(&[
        "gemm", "--m", "8", "--n", "8", "--k", "8", "--memory", "tma", "--json",
    ]);
    let v: serde_json::Value =
        serde_json::from_str(String::from_utf8_lossy(&out.stdout).trim()).expect("JSON");
    assert!(v.get("traffic").is_none(), "{v}");
    let out = tcrtl(&[
        "gemm", "--m", "8", "--n", "8", "--k", "8", "--memory", "tma",
    ]);
    assert!(!String::from_utf8_lossy(&out.stdout).contains("operand store:"));
}
