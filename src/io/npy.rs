//! A small reader and writer for NumPy `.npy` files (format versions 1.0 to 3.0), enough for
//! matrices of the dtypes the tensor core takes: `u1`, `u2`, `u4`, `i1`, `i4`, `f2`, `f4`, `f8`, either
//! byte order, C or Fortran order (Fortran-ordered arrays are returned in C order).
//!
//! Why not the `npyz` crate (the hardening review of docs/reliability.md asked to move to it unless
//! a measurement said otherwise): npyz 0.9.1 panics on a 40-byte header whose shape product
//! overflows `u64` (`'shape': (4294967296, 4294967296, 16)`: `attempt to multiply with overflow` in
//! its `shape.iter().product()`; a release build wraps to a wrong element count instead), and it
//! pulls in a Python-literal parser (`py_literal`, `pest`, `stacker`). This reader checks every
//! size with checked arithmetic against the bytes present before allocating, and is fuzzed
//! (`tests/cli/fuzz_front_door.rs`).

use super::atomic::AtomicFile;
use std::io::Write;
use std::path::Path;

const MAGIC: &[u8] = b"\x93NUMPY";

/// Errors reading or writing `.npy` files.
#[derive(Debug, thiserror::Error)]
pub enum NpyError {
    /// The file could not be read or written.
    #[error("{path}: {source}")]
    Io {
        /// The file.
        path: String,
        /// The underlying error.
        source: std::io::Error,
    },
    /// The file is not a well-formed `.npy` file.
    #[error("{path}: not a valid .npy file: {why}")]
    Format {
        /// The file.
        path: String,
        /// What is wrong.
        why: String,
    },
    /// The dtype is not one the tensor core takes.
    #[error("{path}: unsupported dtype '{descr}' (expected uint8, uint16, uint32, int8, int32, float16, float32 or float64)")]
    Dtype {
        /// The file.
        path: String,
        /// The dtype descriptor found.
        descr: String,
    },
}

/// The element type of an array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Dtype {
    /// `uint8`
    U8,
    /// `uint16`
    U16,
    /// `uint32`
    U32,
    /// `int8` (kept as two's-complement bit patterns)
    I8,
    /// `int32` (kept as two's-complement bit patterns)
    I32,
    /// `float16` (kept as bit patterns)
    F16,
    /// `float32`
    F32,
    /// `float64`
    F64,
}

impl Dtype {
    fn size(self) -> usize {
        match self {
            Dtype::U8 | Dtype::I8 => 1,
            Dtype::U16 | Dtype::F16 => 2,
            Dtype::U32 | Dtype::I32 | Dtype::F32 => 4,
            Dtype::F64 => 8,
        }
    }

    /// NumPy's name for the type.
    pub fn numpy_name(self) -> &'static str {
        match self {
            Dtype::U8 => "uint8",
            Dtype::U16 => "uint16",
            Dtype::U32 => "uint32",
            Dtype::I8 => "int8",
            Dtype::I32 => "int32",
            Dtype::F16 => "float16",
            Dtype::F32 => "float32",
            Dtype::F64 => "float64",
        }
    }
}

/// An array read from a `.npy` file, elements widened to raw 64-bit words in C order:
/// unsigned integers as their value, signed integers as their two's-complement bit pattern
/// (zero-extended: int8 `-1` is `0xFF`), floats as their bit pattern (`f16`/`f32`/`f64` bits).
#[derive(Clone, Debug, PartialEq)]
pub struct NpyArray {
    /// The dimensions.
    pub shape: Vec<usize>,
    /// The element type in the file.
    pub dtype: Dtype,
    /// The elements' raw words, row-major.
    pub words: Vec<u64>,
}

impl NpyArray {
    /// Element `i` as an f64 value (floats decoded, integers converted); exact for every
    /// supported dtype.
    pub fn value_f64(&self, i: usize) -> f64 {
        let w = self.words[i];
        match self.dtype {
            Dtype::U8 | Dtype::U16 | Dtype::U32 => w as f64,
            Dtype::I8 => f64::from(w as u8 as i8),
            Dtype::I32 => f64::from(w as u32 as i32),
            Dtype::F16 => half::f16::from_bits(w as u16).to_f64(),
            Dtype::F32 => f32::from_bits(w as u32) as f64,
            Dtype::F64 => f64::from_bits(w),
        }
    }
}

