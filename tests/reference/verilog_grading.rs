//! The graders of the course's three Verilog tasks, proved on known designs: for lab 0's MAC
//! mesh, lab 1's PE and lab 2's mesh, the reference solution passes, the skeleton fails, and
//! three injected bugs per task (the reference with one line changed) are each caught by
//! `tcrtl grade` with a message that names where (element and step, or cycle, cell and
//! field). The PE's bugs are the three: a subnormal FP16 operand given exponent 0
//! instead of 1, truncation instead of round-to-nearest-even, and -0 + -0 = +0; the last one
//! passes a random problem and is caught only by the directed `signed_zeros` set. Also: the
//! testbench refuses a shape other than the golden images', and a PE sampled one cycle early
//! is reported as a shift that names the right `+LAT`.
//!
//! The golden images come from the model (`tcrtl gemm --memh`, `tcrtl course directed`,
//! `tcrtl course mac-golden`); the Verilog runs under Icarus (skipped with a printed reason
//! when it is missing, a failure when `CI=true`).

use crate::verilog_util::{gemm_images, iverilog_ready, scratch, tcrtl, verilog};
use std::path::{Path, PathBuf};
use std::process::Command;

/// One design variant: the files compiled, with at most one text replacement in one file.
struct Variant {
    name: &'static str,
    files: &'static [&'static str],
    patch: Option<(&'static str, &'static str, &'static str)>,
}

/// Compiles `v` with the testbench `tb` into `dir/NAME.vvp` (a patched file is copied first,
/// and the replacement must apply).
fn build(dir: &Path, v: &Variant, tb: &str) -> PathBuf {
    // From the Verilog folder: the testbenches include "tb/golden_io.vh" relative to it.
    let mut cmd = Command::new("iverilog");
    let out = dir.join(format!("{}.vvp", v.name));
    cmd.current_dir(verilog(""))
        .args(["-g2012", "-o"])
        .arg(&out);
    for f in v.files.iter().chain([&tb]) {
        match v.patch {
            Some((file, from, to)) if file == *f => {
                let text = std::fs::read_to_string(verilog(f)).expect("source");
                assert!(text.contains(from), "{}: '{from}' not in {f}", v.name);
                let patched = dir.join(format!("{}-{}", v.name, f.replace('/', "-")));
                std::fs::write(&patched, text.replacen(from, to, 1)).expect("patched copy");
                cmd.arg(patched);
            }
            _ => {
                cmd.arg(verilog(f));
            }
        }
    }
    let o = cmd.output().expect("run iverilog");
    assert!(
        o.status.success(),
        "{}: {}",
        v.name,
        String::from_utf8_lossy(&o.stderr)
    );
    out
}

/// Runs a compiled testbench with `plusargs`, writing into a fresh `out` folder; returns
/// its stdout.
fn simulate(vvp: &Path, out: &Path, plusargs: &[String]) -> String {
    let _ = std::fs::remove_dir_all(out);
    std::fs::create_dir_all(out).expect("out folder");
    let o = Command::new("vvp")
        .arg("-n")
        .arg(vvp)
        .args(plusargs)
        .arg(format!("+OUT={}", out.display()))
        .output()
        .expect("run vvp");
    assert!(o.status.success());
    String::from_utf8_lossy(&o.stdout).to_string()
}

/// `tcrtl grade` of `student` against `golden`: (exit code, JSON report, text report).
fn grade(golden: &Path, student: &Path) -> (i32, serde_json::Value, String) {
    let g = golden.display().to_string();
    let s = student.display().to_string();
    let (code, json, err) = tcrtl(&["grade", "--json", "--golden", &g, "--student", &s]);
    assert!(code == 0 || code == 1, "grade: {err}");
    let (_, text, _) = tcrtl(&["grade", "--golden", &g, "--student", &s]);
    (code, serde_json::from_str(&json).expect("JSON"), text)
}

