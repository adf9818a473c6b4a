//! The output plan: the same file named twice is refused.

use std::path::PathBuf;
use tensorcore_rtl::io::OutputPlan;

fn dir(name: &str) -> PathBuf {
    let d = std::env::temp_dir().join(format!("tcrtl-output-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("temp dir");
    d
}

#[test]
fn the_same_file_twice_is_refused() {
    let d = dir("same");
    let mut plan = OutputPlan::new();
    plan.add("--out", &d.join("x")).expect("first");
    let e = plan
        .add("--vcd", &d.join(".").join("x"))
        .expect_err("second");
    assert!(e.contains("same file"), "{e}");
    std::os::unix::fs::symlink(d.join("y"), d.join("l")).expect("symlink");
    plan.add("--meta", &d.join("y")).expect("y");
    assert!(plan.add("--values", &d.join("l")).is_err());
    assert!(plan.add("--out", &d.join("nodir").join("z")).is_err());
    assert!(plan.add("--out", &d).is_err());
    let _ = std::fs::remove_dir_all(&d);
}
