//! Reading the real-GPU measurement sets (Khattak & Mikaitis, north-numerical-computing/
//! MATLAB-tensor-core, `model_validation`; BSD 2-Clause) and encoding their values into the
//! input formats by independent means (host `f32`, `half`, the OCP FP8 table of
//! [`super::exact::decode_fp8`], backed by `fp8_table`).
//!
//! Layout of a set directory: `a_*.txt` and `b_*.txt` (one sample per line, K FP32 words in
//! hex, each exactly representable in the input format; TF32 values are FP32 words with the
//! low 13 bits zero), `c_*fp32.txt` and `d_*fp32.txt` (one FP32 word per line as 32 binary
//! digits), and where the GPU also accumulated into FP16, `d_*fp16.txt` (one FP16 result per
//! line: the published files hold the FP32 word of the FP16 value, 32 binary digits; 16 binary
//! digits, an FP16 word, are read too; the test programs rounded C to FP16 with RNE first, see
//! [`MeasurementSet::c_in`]).

use super::exact::{decode, Decoded};
use crate::numerics::format::{Format, BF16, E2M1, E2M3, E3M2, E4M3, E5M2, FP16, FP32, FP64, TF32};
use crate::numerics::mx::decode_f64;
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
    /// The GPU's D per row, in the accumulator format the set was loaded for (FP32, or FP16
    /// in the low 16 bits).
    pub d: Vec<u32>,
    /// The accumulator format of `d`.
    pub acc: Format,
    /// The files read: A, B, C and D. Row `i` (from 0) is line `i + 1` of each.
    pub files: [PathBuf; 4],
}

impl MeasurementSet {
    /// C of row `row` in the accumulator format `acc`: the FP32 word itself, or for FP16 the
    /// word rounded to FP16 to nearest even (host conversion by the `half` crate), as the
    /// test programs did before the FP16-output runs.
    pub fn c_in(&self, row: usize, acc: Format) -> u32 {
        let c = self.c[row];
        if acc == FP16 {
            half::f16::from_f32(f32::from_bits(c)).to_bits() as u32
        } else {
            c
        }
    }
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
    let text = crate::rtl::bounded::read_text_bounded(
        path,
        crate::rtl::bounded::MAX_TEXT_BYTES,
        "a measurement file",
    )
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

fn parse_bin_rows(path: &Path, limit: Option<usize>, digits: usize) -> Result<Vec<u32>, String> {
    read_lines(path, limit)?
        .iter()
        .enumerate()
        .map(|(i, w)| {
            word(w, 2, digits).ok_or_else(|| {
                format!(
                    "{}:{}: bad binary word {w:?} (expected {digits} binary digits)",
                    path.display(),
                    i + 1
                )
            })
        })
        .collect()
}

/// The FP16 outputs of `path`: each line 16 binary digits (an FP16 word), or 32 (the FP32
/// word of an FP16 value, which is how the published files hold them); a 32-digit word that
/// is no FP16 value is an error naming the file and line.
fn parse_fp16_rows(path: &Path, limit: Option<usize>) -> Result<Vec<u32>, String> {
    read_lines(path, limit)?
        .iter()
        .enumerate()
        .map(|(i, w)| {
            let at = || format!("{}:{}", path.display(), i + 1);
            if let Some(h) = word(w, 2, 16) {
                return Ok(h);
            }
            let f = word(w, 2, 32).ok_or_else(|| {
                format!(
                    "{}: bad binary word {w:?} (expected 16 or 32 binary digits)",
                    at()
                )
            })?;
            encode_word(FP16, f)
                .map(|h| h as u32)
                .ok_or_else(|| format!("{}: {f:08x} is not an FP16 value", at()))
        })
        .collect()
}

/// Loads a set with its FP32 outputs (at most `limit` rows). Errors name the file and line.
pub fn load(dir: &Path, limit: Option<usize>) -> Result<MeasurementSet, String> {
    load_acc(dir, limit, FP32)
}

/// Loads a set with the outputs the GPU accumulated into `acc`: `d_*fp32.txt` for FP32,
/// `d_*fp16.txt` for FP16 (C is always the FP32 file; see [`MeasurementSet::c_in`]).
pub fn load_acc(dir: &Path, limit: Option<usize>, acc: Format) -> Result<MeasurementSet, String> {
    let d_suffix = if acc == FP16 {
        "fp16.txt"
    } else if acc == FP32 {
        "fp32.txt"
    } else {
        return Err(format!("{acc} is not an accumulator format (fp32 or fp16)"));
    };
    let files = [
        find(dir, "a_", ".txt")?,
        find(dir, "b_", ".txt")?,
        find(dir, "c_", "fp32.txt")?,
        find(dir, "d_", d_suffix)?,
    ];
    let a = parse_hex_rows(&files[0], limit)?;
    let b = parse_hex_rows(&files[1], limit)?;
    let c = parse_bin_rows(&files[2], limit, 32)?;
    let d = if acc == FP16 {
        parse_fp16_rows(&files[3], limit)?
    } else {
        parse_bin_rows(&files[3], limit, 32)?
    };
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
        acc,
        files,
    })
}