/// Runs a PE or mesh variant on each golden folder; returns per folder (passed, text).
fn run_gemm_variant(dir: &Path, vvp: &Path, goldens: &[PathBuf]) -> Vec<(bool, String)> {
    goldens
        .iter()
        .map(|g| {
            let out = dir.join("out");
            let stdout = simulate(
                vvp,
                &out,
                &[format!("+DIR={}", g.display()), "+STEPS".into()],
            );
            assert!(stdout.contains("RESULT "), "{stdout}");
            let (code, v, text) = grade(g, &out);
            let steps_ok = v["steps"]["mismatches"].as_u64() == Some(0);
            assert_eq!(code == 0, v["mismatches"] == 0 && steps_ok, "{text}");
            (code == 0, text)
        })
        .collect()
}

/// The golden folders of the PE and mesh tasks: one random problem and the directed sets.
fn gemm_goldens(dir: &Path) -> Vec<PathBuf> {
    let random = dir.join("random");
    gemm_images(
        &random,
        &["--m", "6", "--n", "7", "--k", "5", "--seed", "21"],
    );
    let directed = dir.join("directed");
    let (code, out, err) = tcrtl(&[
        "course",
        "directed",
        "--out",
        &directed.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(out.lines().count(), 6, "{out}");
    let mut all = vec![random];
    for set in [
        "signed_zeros",
        "subnormals",
        "infinities",
        "nans",
        "overflow",
        "ties",
    ] {
        all.push(directed.join(set));
    }
    all
}

const PE_FILES: &[&str] = &[
    "rtl/fp16_mul.v",
    "rtl/fp32_add.v",
    "rtl/pe.v",
    "rtl/mesh4x4.v",
];

#[test]
fn pe_task_reference_passes_skeleton_fails_and_three_bugs_are_localised() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("grading", "pe");
    let goldens = gemm_goldens(&dir);
    let names = [
        "random",
        "signed_zeros",
        "subnormals",
        "infinities",
        "nans",
        "overflow",
        "ties",
    ];
    let variants = [
        Variant {
            name: "reference",
            files: PE_FILES,
            patch: None,
        },
        Variant {
            name: "skeleton",
            files: &["skeleton/pe.v", "rtl/mesh4x4.v"],
            patch: None,
        },
        Variant {
            name: "subnormal_exponent",
            files: PE_FILES,
            patch: Some((
                "rtl/fp16_mul.v",
                "(ea == 5'd0) ? 10'sd1",
                "(ea == 5'd0) ? 10'sd0",
            )),
        },
        Variant {
            name: "truncation",
            files: PE_FILES,
            patch: Some((
                "rtl/fp32_add.v",
                "up = (rem > half) || ((rem == half) && q[0]);",
                "up = 1'b0;",
            )),
        },
        Variant {
            name: "negative_zero_sum",
            files: PE_FILES,
            patch: Some((
                "rtl/fp32_add.v",
                "sum = {c_sign & p_sign, 31'd0};",
                "sum = 32'd0;",
            )),
        },
    ];
    for v in &variants {
        let vvp = build(&dir, v, "tb/tb_mesh.v");
        let results = run_gemm_variant(&dir, &vvp, &goldens);
        let passed: Vec<&str> = names
            .iter()
            .zip(&results)
            .filter(|(_, r)| r.0)
            .map(|(n, _)| *n)
            .collect();
        let text = |set: &str| {
            let i = names.iter().position(|n| *n == set).expect("set");
            results[i].1.clone()
        };
        match v.name {
            "reference" => assert_eq!(passed, names, "{results:?}"),
            "skeleton" => assert!(passed.is_empty(), "{passed:?}"),
            "subnormal_exponent" => {
                assert!(!passed.contains(&"subnormals"), "{passed:?}");
                // Off by a factor 2: many ulps, at a named element and step.
                let t = text("subnormals");
                assert!(t.contains("max error: ") && t.contains(" step "), "{t}");
            }
            "truncation" => {
                assert!(
                    !passed.contains(&"ties") && !passed.contains(&"random"),
                    "{passed:?}"
                );
                // A tie rounded down instead of to even: d[0][0] is 1 + 2^-23 + 2^-24 -> 1 + 2^-22.
                let t = text("ties");
                assert!(
                    t.contains("d[0][0] step 0: golden 3f800002") && t.contains("1 ulps"),
                    "{t}"
                );
            }
            _ => {
                // -0 + -0 = +0 passes the random problem and is caught by the directed set,
                // at d[0][0] step 0: a sign-only difference, 0 ulps.
                assert!(passed.contains(&"random"), "{passed:?}");
                assert!(!passed.contains(&"signed_zeros"), "{passed:?}");
                let t = text("signed_zeros");
                assert!(
                    t.contains(
                        "d[0][0] step 0: golden 80000000 (-0e0), student 00000000 (0e0), 0 ulps"
                    ),
                    "{t}"
                );
            }
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

const MESH_FILES: &[&str] = &[
    "rtl/fp16_mul.v",
    "rtl/fp32_add.v",
    "rtl/pe.v",
    "rtl/mesh4x4.v",
];

#[test]
fn mesh_task_reference_passes_skeleton_fails_and_three_bugs_are_localised() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("grading", "mesh");
    let goldens = gemm_goldens(&dir)[..1].to_vec();
    let cases: [(Variant, Option<&str>); 5] = [
        (
            Variant {
                name: "reference",
                files: MESH_FILES,
                patch: None,
            },
            None,
        ),
        (
            Variant {
                name: "skeleton",
                files: &[
                    "rtl/fp16_mul.v",
                    "rtl/fp32_add.v",
                    "rtl/pe.v",
                    "skeleton/mesh4x4.v",
                ],
                patch: None,
            },
            // No skew: PE (0, 1) meets B[k][1] one cycle before A[0][k] reaches it.
            Some("d[0][1] step 0"),
        ),
        (
            Variant {
                name: "row_3_skew_one_short",
                files: MESH_FILES,
                patch: Some((
                    "rtl/mesh4x4.v",
                    "assign a_edge[3] = a_dly[5];",
                    "assign a_edge[3] = a_dly[4];",
                )),
            },
            Some("d[3][0] step 0"),
        ),
        (
            Variant {
                name: "column_2_valid_early",
                files: MESH_FILES,
                patch: Some((
                    "rtl/mesh4x4.v",
                    "assign bv_edge[2] = bv_dly[2];",
                    "assign bv_edge[2] = bv_dly[1];",
                )),
            },
            // B's valid bit one cycle ahead of B: the first step of column 2 is lost, so its
            // PEs show one step fewer and the last is never sampled.
            Some("d[0][2] step 4: golden 40af91d2 (5.4865503e0), student x"),
        ),
        (
            Variant {
                name: "c_preload_transposed",
                files: MESH_FILES,
                patch: Some((
                    "rtl/mesh4x4.v",
                    ".c_in(c_flat[32 * (4 * i + j) +: 32])",
                    ".c_in(c_flat[32 * (4 * j + i) +: 32])",
                )),
            },
            Some("d[0][1] step 0"),
        ),
    ];
    for (v, want) in &cases {
        let vvp = build(&dir, v, "tb/tb_mesh.v");
        let r = run_gemm_variant(&dir, &vvp, &goldens);
        match want {
            None => assert!(r[0].0, "{}: {}", v.name, r[0].1),
            Some(place) => {
                assert!(!r[0].0, "{} passed", v.name);
                let first = r[0]
                    .1
                    .lines()
                    .skip_while(|l| !l.starts_with("steps:"))
                    .find(|l| l.trim_start().starts_with("d["))
                    .unwrap_or_default();
                assert!(first.contains(place), "{}: {}", v.name, r[0].1);
            }
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn mac_mesh_task_reference_passes_skeleton_fails_and_three_bugs_are_localised() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("grading", "mac");
    let golden = dir.join("golden");
    let (code, _, err) = tcrtl(&[
        "course",
        "mac-golden",
        "--cycles",
        "24",
        "--out",
        &golden.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
    const MAC: &[&str] = &["rtl/mac_pe.v", "rtl/mac_mesh.v"];
    let cases: [(Variant, Option<&str>); 5] = [
        (
            Variant {
                name: "reference",
                files: MAC,
                patch: None,
            },
            None,
        ),
        (
            Variant {
                name: "skeleton",
                files: &["skeleton/mac_pe.v", "skeleton/mac_mesh.v"],
                patch: None,
            },
            Some("cycle 2 pe_0_0.a: golden 1, student 0"),
        ),
        (
            Variant {
                name: "product_16_bits",
                files: MAC,
                patch: Some((
                    "rtl/mac_pe.v",
                    "wire [31:0] prod = {16'd0, a_in} * {16'd0, b_in};",
                    "wire [31:0] prod = {16'd0, a_in * b_in};",
                )),
            },
            // Lab 0's table: cycle 5 adds 156 x 468 = 73008, the first product over 2^16.
            Some("cycle 5 pe_0_0.acc: golden 76002, student 10466"),
        ),
        (
            Variant {
                name: "adds_the_registers",
                files: MAC,
                patch: Some(("rtl/mac_pe.v", "acc <= acc + prod;", "acc <= acc + a * b;")),
            },
            Some("cycle 2 pe_0_0.acc: golden 3, student 0"),
        ),
        (
            Variant {
                name: "a_broadcast",
                files: MAC,
                patch: Some((
                    "rtl/mac_mesh.v",
                    "assign a_in = a_flat[16 * (4 * r + c - 1) +: 16];",
                    "assign a_in = a_edge[16 * r +: 16];",
                )),
            },
            Some("cycle 2 pe_0_1.a: golden 0, student 1"),
        ),
    ];
    for (v, want) in &cases {
        let vvp = build(&dir, v, "tb/tb_mac_mesh.v");
        let out = dir.join("out");
        let stdout = simulate(&vvp, &out, &["+CYCLES=24".to_string()]);
        assert!(stdout.contains("DONE 24 cycles"), "{stdout}");
        let (code, json, text) = grade(&golden, &out);
        assert_eq!(json["task"], "mac_mesh");
        match want {
            None => assert_eq!(code, 0, "{}: {text}", v.name),
            Some(line) => {
                assert_eq!(code, 1, "{} passed", v.name);
                let first = text.lines().nth(1).unwrap_or_default();
                assert!(first.contains(line), "{}: {text}", v.name);
            }
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn tb_mesh_refuses_another_shape_and_grade_names_a_one_cycle_shift() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("grading", "shape");
    let golden = dir.join("golden");
    gemm_images(
        &golden,
        &["--m", "4", "--n", "4", "--k", "4", "--seed", "2"],
    );
    let g = golden.display().to_string();
    let reference = Variant {
        name: "reference",
        files: PE_FILES,
        patch: None,
    };
    let vvp = build(&dir, &reference, "tb/tb_mesh.v");
    let out = dir.join("out");
    // +K=5 against a K = 4 folder: refused, nothing compared.
    let stdout = simulate(&vvp, &out, &[format!("+DIR={g}"), "+K=5".into()]);
    assert!(
        stdout.contains("ERROR: +M +N +K ask for another shape than the golden images' 4 x 4 x 4"),
        "{stdout}"
    );
    assert!(!stdout.contains("RESULT"), "{stdout}");
    // The matching shape runs.
    let stdout = simulate(
        &vvp,
        &out,
        &[format!("+DIR={g}"), "+M=4".into(), "+K=4".into()],
    );
    assert!(stdout.contains("RESULT 16 passed, 0 failed"), "{stdout}");
    // Sampled by a latency one short of the PE's (2): D passes, and the steps are reported as
    // displaced by one cycle with the right setting, instead of a list of wrong steps.
    simulate(
        &vvp,
        &out,
        &[format!("+DIR={g}"), "+STEPS".into(), "+LAT=1".into()],
    );
    let (code, json, text) = grade(&golden, &out);
    assert_eq!(code, 1);
    assert_eq!(json["mismatches"], 0);
    assert_eq!(json["steps"]["shift"]["by"], 1, "{json}");
    assert!(
        text.contains("sampled 1 cycle too early: the PE's latency is 2, rerun with +LAT=2"),
        "{text}"
    );
    // And with +LAT=2 (or by acc_vld) everything matches.
    simulate(
        &vvp,
        &out,
        &[format!("+DIR={g}"), "+STEPS".into(), "+LAT=2".into()],
    );
    assert_eq!(grade(&golden, &out).0, 0);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn tb_pe_grades_a_pe_alone_the_reference_passes_and_the_skeleton_fails() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("grading", "tb_pe");
    let goldens = gemm_goldens(&dir);
    for (v, passes) in [
        (
            Variant {
                name: "reference",
                files: &["rtl/fp16_mul.v", "rtl/fp32_add.v", "rtl/pe.v"],
                patch: None,
            },
            true,
        ),
        (
            Variant {
                name: "skeleton",
                files: &["skeleton/pe.v"],
                patch: None,
            },
            false,
        ),
    ] {
        let vvp = build(&dir, &v, "tb/tb_pe.v");
        for (g, (passed, text)) in goldens.iter().zip(run_gemm_variant(&dir, &vvp, &goldens)) {
            assert_eq!(passed, passes, "{} on {}: {text}", v.name, g.display());
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// The reference sparse PE and mesh (lab 5).
const SPARSE_FILES: &[&str] = &[
    "rtl/fp16_mul.v",
    "rtl/fp32_add.v",
    "rtl/pe_sparse.v",
    "rtl/mesh4x4_sparse.v",
];

/// Reads a golden `$readmemh` image's words (the `//` header skipped).
fn hex_words(path: &Path) -> Vec<u64> {
    std::fs::read_to_string(path)
        .expect("image")
        .lines()
        .filter(|l| !l.starts_with("//") && !l.trim().is_empty())
        .map(|l| u64::from_str_radix(l.trim(), 16).expect("hex word"))
        .collect()
}

/// The 2-bit index of kept value `s` of row `r`, decoded from the golden nibbles by the
/// PTX rule (bits 1..0 the group's first kept value, bits 3..2 its second).
fn kept_index(meta: &[u64], k: usize, r: usize, s: usize) -> u64 {
    (meta[r * k / 4 + s / 2] >> (2 * (s % 2))) & 3
}

/// A sparse golden folder whose B holds +Inf at every position the metadata drops (the same
/// nibbles in every row, so a dropped position is dropped for all of them) and small finite
/// values elsewhere: 5 x 6 x 12, groups keeping (1, 3), (0, 2) and (0, 3).
fn dropped_inf_golden(dir: &Path) -> PathBuf {
    use tensorcore_rtl::io::npy::{write_npy, Dtype};
    let (m, n, k) = (5usize, 6usize, 12usize);
    let nibbles = [0b1101u64, 0b1000, 0b1100];
    let kept: Vec<usize> = nibbles
        .iter()
        .enumerate()
        .flat_map(|(g, nib)| [4 * g + (nib & 3) as usize, 4 * g + (nib >> 2) as usize])
        .collect();
    // 1, 1.25, 1.5, 1.75, -1 ... as FP16 patterns.
    let finite = |i: usize| [0x3c00u64, 0x3d00, 0x3e00, 0x3f00, 0xbc00][i % 5];
    let values: Vec<u64> = (0..m * k / 2).map(|i| finite(i + 1)).collect();
    let meta: Vec<u64> = (0..m).flat_map(|_| nibbles).collect();
    let b: Vec<u64> = (0..k * n)
        .map(|i| {
            if kept.contains(&(i / n)) {
                finite(i)
            } else {
                0x7c00
            }
        })
        .collect();
    let (v, mt, bp) = (dir.join("v.npy"), dir.join("m.npy"), dir.join("b.npy"));
    write_npy(&v, &[m, k / 2], Dtype::U16, &values).expect("values");
    write_npy(&mt, &[m, k / 4], Dtype::U8, &meta).expect("meta");
    write_npy(&bp, &[k, n], Dtype::U16, &b).expect("B");
    let golden = dir.join("dropped_inf");
    std::fs::create_dir_all(&golden).expect("golden");
    let s = |p: &Path| p.display().to_string();
    let (code, _, err) = tcrtl(&[
        "gemm",
        "--sparse",
        "--a-values",
        &s(&v),
        "--a-meta",
        &s(&mt),
        "--b",
        &s(&bp),
        "--format",
        "fp16",
        "--memh",
        &s(&golden),
    ]);
    assert_eq!(code, 0, "{err}");
    // The sparse run never reads a dropped B: every element of D is finite.
    for w in hex_words(&golden.join("d.hex")) {
        assert_ne!(w & 0x7f80_0000, 0x7f80_0000, "D word {w:08x}");
    }
    golden
}

/// The first step record, in the golden order (row, column, step), whose line in the text
/// report names a place.
fn first_step_line(text: &str) -> String {
    text.lines()
        .skip_while(|l| !l.starts_with("steps:"))
        .find(|l| l.trim_start().starts_with("d["))
        .unwrap_or_default()
        .to_string()
}

#[test]
fn sparse_pe_task_reference_passes_skeletons_fail_and_three_bugs_are_localised() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("grading", "sparse");
    let random = dir.join("random");
    let (m, k) = (6usize, 12usize);
    gemm_images(
        &random,
        &[
            "--sparse", "--m", "6", "--n", "7", "--k", "12", "--seed", "21",
        ],
    );
    let inf = dropped_inf_golden(&dir);
    let meta = hex_words(&random.join("a_meta.hex"));
    let half = k / 2;
    // Where each bug must show first in the random problem, from the golden nibbles alone:
    // index 1 read from lane 0: the first kept value with index 1 (every column of its row
    // is wrong; the report lists column 0 first).
    let first_index_1 = (0..m)
        .flat_map(|r| (0..half).map(move |s| (r, s)))
        .find(|&(r, s)| kept_index(&meta, k, r, s) == 1)
        .expect("an index 1");
    // The metadata broadcast along the row: PE (r, 1) uses step s + 1's index at step s
    // (0 after the last step), so row 0, column 1 fails at the first step whose index the
    // next one's differs from.
    let next = |s: usize| {
        if s + 1 < half {
            kept_index(&meta, k, 0, s + 1)
        } else {
            0
        }
    };
    let first_early = (0..half)
        .find(|&s| next(s) != kept_index(&meta, k, 0, s))
        .expect("a change of index");
    let cases: [(Variant, Option<String>, Option<&str>); 6] = [
        (
            Variant {
                name: "reference",
                files: SPARSE_FILES,
                patch: None,
            },
            None,
            None,
        ),
        (
            Variant {
                name: "skeleton_pe",
                files: &["skeleton/pe_sparse.v", "rtl/mesh4x4_sparse.v"],
                patch: None,
            },
            Some("d[0][0] step 0".into()),
            Some("d[0][0] step 0"),
        ),
        (
            Variant {
                name: "skeleton_mesh",
                files: &[
                    "rtl/fp16_mul.v",
                    "rtl/fp32_add.v",
                    "rtl/pe_sparse.v",
                    "skeleton/mesh4x4_sparse.v",
                ],
                patch: None,
            },
            // No skew: PE (0, 1) meets B one cycle before the A value it belongs with. The two
            // steps of a group share their B lanes, so step 0 still comes out right; step 1
            // meets the next group's B.
            Some("d[0][1] step 1".into()),
            Some("d[0][1] step 1"),
        ),
        (
            Variant {
                name: "index_1_reads_lane_0",
                files: SPARSE_FILES,
                patch: Some((
                    "rtl/pe_sparse.v",
                    "2'd1:    b_sel = b_in[31:16];",
                    "2'd1:    b_sel = b_in[15:0];",
                )),
            },
            Some(format!(
                "d[{}][0] step {}",
                first_index_1.0, first_index_1.1
            )),
            // Group 0 keeps (1, 3): its index 1 now reads lane 0, a dropped position (+Inf).
            Some("d[0][0] step 0: golden"),
        ),
        (
            Variant {
                name: "metadata_broadcast_along_the_row",
                files: SPARSE_FILES,
                patch: Some((
                    "rtl/mesh4x4_sparse.v",
                    ".meta_in(mh[i][j])",
                    ".meta_in(mh[i][0])",
                )),
            },
            Some(format!("d[0][1] step {first_early}")),
            None,
        ),
        (
            Variant {
                name: "index_3_reads_dropped_lane_2",
                files: SPARSE_FILES,
                patch: Some((
                    "rtl/pe_sparse.v",
                    "default: b_sel = b_in[63:48];",
                    "default: b_sel = b_in[47:32];",
                )),
            },
            // Group 0 keeps (1, 3): step 1 (index 3) reads lane 2, dropped, +Inf. In the
            // random problem the first index 3 fails somewhere; the directed set names it.
            None,
            Some("d[0][0] step 1: golden"),
        ),
    ];
    for (v, random_place, inf_place) in &cases {
        let vvp = build(&dir, v, "tb/tb_mesh_sparse.v");
        let r = run_gemm_variant(&dir, &vvp, &[random.clone(), inf.clone()]);
        if v.name == "reference" {
            assert!(r[0].0 && r[1].0, "reference: {r:?}");
            continue;
        }
        if v.name == "index_3_reads_dropped_lane_2" {
            assert!(!r[0].0, "{} passed the random problem", v.name);
        }
        for ((passed, text), want) in r.iter().zip([random_place.as_deref(), *inf_place]) {
            let Some(place) = want else { continue };
            assert!(!passed, "{} passed: {text}", v.name);
            let first = first_step_line(text);
            assert!(first.contains(place), "{}: want {place}: {text}", v.name);
        }
        // A dropped lane read: the +Inf there reaches the student's accumulator.
        if v.name.contains("dropped") || v.name.starts_with("index_1") {
            let first = first_step_line(&r[1].1);
            assert!(
                first.contains("student 7f800000")
                    || first.contains("student ff800000")
                    || first.contains("student 7fc00000"),
                "{}: {first}",
                v.name
            );
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn tb_mesh_sparse_refuses_another_shape_and_dense_images() {
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("grading", "sparse_shape");
    let (sparse, dense) = (dir.join("sparse"), dir.join("dense"));
    let shape = ["--m", "5", "--n", "3", "--k", "8", "--seed", "4"];
    gemm_images(&sparse, &[&shape[..], &["--sparse"]].concat());
    gemm_images(&dense, &shape);
    let reference = Variant {
        name: "reference",
        files: SPARSE_FILES,
        patch: None,
    };
    let vvp = build(&dir, &reference, "tb/tb_mesh_sparse.v");
    let out = dir.join("out");
    let g = sparse.display().to_string();
    let stdout = simulate(&vvp, &out, &[format!("+DIR={g}"), "+K=12".into()]);
    assert!(
        stdout.contains("ERROR: +M +N +K ask for another shape than the golden images' 5 x 3 x 8"),
        "{stdout}"
    );
    assert!(!stdout.contains("RESULT"), "{stdout}");
    let stdout = simulate(&vvp, &out, &[format!("+DIR={}", dense.display())]);
    assert!(
        stdout.contains("a_values.hex: these are not sparse images"),
        "{stdout}"
    );
    assert!(!stdout.contains("RESULT"), "{stdout}");
    // The compressed A's header must agree with d.hex's shape.
    let values = sparse.join("a_values.hex");
    let text = std::fs::read_to_string(&values).expect("a_values.hex");
    std::fs::write(&values, text.replacen("(5 x 4,", "(4 x 4,", 1)).expect("edit");
    let stdout = simulate(&vvp, &out, &[format!("+DIR={g}")]);
    assert!(stdout.contains("ERROR: a_values.hex is 4 x 4"), "{stdout}");
    std::fs::write(&values, text).expect("restore");
    let stdout = simulate(
        &vvp,
        &out,
        &[format!("+DIR={g}"), "+M=5".into(), "+STEPS".into()],
    );
    assert!(stdout.contains("RESULT 15 passed, 0 failed"), "{stdout}");
    assert_eq!(grade(&sparse, &out).0, 0);
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn a_sparse_pe_waveform_grades_against_the_sparse_step_vectors() {
    // `tcrtl grade --vcd` on PE (1, 2) of the sparse mesh: `a` is the kept value, `b` the
    // multiplexer's output, compared with the golden K/2 step records; an index reading the
    // wrong lane shows as a wrong `b` at the first step with that index.
    if !iverilog_ready() {
        return;
    }
    let dir = scratch("grading", "sparse_vcd");
    let golden = dir.join("golden");
    gemm_images(
        &golden,
        &[
            "--sparse", "--m", "4", "--n", "4", "--k", "16", "--seed", "5",
        ],
    );
    let g = golden.display().to_string();
    let meta = hex_words(&golden.join("a_meta.hex"));
    let first_1 = (0..8).find(|&s| kept_index(&meta, 16, 1, s) == 1);
    let pe = "tb_mesh_sparse.dut.row[1].col[2].u_pe";
    for (v, mismatches) in [
        (
            Variant {
                name: "reference",
                files: SPARSE_FILES,
                patch: None,
            },
            false,
        ),
        (
            Variant {
                name: "index_1_reads_lane_0",
                files: SPARSE_FILES,
                patch: Some((
                    "rtl/pe_sparse.v",
                    "2'd1:    b_sel = b_in[31:16];",
                    "2'd1:    b_sel = b_in[15:0];",
                )),
            },
            true,
        ),
    ] {
        let vvp = build(&dir, &v, "tb/tb_mesh_sparse.v");
        let out = dir.join("out");
        let vcd = dir.join(format!("{}.vcd", v.name)).display().to_string();
        simulate(&vvp, &out, &[format!("+DIR={g}"), format!("+VCD={vcd}")]);
        let (code, json, err) = tcrtl(&[
            "grade",
            "--json",
            "--golden",
            &g,
            "--vcd",
            &vcd,
            "--pe",
            "1,2",
            "--map",
            "clk=tb_mesh_sparse.clk",
            "--map",
            &format!("a={pe}.a_in"),
            "--map",
            &format!("b={pe}.b_sel"),
            "--map",
            &format!("acc_after={pe}.acc"),
        ]);
        let v_json: serde_json::Value = serde_json::from_str(&json).expect(&err);
        assert_eq!(v_json["steps"], 8, "{json}");
        if mismatches {
            assert_eq!(code, 1, "{json}");
            let s = first_1.expect("row 1 keeps an index 1");
            let first = &v_json["first"][0];
            assert_eq!(
                (first["step"].as_u64(), &first["field"]),
                (Some(s as u64), &"b".into()),
                "{json}"
            );
        } else {
            assert_eq!((code, &v_json["mismatches"]), (0, &0.into()), "{json}");
            assert_eq!(v_json["acc_after_latency"], 2, "{json}");
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}
