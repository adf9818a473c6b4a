//! Reading the real-GPU measurement sets (Khattak & Mikaitis, north-numerical-computing/
//! MATLAB-tensor-core, `model_validation`; BSD 2-Clause) and encoding their values into the
//! input formats by independent means (host `f32`, `half`, the OCP FP8 table of
//! [`super::exact::decode_fp8`], backed by `fp8_table`).
//!
//! Layout of a set directory: `a_*.txt` and `b_*.txt` (one sample per line, K FP32 words in
//! hex, each exactly representable in the input format), `c_*fp32.txt` and `d_*fp32.txt`
//! (one FP32 word per line as 32 binary digits).

use super::exact::{decode, Decoded};
use crate::numerics::format::Format;
use std::path::{Path, PathBuf};

/// One measurement set: per row the A and B words (FP32 encodings), C and the GPU's D.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MeasurementSet {
    /// Values per row (K).
    pub k: usize,
    /// A rows, FP32 words.
    pub a: Vec<Vec<u32>>,
    /// B rows, FP32 words.
    pub b: Vec<Vec<u32>>,
    /// C per row (FP32).
    pub c: Vec<u32>,
    /// The GPU's D per row (FP32).
    pub d: Vec<u32>,
    /// The files read: A, B, C and D. Row `i` (from 0) is line `i + 1` of each.
    pub files: [PathBuf; 4],
}

/// The one file of `dir` named `PREFIX*SUFFIX`; none, or more than one, is an error (a stray
/// `a_0_old.txt` beside the set's `a_*.txt` must not be picked silently).
fn find(dir: &Path, prefix: &str, suffix: &str) -> Result<PathBuf, String> {
    let entries =
        std::fs::read_dir(dir).map_err(|e| format!("cannot read {}: {e}", dir.display()))?;
    let mut found: Vec<PathBuf> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(prefix) && n.ends_with(suffix))
        })
        .collect();
    found.sort();
    match found.as_slice() {
        [one] => Ok(one.clone()),
        [] => Err(format!("no {prefix}*{suffix} file in {}", dir.display())),
        many => Err(format!(
            "{}: ambiguous set, {} files match {prefix}*{suffix}: {}",
            dir.display(),
            many.len(),
            many.iter()
                .filter_map(|p| p.file_name().map(|n| n.to_string_lossy().into_owned()))
                .collect::<Vec<_>>()
                .join(", ")
        )),
    }
}

/// The data lines of `path`, at most `limit`: line `i + 1` of the file is entry `i`. Blank
/// lines are allowed only at the end (anywhere else they would shift the rows).
fn read_lines(path: &Path, limit: Option<usize>) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    let lines: Vec<&str> = text.lines().collect();
    let used = lines
        .iter()
        .rposition(|l| !l.trim().is_empty())
        .map_or(0, |i| i + 1);
    let mut out = Vec::new();
    for (i, line) in lines[..used].iter().enumerate() {
        if out.len() == limit.unwrap_or(usize::MAX) {
            break;
        }
        let line = line.trim();
        if line.is_empty() {
            return Err(format!(
                "{}:{}: blank line inside the set",
                path.display(),
                i + 1
            ));
        }
        out.push(line.to_string());
    }
    Ok(out)
}

/// Parses one word of exactly `digits` digits in `radix`.
fn word(w: &str, radix: u32, digits: usize) -> Option<u32> {
    (w.len() == digits && w.chars().all(|c| c.is_digit(radix)))
        .then(|| u32::from_str_radix(w, radix).ok())
        .flatten()
}

fn parse_hex_rows(path: &Path, limit: Option<usize>) -> Result<Vec<Vec<u32>>, String> {
    read_lines(path, limit)?
        .iter()
        .enumerate()
        .map(|(i, line)| {
            line.split_whitespace()
                .map(|w| {
                    word(w, 16, 8).ok_or_else(|| {
                        format!(
                            "{}:{}: bad hex word {w:?} (expected 8 hex digits)",
                            path.display(),
                            i + 1
                        )
                    })
                })
                .collect()
        })
        .collect()
}

fn parse_bin_rows(path: &Path, limit: Option<usize>) -> Result<Vec<u32>, String> {
    read_lines(path, limit)?
        .iter()
        .enumerate()
        .map(|(i, w)| {
            word(w, 2, 32).ok_or_else(|| {
                format!(
                    "{}:{}: bad binary word {w:?} (expected 32 binary digits)",
                    path.display(),
                    i + 1
                )
            })
        })
        .collect()
}

/// Loads a set (at most `limit` rows). Errors name the file and line.
pub fn load(dir: &Path, limit: Option<usize>) -> Result<MeasurementSet, String> {
    let files = [
        find(dir, "a_", ".txt")?,
        find(dir, "b_", ".txt")?,
        find(dir, "c_", "fp32.txt")?,
        find(dir, "d_", "fp32.txt")?,
    ];
    let a = parse_hex_rows(&files[0], limit)?;
    let b = parse_hex_rows(&files[1], limit)?;
    let c = parse_bin_rows(&files[2], limit)?;
    let d = parse_bin_rows(&files[3], limit)?;
    let n = a.len();
    if b.len() != n || c.len() != n || d.len() != n {
        return Err(format!(
            "{}: files disagree on the row count (a {}, b {}, c {}, d {})",
            dir.display(),
            n,
            b.len(),
            c.len(),
            d.len()
        ));
    }
    let k = a.first().map_or(0, |r| r.len());
    for (i, (ra, rb)) in a.iter().zip(&b).enumerate() {
        for (file, r) in [(&files[0], ra), (&files[1], rb)] {
            if r.len() != k {
                return Err(format!(
                    "{}:{}: {} values where line 1 has {k}",
                    file.display(),
                    i + 1,
                    r.len()
                ));
            }
        }
    }
    Ok(MeasurementSet {
        k,
        a,
        b,
        c,
        d,
        files,
    })
}

/// Encodes an `f64` into `fmt` if it is exactly representable (signed zeros kept; NaN gives
/// the format's canonical NaN; infinities need a format that has them).
pub fn encode_exact(fmt: Format, v: f64) -> Option<u64> {
    let same = |x: f64| x.to_bits() == v.to_bits() || (x.is_nan() && v.is_nan());
    match fmt.name {
        "fp32" => {
            let f = v as f32;
            same(f as f64).then_some(if v.is_nan() {
                0x7FC0_0000
            } else {
                f.to_bits() as u64
            })
        }
        "fp16" => {
            let h = half::f16::from_f64(v);
            same(h.to_f64()).then_some(if v.is_nan() {
                0x7E00
            } else {
                h.to_bits() as u64
            })
        }
        "bf16" => {
            let h = half::bf16::from_f64(v);
            same(h.to_f64()).then_some(if v.is_nan() {
                0x7FC0
            } else {
                h.to_bits() as u64
            })
        }
        "e4m3" | "e5m2" => {
            if v.is_nan() {
                return Some(if fmt.name == "e4m3" { 0x7F } else { 0x7E });
            }
            (0u64..256).find(|&bits| match decode(fmt, bits) {
                Decoded::Finite(x) => x.to_bits() == v.to_bits(),
                Decoded::Inf(n) => v.is_infinite() && (v < 0.0) == n,
                Decoded::Nan => false,
            })
        }
        _ => None,
    }
}

/// Encodes an FP32 word of a measurement file into `fmt` (`None` if not exact).
pub fn encode_word(fmt: Format, word: u32) -> Option<u64> {
    encode_exact(fmt, f32::from_bits(word) as f64)
}
