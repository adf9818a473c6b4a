//! The testbench runner: what makes a testbench fail, and the registry.

use crate::common::cli::{scratch, tcrtl, text};
use tensorcore_rtl::tb::{find, registry, run_one, run_one_opts, Bench, RunOptions, Testbench};

fn failing(tb: &mut Bench) -> Result<(), String> {
    tb.check_bits("one", 0x3F80_0000, 0x3F80_0000);
    tb.check_bits("two", 0x3F80_0001, 0x3F80_0000);
    Ok(())
}

fn empty(_: &mut Bench) -> Result<(), String> {
    Ok(())
}

fn erring(tb: &mut Bench) -> Result<(), String> {
    tb.check("fine", true);
    Err("design refused".into())
}

#[test]
fn a_mismatch_an_error_or_no_check_fails() {
    let dir = std::env::temp_dir().join(format!("tcrtl-tb-unit-{}", std::process::id()));
    let t = |run| Testbench {
        name: "x",
        about: "",
        run,
        takes_array: false,
    };
    let r = run_one(&t(failing), &dir);
    assert!(!r.passed);
    assert_eq!((r.checks, r.mismatches), (2, 1));
    assert!(r.failures[0].contains("two"), "{:?}", r.failures);
    assert!(r.line().starts_with("FAIL x: 2 checks, 1 mismatches"));
    assert!(!run_one(&t(empty), &dir).passed);
    let r = run_one(&t(erring), &dir);
    assert!(!r.passed && r.error.as_deref() == Some("design refused"));
    let _ = std::fs::remove_dir_all(&dir);
}

#[test]
fn registry_is_sorted_and_complete() {
    let names: Vec<&str> = registry().iter().map(|t| t.name).collect();
    let mut sorted = names.clone();
    sorted.sort();
    assert_eq!(names, sorted);
    assert!(names.len() >= 6);
    assert!(find("specials").is_some() && find("nope").is_none());
}

/// `tb run --rows R --cols C`: the testbenches that build their cores through `Bench::array`
/// pass on other arrays (the reference checks and the tile and latency formulas in R and C),
/// the others are refused before anything runs, and a size out of range is one line.
#[test]
fn sized_testbenches_run_on_other_arrays_and_the_others_refuse_a_size() {
    let sized: Vec<&str> = registry()
        .iter()
        .filter(|t| t.takes_array)
        .map(|t| t.name)
        .collect();
    for name in [
        "mesh_fp16",
        "gemm_odd_shapes",
        "sparse_2_4",
        "mx_blocks",
        "specials",
    ] {
        assert!(sized.contains(&name), "{name} takes no size: {sized:?}");
    }
    assert!(!find("mac_mesh").expect("mac_mesh").takes_array);
    let dir = scratch("tb_sized", "lib");
    for (rows, cols) in [(1, 1), (3, 5), (8, 2)] {
        for name in ["mesh_fp16", "gemm_odd_shapes", "sparse_2_4"] {
            let opts = RunOptions {
                array: Some((rows, cols)),
                ..RunOptions::default()
            };
            let r = run_one_opts(find(name).expect("registered"), &dir, &opts);
            assert!(r.passed, "{name} on {rows} x {cols}: {}", r.line());
            assert!(r.checks > 100, "{name}: {}", r.line());
        }
    }
    // A size for a testbench that builds its own array is the report's error.
    let opts = RunOptions {
        array: Some((2, 2)),
        ..RunOptions::default()
    };
    let r = run_one_opts(find("mac_mesh").expect("registered"), &dir, &opts);
    assert!(!r.passed && r.error.as_deref().is_some_and(|e| e.contains("--rows")));

    // The command line refuses before running, exit 2 with one line.
    let waves = dir.join("cli");
    let waves = waves.to_str().expect("utf-8 path");
    let o = tcrtl(&[
        "tb", "run", "mac_mesh", "--rows", "2", "--cols", "2", "--waves", waves,
    ]);
    assert_eq!(o.status.code(), Some(2));
    let err = text(&o.stderr);
    assert!(
        err.contains("mac_mesh builds its own array") && err.lines().count() == 1,
        "{err}"
    );
    let o = tcrtl(&[
        "tb",
        "run",
        "mesh_fp16",
        "--rows",
        "33",
        "--cols",
        "2",
        "--waves",
        waves,
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o.stderr).contains("1 to 32"), "{}", text(&o.stderr));
    // `all` with a size runs exactly the sized testbenches.
    let o = tcrtl(&[
        "tb", "run", "all", "--rows", "2", "--cols", "3", "--waves", waves,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stdout));
    let out = text(&o.stdout);
    assert!(
        out.contains(&format!("{n} of {n} testbenches passed", n = sized.len())),
        "{out}"
    );
    assert!(!out.contains("mac_mesh"), "{out}");
    let _ = std::fs::remove_dir_all(&dir);
}
