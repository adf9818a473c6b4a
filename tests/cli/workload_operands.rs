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

/// Writes an integer `.npy` (`descr` `|i1`, `|u1`, `<i2`, `<i4` or `<i8`) of `rows x cols`
/// whose element `i` is `f(i)`.
fn write_int(path: &Path, descr: &str, rows: usize, cols: usize, f: impl Fn(usize) -> i64) {
    let size: usize = descr[2..].parse().unwrap();
    let mut b = npy_header(descr, &format!("({rows}, {cols})"));
    for i in 0..rows * cols {
        b.extend_from_slice(&f(i).to_le_bytes()[..size]);
    }
    std::fs::write(path, b).unwrap();
}

fn summary(dir: &Path) -> Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("summary.json")).unwrap()).unwrap()
}

/// The FNV-1a of D computed here with one product a PE step (`--width 1`): from C, each step
/// adds its product exactly and wraps the sum to int32, or clamps it to int32's range
/// (`satfinite`).
fn int_d_digest(
    a: &[i64],
    b: &[i64],
    c: &[i64],
    (m, n, k): (usize, usize, usize),
    satfinite: bool,
) -> String {
    let mut bytes = Vec::new();
    for i in 0..m {
        for j in 0..n {
            let mut acc = c[i * n + j];
            for p in 0..k {
                let sum = acc + a[i * k + p] * b[p * n + j];
                acc = if satfinite {
                    sum.clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                } else {
                    i64::from(sum as i32)
                };
            }
            let word = acc as i32;
            bytes.extend_from_slice(&word.to_le_bytes());
        }
    }
    fnv1a64(&bytes)
}

