//! `tcrtl grade batch` on a generated class: correct PEs (as Verilog and as result folders),
//! the skeleton, the PE bugs of lab 1 (a subnormal exponent, truncation, -0 + -0 = +0), two
//! submissions that do not compile, one that hangs, and result folders holding garbage or too
//! few words. Each gets the points its design earns on the hidden tests (a random problem and
//! three directed sets), with the reason for every zero; the batch goes on after every failure
//! and (the full class) gives byte-identical reports when run again.
//!
//! The default test runs a sample of one submission per kind under Icarus (about 10 s); the
//! long runs, `cargo test --test reference verilog_batch:: -- --ignored` (docs/course/README.md),
//! grade the full class of 22 under Icarus twice (byte-identical reports) and the sample
//! under Icarus and Verilator (each kind gets the same points under both).
//! Lab 5's sparse PE task is graded under both simulators (`--sim both`, a long run too) for
//! one submission, a PE whose multiplexer reads the wrong lane, so Verilator builds once; the
//! default run checks that the sparse task refuses a spec it cannot run. Needs Icarus Verilog (skipped with a printed reason when it is missing, a
//! failure when `CI=true`); the Verilator parts need Verilator 5 (skipped with a printed
//! reason when it is missing, a failure when `TCRTL_REQUIRE_VERILATOR=1` or `CI=true`).

use crate::verilog_util::{gemm_images, iverilog_ready, scratch, tcrtl, verilog};
use std::path::{Path, PathBuf};
use std::process::Command;

/// The hidden tests: a random problem (3 points) and three directed sets (1 point each).
const SPEC: &str = r#"{"task": "pe", "time_limit_s": 1, "tests": [
  {"name": "rand_a", "points": 3, "m": 6, "n": 5, "k": 4, "seed": 9001},
  {"name": "zeros", "points": 1, "directed": "signed_zeros"},
  {"name": "subn", "points": 1, "directed": "subnormals"},
  {"name": "ties", "points": 1, "directed": "ties"}]}"#;

const TESTS: [&str; 4] = ["rand_a", "zeros", "subn", "ties"];

/// The reference PE's files.
const PE: [&str; 3] = ["rtl/pe.v", "rtl/fp16_mul.v", "rtl/fp32_add.v"];

/// A submission kind: how to make it, and the points it must get per test (`None`: zero
/// with a reason whose text must contain the given words).
struct Kind {
    name: &'static str,
    points: [u32; 4],
    reason: &'static str,
}

/// Every kind, with the points its design earns. The bugs' points follow from the tests:
/// a subnormal exponent is off by a factor 2 wherever an FP16 subnormal meets a nonzero
/// operand (the subnormals set; this random problem happens to pass it); truncation is wrong on
/// every inexact sum (the random problem, the ties, the subnormals set's 1 + a tiny product)
/// but right on exact ones (signed zeros); -0 + -0 = +0 shows only in the signed-zeros set.
const KINDS: [Kind; 11] = [
    Kind { name: "correct", points: [3, 1, 1, 1], reason: "" },
    Kind { name: "results_correct", points: [3, 1, 1, 1], reason: "" },
    Kind { name: "skeleton", points: [0, 0, 0, 0], reason: "d[0][0] step 0" },
    Kind { name: "bug_subnormal", points: [3, 1, 0, 1], reason: "subn: d[0][0] step 0: golden 33800000" },
    Kind { name: "bug_truncation", points: [0, 1, 0, 0], reason: "rand_a: d[" },
    Kind { name: "bug_negative_zero", points: [3, 0, 1, 1], reason: "zeros: d[0][0] step 0: golden 80000000" },
    Kind { name: "syntax_error", points: [0, 0, 0, 0], reason: "compile error: pe.v:" },
    Kind { name: "missing_module", points: [0, 0, 0, 0], reason: "compile error:" },
    Kind { name: "hang", points: [0, 0, 0, 0], reason: "time-out: the simulation ran past 1 s" },
    Kind { name: "results_garbage", points: [3, 0, 1, 1], reason: "zeros: output is not a result: student d.hex line 1: 'hello' is not one hexadecimal word" },
    Kind { name: "results_short", points: [3, 1, 1, 0], reason: "ties: output is not a result: student d.hex has 3 words, the golden D has 16" },
];

