//! `tcrtl dot` batch mode (.npy operands) with `--out-format fp16`, through the built binary:
//! C as uint16 FP16 patterns (or float16), D written as uint16 FP16 patterns. Every row equals
//! a single `tcrtl dot --out-format fp16` call on that row's values; in the `ieee` mode every
//! row equals Berkeley SoftFloat's `f16_mulAdd` chain, flag counts included.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use crate::common::{softfloat_op, softfloat_round, Rng};
use softfloat_wrapper::{Float as _, F16};
use std::path::Path;
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};
use tensorcore_rtl::numerics::RoundingMode;

/// A random FP16 pattern: magnitudes 2^-6..2^6 mostly, with zeros and subnormals mixed in.
fn fp16(rng: &mut Rng) -> u64 {
    let sign = (rng.next_u64() & 1) << 15;
    let frac = rng.next_u64() & 0x3FF;
    let mag = match rng.below(16) {
        0 => 0,
        1 => frac.max(1),
        _ => ((9 + rng.below(13)) << 10) | frac,
    };
    sign | mag
}

/// A random finite E4M3 pattern (exponent field 1..14 or a zero).
fn e4m3(rng: &mut Rng) -> u64 {
    let sign = (rng.next_u64() & 1) << 7;
    match rng.below(12) {
        0 => sign,
        _ => sign | ((1 + rng.below(14)) << 3) | (rng.next_u64() & 7),
    }
}

struct Batch {
    rows: usize,
    k: usize,
    a: Vec<u64>,
    b: Vec<u64>,
    c: Vec<u64>,
}

fn batch(seed: u64, rows: usize, k: usize, fp8: bool) -> Batch {
    let mut rng = Rng(seed);
    let op = |rng: &mut Rng| if fp8 { e4m3(rng) } else { fp16(rng) };
    let a = (0..rows * k).map(|_| op(&mut rng)).collect();
    let b = (0..rows * k).map(|_| op(&mut rng)).collect();
    let c = (0..rows).map(|_| fp16(&mut rng)).collect();
    Batch { rows, k, a, b, c }
}

/// Writes A, B (uint8 for E4M3, uint16 for FP16) and C (`c_dtype`) into `dir`.
fn write(dir: &Path, bt: &Batch, fp8: bool, c_dtype: Dtype) -> [String; 3] {
    let ab = if fp8 { Dtype::U8 } else { Dtype::U16 };
    write_npy(&dir.join("a.npy"), &[bt.rows, bt.k], ab, &bt.a).expect("a");
    write_npy(&dir.join("b.npy"), &[bt.rows, bt.k], ab, &bt.b).expect("b");
    write_npy(&dir.join("c.npy"), &[bt.rows], c_dtype, &bt.c).expect("c");
    [p(dir, "a.npy"), p(dir, "b.npy"), p(dir, "c.npy")]
}

/// Runs a batch with `flags`; returns D (FP16 patterns) and the JSON summary.
fn run_batch(files: &[String; 3], out: &str, flags: &[&str]) -> (Vec<u32>, serde_json::Value) {
    let mut args = vec![
        "dot",
        "--out-format",
        "fp16",
        "--a",
        &files[0],
        "--b",
        &files[1],
        "--c",
        &files[2],
        "--out",
        out,
        "--json",
    ];
    args.extend_from_slice(flags);
    let o = tcrtl(&args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).expect("json");
    let d = read_npy(Path::new(out)).expect("D");
    assert_eq!(d.dtype, Dtype::U16, "FP16 D is uint16");
    assert_eq!(d.shape, vec![j["rows"].as_u64().expect("rows") as usize]);
    (d.words().iter().map(|&w| w as u32).collect(), j)
}

