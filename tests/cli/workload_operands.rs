//! `tcrtl workload run --operands DIR`: each layer's A, B (and C when given) from
//! `DIR/<layer>.{a,b,c}.npy`. Cross-checked against `tcrtl gemm` on the same files: each
//! layer's `d_digest` in summary.json is the FNV-1a of the D that `tcrtl gemm --out D.npy`
//! writes (computed here from the file's payload). Refusals: a missing file, a wrong shape,
//! a missing folder: one line naming the file, exit 2, no report written; a value the format
//! cannot hold: one line, exit 2, the report of the layers before it marked incomplete.

use crate::common::cli::{assert_error, npy_header, p, scratch, tcrtl, text};
use serde_json::Value;
use std::path::Path;

/// FNV-1a (64 bits) as the report writes it, computed here.
fn fnv1a64(bytes: &[u8]) -> String {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for &b in bytes {
        h ^= u64::from(b);
        h = h.wrapping_mul(0x0000_0100_0000_01b3);
    }
    format!("fnv1a64:{h:016x}")
}

/// Writes a float32 `.npy` of `rows x cols` whose element `i` is `f(i)`.
fn write_f32(path: &Path, rows: usize, cols: usize, f: impl Fn(usize) -> f32) {
    let mut b = npy_header("<f4", &format!("({rows}, {cols})"));
    for i in 0..rows * cols {
        b.extend_from_slice(&f(i).to_le_bytes());
    }
    std::fs::write(path, b).unwrap();
}

/// The payload of a version 1.0 `.npy` file (after its header).
fn payload(path: &Path) -> Vec<u8> {
    let b = std::fs::read(path).unwrap();
    assert_eq!(&b[..8], b"\x93NUMPY\x01\x00", "{}", path.display());
    let len = u16::from_le_bytes([b[8], b[9]]) as usize;
    b[10 + len..].to_vec()
}

#[test]
fn operand_files_give_the_d_of_tcrtl_gemm_on_the_same_files() {
    let d = scratch("workload", "operands");
    let ops = d.join("ops");
    std::fs::create_dir_all(&ops).unwrap();
    // Two layers; values exactly representable in FP16 (quarters from -2 to 2).
    let layers = [("proj", 5, 6, 7, true), ("mlp", 3, 4, 9, false)];
    let mut topo = String::from("Layer, M, N, K,\n");
    for (name, m, n, k, with_c) in layers {
        topo.push_str(&format!("{name}, {m}, {n}, {k},\n"));
        let q = |i: usize, s: usize| ((i * s + 3) % 17) as f32 * 0.25 - 2.0;
        write_f32(&ops.join(format!("{name}.a.npy")), m, k, |i| q(i, 5));
        write_f32(&ops.join(format!("{name}.b.npy")), k, n, |i| q(i, 7));
        if with_c {
            write_f32(&ops.join(format!("{name}.c.npy")), m, n, |i| q(i, 3) * 8.0);
        }
    }
    let t = p(&d, "topo.csv");
    std::fs::write(&t, topo).unwrap();
    let out = d.join("run");
    let o = tcrtl(&[
        "workload",
        "run",
        &t,
        "--out",
        &out.display().to_string(),
        "--operands",
        &ops.display().to_string(),
        "--rows",
        "2",
        "--cols",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(out.join("summary.json")).unwrap()).unwrap();
    assert_eq!(s["operands"], ops.display().to_string());
    for (i, (name, _, _, _, with_c)) in layers.into_iter().enumerate() {
        let l = &s["layers"][i];
        assert_eq!(l["layer"], name);
        assert_eq!(l["mismatches"], 0);
        let dpath = d.join(format!("{name}.d.npy"));
        let a = ops.join(format!("{name}.a.npy")).display().to_string();
        let b = ops.join(format!("{name}.b.npy")).display().to_string();
        let c = ops.join(format!("{name}.c.npy")).display().to_string();
        let dp = dpath.display().to_string();
        let mut args = vec!["gemm", "--a", &a, "--b", &b, "--out", &dp];
        if with_c {
            args.extend(["--c", &c]);
        }
        let g = tcrtl(&args);
        assert_eq!(g.status.code(), Some(0), "{}", text(&g.stderr));
        assert_eq!(l["d_digest"], fnv1a64(&payload(&dpath)), "{name}");
    }
    // Random operands give other D (the files were used).
    let r = d.join("random");
    let o = tcrtl(&[
        "workload",
        "run",
        &t,
        "--out",
        &r.display().to_string(),
        "--rows",
        "2",
        "--cols",
        "3",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let sr: Value =
        serde_json::from_str(&std::fs::read_to_string(r.join("summary.json")).unwrap()).unwrap();
    assert_eq!(sr["operands"], "random");
    assert_ne!(sr["layers"][0]["d_digest"], s["layers"][0]["d_digest"]);

    // Refusals: nothing written.
    let bad_out = d.join("bad");
    let bo = bad_out.display().to_string();
    let run = |dir: &str| tcrtl(&["workload", "run", &t, "--out", &bo, "--operands", dir]);
    let o_dir = ops.display().to_string();
    std::fs::rename(ops.join("mlp.b.npy"), d.join("kept.npy")).unwrap();
    assert_error(&run(&o_dir), "mlp.b.npy: no such file (B of layer 1, mlp");
    write_f32(&ops.join("mlp.b.npy"), 4, 9, |_| 1.0);
    assert_error(&run(&o_dir), "must be (9, 4), it is (4, 9)");
    assert_error(&run(&p(&d, "nowhere")), "nowhere: not a directory");
    assert!(
        !bad_out.exists(),
        "a refused run wrote {}",
        bad_out.display()
    );
    // A value FP16 cannot hold, found when its layer (the second) runs: one line naming the
    // file, exit 2, and the report stays one that says it is incomplete.
    write_f32(
        &ops.join("mlp.b.npy"),
        9,
        4,
        |i| if i == 5 { 0.1 } else { 1.0 },
    );
    // (Standard error also has the progress line of the layer that ran.)
    let o = run(&o_dir);
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(!err.contains("panicked"), "{err}");
    let errors: Vec<&str> = err.lines().filter(|l| l.starts_with("error: ")).collect();
    assert_eq!(errors.len(), 1, "{err}");
    assert!(
        errors[0].contains("mlp.b.npy: B[1][1] = ")
            && errors[0].contains("is not exactly representable in fp16"),
        "{err}"
    );
    let s: Value =
        serde_json::from_str(&std::fs::read_to_string(bad_out.join("summary.json")).unwrap())
            .unwrap();
    assert_eq!(s["complete"], false);
    assert_eq!(s["layers"].as_array().unwrap().len(), 1);
    assert_eq!(s["layers"][0]["layer"], "proj");
    assert_eq!(s["pending"][0]["layer"], "mlp");
    let rows = std::fs::read_to_string(bad_out.join("layers.csv")).unwrap();
    assert_eq!(rows.lines().count(), 2);
    let _ = std::fs::remove_dir_all(&d);
}