/// Copies the reference PE into `dir`, replacing `from` by `to` in `file` (must apply).
fn patched_pe(dir: &Path, file: &str, from: &str, to: &str) {
    for f in PE {
        let mut text = std::fs::read_to_string(verilog(f)).expect("source");
        if f == file {
            assert!(text.contains(from), "{from}");
            text = text.replacen(from, to, 1);
        }
        let name = Path::new(f).file_name().expect("name");
        std::fs::write(dir.join(name), text).expect("copy");
    }
}

/// Result folders of the reference PE for every test (goldens of the model written by
/// `tcrtl gemm --memh` and `tcrtl course directed`, independently of the batch).
fn reference_results(work: &Path) -> PathBuf {
    let results = work.join("reference_results");
    if results.is_dir() {
        return results;
    }
    let golden = work.join("golden");
    gemm_images(
        &golden.join("rand_a"),
        &["--m", "6", "--n", "5", "--k", "4", "--seed", "9001"],
    );
    let d = golden.join("directed").display().to_string();
    let (code, _, err) = tcrtl(&["course", "directed", "--out", &d]);
    assert_eq!(code, 0, "{err}");
    let vvp = work.join("reference.vvp");
    let o = Command::new("iverilog")
        .current_dir(verilog(""))
        .args(["-g2012", "-o"])
        .arg(&vvp)
        .args(PE.iter().map(|f| verilog(f)))
        .arg(verilog("rtl/mesh4x4.v"))
        .arg(verilog("tb/tb_mesh.v"))
        .output()
        .expect("iverilog");
    assert!(o.status.success());
    for (test, dir) in [
        ("rand_a", golden.join("rand_a")),
        ("zeros", golden.join("directed/signed_zeros")),
        ("subn", golden.join("directed/subnormals")),
        ("ties", golden.join("directed/ties")),
    ] {
        let out = results.join(test);
        std::fs::create_dir_all(&out).expect("results");
        let o = Command::new("vvp")
            .arg("-n")
            .arg(&vvp)
            .arg(format!("+DIR={}", dir.display()))
            .arg(format!("+OUT={}", out.display()))
            .arg("+STEPS")
            .output()
            .expect("vvp");
        assert!(String::from_utf8_lossy(&o.stdout).contains(", 0 failed"));
    }
    results
}

/// Copies the result folders into `dir`.
fn copy_results(from: &Path, dir: &Path) {
    for t in TESTS {
        std::fs::create_dir_all(dir.join(t)).expect("folder");
        for f in ["d.hex", "steps.hex", "sampling.txt"] {
            std::fs::copy(from.join(t).join(f), dir.join(t).join(f)).expect("copy");
        }
    }
}

