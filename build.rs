//! Generates the testbench registry: every `testbenches/NAME.rs` becomes a module of
//! `tensorcore_rtl::tb` and an entry of `tb::registry()` (see `testbenches/README.md`).

use std::fmt::Write as _;
use std::path::Path;

fn main() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("testbenches");
    println!("cargo:rerun-if-changed={}", dir.display());
    let mut names: Vec<String> = std::fs::read_dir(&dir)
        .map(|rd| {
            rd.filter_map(|e| e.ok())
                .filter_map(|e| {
                    let p = e.path();
                    let stem = p.file_stem()?.to_str()?.to_string();
                    let ok = p.extension().is_some_and(|x| x == "rs")
                        && stem
                            .chars()
                            .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_')
                        && stem.starts_with(|c: char| c.is_ascii_lowercase());
                    ok.then_some(stem)
                })
                .collect()
        })
        .unwrap_or_default();
    names.sort();
    let mut out = String::new();
    for n in &names {
        let path = dir.join(format!("{n}.rs"));
        writeln!(
            out,
            "#[path = {:?}]\npub mod {n};",
            path.display().to_string()
        )
        .unwrap();
    }
    out.push_str("/// Every testbench, sorted by name.\npub static REGISTRY: &[Testbench] = &[\n");
    for n in &names {
        // A testbench that builds its cores through `Bench::array` says so with this line,
        // and `tcrtl tb run --rows R --cols C` may then size its array.
        let text = std::fs::read_to_string(dir.join(format!("{n}.rs"))).unwrap_or_default();
        let takes_array = if text.contains("pub const TAKES_ARRAY: bool") {
            format!("{n}::TAKES_ARRAY")
        } else {
            "false".to_string()
        };
        writeln!(
            out,
            "    Testbench {{ name: {n:?}, about: {n}::ABOUT, run: {n}::run, takes_array: {takes_array} }},"
        )
        .unwrap();
    }
    out.push_str("];\n");
    let dest = Path::new(&std::env::var("OUT_DIR").unwrap()).join("testbenches.rs");
    std::fs::write(dest, out).unwrap();
}