/// Encodes an `f64` into `fmt` if it is exactly representable (signed zeros kept; NaN gives
/// the format's canonical NaN; infinities need a format that has them). TF32 gives its 19-bit
/// pattern (the FP32 container shifted right by 13). `None` for a format outside the input
/// and accumulator formats.
pub fn encode_exact(fmt: Format, v: f64) -> Option<u64> {
    let same = |x: f64| x.to_bits() == v.to_bits() || (x.is_nan() && v.is_nan());
    let fp32 = || {
        let f = v as f32;
        same(f as f64).then_some(if v.is_nan() {
            0x7FC0_0000u32
        } else {
            f.to_bits()
        })
    };
    if fmt == FP32 {
        fp32().map(u64::from)
    } else if fmt == TF32 {
        fp32()
            .filter(|w| w & 0x1FFF == 0)
            .map(|w| u64::from(w >> 13))
    } else if fmt == FP16 {
        let h = half::f16::from_f64(v);
        same(h.to_f64()).then_some(if v.is_nan() {
            0x7E00
        } else {
            h.to_bits() as u64
        })
    } else if fmt == BF16 {
        let h = half::bf16::from_f64(v);
        same(h.to_f64()).then_some(if v.is_nan() {
            0x7FC0
        } else {
            h.to_bits() as u64
        })
    } else if fmt == E4M3 || fmt == E5M2 {
        if v.is_nan() {
            return Some(if fmt == E4M3 { 0x7F } else { 0x7E });
        }
        (0u64..256).find(|&bits| match decode(fmt, bits) {
            Decoded::Finite(x) => x.to_bits() == v.to_bits(),
            Decoded::Inf(n) => v.is_infinite() && (v < 0.0) == n,
            Decoded::Nan => false,
        })
    } else if fmt == E2M3 || fmt == E3M2 || fmt == E2M1 {
        // The MX element formats have no NaN and no infinity: a value is exact when one of
        // the 64 or 16 codes decodes to it (signed zeros kept). Their decoder is the MX
        // module's, checked code by code against the OCP tables in
        // tests/numerics/small_formats.rs.
        (0u64..1 << fmt.width()).find(|&code| decode_f64(fmt, code).to_bits() == v.to_bits())
    } else if fmt == FP64 {
        // Every f64 is a binary64 value; a NaN is binary64's default NaN.
        Some(if v.is_nan() {
            0x7FF8_0000_0000_0000
        } else {
            v.to_bits()
        })
    } else {
        None
    }
}

/// Encodes an FP32 word of a measurement file into `fmt` (`None` if not exact).
pub fn encode_word(fmt: Format, word: u32) -> Option<u64> {
    encode_exact(fmt, f32::from_bits(word) as f64)
}