/// Writes submission `student` of kind `kind` under `subs`.
fn make(subs: &Path, work: &Path, student: &str, kind: &str) {
    let dir = subs.join(student);
    std::fs::create_dir_all(&dir).expect("submission");
    match kind {
        "correct" => patched_pe(&dir, "", "", ""),
        "skeleton" => {
            std::fs::copy(verilog("skeleton/pe.v"), dir.join("pe.v")).expect("copy");
        }
        "bug_subnormal" => patched_pe(
            &dir,
            "rtl/fp16_mul.v",
            "(ea == 5'd0) ? 10'sd1",
            "(ea == 5'd0) ? 10'sd0",
        ),
        "bug_truncation" => patched_pe(
            &dir,
            "rtl/fp32_add.v",
            "up = (rem > half) || ((rem == half) && q[0]);",
            "up = 1'b0;",
        ),
        "bug_negative_zero" => patched_pe(
            &dir,
            "rtl/fp32_add.v",
            "sum = {c_sign & p_sign, 31'd0};",
            "sum = 32'd0;",
        ),
        "syntax_error" => patched_pe(&dir, "rtl/pe.v", "always @(posedge clk) begin", "always @(posedge clk) begin begin"),
        "missing_module" => {
            std::fs::copy(verilog("rtl/pe.v"), dir.join("pe.v")).expect("copy");
        }
        // A zero-delay loop started by the first preload: the simulation never advances.
        "hang" => patched_pe(
            &dir,
            "rtl/pe.v",
            "endmodule",
            "    reg spin = 1'b0;\n    always @(posedge clk) if (load) forever #0 spin = ~spin;\nendmodule",
        ),
        "results_correct" => copy_results(&reference_results(work), &dir),
        "results_garbage" => {
            copy_results(&reference_results(work), &dir);
            std::fs::write(dir.join("zeros/d.hex"), "hello\n").expect("garbage");
        }
        "results_short" => {
            copy_results(&reference_results(work), &dir);
            std::fs::write(dir.join("ties/d.hex"), "3f800000\n".repeat(3)).expect("short");
        }
        other => panic!("unknown kind {other}"),
    }
}

/// True when the batch can use Verilator (5.002 or newer on `PATH`, what `--sim auto`
/// looks for); otherwise prints why the Verilator part is skipped, or fails when
/// `TCRTL_REQUIRE_VERILATOR=1` or `CI=true` (`.ci/run` installs it).
fn verilator_ready() -> bool {
    match tensorcore_rtl::course::sim::verilator_ready() {
        Ok(()) => true,
        Err(why) => {
            let required = std::env::var("TCRTL_REQUIRE_VERILATOR").is_ok_and(|v| v == "1")
                || std::env::var("CI").is_ok_and(|v| v == "true");
            assert!(
                !required,
                "{why}, and TCRTL_REQUIRE_VERILATOR=1 or CI=true asks for it"
            );
            eprintln!("SKIPPED (the Verilator part): {why}; TCRTL_REQUIRE_VERILATOR=1 makes this a failure");
            false
        }
    }
}

