//! `tcrtl dot` batch mode with `--format tf32`, through the built binary: A and B as uint32
//! FP32 containers (low 13 bits zero). Every row equals a single `tcrtl dot --format tf32`
//! call on that row's containers; `exact` equals the host's exact f64 sum rounded once to
//! f32; a published TF32 measurement set run as one batch equals the GPU's D; a container
//! with low bits set, or a dtype other than uint32, is a one-line error.

use crate::common::cli::{assert_error, p, scratch, tcrtl, text};
use crate::common::Rng;
use std::path::{Path, PathBuf};
use tensorcore_rtl::io::npy::{read_npy, write_npy, Dtype};
use tensorcore_rtl::verify::measurements::load;

/// A random TF32 value as its FP32 container (exponent field 124..=130, ten fraction bits,
/// one in sixteen a zero).
fn tf32(rng: &mut Rng) -> u64 {
    let sign = (rng.next_u64() & 1) << 31;
    if rng.below(16) == 0 {
        return sign;
    }
    sign | ((124 + rng.below(7)) << 23) | ((rng.next_u64() & 0x3FF) << 13)
}

struct Batch {
    rows: usize,
    k: usize,
    a: Vec<u64>,
    b: Vec<u64>,
    c: Vec<u64>,
}

fn batch(seed: u64, rows: usize, k: usize) -> Batch {
    let mut rng = Rng(seed);
    let a = (0..rows * k).map(|_| tf32(&mut rng)).collect();
    let b = (0..rows * k).map(|_| tf32(&mut rng)).collect();
    let c = (0..rows)
        .map(|_| ((rng.next_u64() & 1) << 31) | ((124 + rng.below(7)) << 23) | rng.below(1 << 23))
        .collect();
    Batch { rows, k, a, b, c }
}

/// Writes A and B as uint32 and C as uint32 into `dir`.
fn write(dir: &Path, bt: &Batch) -> [String; 3] {
    write_npy(&dir.join("a.npy"), &[bt.rows, bt.k], Dtype::U32, &bt.a).expect("a");
    write_npy(&dir.join("b.npy"), &[bt.rows, bt.k], Dtype::U32, &bt.b).expect("b");
    write_npy(&dir.join("c.npy"), &[bt.rows], Dtype::U32, &bt.c).expect("c");
    [p(dir, "a.npy"), p(dir, "b.npy"), p(dir, "c.npy")]
}

