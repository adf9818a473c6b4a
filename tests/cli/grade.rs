//! `tcrtl grade`: a student D image equal to the golden one passes; every single-bit fault
//! injected into it is found, at its row and column, with both words and the distance in ulps
//! worked out here from the FP32 encoding; bad input exits 2.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

fn scratch(name: &str) -> PathBuf {
    let dir = std::env::temp_dir().join(format!("tcrtl-grade-{}-{name}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(dir.join("golden")).expect("golden folder");
    std::fs::create_dir_all(dir.join("student")).expect("student folder");
    dir
}

fn tcrtl(args: &[&str], dirs: &[&Path]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tcrtl"));
    cmd.args(args);
    for d in dirs {
        cmd.arg(d);
    }
    cmd.output().expect("run tcrtl")
}

fn grade(dir: &Path, extra: &[&str]) -> Output {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_tcrtl"));
    cmd.arg("grade")
        .arg("--golden")
        .arg(dir.join("golden"))
        .arg("--student")
        .arg(dir.join("student"))
        .args(extra);
    cmd.output().expect("run tcrtl grade")
}

/// The golden D words (header skipped).
fn golden_d(dir: &Path) -> Vec<u32> {
    std::fs::read_to_string(dir.join("golden/d.hex"))
        .expect("d.hex")
        .lines()
        .filter(|l| !l.starts_with("//"))
        .map(|l| u32::from_str_radix(l, 16).expect("word"))
        .collect()
}

fn write_student(dir: &Path, words: &[u32]) {
    let text: String = words.iter().map(|w| format!("{w:08x}\n")).collect();
    std::fs::write(dir.join("student/d.hex"), text).expect("student d.hex");
}

fn json(o: &Output) -> serde_json::Value {
    serde_json::from_slice(&o.stdout).expect("one JSON object")
}

#[test]
fn grade_finds_every_single_bit_fault() {
    let dir = scratch("faults");
    let (m, n) = (5usize, 6usize);
    let o = tcrtl(
        &[
            "gemm", "--m", "5", "--n", "6", "--k", "7", "--seed", "11", "--memh",
        ],
        &[&dir.join("golden")],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let d = golden_d(&dir);
    assert_eq!(d.len(), m * n);

    // The golden image itself (with its header) passes.
    std::fs::copy(dir.join("golden/d.hex"), dir.join("student/d.hex")).expect("copy");
    let o = grade(&dir, &["--json"]);
    assert_eq!(o.status.code(), Some(0));
    let v = json(&o);
    assert_eq!(
        (v["compared"].as_u64(), v["mismatches"].as_u64()),
        (Some(30), Some(0))
    );

    // Every element, low fraction bit, a high fraction bit, an exponent bit and the sign.
    for e in 0..m * n {
        for bit in [0u32, 20, 27, 31] {
            let mut s = d.clone();
            s[e] ^= 1 << bit;
            write_student(&dir, &s);
            let o = grade(&dir, &["--json"]);
            assert_eq!(o.status.code(), Some(1), "element {e} bit {bit}");
            let v = json(&o);
            assert_eq!(v["compared"].as_u64(), Some(30));
            assert_eq!(v["mismatches"].as_u64(), Some(1));
            let f = &v["first"][0];
            assert_eq!(f["row"].as_u64(), Some((e / n) as u64));
            assert_eq!(f["col"].as_u64(), Some((e % n) as u64));
            assert_eq!(f["golden"].as_str(), Some(format!("{:08x}", d[e]).as_str()));
            assert_eq!(
                f["student"].as_str(),
                Some(format!("{:08x}", s[e]).as_str())
            );
            // Within one sign, a flipped magnitude bit moves the value 2^bit steps along the
            // FP32 number line; a flipped sign moves it across zero: twice the magnitude.
            let want = if bit == 31 {
                2 * u64::from(d[e] & 0x7FFF_FFFF)
            } else {
                1u64 << bit
            };
            let golden_nan = (d[e] & 0x7F80_0000) == 0x7F80_0000 && d[e] & 0x7F_FFFF != 0;
            let student_nan = (s[e] & 0x7F80_0000) == 0x7F80_0000 && s[e] & 0x7F_FFFF != 0;
            if golden_nan || student_nan {
                assert!(f["ulps"].is_null());
            } else {
                assert_eq!(f["ulps"].as_u64(), Some(want), "element {e} bit {bit}");
            }
        }
    }

    // Several faults: all counted, listed in row-major order, the text report names them.
    let mut s = d.clone();
    for e in [29, 3, 17] {
        s[e] ^= 1;
    }
    write_student(&dir, &s);
    let o = grade(&dir, &["--json", "--show", "2"]);
    assert_eq!(o.status.code(), Some(1));
    let v = json(&o);
    assert_eq!(v["mismatches"].as_u64(), Some(3));
    let firsts: Vec<(u64, u64)> = v["first"]
        .as_array()
        .expect("first")
        .iter()
        .map(|f| {
            (
                f["row"].as_u64().unwrap_or(99),
                f["col"].as_u64().unwrap_or(99),
            )
        })
        .collect();
    assert_eq!(firsts, [(0, 3), (2, 5)]);
    let o = grade(&dir, &[]);
    let text = String::from_utf8_lossy(&o.stdout);
    assert!(
        text.starts_with("grade: 30 compared (5 x 6), 3 mismatches"),
        "{text}"
    );
    assert!(text.contains("d[4][5]: golden"), "{text}");
    assert!(text.contains(", 1 ulps"), "{text}");
    std::fs::remove_dir_all(&dir).expect("clean up");
}

#[test]
fn grade_refuses_bad_input_with_exit_2() {
    let dir = scratch("bad");
    let o = tcrtl(
        &["gemm", "--m", "2", "--n", "3", "--k", "4", "--memh"],
        &[&dir.join("golden")],
    );
    assert!(o.status.success());
    let d = golden_d(&dir);
    let cases: [(&str, String); 4] = [
        (
            "too short",
            d[..5].iter().map(|w| format!("{w:08x}\n")).collect(),
        ),
        ("not hex", "3f800000\nzz\n".repeat(3)),
        ("too wide", "123456789\n".repeat(6)),
        ("address", "@0\n".to_string() + &"00000000\n".repeat(6)),
    ];
    for (what, text) in cases {
        std::fs::write(dir.join("student/d.hex"), text).expect("write");
        let o = grade(&dir, &[]);
        assert_eq!(o.status.code(), Some(2), "{what}");
        let err = String::from_utf8_lossy(&o.stderr);
        assert!(
            err.starts_with("error: ") && err.lines().count() == 1,
            "{what}: {err}"
        );
    }
    // No student file, no golden manifest, no folder.
    std::fs::remove_file(dir.join("student/d.hex")).expect("remove");
    assert_eq!(grade(&dir, &[]).status.code(), Some(2));
    write_student(&dir, &d);
    assert_eq!(grade(&dir, &[]).status.code(), Some(0));
    std::fs::remove_file(dir.join("golden/manifest.json")).expect("remove");
    assert_eq!(grade(&dir, &[]).status.code(), Some(2));
    let o = tcrtl(
        &["grade", "--golden", "/nonexistent-tcrtl", "--student"],
        &[&dir],
    );
    assert_eq!(o.status.code(), Some(2));
    std::fs::remove_dir_all(&dir).expect("clean up");
}

/// The golden step records as (a, b, acc before, acc after) for FP16, w = 1 (96-bit words).
fn golden_steps(dir: &Path) -> Vec<(u16, u16, u32, u32)> {
    std::fs::read_to_string(dir.join("golden/steps.hex"))
        .expect("steps.hex")
        .lines()
        .filter(|l| !l.starts_with("//"))
        .map(|l| {
            assert_eq!(l.len(), 24, "{l}");
            let h = |r: std::ops::Range<usize>| u32::from_str_radix(&l[r], 16).expect("hex");
            (h(0..4) as u16, h(4..8) as u16, h(8..16), h(16..24))
        })
        .collect()
}

#[test]
fn step_vectors_follow_the_fma_chain_and_grade_finds_step_faults() {
    let dir = scratch("steps");
    let (m, n, k) = (3usize, 4usize, 6usize);
    let o = tcrtl(
        &[
            "gemm", "--m", "3", "--n", "4", "--k", "6", "--seed", "5", "--memh",
        ],
        &[&dir.join("golden")],
    );
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let steps = golden_steps(&dir);
    assert_eq!(steps.len(), m * n * k);
    let d = golden_d(&dir);
    let hex = |name: &str| -> Vec<u32> {
        std::fs::read_to_string(dir.join("golden").join(name))
            .expect("hex")
            .lines()
            .filter(|l| !l.starts_with("//"))
            .map(|l| u32::from_str_radix(l, 16).expect("word"))
            .collect()
    };
    let (a, b, c) = (hex("a.hex"), hex("b.hex"), hex("c.hex"));
    // Each record: A[r][s], B[s][c], and acc after = fma(a, b, acc before) in f32 (one
    // rounding, the hardware FMA of the standard library); the chain starts at C, ends at D.
    for (i, &(sa, sb, before, after)) in steps.iter().enumerate() {
        let (r, col, s) = (i / k / n, (i / k) % n, i % k);
        assert_eq!(u32::from(sa), a[r * k + s]);
        assert_eq!(u32::from(sb), b[s * n + col]);
        let want_before = if s == 0 {
            c[r * n + col]
        } else {
            steps[i - 1].3
        };
        assert_eq!(before, want_before, "record {i}");
        let fa = half::f16::from_bits(sa).to_f32();
        let fb = half::f16::from_bits(sb).to_f32();
        let fma = fa.mul_add(fb, f32::from_bits(before));
        assert_eq!(after, fma.to_bits(), "record {i}");
        if s == k - 1 {
            assert_eq!(after, d[r * n + col]);
        }
    }

    // The student gives D and the accumulator after each step (just the FP32 words).
    std::fs::copy(dir.join("golden/d.hex"), dir.join("student/d.hex")).expect("copy");
    let write_steps = |words: &[u32]| {
        let text: String = words.iter().map(|w| format!("{w:08x}\n")).collect();
        std::fs::write(dir.join("student/steps.hex"), text).expect("student steps");
    };
    let afters: Vec<u32> = steps.iter().map(|s| s.3).collect();
    write_steps(&afters);
    let v = json(&grade(&dir, &["--json"]));
    assert_eq!(v["steps"]["compared"].as_u64(), Some((m * n * k) as u64));
    assert_eq!(v["steps"]["mismatches"].as_u64(), Some(0));
    // One flipped bit in any record is found at its row, column and step.
    for i in 0..afters.len() {
        for bit in [0u32, 22, 31] {
            let mut s = afters.clone();
            s[i] ^= 1 << bit;
            write_steps(&s);
            let o = grade(&dir, &["--json"]);
            assert_eq!(o.status.code(), Some(1), "record {i} bit {bit}");
            let v = json(&o);
            assert_eq!(v["mismatches"].as_u64(), Some(0), "D itself is right");
            let st = &v["steps"];
            assert_eq!(st["mismatches"].as_u64(), Some(1));
            let f = &st["first"][0];
            let at = (f["row"].as_u64(), f["col"].as_u64(), f["step"].as_u64());
            let want = (i / k / n, (i / k) % n, i % k);
            assert_eq!(
                at,
                (
                    Some(want.0 as u64),
                    Some(want.1 as u64),
                    Some(want.2 as u64)
                )
            );
            assert_eq!(
                f["student"].as_str(),
                Some(format!("{:08x}", s[i]).as_str())
            );
        }
    }
    // A step file of the wrong length is bad input; --no-steps compares D only.
    write_steps(&afters[1..]);
    assert_eq!(grade(&dir, &[]).status.code(), Some(2));
    let o = grade(&dir, &["--no-steps", "--json"]);
    assert_eq!(o.status.code(), Some(0));
    assert!(json(&o)["steps"].is_null());
    std::fs::remove_dir_all(&dir).expect("clean up");
}