/// Builds a class of `copies` submissions per kind, runs the batch under `sim`
/// (`icarus` or `both`), and checks every student's points and first failure; with `twice`,
/// runs it a second time and compares the reports byte for byte.
fn run_class(name: &str, copies: usize, twice: bool, sim: &str) {
    if !iverilog_ready() {
        return;
    }
    let root = std::env::temp_dir().join(format!("tcrtl-batch-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let (subs, work) = (root.join("subs"), root.join("work"));
    std::fs::create_dir_all(&work).expect("work");
    let mut expected = Vec::new();
    for k in &KINDS {
        for c in 0..copies {
            let student = format!("{}_{c}", k.name);
            make(&subs, &work, &student, k.name);
            expected.push((student, k));
        }
    }
    let spec = root.join("spec.json");
    std::fs::write(&spec, SPEC).expect("spec");
    let out = root.join("out");
    let args = |out: &Path| {
        vec![
            "grade".to_string(),
            "batch".into(),
            "--submissions".into(),
            subs.display().to_string(),
            "--tests".into(),
            spec.display().to_string(),
            "--out".into(),
            out.display().to_string(),
            "--sim".into(),
            sim.into(),
        ]
    };
    let a = args(&out);
    let (code, stdout, err) = tcrtl(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}");
    let sims = if sim == "both" {
        "icarus and verilator"
    } else {
        "icarus"
    };
    assert!(
        stdout.contains(&format!(
            "{} submissions, 4 tests, simulated with {sims}",
            expected.len()
        )),
        "{stdout}"
    );
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("results.json")).expect("results.json"),
    )
    .expect("JSON");
    let csv = std::fs::read_to_string(out.join("results.csv")).expect("results.csv");
    let header = if sim == "both" {
        "student,rand_a,zeros,subn,ties,total,max,first_failure,total_icarus,total_verilator\n"
    } else {
        "student,rand_a,zeros,subn,ties,total,max,first_failure\n"
    };
    assert!(csv.starts_with(header), "{csv}");
    let students = json["students"].as_array().expect("students");
    assert_eq!(students.len(), expected.len());
    expected.sort_by(|a, b| a.0.cmp(&b.0));
    for (s, (student, kind)) in students.iter().zip(&expected) {
        assert_eq!(s["student"], student.as_str());
        let got: Vec<u64> = TESTS
            .iter()
            .map(|t| s["points"][t].as_u64().expect("points"))
            .collect();
        let want: Vec<u64> = kind.points.iter().map(|&p| u64::from(p)).collect();
        assert_eq!(got, want, "{student}: {s}");
        let total: u64 = want.iter().sum();
        assert_eq!(s["total"].as_u64(), Some(total));
        // The CSV row says the same.
        let row = csv
            .lines()
            .find(|l| l.starts_with(&format!("{student},")))
            .expect("CSV row");
        let cells: Vec<&str> = row.splitn(8, ',').collect();
        assert_eq!(cells[5], total.to_string(), "{row}");
        assert_eq!(cells[6], "6", "{row}");
        // Under both simulators, each one alone gives the same points (these designs have no
        // simulator-dependent behaviour); result folders ran under none.
        if sim == "both" {
            let by_sim = &s["total_by_sim"];
            let want = if student.starts_with("results") {
                serde_json::Value::Null
            } else {
                serde_json::json!(total)
            };
            assert_eq!(by_sim["icarus"], want, "{student}: {s}");
            assert_eq!(by_sim["verilator"], want, "{student}: {s}");
        }
        // The first failure, with its reason, in the JSON, the CSV and the feedback file.
        let feedback = std::fs::read_to_string(out.join("feedback").join(format!("{student}.txt")))
            .expect("feedback");
        assert!(
            feedback.contains(&format!("total {total} / 6")),
            "{feedback}"
        );
        if total == 6 {
            assert!(s["first_failure"].is_null(), "{s}");
        } else {
            let f = &s["first_failure"];
            // With two simulators the reason of a Verilog submission names the one that
            // failed first: Icarus, for every kind here (Verilator fails the same way, checked
            // by total_by_sim above). Result folders ran under none.
            let reason = f["reason"].as_str().unwrap_or("");
            let reason = if sim == "both" && s["submission"] == "verilog" {
                reason.strip_prefix("icarus: ").expect("named simulator")
            } else {
                reason
            };
            let line = format!("{}: {reason}", f["test"].as_str().unwrap_or(""));
            assert!(line.contains(kind.reason), "{student}: {line}");
            assert!(
                feedback.contains(f["reason"].as_str().unwrap_or("?")),
                "{feedback}"
            );
        }
    }
    if !twice {
        std::fs::remove_dir_all(&root).expect("clean up");
        return;
    }
    // Deterministic: a second run gives byte-identical reports.
    let out2 = root.join("out2");
    let a = args(&out2);
    let (code, _, err) = tcrtl(&a.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(code, 0, "{err}");
    for f in ["results.csv", "results.json"] {
        assert_eq!(
            std::fs::read(out.join(f)).expect("first"),
            std::fs::read(out2.join(f)).expect("second"),
            "{f} differs between two runs"
        );
    }
    std::fs::remove_dir_all(&root).expect("clean up");
}

#[test]
fn batch_grades_one_submission_of_every_kind() {
    run_class("sample", 1, false, "icarus");
}

#[test]
#[ignore = "long run (a class of 22, about 40 s): cargo test --test reference verilog_batch:: -- --ignored"]
fn batch_grades_a_class_of_22() {
    run_class("class", 2, true, "icarus");
}

#[test]
#[ignore = "long run (one submission of every kind under Icarus and Verilator, 8 Verilator builds, 2 to 6 min): cargo test --test reference verilog_batch:: -- --ignored"]
fn batch_grades_one_submission_of_every_kind_under_both_simulators() {
    if verilator_ready() {
        run_class("sample_both", 1, false, "both");
    }
}

/// Lab 5's hidden tests: two random sparse problems. `sp_a`'s three nibbles (seed 36: 0xe, 0xc,
/// 0x8) keep no value at index 1 within its group; `sp_b` (ragged) has many.
const SPARSE_SPEC: &str = r#"{"task": "pe_sparse", "time_limit_s": 10, "tests": [
  {"name": "sp_a", "points": 4, "m": 3, "n": 5, "k": 4, "seed": 36},
  {"name": "sp_b", "points": 6, "m": 6, "n": 5, "k": 8, "seed": 77}]}"#;