/// Runs a TF32 batch with `flags`; returns D (FP32 patterns).
fn run_batch(files: &[String; 3], out: &str, flags: &[&str]) -> Vec<u32> {
    let mut args = vec![
        "dot", "--format", "tf32", "--a", &files[0], "--b", &files[1], "--c", &files[2], "--out",
        out,
    ];
    args.extend_from_slice(flags);
    let o = tcrtl(&args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    let d = read_npy(Path::new(out)).expect("D");
    assert_eq!(d.dtype, Dtype::U32, "FP32 D is uint32");
    d.words().iter().map(|&w| w as u32).collect()
}

fn hex_list(words: &[u64]) -> String {
    words
        .iter()
        .map(|w| format!("{w:#x}"))
        .collect::<Vec<_>>()
        .join(",")
}

/// `tcrtl dot --format tf32` on one row of containers: the result's bits.
fn single(bt: &Batch, r: usize, flags: &[&str]) -> u32 {
    let (a, b) = (
        hex_list(&bt.a[r * bt.k..(r + 1) * bt.k]),
        hex_list(&bt.b[r * bt.k..(r + 1) * bt.k]),
    );
    let c = format!("{:#x}", bt.c[r]);
    let mut args = vec![
        "dot", "--format", "tf32", "--a", &a, "--b", &b, "--c", &c, "--json",
    ];
    args.extend_from_slice(flags);
    let o = tcrtl(&args);
    assert!(o.status.success(), "{args:?}: {}", text(&o.stderr));
    let j: serde_json::Value = serde_json::from_str(text(&o.stdout).trim()).expect("json");
    let bits = j["bits"].as_str().expect("bits");
    u32::from_str_radix(bits.trim_start_matches("0x"), 16).expect("hex bits")
}

#[test]
fn tf32_batch_rows_equal_single_tf32_dot_calls() {
    let cases: [&[&str]; 6] = [
        &["--acc", "ieee"],
        &["--acc", "fused", "--width", "4"],
        &["--acc", "exact"],
        &["--acc", "nvidia", "--preset", "ampere"],
        &["--acc", "nvidia", "--preset", "hopper"],
        &["--acc", "nvidia", "--preset", "h200"],
    ];
    for (i, mode) in cases.into_iter().enumerate() {
        let dir = scratch("dot-batch-tf32", &format!("single{i}"));
        let bt = batch(0x7F + i as u64, 6, 11);
        let files = write(&dir, &bt);
        let d = run_batch(&files, &p(&dir, "d.npy"), mode);
        assert_eq!(d.len(), bt.rows);
        for (r, &got) in d.iter().enumerate() {
            assert_eq!(got, single(&bt, r, mode), "{mode:?} row {r}");
        }
    }
}

/// The operands keep the exact sum within 53 bits (products between 2^-6 and 2^8 with at most
/// 22 significant bits, C between 2^-3 and 2^4), so the host's f64 sum is exact and `as f32`
/// rounds it once to nearest even: what `--acc exact` must give.
#[test]
fn tf32_exact_batch_equals_the_host_exact_sum() {
    let dir = scratch("dot-batch-tf32", "exact");
    let bt = batch(0xE7, 400, 16);
    let files = write(&dir, &bt);
    let d = run_batch(&files, &p(&dir, "d.npy"), &["--acc", "exact"]);
    let host = |w: u64| f64::from(f32::from_bits(w as u32));
    for (r, &got) in d.iter().enumerate() {
        let sum = (r * bt.k..(r + 1) * bt.k)
            .fold(host(bt.c[r]), |s, t| s + host(bt.a[t]) * host(bt.b[t]));
        assert_eq!(got, (sum as f32).to_bits(), "row {r}: sum {sum:e}");
    }
}

/// The vendored A2 TF32 rows (the GPU's own FP32 containers) as one batch through the command:
/// every row equals the A2's D.
#[test]
fn a_measured_tf32_set_through_the_command() {
    let src =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("data/tensor-core-measurements/A2/tf32");
    let set = load(&src, None).unwrap_or_else(|e| panic!("{e}"));
    let flat =
        |rows: &[Vec<u32>]| -> Vec<u64> { rows.iter().flatten().map(|&w| u64::from(w)).collect() };
    let bt = Batch {
        rows: set.a.len(),
        k: set.k,
        a: flat(&set.a),
        b: flat(&set.b),
        c: set.c.iter().map(|&w| u64::from(w)).collect(),
    };
    let dir = scratch("dot-batch-tf32", "a2");
    let files = write(&dir, &bt);
    let d = run_batch(
        &files,
        &p(&dir, "d.npy"),
        &["--acc", "nvidia", "--preset", "ampere"],
    );
    assert!(d.len() >= 300);
    assert_eq!(d, set.d);
}

#[test]
fn a_bad_tf32_container_or_dtype_is_a_one_line_error() {
    let dir = scratch("dot-batch-tf32", "errors");
    let mut bt = batch(3, 4, 5);
    // Row 2, column 3 of B has a low bit set.
    bt.b[2 * bt.k + 3] |= 1 << 12;
    let files = write(&dir, &bt);
    let o = tcrtl(&[
        "dot", "--format", "tf32", "--a", &files[0], "--b", &files[1], "--c", &files[2],
    ]);
    assert_error(&o, "B row 2, column 3");
    assert_error(&o, "is not a TF32 value");
    // uint16 (or float32) operands are refused with the dtype TF32 takes.
    for dt in [Dtype::U16, Dtype::F32] {
        let words: Vec<u64> =
            bt.a.iter()
                .map(|&w| if dt == Dtype::U16 { w >> 16 } else { w })
                .collect();
        write_npy(&dir.join("a.npy"), &[bt.rows, bt.k], dt, &words).expect("a");
        let o = tcrtl(&[
            "dot", "--format", "tf32", "--a", &files[0], "--b", &files[0], "--c", &files[2],
        ]);
        assert_error(&o, "tf32 values are uint32");
    }
}
