//! `tcrtl dot` with integer formats, run as the built binary: decimal and hex operands, the
//! int32 result wrapped or clamped, mixed signedness, batches from .npy, and bad input.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};

/// Runs `dot ... --json` and returns the parsed object.
fn dot_json(args: &[&str]) -> serde_json::Value {
    let mut all = vec!["dot"];
    all.extend_from_slice(args);
    all.push("--json");
    let o = tcrtl(&all);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    serde_json::from_str(text(&o.stdout).trim()).expect("one JSON object")
}

/// The `bits` and `value` of a result, checked against the host's int32 `want`.
fn assert_result(v: &serde_json::Value, want: i32) {
    assert_eq!(v["bits"], format!("0x{:08x}", want as u32), "{v}");
    assert_eq!(v["value"], want, "{v}");
}

#[test]
fn s8_decimal_and_hex() {
    let v = dot_json(&[
        "--format",
        "s8",
        "--a",
        "127,-128,0x81",
        "--b",
        "127,-128,3",
        "--c",
        "5",
    ]);
    // 0x81 is -127 in s8.
    assert_result(&v, 127 * 127 + 128 * 128 + (-127) * 3 + 5);
    assert_eq!(v["format_a"], "s8");
    assert_eq!(v["format_b"], "s8");
    assert_eq!(v["k"], 3);
    assert_eq!(v["out_of_range"], false);
}

#[test]
fn mixed_signedness_and_int4() {
    let v = dot_json(&[
        "--format",
        "s8",
        "--format-b",
        "u8",
        "--a",
        "-1,-128",
        "--b",
        "255,0xff",
    ]);
    assert_result(&v, -255 - 128 * 255);
    let v = dot_json(&[
        "--format",
        "u8",
        "--format-b",
        "s8",
        "--a",
        "255",
        "--b",
        "-128",
    ]);
    assert_result(&v, -255 * 128);
    let v = dot_json(&[
        "--format", "s4", "--a", "-8,7,0xf", "--b", "-8,7,2", "--c", "-3",
    ]);
    assert_result(&v, 64 + 49 - 2 - 3);
    let v = dot_json(&[
        "--format",
        "u4",
        "--format-b",
        "s4",
        "--a",
        "15",
        "--b",
        "-8",
    ]);
    assert_result(&v, -120);
}

#[test]
fn wrap_and_satfinite() {
    let v = dot_json(&[
        "--format",
        "s8",
        "--a",
        "1",
        "--b",
        "1",
        "--c",
        "2147483647",
    ]);
    assert_result(&v, i32::MIN);
    assert_eq!(v["out_of_range"], true);
    assert_eq!(v["overflow"], "wrap");
    let v = dot_json(&[
        "--format",
        "s8",
        "--a",
        "1",
        "--b",
        "1",
        "--c",
        "0x7fffffff",
        "--satfinite",
    ]);
    assert_result(&v, i32::MAX);
    assert_eq!(v["overflow"], "satfinite");
    let v = dot_json(&[
        "--format",
        "u8",
        "--format-b",
        "s8",
        "--a",
        "255",
        "--b",
        "-128",
        "--c",
        "-2147483648",
        "--satfinite",
    ]);
    assert_result(&v, i32::MIN);
    // Text output names the range.
    let o = tcrtl(&["dot", "--format", "s8", "--a", "1", "--b", "1", "--c", "-1"]);
    assert!(o.status.success());
    let out = text(&o.stdout);
    assert!(
        out.contains("bits:  0x00000000") && out.contains("value: 0"),
        "{out}"
    );
    assert!(out.contains("in range"), "{out}");
}

/// Clamping happens per step (`--width`): the documented difference.
#[test]
fn satfinite_per_step() {
    let args = |w: &'static str| {
        dot_json(&[
            "--format",
            "s8",
            "--a",
            "127,-128",
            "--b",
            "127,127",
            "--c",
            "2147483647",
            "--satfinite",
            "--width",
            w,
        ])
    };
    assert_result(&args("1"), (i64::from(i32::MAX) - 128 * 127) as i32);
    assert_result(
        &args("2"),
        (i64::from(i32::MAX) + 127 * 127 - 128 * 127) as i32,
    );
}

