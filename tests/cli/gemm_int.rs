//! `tcrtl gemm` with integer formats, run as the built binary: int8/uint8 operands and int32
//! C from .npy through the clocked mesh, D against an i64 reference computed here; seeded
//! random problems checked by the command; and bad input.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};

/// D = A x B + C by i64 arithmetic, each chunk of `w` products along K wrapped or clamped.
fn reference(
    a: &[i64],
    b: &[i64],
    c: &[i32],
    (m, n, k): (usize, usize, usize),
    w: usize,
    sat: bool,
) -> Vec<i32> {
    let mut d = Vec::new();
    for i in 0..m {
        for j in 0..n {
            let mut acc = i64::from(c[i * n + j]);
            for p0 in (0..k).step_by(w) {
                acc += (p0..(p0 + w).min(k))
                    .map(|p| a[i * k + p] * b[p * n + j])
                    .sum::<i64>();
                acc = if sat {
                    acc.clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                } else {
                    i64::from(acc as i32)
                };
            }
            d.push(acc as i32);
        }
    }
    d
}

#[test]
fn npy_operands_through_the_mesh() {
    let d = scratch("gemm-int", "npy");
    let (m, n, k) = (6usize, 5usize, 37usize);
    // s8 A (extremes and a ramp), u8 B, C near the int32 limits.
    let a: Vec<i64> = (0..m * k)
        .map(|i| [127, -128, (i as i64 * 29) % 256 - 128][i % 3])
        .collect();
    let b: Vec<i64> = (0..k * n)
        .map(|i| [255, (i as i64 * 53) % 256][i % 2])
        .collect();
    let c: Vec<i32> = (0..m * n)
        .map(|i| [i32::MAX - 1000, i32::MIN + 1000, i as i32 * 7919 - 100_000][i % 3])
        .collect();
    write_npy(
        &d.join("a.npy"),
        &[m, k],
        Dtype::I8,
        &a.iter().map(|&v| v as u8 as u64).collect::<Vec<_>>(),
    )
    .expect("A");
    write_npy(
        &d.join("b.npy"),
        &[k, n],
        Dtype::U8,
        &b.iter().map(|&v| v as u64).collect::<Vec<_>>(),
    )
    .expect("B");
    write_npy(
        &d.join("c.npy"),
        &[m, n],
        Dtype::I32,
        &c.iter().map(|&v| u64::from(v as u32)).collect::<Vec<_>>(),
    )
    .expect("C");
    let (pa, pb, pc, pd) = (
        p(&d, "a.npy"),
        p(&d, "b.npy"),
        p(&d, "c.npy"),
        p(&d, "d.npy"),
    );
    for (sat, w) in [
        (false, 1usize),
        (true, 1),
        (false, 8),
        (true, 8),
        (true, 32),
    ] {
        let ws = w.to_string();
        let mut args = vec![
            "gemm",
            "--format",
            "s8",
            "--format-b",
            "u8",
            "--a",
            &pa,
            "--b",
            &pb,
            "--c",
            &pc,
            "--out",
            &pd,
            "--width",
            &ws,
            "--check",
            "--json",
        ];
        if sat {
            args.push("--satfinite");
        }
        let o = tcrtl(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).expect("JSON");
        assert_eq!(v["check"]["mismatches"], 0, "{v}");
        assert_eq!(v["check"]["reference"], "int_ref_dot");
        assert_eq!(v["format"], "s8");
        let out = read_npy(&d.join("d.npy")).expect("D");
        assert_eq!((out.dtype, out.shape.clone()), (Dtype::I32, vec![m, n]));
        let got: Vec<i32> = out.words().iter().map(|&w| w as u32 as i32).collect();
        let want = reference(&a, &b, &c, (m, n, k), w, sat);
        assert_eq!(got, want, "satfinite {sat}, w {w}");
        // The limits are reached: some element wrapped or clamped.
        assert!(got
            .iter()
            .zip(&c)
            .any(|(g, c)| (g < &0) != (c < &0) || g == &i32::MAX || g == &i32::MIN));
    }
    // s4 x u4 from int8/uint8 arrays in range.
    let a4: Vec<i64> = (0..m * k).map(|i| (i as i64 % 16) - 8).collect();
    let b4: Vec<i64> = (0..k * n).map(|i| (i as i64 * 7) % 16).collect();
    write_npy(
        &d.join("a4.npy"),
        &[m, k],
        Dtype::I8,
        &a4.iter().map(|&v| v as u8 as u64).collect::<Vec<_>>(),
    )
    .expect("A4");
    write_npy(
        &d.join("b4.npy"),
        &[k, n],
        Dtype::U8,
        &b4.iter().map(|&v| v as u64).collect::<Vec<_>>(),
    )
    .expect("B4");
    let (pa4, pb4) = (p(&d, "a4.npy"), p(&d, "b4.npy"));
    let o = tcrtl(&[
        "gemm",
        "--format",
        "s4",
        "--format-b",
        "u4",
        "--a",
        &pa4,
        "--b",
        &pb4,
        "--c",
        &pc,
        "--out",
        &pd,
        "--width",
        "4",
    ]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let out = read_npy(&d.join("d.npy")).expect("D");
    let got: Vec<i32> = out.words().iter().map(|&w| w as u32 as i32).collect();
    assert_eq!(got, reference(&a4, &b4, &c, (m, n, k), 4, false));
    // Bad input.
    assert_error(
        &tcrtl(&["gemm", "--format", "u8", "--a", &pa, "--b", &pb]),
        "u8 values are uint8",
    );
    assert_error(
        &tcrtl(&[
            "gemm",
            "--format",
            "s4",
            "--format-b",
            "u8",
            "--a",
            &pa,
            "--b",
            &pb,
        ]),
        "8-bit integers pair with 8-bit",
    );
    assert_error(
        &tcrtl(&[
            "gemm",
            "--format",
            "s4",
            "--format-b",
            "u4",
            "--a",
            &pa,
            "--b",
            &pb,
        ]),
        "out of range for s4",
    );
    assert_error(
        &tcrtl(&[
            "gemm",
            "--format",
            "s8",
            "--format-b",
            "u8",
            "--a",
            &pa,
            "--b",
            &pb,
            "--c",
            &pa,
        ]),
        "expected int32",
    );
    let _ = std::fs::remove_dir_all(&d);
}

#[test]
fn random_problems_are_checked() {
    for extra in [
        &[][..],
        &["--satfinite"][..],
        &["--memory", "tma", "--mem-latency", "40"][..],
    ] {
        let mut args = vec![
            "gemm",
            "--format",
            "u8",
            "--format-b",
            "s8",
            "--m",
            "9",
            "--n",
            "7",
            "--k",
            "45",
            "--width",
            "16",
            "--seed",
            "3",
            "--json",
        ];
        args.extend_from_slice(extra);
        let o = tcrtl(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let v: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).expect("JSON");
        assert_eq!(v["check"]["mismatches"], 0, "{v}");
        assert_eq!(v["tiles"], 3 * 2, "{v}");
        let tma = extra.contains(&"tma");
        assert_eq!(
            v["memory"]["path"],
            if tma { "tma" } else { "ideal" },
            "{v}"
        );
        if tma {
            // D leaves as 9 x 7 int32 words.
            assert_eq!(v["memory"]["bytes_stored"], 9 * 7 * 4, "{v}");
            assert_eq!(v["memory"]["params"]["latency"], 40, "{v}");
        }
    }
    let base = ["gemm", "--format", "s8", "--m", "4", "--n", "4", "--k", "4"];
    let with = |extra: &[&'static str]| {
        let mut v = base.to_vec();
        v.extend_from_slice(extra);
        tcrtl(&v)
    };
    assert_error(&with(&["--mem-latency", "9"]), "need --memory tma");
    let s4 = ["gemm", "--format", "s4", "--m", "4", "--n", "4", "--k", "4"];
    let mut s4_tma = s4.to_vec();
    s4_tma.extend_from_slice(&["--memory", "tma"]);
    assert_error(&tcrtl(&s4_tma), "4-bit integer operands");
    assert_error(&with(&["--sparse"]), "run dense (no 2:4 sparsity)");
    assert_error(&with(&["--pattern", "ones"]), "not a generated pattern");
    assert_error(&with(&["--acc", "fused"]), "drop --acc");
    assert_error(
        &tcrtl(&[
            "gemm",
            "--format",
            "fp16",
            "--m",
            "4",
            "--n",
            "4",
            "--k",
            "4",
            "--satfinite",
        ]),
        "satfinite applies to integer formats",
    );
}