#[test]
#[ignore = "long run (a Verilator build, 10 to 20 s; run by .ci/run): cargo test --test reference verilog_batch:: -- --ignored"]
fn batch_grades_the_sparse_pe_under_icarus_and_verilator() {
    if !iverilog_ready() || !verilator_ready() {
        return;
    }
    let root = scratch("batch", "sparse");
    // One submission, so that Verilator builds once: the reference PE (the multiplier and
    // the adder are given) whose multiplexer reads lane 0 for index 1. It passes sp_a, which
    // has no index 1, and fails sp_b, under both simulators.
    let dir = root.join("subs").join("lane_bug");
    std::fs::create_dir_all(&dir).expect("submission");
    let text = std::fs::read_to_string(verilog("rtl/pe_sparse.v")).expect("source");
    let (from, to) = (
        "2'd1:    b_sel = b_in[31:16];",
        "2'd1:    b_sel = b_in[15:0];",
    );
    assert!(text.contains(from));
    std::fs::write(dir.join("pe_sparse.v"), text.replacen(from, to, 1)).expect("copy");
    let spec = root.join("spec.json");
    std::fs::write(&spec, SPARSE_SPEC).expect("spec");
    let out = root.join("out");
    let s = |p: &Path| p.display().to_string();
    let subs = root.join("subs");
    let (code, stdout, err) = tcrtl(&[
        "grade",
        "batch",
        "--submissions",
        &s(&subs),
        "--tests",
        &s(&spec),
        "--out",
        &s(&out),
        "--sim",
        "both",
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(
        stdout.contains("1 submissions, 2 tests, simulated with icarus and verilator"),
        "{stdout}"
    );
    // sp_a's golden nibbles (written by the batch from the model) keep no index 1.
    let meta = std::fs::read_to_string(out.join("golden/sp_a/a_meta.hex")).expect("a_meta.hex");
    for nib in meta.lines().filter(|l| !l.starts_with("//")) {
        let nib = u8::from_str_radix(nib, 16).expect("nibble");
        assert!(nib & 3 != 1 && nib >> 2 != 1, "sp_a nibble {nib:x}");
    }
    let json: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(out.join("results.json")).expect("results.json"),
    )
    .expect("JSON");
    assert_eq!(json["task"], "pe_sparse");
    assert_eq!(
        json["simulators"],
        serde_json::json!(["icarus", "verilator"])
    );
    let st = &json["students"][0];
    assert_eq!(
        st["points"],
        serde_json::json!({"sp_a": 4, "sp_b": 0}),
        "{st}"
    );
    assert_eq!(
        st["total_by_sim"],
        serde_json::json!({"icarus": 4, "verilator": 4})
    );
    let status = |t: usize, sim: usize| st["tests"][t]["by_sim"][sim]["status"].clone();
    for sim in 0..2 {
        assert_eq!(status(0, sim), "pass", "{st}");
        assert_eq!(status(1, sim), "fail", "{st}");
    }
    let names: Vec<&str> = st["tests"][1]["by_sim"]
        .as_array()
        .expect("by_sim")
        .iter()
        .map(|o| o["sim"].as_str().unwrap_or(""))
        .collect();
    assert_eq!(names, ["icarus", "verilator"]);
    // Both simulators find the same first wrong step; the reason names the first of them.
    let t1 = &st["tests"][1];
    assert_eq!(t1["by_sim"][0]["reason"], t1["by_sim"][1]["reason"], "{t1}");
    let reason = t1["reason"].as_str().expect("reason");
    assert!(
        reason.starts_with("icarus: d[") && reason.contains(" step "),
        "{reason}"
    );
    let csv = std::fs::read_to_string(out.join("results.csv")).expect("results.csv");
    assert!(
        csv.starts_with(
            "student,sp_a,sp_b,total,max,first_failure,total_icarus,total_verilator\nlane_bug,4,0,4,10,"
        ) && csv.ends_with(",4,4\n"),
        "{csv}"
    );
    std::fs::remove_dir_all(&root).expect("clean up");
}

/// A spec the sparse task cannot run is refused (exit 2) with the reason, before any
/// submission is built: a directed set, and a K that is not a multiple of 4.
#[test]
fn batch_refuses_a_sparse_spec_it_cannot_run() {
    let root = scratch("batch", "sparse_refused");
    let dir = root.join("subs").join("reference");
    std::fs::create_dir_all(&dir).expect("submission");
    std::fs::copy(verilog("rtl/pe_sparse.v"), dir.join("pe_sparse.v")).expect("copy");
    let (spec, out, subs) = (root.join("spec.json"), root.join("out"), root.join("subs"));
    let s = |p: &Path| p.display().to_string();
    for (tests, reason) in [
        (
            r#"[{"name": "z", "points": 1, "directed": "signed_zeros"}]"#,
            "a pe_sparse test gives m, n, k and seed",
        ),
        (
            r#"[{"name": "z", "points": 1, "m": 2, "n": 2, "k": 6, "seed": 1}]"#,
            "test z: k = 6 is not a multiple of 4",
        ),
    ] {
        std::fs::write(
            &spec,
            format!(r#"{{"task": "pe_sparse", "tests": {tests}}}"#),
        )
        .expect("spec");
        let (code, _, err) = tcrtl(&[
            "grade",
            "batch",
            "--submissions",
            &s(&subs),
            "--tests",
            &s(&spec),
            "--out",
            &s(&out),
            "--sim",
            "icarus",
        ]);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains(reason), "{err}");
    }
    std::fs::remove_dir_all(&root).expect("clean up");
}

#[test]
fn sim_auto_falls_back_to_icarus_and_sim_verilator_needs_verilator() {
    // A PATH without verilator (nor anything else): `auto` runs Icarus alone, which result
    // folders do not even need; asking for Verilator is refused with the reason.
    let root = scratch("batch", "sim_path");
    let empty = root.join("bin");
    std::fs::create_dir_all(root.join("subs/s1/t")).expect("submission");
    std::fs::create_dir_all(&empty).expect("bin");
    let spec = root.join("spec.json");
    std::fs::write(
        &spec,
        r#"{"task": "pe", "tests": [{"name": "t", "points": 1, "m": 2, "n": 2, "k": 2, "seed": 1}]}"#,
    )
    .expect("spec");
    let run = |sim: &str| {
        let o = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
            .env("PATH", &empty)
            .args(["grade", "batch", "--sim", sim, "--submissions"])
            .arg(root.join("subs"))
            .arg("--tests")
            .arg(&spec)
            .arg("--out")
            .arg(root.join(format!("out_{sim}")))
            .output()
            .expect("run tcrtl");
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stdout).to_string(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, out, err) = run("auto");
    assert_eq!(code, Some(0), "{err}");
    assert!(
        out.contains("1 submissions, 1 tests, simulated with icarus:"),
        "{out}"
    );
    for sim in ["verilator", "both"] {
        let (code, _, err) = run(sim);
        assert_eq!(code, Some(2));
        assert!(
            err.contains(&format!("--sim {sim}: verilator is not on PATH")),
            "{err}"
        );
    }
    std::fs::remove_dir_all(&root).expect("clean up");
}