/// Integer operands from files: s8 x s8 from int16 and int64 arrays, u8 x s8 (mixed) from
/// uint8 and int32, C int32 near the top of its range, so that wrapping and satfinite differ;
/// each layer's D equals the exact integer product with the rule applied (computed here) and
/// that of `tcrtl gemm` on int8 copies of the same values. Refusals: a value out of the
/// format's range (the file, the element and the range), a float array, an int16 C.
#[test]
fn integer_operand_files_give_the_exact_product() {
    let d = scratch("workload", "int_operands");
    let ops = d.join("ops");
    std::fs::create_dir_all(&ops).unwrap();
    let (m, n, k) = (5, 3, 4);
    let a: Vec<i64> = (0..m * k).map(|i| (i as i64 * 37 % 255) - 127).collect();
    let b: Vec<i64> = (0..k * n).map(|i| (i as i64 * 53 % 256) - 128).collect();
    // C near i32::MAX: the products' sum runs past it in some elements.
    let c: Vec<i64> = (0..m * n)
        .map(|i| i64::from(i32::MAX) - 20_000 * i as i64)
        .collect();
    write_int(&ops.join("L.a.npy"), "<i2", m, k, |i| a[i]);
    write_int(&ops.join("L.b.npy"), "<i8", k, n, |i| b[i]);
    write_int(&ops.join("L.c.npy"), "<i4", m, n, |i| c[i]);
    let ua: Vec<i64> = (0..m * k).map(|i| i as i64 * 13 % 256).collect();
    let sb: Vec<i64> = (0..k * n).map(|i| (i as i64 * 5 % 16) - 8).collect();
    write_int(&ops.join("M.a.npy"), "|u1", m, k, |i| ua[i]);
    write_int(&ops.join("M.b.npy"), "<i4", k, n, |i| sb[i]);
    let t = p(&d, "topo.csv");
    std::fs::write(&t, format!("Layer, M, N, K,\nL, {m}, {n}, {k},\n")).unwrap();
    let t_mixed = p(&d, "mixed.csv");
    std::fs::write(&t_mixed, format!("Layer, M, N, K,\nM, {m}, {n}, {k},\n")).unwrap();
    let o_dir = ops.display().to_string();
    let run = |topo: &str, out: &str, extra: &[&str]| {
        let mut args = vec![
            "workload",
            "run",
            topo,
            "--out",
            out,
            "--operands",
            &o_dir,
            "--rows",
            "2",
            "--cols",
            "2",
        ];
        args.extend(extra);
        tcrtl(&args)
    };
    let zeros = vec![0; m * n];
    for (name, satfinite) in [("wrap", false), ("sat", true)] {
        let out = d.join(name);
        let extra: &[&str] = if satfinite {
            &["--format", "s8", "--satfinite"]
        } else {
            &["--format", "s8"]
        };
        let o = run(&t, &out.display().to_string(), extra);
        assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
        let s = summary(&out);
        assert_eq!(
            s["core"]["overflow"],
            if satfinite { "satfinite" } else { "wrap" }
        );
        assert_eq!(s["layers"][0]["mismatches"], 0);
        assert_eq!(s["layers"][0]["checked"], m * n);
        let want = int_d_digest(&a, &b, &c, (m, n, k), satfinite);
        assert_eq!(s["layers"][0]["d_digest"], want, "{name}");
        // tcrtl gemm on int8 copies of the same values gives the same D.
        write_int(&d.join("a8.npy"), "|i1", m, k, |i| a[i]);
        write_int(&d.join("b8.npy"), "|i1", k, n, |i| b[i]);
        let dp = p(&d, "d.npy");
        let (pa, pb, pc) = (p(&d, "a8.npy"), p(&d, "b8.npy"), p(&ops, "L.c.npy"));
        let mut args = vec![
            "gemm", "--format", "s8", "--a", &pa, "--b", &pb, "--c", &pc, "--out", &dp,
        ];
        if satfinite {
            args.push("--satfinite");
        }
        let g = tcrtl(&args);
        assert_eq!(g.status.code(), Some(0), "{}", text(&g.stderr));
        assert_eq!(
            fnv1a64(&payload(&d.join("d.npy"))),
            want,
            "{name}: tcrtl gemm"
        );
    }
    // The sums wrap in some elements (so the two rules were told apart).
    assert_ne!(
        int_d_digest(&a, &b, &c, (m, n, k), false),
        int_d_digest(&a, &b, &c, (m, n, k), true)
    );
    // Mixed u8 x s8 from uint8 and int32 arrays, C absent, weight-stationary.
    let mixed = d.join("mixed");
    let o = run(
        &t_mixed,
        &mixed.display().to_string(),
        &["--format", "u8", "--format-b", "s8", "--dataflow", "ws"],
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = summary(&mixed);
    assert_eq!(s["layers"][0]["mismatches"], 0);
    assert_eq!(
        s["layers"][0]["d_digest"],
        int_d_digest(&ua, &sb, &zeros, (m, n, k), false)
    );
    // Refusals.
    let bad = d.join("bad");
    let bo = bad.display().to_string();
    // 300 in int16 is out of s8's range: found when the layer loads, one line, exit 2.
    write_int(&ops.join("L.a.npy"), "<i2", m, k, |i| {
        if i == 6 {
            300
        } else {
            a[i]
        }
    });
    assert_error(
        &run(&t, &bo, &["--format", "s8"]),
        "L.a.npy: A[1, 2] = 300 is out of range for s8 (-128..=127)",
    );
    // u8 holds 0..=255.
    assert_error(
        &run(&t_mixed, &bo, &["--format", "u8"]),
        "M.b.npy: B[0, 0] = -8 is out of range for u8 (0..=255)",
    );
    // A float array for an integer format, an int16 C: refused before any layer runs.
    let _ = std::fs::remove_dir_all(&bad);
    write_f32(&ops.join("L.a.npy"), m, k, |_| 1.0);
    assert_error(
        &run(&t, &bo, &["--format", "s8"]),
        "L.a.npy: A of layer 0 (L) has dtype float32; integer formats take int8",
    );
    write_int(&ops.join("L.a.npy"), "<i2", m, k, |i| a[i]);
    write_int(&ops.join("L.c.npy"), "<i2", m, n, |_| 1);
    assert_error(
        &run(&t, &bo, &["--format", "s8"]),
        "L.c.npy: C of layer 0 (L) has dtype int16; integer formats take C as int32",
    );
    assert!(!bad.exists(), "a refused run wrote {}", bad.display());
    let _ = std::fs::remove_dir_all(&d);
}

/// Each operand file's size and FNV-1a are in summary.json; a resume after a file changed,
/// and a merge of shards run before and after a file changed, are refused in one line that
/// names the file (exit 2), the report left as it was.
#[test]
fn changed_operand_files_are_refused_on_resume_and_merge() {
    let d = scratch("workload", "operand_prints");
    let ops = d.join("ops");
    std::fs::create_dir_all(&ops).unwrap();
    let mut topo = String::from("Layer, M, N, K,\n");
    for name in ["x", "y"] {
        topo.push_str(&format!("{name}, 3, 4, 5,\n"));
        write_f32(&ops.join(format!("{name}.a.npy")), 3, 5, |i| (i % 4) as f32);
        write_f32(&ops.join(format!("{name}.b.npy")), 5, 4, |i| (i % 3) as f32);
    }
    let t = p(&d, "topo.csv");
    std::fs::write(&t, topo).unwrap();
    let o_dir = ops.display().to_string();
    let run = |out: &str, extra: &[&str]| {
        let mut args = vec!["workload", "run", &t, "--out", out, "--operands", &o_dir];
        args.extend(extra);
        tcrtl(&args)
    };
    // The fingerprints, as computed here.
    let whole = d.join("whole");
    let o = run(&whole.display().to_string(), &[]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let s = summary(&whole);
    let bytes = std::fs::read(ops.join("y.b.npy")).unwrap();
    assert_eq!(s["operand_files"]["y.b.npy"]["digest"], fnv1a64(&bytes));
    assert_eq!(s["operand_files"]["y.b.npy"]["bytes"], bytes.len());
    assert_eq!(s["operand_files"].as_object().unwrap().len(), 4);
    // Shard 0 (layer x), then y's B changes, then shard 1 (layer y): the merge is refused.
    let (s0, s1) = (p(&d, "s0"), p(&d, "s1"));
    assert_eq!(run(&s0, &["--shard", "0/2"]).status.code(), Some(0));
    write_f32(&ops.join("y.b.npy"), 5, 4, |i| (i % 5) as f32);
    assert_eq!(run(&s1, &["--shard", "1/2"]).status.code(), Some(0));
    let merged = p(&d, "merged");
    let o = tcrtl(&["workload", "merge", &s0, &s1, "--out", &merged]);
    assert_error(&o, "was run on other operand files than");
    assert!(
        text(&o.stderr).contains("its y.b.npy is fnv1a64:"),
        "{}",
        text(&o.stderr)
    );
    assert!(!Path::new(&merged).exists());
    // Shard 0 again on the new files: the merge goes through.
    assert_eq!(run(&s0, &["--shard", "0/2"]).status.code(), Some(0));
    let o = tcrtl(&["workload", "merge", &s0, &s1, "--out", &merged]);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    // A run stopped after its first layer; x's A changes; --resume is refused.
    let stopped = d.join("stopped");
    let so = stopped.display().to_string();
    assert_eq!(run(&so, &["--stop-after", "1"]).status.code(), Some(130));
    let before = std::fs::read(stopped.join("summary.json")).unwrap();
    write_f32(&ops.join("x.a.npy"), 3, 5, |i| (i % 2) as f32);
    let o = run(&so, &["--resume"]);
    assert_error(&o, "--resume: ");
    assert!(
        text(&o.stderr).contains("was run on other operand files: x.a.npy was fnv1a64:"),
        "{}",
        text(&o.stderr)
    );
    assert_eq!(std::fs::read(stopped.join("summary.json")).unwrap(), before);
    let _ = std::fs::remove_dir_all(&d);
}
