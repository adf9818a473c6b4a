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

use crate::verilog_util::{iverilog_ready, scratch, tcrtl, verilog};
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
    let mut cmd = Command::new("iverilog");
    let out = dir.join(format!("{}.vvp", v.name));
    cmd.args(["-g2012", "-o"]).arg(&out);
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
    std::fs::create_dir_all(&random).expect("golden folder");
    let (code, _, err) = tcrtl(&[
        "gemm",
        "--m",
        "6",
        "--n",
        "7",
        "--k",
        "5",
        "--seed",
        "21",
        "--memh",
        &random.display().to_string(),
    ]);
    assert_eq!(code, 0, "{err}");
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
    std::fs::create_dir_all(&golden).expect("golden");
    let g = golden.display().to_string();
    let (code, _, err) = tcrtl(&[
        "gemm", "--m", "4", "--n", "4", "--k", "4", "--seed", "2", "--memh", &g,
    ]);
    assert_eq!(code, 0, "{err}");
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
