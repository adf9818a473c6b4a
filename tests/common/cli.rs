//! Shared helpers for the tests that drive the `tcrtl` binary.
#![allow(dead_code)]

use std::process::{Command, Output};

/// Runs the built `tcrtl` with `args`.
pub fn tcrtl(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcrtl"))
        .args(args)
        .output()
        .expect("run tcrtl")
}

/// Bytes as text (lossy).
pub fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// An input or I/O error: exit code 2, exactly one stderr line `error: ...` containing
/// `needle`, no panic.
pub fn assert_error(o: &Output, needle: &str) {
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "stderr: {err}");
    assert!(!err.contains("panicked"), "{err}");
    assert_eq!(err.trim().lines().count(), 1, "{err}");
    assert!(
        err.starts_with("error: ") && err.contains(needle),
        "{needle:?} not in {err}"
    );
}

/// A fresh, empty scratch directory `tcrtl-<tag>-<pid>-<name>` for one test.
pub fn scratch(tag: &str, name: &str) -> std::path::PathBuf {
    let d = std::env::temp_dir().join(format!("tcrtl-{tag}-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).expect("scratch dir");
    d
}

/// The path of `f` in `d`, as a string argument.
pub fn p(d: &std::path::Path, f: &str) -> String {
    d.join(f).display().to_string()
}

/// The names in `dir`, sorted.
pub fn listing(dir: &std::path::Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dir)
        .expect("read dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    v.sort();
    v
}

/// A version 1.0 `.npy` header (padded to 64 bytes) for `descr` and the shape text `shape`,
/// with no payload.
pub fn npy_header(descr: &str, shape: &str) -> Vec<u8> {
    let mut h = format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape}, }}");
    let pad = (64 - (10 + h.len() + 1) % 64) % 64;
    h.push_str(&" ".repeat(pad));
    h.push('\n');
    let mut b = b"\x93NUMPY\x01\x00".to_vec();
    b.extend_from_slice(&(h.len() as u16).to_le_bytes());
    b.extend_from_slice(h.as_bytes());
    b
}
