//! Every Verilog file of the course (`testbenches/verilog/`: references, testbenches,
//! skeletons) under the three tools a class meets: Icarus Verilog as Verilog-2005
//! (`iverilog -g2005 -Wall`) and as SystemVerilog (`-g2012`, what cocotb's Icarus runner
//! passes), and Verilator's linter (`verilator --lint-only -Wall`, which reads `.v` files as
//! SystemVerilog). Each build (a testbench with the design it drives) must compile with no
//! output at all; a file may waive one Verilator warning only with a `lint_off` comment that
//! says why, next to the code it covers. Every `.v` file must belong to at least one build, so
//! a new file cannot escape the check.
//!
//! Needs `iverilog` and `verilator` (`.ci/run` installs both). A missing tool skips its part
//! with a printed reason, or fails when `CI=true`.

use crate::verilog_util::tool_ready;
use std::path::{Path, PathBuf};
use std::process::Command;

/// The course's Verilog folder.
fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches/verilog")
}

/// The builds: top module and the files it compiles, relative to the Verilog folder.
const BUILDS: [(&str, &[&str]); 10] = [
    (
        "tb_pe",
        &["rtl/fp16_mul.v", "rtl/fp32_add.v", "rtl/pe.v", "tb/tb_pe.v"],
    ),
    ("tb_pe", &["skeleton/pe.v", "tb/tb_pe.v"]),
    (
        "tb_mesh",
        &[
            "rtl/fp16_mul.v",
            "rtl/fp32_add.v",
            "rtl/pe.v",
            "rtl/mesh4x4.v",
            "tb/tb_mesh.v",
        ],
    ),
    (
        "tb_mesh",
        &["skeleton/pe.v", "rtl/mesh4x4.v", "tb/tb_mesh.v"],
    ),
    (
        "tb_mesh",
        &[
            "rtl/fp16_mul.v",
            "rtl/fp32_add.v",
            "rtl/pe.v",
            "skeleton/mesh4x4.v",
            "tb/tb_mesh.v",
        ],
    ),
    (
        "tb_mesh_sparse",
        &[
            "rtl/fp16_mul.v",
            "rtl/fp32_add.v",
            "rtl/pe_sparse.v",
            "rtl/mesh4x4_sparse.v",
            "tb/tb_mesh_sparse.v",
        ],
    ),
    (
        "tb_mesh_sparse",
        &[
            "skeleton/pe_sparse.v",
            "rtl/mesh4x4_sparse.v",
            "tb/tb_mesh_sparse.v",
        ],
    ),
    (
        "tb_mesh_sparse",
        &[
            "rtl/fp16_mul.v",
            "rtl/fp32_add.v",
            "rtl/pe_sparse.v",
            "skeleton/mesh4x4_sparse.v",
            "tb/tb_mesh_sparse.v",
        ],
    ),
    (
        "tb_mac_mesh",
        &["rtl/mac_pe.v", "rtl/mac_mesh.v", "tb/tb_mac_mesh.v"],
    ),
    (
        "tb_mac_mesh",
        &[
            "skeleton/mac_pe.v",
            "skeleton/mac_mesh.v",
            "tb/tb_mac_mesh.v",
        ],
    ),
];

/// Every `.v` file under the Verilog folder, relative to it.
fn all_sources() -> Vec<String> {
    let mut out = Vec::new();
    for sub in ["rtl", "tb", "skeleton"] {
        let dir = root().join(sub);
        for e in std::fs::read_dir(&dir).expect("Verilog folder") {
            let name = e.expect("entry").file_name().to_string_lossy().to_string();
            if name.ends_with(".v") {
                out.push(format!("{sub}/{name}"));
            }
        }
    }
    out.sort();
    out
}

#[test]
fn every_verilog_file_belongs_to_a_linted_build() {
    let sources = all_sources();
    assert!(sources.len() >= 15, "{sources:?}");
    for s in &sources {
        assert!(
            BUILDS.iter().any(|(_, files)| files.contains(&s.as_str())),
            "{s} is in no build of this test: add it to BUILDS"
        );
    }
}

#[test]
fn iverilog_2005_and_2012_compile_every_build_without_a_warning() {
    if !tool_ready("iverilog", "-V") {
        return;
    }
    let dir = std::env::temp_dir().join(format!("tcrtl-lint-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("scratch");
    for (top, files) in BUILDS {
        for std in ["-g2005", "-g2012"] {
            let o = Command::new("iverilog")
                .current_dir(root())
                .args([std, "-Wall", "-s", top, "-o"])
                .arg(dir.join("lint.vvp"))
                .args(files)
                .output()
                .expect("run iverilog");
            let text = String::from_utf8_lossy(&o.stdout).to_string()
                + &String::from_utf8_lossy(&o.stderr);
            assert!(
                o.status.success() && text.trim().is_empty(),
                "iverilog {std} -Wall {files:?}:\n{text}"
            );
        }
    }
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn verilator_lint_wall_passes_every_build() {
    if !tool_ready("verilator", "--version") {
        return;
    }
    for (top, files) in BUILDS {
        let o = Command::new("verilator")
            .current_dir(root())
            .args(["--lint-only", "-Wall", "--timing", "--top-module", top])
            .args(files)
            .output()
            .expect("run verilator");
        let text =
            String::from_utf8_lossy(&o.stdout).to_string() + &String::from_utf8_lossy(&o.stderr);
        assert!(
            o.status.success() && text.trim().is_empty(),
            "verilator --lint-only -Wall {files:?}:\n{text}"
        );
    }
}

#[test]
fn every_lint_waiver_says_why() {
    // A `lint_off` must sit under a comment line that names the warning and gives a reason.
    for s in all_sources() {
        let text = std::fs::read_to_string(root().join(&s)).expect("source");
        let lines: Vec<&str> = text.lines().collect();
        for (i, l) in lines.iter().enumerate() {
            if let Some(rest) = l.split("lint_off ").nth(1) {
                let warning = rest.split_whitespace().next().unwrap_or("");
                let above = lines[..i]
                    .iter()
                    .rev()
                    .take_while(|p| p.trim_start().starts_with("//"))
                    .map(|p| p.to_string())
                    .collect::<Vec<_>>()
                    .join(" ");
                assert!(
                    above.contains(&format!("Lint waiver ({warning})")) && above.len() > 40,
                    "{s} line {}: lint_off {warning} without a 'Lint waiver ({warning}): why' comment above it",
                    i + 1
                );
            }
        }
    }
}
