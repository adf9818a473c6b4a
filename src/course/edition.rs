//! The student and instructor editions of the course (`tcrtl course export`).
//!
//! The student edition keeps the repository's layout for what a student needs, so every path
//! in the labs stays valid: `docs/course/` with each lab cut at its `## Instructor section`
//! (the answers and reference solutions are in that last section of every lab), the port
//! interfaces, the screenshots and the per-question GTKWave save files (`docs/course/gtkw/`); `testbenches/verilog/skeleton/` and `tb/` (the skeletons
//! instead of the references: no `rtl/`); and the public tests under `public/`: one golden
//! folder per Verilog task from the model (`pe_random`: `tcrtl gemm --m 5 --n 7 --k 9 --seed
//! 3 --memh`; `pe_sparse_random`: `tcrtl gemm --sparse --m 5 --n 7 --k 12 --seed 3 --memh`;
//! `mac_mesh`: 40 cycles). The rubric and the hidden tests stay with the
//! instructor. The instructor edition is the same folders uncut, references and rubric
//! included.

use crate::course::spec::{Golden, TestCase};
use std::path::{Path, PathBuf};

/// The heading that starts the instructor-only part of a lab.
pub const INSTRUCTOR_HEADING: &str = "## Instructor section";

/// Lab files (the course folder's `labN.md`).
fn is_lab(name: &str) -> bool {
    name.starts_with("lab") && name.ends_with(".md")
}

/// A lab's text without its instructor section.
pub fn student_text(lab: &str) -> &str {
    match lab.find(INSTRUCTOR_HEADING) {
        Some(i) => lab[..i].trim_end_matches('\n'),
        None => lab,
    }
}

/// The files of `dir` (not recursive), sorted by name.
fn files(dir: &Path) -> Result<Vec<PathBuf>, String> {
    let mut out: Vec<PathBuf> = std::fs::read_dir(dir)
        .map_err(|e| format!("{}: {e}", dir.display()))?
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.is_file())
        .collect();
    out.sort();
    Ok(out)
}

/// Copies `from` to `to`, creating the folder.
fn copy(from: &Path, to: &Path) -> Result<(), String> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::copy(from, to)
        .map(|_| ())
        .map_err(|e| format!("{} -> {}: {e}", from.display(), to.display()))
}

/// Writes `text` to `to`, creating the folder.
fn write(to: &Path, text: &str) -> Result<(), String> {
    if let Some(parent) = to.parent() {
        std::fs::create_dir_all(parent).map_err(|e| format!("{}: {e}", parent.display()))?;
    }
    std::fs::write(to, text).map_err(|e| format!("{}: {e}", to.display()))
}

/// Refuses an existing, non-empty output folder.
fn fresh(out: &Path) -> Result<(), String> {
    if out.exists()
        && std::fs::read_dir(out)
            .map_err(|e| format!("{}: {e}", out.display()))?
            .next()
            .is_some()
    {
        return Err(format!(
            "{}: exists and is not empty (export into a new folder)",
            out.display()
        ));
    }
    std::fs::create_dir_all(out).map_err(|e| format!("{}: {e}", out.display()))
}

/// Writes the student edition of the course found in `repo` into the new folder `out`;
/// returns the files written, relative to `out`, sorted.
pub fn export_student(repo: &Path, out: &Path) -> Result<Vec<String>, String> {
    fresh(out)?;
    let course = repo.join("docs/course");
    for f in files(&course)? {
        let name = f.file_name().map(|n| n.to_string_lossy().to_string());
        let name = name.unwrap_or_default();
        let to = out.join("docs/course").join(&name);
        if is_lab(&name) {
            let text = std::fs::read_to_string(&f).map_err(|e| format!("{}: {e}", f.display()))?;
            write(
                &to,
                &format!(
                    "{}\n\n(Student edition: the answers are with your instructor.)\n",
                    student_text(&text)
                ),
            )?;
        } else if name == "README.md" || name == "interfaces.md" {
            copy(&f, &to)?;
        }
    }
    for sub in ["img", "gtkw"] {
        for f in files(&course.join(sub))? {
            copy(
                &f,
                &out.join("docs/course")
                    .join(sub)
                    .join(f.file_name().unwrap_or_default()),
            )?;
        }
    }
    let verilog = repo.join("testbenches/verilog");
    for sub in ["skeleton", "tb"] {
        for f in files(&verilog.join(sub))? {
            let to = out
                .join("testbenches/verilog")
                .join(sub)
                .join(f.file_name().unwrap_or_default());
            copy(&f, &to)?;
        }
    }
    write(
        &out.join("README.md"),
        "# Tensor core course: student edition\n\n\
         - `docs/course/`: the labs (start with `README.md`) and the port interfaces of the \
         Verilog tasks.\n\
         - `testbenches/verilog/skeleton/`: the designs you complete; `tb/`: the testbenches.\n\
         - `public/`: golden folders to test against (`pe_random` for the PE and mesh tasks, \
         `pe_sparse_random` for lab 5's sparse PE, `mac_mesh` for lab 0), graded with \
         `tcrtl grade --golden public/... --student OUT`.\n\n\
         Your submission is graded on further tests you have not seen.\n",
    )?;
    let public = [
        TestCase {
            name: "pe_random".into(),
            points: 0,
            golden: Golden::Random {
                m: 5,
                n: 7,
                k: 9,
                seed: 3,
            },
        },
        TestCase {
            name: "pe_sparse_random".into(),
            points: 0,
            golden: Golden::Sparse {
                m: 5,
                n: 7,
                k: 12,
                seed: 3,
            },
        },
        TestCase {
            name: "mac_mesh".into(),
            points: 0,
            golden: Golden::Cycles(40),
        },
    ];
    for t in &public {
        t.write_golden(&out.join("public").join(&t.name))?;
    }
    listing(out)
}

/// Writes the instructor edition: the course folders of `repo` uncut.
pub fn export_instructor(repo: &Path, out: &Path) -> Result<Vec<String>, String> {
    fresh(out)?;
    let course = repo.join("docs/course");
    for (from, to) in [
        (course.clone(), out.join("docs/course")),
        (course.join("img"), out.join("docs/course/img")),
        (course.join("gtkw"), out.join("docs/course/gtkw")),
    ] {
        for f in files(&from)? {
            copy(&f, &to.join(f.file_name().unwrap_or_default()))?;
        }
    }
    let verilog = repo.join("testbenches/verilog");
    for f in files(&verilog)? {
        copy(
            &f,
            &out.join("testbenches/verilog")
                .join(f.file_name().unwrap_or_default()),
        )?;
    }
    for sub in ["rtl", "skeleton", "tb"] {
        for f in files(&verilog.join(sub))? {
            let to = out
                .join("testbenches/verilog")
                .join(sub)
                .join(f.file_name().unwrap_or_default());
            copy(&f, &to)?;
        }
    }
    listing(out)
}

/// Every file under `root`, relative, sorted.
fn listing(root: &Path) -> Result<Vec<String>, String> {
    fn walk(dir: &Path, root: &Path, out: &mut Vec<String>) -> Result<(), String> {
        for e in std::fs::read_dir(dir).map_err(|e| format!("{}: {e}", dir.display()))? {
            let p = e.map_err(|e| format!("{}: {e}", dir.display()))?.path();
            if p.is_dir() {
                walk(&p, root, out)?;
            } else if let Ok(rel) = p.strip_prefix(root) {
                out.push(rel.to_string_lossy().to_string());
            }
        }
        Ok(())
    }
    let mut out = Vec::new();
    walk(root, root, &mut out)?;
    out.sort();
    Ok(out)
}
