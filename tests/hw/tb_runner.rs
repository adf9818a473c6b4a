//! The testbench runner: what makes a testbench fail, and the registry.

use tensorcore_rtl::tb::{find, registry, run_one, Bench, Testbench};

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