#[test]
fn bad_input() {
    let run = |extra: &[&str]| {
        let mut all = vec!["dot"];
        all.extend_from_slice(extra);
        tcrtl(&all)
    };
    let cases: &[(&[&str], &str)] = &[
        (
            &["--format", "s8", "--a", "128", "--b", "1"],
            "128 is out of range for s8 (-128..=127)",
        ),
        (
            &["--format", "u8", "--a", "-1", "--b", "1"],
            "out of range for u8",
        ),
        (
            &["--format", "s4", "--a", "8", "--b", "1"],
            "out of range for s4 (-8..=7)",
        ),
        (
            &["--format", "u4", "--a", "16", "--b", "1"],
            "out of range for u4",
        ),
        (
            &["--format", "s8", "--a", "0x100", "--b", "1"],
            "does not fit s8",
        ),
        (
            &["--format", "s4", "--a", "0x10", "--b", "1"],
            "does not fit s4",
        ),
        (
            &["--format", "s8", "--a", "0xg1", "--b", "1"],
            "bad hex bit pattern",
        ),
        (
            &["--format", "s8", "--a", "0x", "--b", "1"],
            "bad hex bit pattern",
        ),
        (
            &["--format", "s8", "--a", "1.5", "--b", "1"],
            "neither a 0x bit pattern nor a decimal integer",
        ),
        (&["--format", "s8", "--a", "--1", "--b", "1"], "neither"),
        (
            &[
                "--format",
                "s8",
                "--a",
                "99999999999999999999999",
                "--b",
                "1",
            ],
            "out of range for s8",
        ),
        (
            &[
                "--format",
                "s8",
                "--a",
                "1",
                "--b",
                "1",
                "--c",
                "2147483648",
            ],
            "out of range for s32",
        ),
        (
            &[
                "--format",
                "s8",
                "--a",
                "1",
                "--b",
                "1",
                "--c",
                "0x100000000",
            ],
            "does not fit s32",
        ),
        (
            &["--format", "s8", "--a", "1,2", "--b", "1"],
            "--a has 2 values but --b has 1",
        ),
        (
            &[
                "--format",
                "s8",
                "--format-b",
                "fp16",
                "--a",
                "1",
                "--b",
                "1",
            ],
            "both operands must be integers",
        ),
        (
            &[
                "--format",
                "fp16",
                "--format-b",
                "u8",
                "--a",
                "1",
                "--b",
                "1",
            ],
            "both operands must be integers",
        ),
        (
            &["--format", "s8", "--format-b", "s4", "--a", "1", "--b", "1"],
            "8-bit integers pair with 8-bit",
        ),
        (
            &[
                "--format", "s8", "--acc", "nvidia", "--preset", "hopper", "--a", "1", "--b", "1",
            ],
            "drop --acc and --preset",
        ),
        (
            &[
                "--format",
                "s8",
                "--rounding",
                "rtz",
                "--a",
                "1",
                "--b",
                "1",
            ],
            "--rounding does not apply",
        ),
        (
            &["--format", "fp16", "--satfinite", "--a", "1", "--b", "1"],
            "--satfinite applies",
        ),
        (
            &["--format", "s8", "--width", "33", "--a", "1", "--b", "1"],
            "--width 33",
        ),
    ];
    for (args, needle) in cases {
        assert_error(&run(args), needle);
    }
}

#[test]
fn batch_npy() {
    let d = scratch("dot-int", "batch");
    let (rows, k) = (5usize, 40usize);
    // A int8 (s8), B uint8 (u8), C int32.
    let a: Vec<i8> = (0..rows * k).map(|i| (i as i32 * 37 - 128) as i8).collect();
    let b: Vec<u8> = (0..rows * k).map(|i| (i * 91 % 256) as u8).collect();
    let c: Vec<i32> = vec![0, -1, i32::MAX, i32::MIN, 12345];
    let words = |v: Vec<u64>| v;
    write_npy(
        &d.join("a.npy"),
        &[rows, k],
        Dtype::I8,
        &words(a.iter().map(|&x| u64::from(x as u8)).collect()),
    )
    .expect("write A");
    write_npy(
        &d.join("b.npy"),
        &[rows, k],
        Dtype::U8,
        &words(b.iter().map(|&x| u64::from(x)).collect()),
    )
    .expect("write B");
    write_npy(
        &d.join("c.npy"),
        &[rows],
        Dtype::I32,
        &words(c.iter().map(|&x| u64::from(x as u32)).collect()),
    )
    .expect("write C");
    let (pa, pb, pc, pd) = (
        p(&d, "a.npy"),
        p(&d, "b.npy"),
        p(&d, "c.npy"),
        p(&d, "d.npy"),
    );
    for sat in [false, true] {
        let mut args = vec![
            "dot",
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
        ];
        if sat {
            args.push("--satfinite");
        }
        let o = tcrtl(&args);
        assert!(o.status.success(), "{}", text(&o.stderr));
        let out = read_npy(&d.join("d.npy")).expect("D");
        assert_eq!(out.dtype, Dtype::I32);
        assert_eq!(out.shape, vec![rows]);
        for r in 0..rows {
            let mut acc = i64::from(c[r]);
            // K = 40 with the default width 32: two steps, each narrowed.
            for chunk in (0..k).collect::<Vec<_>>().chunks(32) {
                acc += chunk
                    .iter()
                    .map(|&j| i64::from(a[r * k + j]) * i64::from(b[r * k + j]))
                    .sum::<i64>();
                acc = if sat {
                    acc.clamp(i64::from(i32::MIN), i64::from(i32::MAX))
                } else {
                    i64::from(acc as i32)
                };
            }
            assert_eq!(
                out.word(r),
                u64::from(acc as i32 as u32),
                "row {r}, satfinite {sat}"
            );
        }
    }
    // Wrong dtypes and out-of-range values are refused.
    let o = tcrtl(&["dot", "--format", "u8", "--a", &pa, "--b", &pb, "--c", &pc]);
    assert_error(&o, "u8 values are uint8");
    let o = tcrtl(&[
        "dot",
        "--format",
        "s4",
        "--format-b",
        "u4",
        "--a",
        &pa,
        "--b",
        &pb,
        "--c",
        &pc,
    ]);
    assert_error(&o, "is out of range for s4");
    let o = tcrtl(&[
        "dot",
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
    ]);
    assert_error(&o, "expected int32");
    let o = tcrtl(&[
        "dot",
        "--format",
        "s8",
        "--format-b",
        "u8",
        "--a",
        &pa,
        "--b",
        &pb,
        "--c",
        "0",
    ]);
    assert_error(&o, "batch mode needs");
    let _ = std::fs::remove_dir_all(&d);
}