fn format_err(path: &Path, why: impl Into<String>) -> NpyError {
    NpyError::Format {
        path: path.display().to_string(),
        why: why.into(),
    }
}

/// Pulls the value of `'key':` out of the header dictionary text.
fn header_field<'a>(header: &'a str, key: &str) -> Option<&'a str> {
    let pat = format!("'{key}'");
    let start = header.find(&pat)? + pat.len();
    let rest = header[start..].trim_start().strip_prefix(':')?.trim_start();
    let end = if rest.starts_with('(') {
        rest.find(')')? + 1
    } else if let Some(r) = rest.strip_prefix('\'') {
        r.find('\'')? + 2
    } else {
        rest.find([',', '}']).unwrap_or(rest.len())
    };
    Some(rest[..end].trim())
}

/// The largest `.npy` file read: 2^28 elements (the most a GEMM operand may hold) of 8 bytes,
/// plus room for the header. Larger files are refused before they are read.
pub const MAX_FILE_BYTES: u64 = (1 << 28) * 8 + (1 << 20);

/// Reads a `.npy` file (at most [`MAX_FILE_BYTES`]).
pub fn read_npy(path: &Path) -> Result<NpyArray, NpyError> {
    let io_err = |source| NpyError::Io {
        path: path.display().to_string(),
        source,
    };
    let len = std::fs::metadata(path).map_err(io_err)?.len();
    if len > MAX_FILE_BYTES {
        return Err(format_err(
            path,
            format!("{len} bytes is more than the {MAX_FILE_BYTES} a matrix may take"),
        ));
    }
    let bytes = std::fs::read(path).map_err(io_err)?;
    parse_npy(&bytes, path)
}

/// Parses the bytes of a `.npy` file (`path` only names it in errors).
pub fn parse_npy(bytes: &[u8], path: &Path) -> Result<NpyArray, NpyError> {
    if bytes.len() < 10 || &bytes[..6] != MAGIC {
        return Err(format_err(path, "missing \\x93NUMPY magic"));
    }
    let major = bytes[6];
    let (header_len, header_start) = match major {
        1 => (u16::from_le_bytes([bytes[8], bytes[9]]) as usize, 10),
        2 | 3 => {
            if bytes.len() < 12 {
                return Err(format_err(path, "truncated header"));
            }
            (
                u32::from_le_bytes([bytes[8], bytes[9], bytes[10], bytes[11]]) as usize,
                12,
            )
        }
        v => return Err(format_err(path, format!("unknown format version {v}"))),
    };
    let data_start = header_start + header_len;
    if bytes.len() < data_start {
        return Err(format_err(path, "truncated header"));
    }
    let header = std::str::from_utf8(&bytes[header_start..data_start])
        .map_err(|_| format_err(path, "header is not text"))?;
    let descr = header_field(header, "descr")
        .ok_or_else(|| format_err(path, "header has no 'descr'"))?
        .trim_matches('\'');
    let fortran = match header_field(header, "fortran_order") {
        Some("True") => true,
        Some("False") => false,
        _ => return Err(format_err(path, "header has no valid 'fortran_order'")),
    };
    let shape_text =
        header_field(header, "shape").ok_or_else(|| format_err(path, "header has no 'shape'"))?;
    let shape: Vec<usize> = shape_text
        .trim_matches(|c| c == '(' || c == ')')
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|s| s.parse::<usize>())
        .collect::<Result<_, _>>()
        .map_err(|_| format_err(path, format!("bad shape {shape_text}")))?;
    let (big_endian, code) = match descr.as_bytes().first() {
        Some(b'<') | Some(b'|') | Some(b'=') => (false, &descr[1..]),
        Some(b'>') => (true, &descr[1..]),
        _ => (false, descr),
    };
    let dtype = match code {
        "u1" => Dtype::U8,
        "u2" => Dtype::U16,
        "u4" => Dtype::U32,
        "i1" => Dtype::I8,
        "i4" => Dtype::I32,
        "f2" => Dtype::F16,
        "f4" => Dtype::F32,
        "f8" => Dtype::F64,
        _ => {
            return Err(NpyError::Dtype {
                path: path.display().to_string(),
                descr: descr.to_string(),
            })
        }
    };
    let count = shape
        .iter()
        .try_fold(1usize, |acc, &d| acc.checked_mul(d))
        .ok_or_else(|| format_err(path, "shape too large"))?;
    let size = dtype.size();
    let payload = &bytes[data_start..];
    let expected = count
        .checked_mul(size)
        .ok_or_else(|| format_err(path, "shape too large"))?;
    if payload.len() != expected {
        return Err(format_err(
            path,
            format!(
                "expected {} data bytes for shape {:?}, found {}",
                expected,
                shape,
                payload.len()
            ),
        ));
    }
    let mut words: Vec<u64> = payload
        .chunks_exact(size)
        .map(|chunk| {
            let mut w = 0u64;
            for (i, &b) in chunk.iter().enumerate() {
                let pos = if big_endian { size - 1 - i } else { i };
                w |= (b as u64) << (8 * pos);
            }
            w
        })
        .collect();
    if fortran && shape.len() > 1 {
        words = fortran_to_c(&words, &shape);
    }
    Ok(NpyArray {
        shape,
        dtype,
        words,
    })
}