fn hex_list(words: &[u64]) -> String {
    words
        .iter()
        .map(|w| format!("{w:#x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `tcrtl dot --out-format fp16` on one row: the result's bits.
fn single(bt: &Batch, r: usize, fp8: bool, flags: &[&str]) -> u32 {
    let (a, b) = (
        hex_list(&bt.a[r * bt.k..(r + 1) * bt.k]),
        hex_list(&bt.b[r * bt.k..(r + 1) * bt.k]),
    );
    let c = format!("{:#x}", bt.c[r]);
    let mut args = vec![
        "dot",
        "--out-format",
        "fp16",
        "--format",
        if fp8 { "e4m3" } else { "fp16" },
        "--a",
        &a,
        "--b",
        &b,
        "--c",
        &c,
        "--json",
    ];
    args.extend_from_slice(flags);
    let o = tcrtl(&args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).expect("json");
    let bits = j["bits"].as_str().expect("bits");
    u32::from_str_radix(bits.trim_start_matches("0x"), 16).expect("hex bits")
}

#[test]
fn batch_rows_equal_single_fp16_dot_calls() {
    let cases: [(bool, &[&str]); 7] = [
        (false, &["--acc", "ieee"]),
        (false, &["--acc", "fused", "--width", "4"]),
        (false, &["--acc", "exact"]),
        (false, &["--acc", "nvidia", "--preset", "hopper"]),
        (false, &["--acc", "nvidia", "--preset", "volta"]),
        (true, &["--acc", "nvidia", "--preset", "hopper"]),
        (true, &["--acc", "nvidia", "--preset", "ada"]),
    ];
    for (i, (fp8, mode)) in cases.into_iter().enumerate() {
        let dir = scratch("dot-batch-fp16", &format!("single{i}"));
        let k = if fp8 { 40 } else { 11 };
        let bt = batch(0xB16 + i as u64, 8, k, fp8);
        let files = write(&dir, &bt, fp8, Dtype::U16);
        let mut flags = vec!["--format", if fp8 { "e4m3" } else { "fp16" }];
        flags.extend_from_slice(mode);
        let (d, j) = run_batch(&files, &p(&dir, "d.npy"), &flags);
        assert_eq!(d.len(), bt.rows);
        assert_eq!(j["out_format"], "fp16");
        for (r, &got) in d.iter().enumerate() {
            assert_eq!(got, single(&bt, r, fp8, mode), "{mode:?} row {r}");
        }
    }
}

#[test]
fn batch_ieee_fp16_matches_the_softfloat_fma_chain() {
    let dir = scratch("dot-batch-fp16", "softfloat");
    let bt = batch(0x5F16, 2000, 33, false);
    let files = write(&dir, &bt, false, Dtype::U16);
    for (rm, name) in [
        (RoundingMode::NearestEven, "rne"),
        (RoundingMode::TowardZero, "rtz"),
        (RoundingMode::Up, "rup"),
    ] {
        let out = p(&dir, &format!("d_{name}.npy"));
        let (d, j) = run_batch(&files, &out, &["--acc", "ieee", "--rounding", name]);
        let mut counts = [0u64; 4];
        assert_eq!(d.len(), bt.rows);
        for (r, &got) in d.iter().enumerate() {
            let (want, f) = softfloat_op(rm, || {
                let mut acc = F16::from_bits(bt.c[r] as u16);
                for t in r * bt.k..(r + 1) * bt.k {
                    let (x, y) = (
                        F16::from_bits(bt.a[t] as u16),
                        F16::from_bits(bt.b[t] as u16),
                    );
                    acc = x.fused_mul_add(y, acc, softfloat_round(rm));
                }
                u64::from(acc.to_bits())
            });
            assert_eq!(u64::from(got), want, "{name} row {r}");
            for (n, on) in counts
                .iter_mut()
                .zip([f.invalid, f.overflow, f.underflow, f.inexact])
            {
                *n += u64::from(on);
            }
        }
        let fl = &j["flags"];
        let got = ["invalid", "overflow", "underflow", "inexact"].map(|k| fl[k].as_u64());
        assert_eq!(got, counts.map(Some), "{name}: flag counts");
        assert!(counts[3] > 0, "the batch rounds somewhere");
    }
}

#[test]
fn float16_c_is_accepted_and_fp32_c_is_refused() {
    let dir = scratch("dot-batch-fp16", "c");
    let bt = batch(7, 20, 5, false);
    let files = write(&dir, &bt, false, Dtype::U16);
    let (d_u16, _) = run_batch(&files, &p(&dir, "d1.npy"), &["--acc", "fused"]);
    // The same patterns as a float16 array: the same D.
    write_npy(&dir.join("c.npy"), &[bt.rows], Dtype::F16, &bt.c).expect("c f16");
    let (d_f16, _) = run_batch(&files, &p(&dir, "d2.npy"), &["--acc", "fused"]);
    assert_eq!(d_u16, d_f16);
    // FP32 accumulators are refused for an FP16 batch, in one line.
    for dt in [Dtype::U32, Dtype::F32] {
        let words: Vec<u64> = (0..bt.rows as u64).map(|i| 0x3F80_0000 + i).collect();
        write_npy(&dir.join("c.npy"), &[bt.rows], dt, &words).expect("c32");
        let o = tcrtl(&[
            "dot",
            "--out-format",
            "fp16",
            "--a",
            &files[0],
            "--b",
            &files[1],
            "--c",
            &files[2],
        ]);
        assert_error(&o, "expected uint16 (FP16 bit patterns) or float16");
    }
}
