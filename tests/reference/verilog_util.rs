//! What the Verilog and course tests share: the course's Verilog folder, scratch folders, the
//! tool checks (a missing tool skips with a printed reason, or fails under `CI=true`) and
//! running `tcrtl`, and the golden images of one GEMM.

use std::path::{Path, PathBuf};
use std::process::Command;

/// `rel` under the course's Verilog folder (`testbenches/verilog/`).
pub fn verilog(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("testbenches/verilog")
        .join(rel)
}

/// A fresh, empty scratch folder `tcrtl-<kind>-<pid>-<name>` under the system's temporary
/// folder.
pub fn scratch(kind: &str, name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tcrtl-{kind}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("scratch folder");
    dir
}

/// True when `tool` answers `version_flag`; otherwise prints why the test is skipped (a
/// failure under `CI=true`, where `.ci/run` has installed it).
pub fn tool_ready(tool: &str, version_flag: &str) -> bool {
    let ok = Command::new(tool).arg(version_flag).output().is_ok();
    if !ok {
        if std::env::var("CI").is_ok_and(|v| v == "true") {
            panic!("{tool} not found, and CI=true: .ci/run installs it");
        }
        eprintln!(
            "SKIPPED: {tool} not found (apt-get install {tool}); CI=true makes this a failure"
        );
    }
    ok
}

/// True when Icarus Verilog (`iverilog` and `vvp`) can be used.
pub fn iverilog_ready() -> bool {
    tool_ready("iverilog", "-V") && tool_ready("vvp", "-V")
}

/// Runs `tcrtl` with `args`; returns (exit code, stdout, stderr).
pub fn tcrtl(args: &[&str]) -> (i32, String, String) {
    let o = Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(args)
        .output()
        .expect("run tcrtl");
    (
        o.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&o.stdout).to_string(),
        String::from_utf8_lossy(&o.stderr).to_string(),
    )
}

/// The golden images of one problem: `tcrtl gemm ARGS --memh FOLDER`, into `folder` (made
/// first). Fails the test with tcrtl's message if the run fails.
pub fn gemm_images(folder: &Path, args: &[&str]) {
    std::fs::create_dir_all(folder).expect("golden folder");
    let f = folder.display().to_string();
    let mut all = vec!["gemm"];
    all.extend_from_slice(args);
    all.extend(["--memh", f.as_str()]);
    let (code, _, err) = tcrtl(&all);
    assert_eq!(code, 0, "{err}");
}
