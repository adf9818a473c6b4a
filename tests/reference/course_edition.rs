//! The student edition of the course (`tcrtl course export --student DIR`) holds no answer and
//! no reference solution: no lab keeps its instructor section or any line of it, no Verilog
//! reference file (`testbenches/verilog/rtl/`) or any of their distinctive lines is there,
//! while every lab, the skeletons, the testbenches and the public tests are. The instructor
//! edition keeps everything.

use std::path::{Path, PathBuf};
use std::process::Command;

/// The repository.
fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

/// Every file under `root` with its bytes.
fn tree(root: &Path) -> Vec<(String, Vec<u8>)> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<(String, Vec<u8>)>) {
        for e in std::fs::read_dir(dir).expect("folder") {
            let p = e.expect("entry").path();
            if p.is_dir() {
                walk(&p, root, out);
            } else {
                let rel = p
                    .strip_prefix(root)
                    .expect("inside")
                    .to_string_lossy()
                    .to_string();
                out.push((rel, std::fs::read(&p).expect("file")));
            }
        }
    }
    let mut out = Vec::new();
    walk(root, root, &mut out);
    out.sort();
    out
}

/// Runs `tcrtl course export` with `args`.
fn export(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(["course", "export"])
        .args(args)
        .output()
        .expect("run tcrtl");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

#[test]
fn the_student_edition_has_no_answer_and_no_reference_solution() {
    let root = std::env::temp_dir().join(format!("tcrtl-edition-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&root);
    let student = root.join("student");
    let (code, out, err) = export(&["--student", &student.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("student edition: "), "{out}");
    let files = tree(&student);
    let names: Vec<&str> = files.iter().map(|(n, _)| n.as_str()).collect();
    let text: String = files
        .iter()
        .filter(|(n, _)| !n.ends_with(".png"))
        .map(|(_, b)| String::from_utf8_lossy(b).to_string())
        .collect::<Vec<_>>()
        .join("\n");
    // What a student needs is there.
    for lab in 0..10 {
        assert!(
            names.contains(&format!("docs/course/lab{lab}.md").as_str()),
            "{names:?}"
        );
    }
    for f in [
        "docs/course/interfaces.md",
        "docs/course/gtkw/lab2_q1.gtkw",
        "docs/course/gtkw/controller_state.txt",
        "testbenches/verilog/skeleton/pe.v",
        "testbenches/verilog/skeleton/mesh4x4.v",
        "testbenches/verilog/skeleton/mac_pe.v",
        "testbenches/verilog/skeleton/mac_mesh.v",
        "testbenches/verilog/tb/tb_pe.v",
        "testbenches/verilog/tb/tb_mesh.v",
        "testbenches/verilog/tb/tb_mac_mesh.v",
        "testbenches/verilog/skeleton/pe_sparse.v",
        "testbenches/verilog/skeleton/mesh4x4_sparse.v",
        "testbenches/verilog/tb/tb_mesh_sparse.v",
        "testbenches/verilog/tb/golden_io.vh",
        "testbenches/verilog/tb/mesh_steps.vh",
        "public/pe_random/d.hex",
        "public/pe_sparse_random/a_values.hex",
        "public/pe_sparse_random/a_meta.hex",
        "public/pe_sparse_random/steps.hex",
        "public/mac_mesh/cells.hex",
    ] {
        assert!(names.contains(&f), "{f} missing: {names:?}");
    }
    // No reference file, no rubric, no instructor section.
    assert!(names.iter().all(|n| !n.contains("/rtl/")), "{names:?}");
    assert!(!names.contains(&"docs/course/rubric.md"));
    assert!(!text.contains("Instructor section"));
    // No line of any instructor section (answers, reference solutions) that is not also in
    // the lab's student part.
    for lab in 0..10 {
        let full =
            std::fs::read_to_string(repo().join(format!("docs/course/lab{lab}.md"))).expect("lab");
        let (public, answers) = full.split_at(full.find("## Instructor section").expect("section"));
        for line in answers.lines().map(str::trim).filter(|l| l.len() >= 25) {
            if public.contains(line) {
                continue;
            }
            assert!(
                !text.contains(line),
                "lab {lab}: the answer line {line:?} reached the student edition"
            );
        }
    }
    // No reference solution: no reference file's distinctive lines (those not in any
    // skeleton or testbench) anywhere.
    let given: String = ["skeleton", "tb"]
        .iter()
        .flat_map(|d| std::fs::read_dir(repo().join("testbenches/verilog").join(d)).expect("dir"))
        .map(|e| std::fs::read_to_string(e.expect("entry").path()).expect("source"))
        .collect();
    let mut checked = 0;
    for e in std::fs::read_dir(repo().join("testbenches/verilog/rtl")).expect("rtl") {
        let src = std::fs::read_to_string(e.expect("entry").path()).expect("source");
        for line in src
            .lines()
            .map(str::trim)
            .filter(|l| l.len() >= 20 && !l.starts_with("//"))
        {
            if given.contains(line) {
                continue;
            }
            checked += 1;
            assert!(
                !text.contains(line),
                "reference line {line:?} reached the student edition"
            );
        }
    }
    assert!(checked > 100, "{checked}");
    // Lab 5's answer in particular: the multiplexer and the metadata register are not there.
    for line in [
        "b_sel = b_in[31:16];",
        "meta_out <= meta_in;",
        "m_dly[1] <= meta_col",
    ] {
        assert!(!text.contains(line), "{line:?} reached the student edition");
    }
    // A second export into the same folder is refused.
    let (code, _, err) = export(&["--student", &student.display().to_string()]);
    assert_eq!(code, 2);
    assert!(err.contains("exists and is not empty"), "{err}");
    // The instructor edition keeps the references, the rubric and the answers.
    let instructor = root.join("instructor");
    let (code, _, err) = export(&["--instructor", &instructor.display().to_string()]);
    assert_eq!(code, 0, "{err}");
    let names: Vec<String> = tree(&instructor).into_iter().map(|(n, _)| n).collect();
    for f in [
        "testbenches/verilog/rtl/pe.v",
        "testbenches/verilog/rtl/fp32_add.v",
        "testbenches/verilog/rtl/mac_mesh.v",
        "testbenches/verilog/rtl/pe_sparse.v",
        "testbenches/verilog/rtl/mesh4x4_sparse.v",
        "docs/course/rubric.md",
    ] {
        assert!(names.iter().any(|n| n == f), "{f} missing: {names:?}");
    }
    let lab0 = std::fs::read_to_string(instructor.join("docs/course/lab0.md")).expect("lab 0");
    assert!(lab0.contains("## Instructor section"));
    std::fs::remove_dir_all(&root).expect("clean up");
}