/// Reorders a column-major (Fortran) buffer into row-major order.
fn fortran_to_c(words: &[u64], shape: &[usize]) -> Vec<u64> {
    let n = words.len();
    let mut out = vec![0u64; n];
    let mut idx = vec![0usize; shape.len()];
    for slot in out.iter_mut() {
        // idx is the C-order multi-index of `slot`; find its Fortran offset.
        let mut off = 0usize;
        let mut stride = 1usize;
        for (d, &i) in idx.iter().enumerate() {
            off += i * stride;
            stride *= shape[d];
        }
        *slot = words[off];
        for d in (0..shape.len()).rev() {
            idx[d] += 1;
            if idx[d] < shape[d] {
                break;
            }
            idx[d] = 0;
        }
    }
    out
}

/// Writes a C-order array of raw words as a version 1.0 `.npy` file of `dtype`, atomically.
pub fn write_npy(
    path: &Path,
    shape: &[usize],
    dtype: Dtype,
    words: &[u64],
) -> Result<(), NpyError> {
    let io_err = |source| NpyError::Io {
        path: path.display().to_string(),
        source,
    };
    let descr = match dtype {
        Dtype::U8 => "|u1",
        Dtype::U16 => "<u2",
        Dtype::U32 => "<u4",
        Dtype::I8 => "|i1",
        Dtype::I32 => "<i4",
        Dtype::F16 => "<f2",
        Dtype::F32 => "<f4",
        Dtype::F64 => "<f8",
    };
    let shape_text = match shape.len() {
        1 => format!("({},)", shape[0]),
        _ => format!(
            "({})",
            shape
                .iter()
                .map(|d| d.to_string())
                .collect::<Vec<_>>()
                .join(", ")
        ),
    };
    let mut header =
        format!("{{'descr': '{descr}', 'fortran_order': False, 'shape': {shape_text}, }}");
    // Pad so that the data starts on a 64-byte boundary, header ending in '\n'.
    let unpadded = MAGIC.len() + 4 + header.len() + 1;
    header.push_str(&" ".repeat((64 - unpadded % 64) % 64));
    header.push('\n');
    let mut f = AtomicFile::create(path).map_err(io_err)?;
    let mut buf = Vec::with_capacity(10 + header.len() + words.len() * dtype.size());
    buf.extend_from_slice(MAGIC);
    buf.extend_from_slice(&[1, 0]);
    buf.extend_from_slice(&(header.len() as u16).to_le_bytes());
    buf.extend_from_slice(header.as_bytes());
    for w in words {
        buf.extend_from_slice(&w.to_le_bytes()[..dtype.size()]);
    }
    f.write_all(&buf).map_err(io_err)?;
    f.commit().map_err(io_err)
}
