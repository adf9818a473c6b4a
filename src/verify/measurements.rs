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
}

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
    found
        .into_iter()
        .next()
        .ok_or_else(|| format!("no {prefix}*{suffix} file in {}", dir.display()))
}

fn read_lines(path: &Path, limit: Option<usize>) -> Result<Vec<String>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    Ok(text
        .lines()
        .filter(|l| !l.trim().is_empty())
        .take(limit.unwrap_or(usize::MAX))
        .map(|l| l.trim().to_string())
        .collect())
}

fn parse_hex_rows(path: &Path, limit: Option<usize>) -> Result<Vec<Vec<u32>>, String> {
    read_lines(path, limit)?
        .iter()
        .enumerate()
        .map(|(i, line)| {
            line.split_whitespace()
                .map(|w| {
                    u32::from_str_radix(w, 16)
                        .map_err(|_| format!("{}:{}: bad hex word {w:?}", path.display(), i + 1))
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
            u32::from_str_radix(w, 2)
                .map_err(|_| format!("{}:{}: bad binary word {w:?}", path.display(), i + 1))
        })
        .collect()
}

/// Loads a set (at most `limit` rows). Errors name the file and line.
pub fn load(dir: &Path, limit: Option<usize>) -> Result<MeasurementSet, String> {
    let a = parse_hex_rows(&find(dir, "a_", ".txt")?, limit)?;
    let b = parse_hex_rows(&find(dir, "b_", ".txt")?, limit)?;
    let c = parse_bin_rows(&find(dir, "c_", "fp32.txt")?, limit)?;
    let d = parse_bin_rows(&find(dir, "d_", "fp32.txt")?, limit)?;
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
        if ra.len() != k || rb.len() != k {
            return Err(format!(
                "{}: row {} does not hold {k} values",
                dir.display(),
                i + 1
            ));
        }
    }
    Ok(MeasurementSet { k, a, b, c, d })
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
